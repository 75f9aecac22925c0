//===- Passes.h - dlc passes ------------------------------------*- C++ -*-===//
//
// Declarations (createXxxPass, options structs) and registration of every
// pass in Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PASSES_H
#define DLC_PASSES_PASSES_H

#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <vector>

namespace dlc {

/// The calibrated clip value (f32) of a conv / matmul input that
/// dlc-quantize-int8 quantizes: set by calibration (compiler/Calibrate.h).
inline constexpr const char *kCalibratedAmaxAttr = "dlc.calibrated_amax";

/// The int8 tensor-core implicit GEMM (compiler/codegen/cuda/ImplicitGemm.cpp)
/// reads 16 int8 channels of an input pixel per 16-byte chunk: an ungrouped
/// NHWC quantized_conv2d takes it when C is a multiple of this.
/// dlc-quantize-int8 pads smaller channel counts up to it, and dlc-fuse keeps
/// a pool out of such a convolution's epilogue.
inline constexpr int64_t kInt8TensorCoreChannels = 16;

/// The f16/bf16 tensor-core implicit GEMM reads 8 channels of an input pixel
/// per 16-byte chunk: an ungrouped NHWC conv2d takes it when C is a multiple
/// of this. dlc-lower-to-fp16 pads smaller channel counts up to it.
inline constexpr int64_t kHalfTensorCoreChannels = 8;

/// Whether dlc-quantize-int8 can quantize `op`: a conv2d or
/// depthwise_conv2d with an f32 input and an f32 constant filter, or a
/// matmul with an f32 lhs and an f32 constant rank-2 rhs.
bool isInt8Candidate(mlir::Operation *op);

/// Whether `op` (a candidate) has an input that is >= 0 by construction (a
/// ReLU's, relu6's, ... output): dlc-quantize-int8 with
/// unsigned-activations quantizes it to 256 levels with a zero point.
bool int8InputUnsigned(mlir::Operation *op);

/// The per-output-channel weight scales dlc-quantize-int8 gives candidate
/// `op` (127 / max|w| of each channel, 1 for an all-zero one); empty when
/// the weight cannot be read.
std::vector<float> int8WeightScales(mlir::Operation *op);

/// The results of `op` that the kernel computing it stores: all of them,
/// except for a graph.quantize_static whose scale result (a constant) has no
/// use, which stores its int8 result only (dlc-fuse, dlc-lower-to-exec).
mlir::ValueRange storedResults(mlir::Operation *op);

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace dlc

#endif // DLC_PASSES_PASSES_H
