//===- Compare.h - per-layer accuracy comparison ----------------*- C++ -*-===//
//
// Where a compiled model loses accuracy: the output of every Keras layer,
// computed by the reference executor on the imported model (Keras's
// semantics) and on the model after the pipeline's graph stages (the
// compiled numerics: folds, layout, fp16), compared layer by layer. `dlc
// compare` prints it; the Python package's dlc.compare puts Keras's own
// layer outputs beside it.
//
// DLC_DEBUG_PERTURB_LAYER=NAME (tests only) makes the pipeline scale the
// output of layer NAME by 1.25 after the simplify stage, a deliberately
// broken pass that the comparison must name.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_COMPARE_H
#define DLC_COMPILER_COMPARE_H

#include "compiler/Compile.h"
#include "support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// One Keras layer's output as a run computed it.
struct LayerValue {
  std::string layer, layerClass;
  Tensor value;
};

/// Runs the entry function of `module` (graph dialect, bound to `inputs` by
/// bindInputs) on the reference executor and returns the output of every
/// Keras layer it computes, in op order: per layer, the first result of its
/// last op (an op merged from several layers counts as the last of them).
/// Adds the layer outputs to the function's results: use a copy.
std::vector<LayerValue> layerOutputs(mlir::ModuleOp module,
                                     const std::vector<Tensor> &inputs);

/// How far one layer's output is from the reference's.
struct LayerDiff {
  std::string layer, layerClass;
  std::vector<int64_t> shape; ///< the reference's
  double maxAbs = 0;          ///< max |actual - expected|
  double relL2 = 0;           ///< ||actual - expected||2 / ||expected||2
  bool exceeds = false;       ///< relL2 over the threshold (or NaN)
};

/// `actual` against `expected`: shapes must match, or `actual` be
/// `expected` in a channels-first layout (the layout stage's NCHW / NCW),
/// which is transposed back. nullopt when neither holds.
std::optional<LayerDiff> diffLayer(const Tensor &actual, const Tensor &expected,
                                   double threshold);

/// The comparison of the compiled model (the pipeline's graph stages, at the
/// options' precision) against the imported model, on `inputs` (bound as
/// `dlc run` binds them). `layers` has one row per layer both compute, in
/// the reference's order; `firstBad` indexes the first row over
/// `threshold`.
struct Comparison {
  std::string stage; ///< the last stage run for the compiled side
  std::vector<LayerDiff> layers;
  std::optional<size_t> firstBad;
  std::vector<LayerValue> reference, compiled;
};
Comparison compareLayers(mlir::ModuleOp imported, std::vector<Tensor> inputs,
                         const std::vector<std::string> &inputNames,
                         const CompileOptions &options,
                         const std::string &modelPath, double threshold);

/// The default threshold of relative L2 error per layer: 1e-4 in fp32,
/// 1e-2 in fp16.
double defaultThreshold(bool fp16);

/// The table `dlc compare` prints: one row per layer, then the verdict.
std::string formatComparison(const std::vector<LayerDiff> &layers,
                             std::optional<size_t> firstBad, double threshold);

/// Applies DLC_DEBUG_PERTURB_LAYER to `module` when it is set (runPipeline
/// calls it after the simplify stage). Throws UserError for a layer the
/// module does not compute.
void applyDebugPerturbation(mlir::ModuleOp module,
                            const std::string &modelPath);

} // namespace dlc::driver

#endif // DLC_COMPILER_COMPARE_H
