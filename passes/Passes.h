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

#include <optional>
#include <vector>

namespace dlc {

/// The calibrated clip value (f32) of a conv / matmul input that
/// dlc-quantize-int8 quantizes: set by calibration (compiler/Calibrate.h).
inline constexpr const char *kCalibratedAmaxAttr = "dlc.calibrated_amax";

/// Per input channel clip values (f32 [C]) of a depthwise_conv2d's input,
/// next to its kCalibratedAmaxAttr: dlc-quantize-int8 then quantizes channel
/// c with its own scale (--int8-depthwise-channel-scales, set by
/// calibration). Only a depthwise convolution takes them: each of its output
/// channels reads one input channel, so the de-scaling stays per output
/// channel.
inline constexpr const char *kCalibratedChannelAmaxAttr =
    "dlc.calibrated_channel_amax";

/// An f32 vector, one value per output channel, that dlc-quantize-int8 adds
/// to the de-quantized result of the op carrying it (with a calibrated
/// amax): the empirical bias correction (--int8-bias-correction), set by
/// calibration (int8BiasCorrection()).
inline constexpr const char *kInt8BiasCorrectionAttr =
    "dlc.int8_bias_correction";

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

/// Whether dlc-quantize-int8 quantizes candidate `op`'s input to 256 levels
/// with a zero point: with unsigned-activations, an input >= 0
/// (int8InputUnsigned) whose zero point's term it can build (a convolution
/// needs static spatial sizes); otherwise symmetrically to 255 levels.
bool int8UsesZeroPoint(mlir::Operation *op, bool unsignedActivations);

/// The input scales dlc-quantize-int8 gives candidate `op` (which carries
/// kCalibratedAmaxAttr): levels / amax with levels 255 with a zero point
/// (`zeroPoint`), else 127; one per input channel when `op` carries
/// kCalibratedChannelAmaxAttr (a channel whose clip is 0 or not finite takes
/// the per-tensor scale), else one. Empty when the per-tensor clip is not
/// positive and finite, or the channel clips do not fit the input.
std::vector<float> int8InputScales(mlir::Operation *op, bool zeroPoint);

/// How candidate `op`'s input holds its channels (those its weight's input
/// dim reads): element k of the input is in channel (k / inner) % channels.
/// The last dim for a matmul and an NHWC convolution, dim 1 for an NCHW one;
/// nullopt when those sizes are not static.
struct Int8InputChannels {
  int64_t channels = 0, inner = 1;
};
std::optional<Int8InputChannels> int8InputChannels(mlir::Operation *op);

/// The empirical bias correction of candidate `op` (Nagel et al. 2019,
/// "Data-Free Quantization", section 4.2, with the expectations measured on
/// the calibration set): for each output channel o, the expected f32 output
/// minus the expected int8 one, sum over the taps of W[o, tap] * meanInput[c]
/// - Wq[o, tap] * meanQuantized[c], where c is the tap's input channel, Wq
/// the de-quantized int8 weight and meanQuantized[c] the mean of the input as
/// quantized and de-quantized. Exact for a matmul; a convolution's padded
/// border taps are counted as if they read the mean too. Empty when the
/// weight cannot be read or the means do not have int8InputChannels' count.
std::vector<float> int8BiasCorrection(mlir::Operation *op,
                                      llvm::ArrayRef<double> meanInput,
                                      llvm::ArrayRef<double> meanQuantized);

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
