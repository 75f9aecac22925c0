//===- Model.h - the Python package's compiled model, in plain C++ -*- C++ -*-//
//
// What the nanobind module (Module.cpp) binds: a model compiled by the
// driver (compiler/Compile.h, the one compile policy) and run on the CPU
// reference executor, exactly as `dlc run --device cpu` runs it. Plain C++
// types only, no MLIR in this header: the module is compiled with RTTI
// (nanobind needs it) and LLVM without. Every failure is a UserError.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PYTHON_MODEL_H
#define DLC_PYTHON_MODEL_H

#include "support/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc::python {

/// What dlc.compile() was asked for; names as on the command line.
struct Options {
  std::string precision; ///< "fp32", "fp16"; "" from the model's policy
  std::optional<int64_t> batch;
  std::string arch;             ///< "sm_80,sm_90"; "" the default
  std::string kernels = "auto"; ///< "auto", "generated", "library"
  bool progress = false; ///< draw driver::stderrProgress() while compiling
  /// Sizes for the inputs' None dims besides the batch dim, by input name
  /// (CompileOptions::inputShapes).
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// A model input or output: -1 for a dim that is open (the batch).
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; ///< NumPy's name
};

/// One step of the compiled program (driver::StepSummary).
struct StepInfo {
  std::string name, family, tiling;
  std::vector<std::string> layers;
  bool libraryCall = false;
};

struct MemoryInfo {
  uint64_t arenaBytes = 0, peakLiveBytes = 0, weightsBytes = 0;
};

/// One Keras layer's output as a run computed it (compiler/Compare.h).
struct LayerOutput {
  std::string layer, layerClass;
  Tensor value;
};

/// What Model::compare computed: every layer's output on the imported model
/// and after the pipeline's graph stages up to `stage`.
struct LayerOutputs {
  std::string stage;
  std::vector<LayerOutput> reference, compiled;
};

/// How far one layer's output is from another (driver::diffLayer).
struct LayerDiffInfo {
  std::vector<int64_t> shape;
  double maxAbs = 0, relL2 = 0;
  bool exceeds = false;
};
std::optional<LayerDiffInfo>
diffLayer(const Tensor &actual, const Tensor &expected, double threshold);

class Model {
public:
  /// Reads and imports the model file (`weights`: of a model.to_json()
  /// file, "" to look beside it) and runs the pipeline once for the
  /// compile batch (the errors a compilation would raise, and the memory
  /// plan). `displayName` replaces `path` in messages when not empty.
  static std::unique_ptr<Model> compileFile(const std::string &path,
                                            const std::string &weights,
                                            const Options &options,
                                            const std::string &displayName);
  ~Model();

  const std::vector<TensorInfo> &inputs() const;
  const std::vector<TensorInfo> &outputs() const;
  bool fp16() const;
  /// The memory plan at the compile batch (with the artifact's weight
  /// region once it was built).
  MemoryInfo memory() const;

  /// Runs the model on the reference executor: the inputs are bound (their
  /// shapes fix the batch, checked against the compile batch), the pipeline
  /// runs once per set of input shapes, and the execution plan runs.
  /// Outputs in bfloat16 come back as float32 (as `dlc run` writes them).
  std::vector<Tensor> runCpu(std::vector<Tensor> inputs);

  /// The per-layer outputs of driver::compareLayers on `inputs`, the
  /// compiled side run to `stage` ("" the default).
  LayerOutputs compare(std::vector<Tensor> inputs, const std::string &stage,
                       double threshold);

  /// The .dlcm artifact (every kernel compiled by NVRTC) for `batch`, else
  /// the compile batch, built on first use. A batch other than the one
  /// compile() fixed is a UserError.
  const std::string &artifactBytes(std::optional<int64_t> batch = {});
  /// Its program's steps.
  const std::vector<StepInfo> &steps();

  /// Warnings reported since the last call, as dlc's one-line messages.
  std::vector<std::string> takeWarnings();

private:
  Model();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What dlc.load() shows of an artifact.
struct ArtifactInfo {
  std::vector<TensorInfo> inputs, outputs;
  std::vector<StepInfo> steps;
  MemoryInfo memory; ///< the arena and the weight region (no peak)
  std::string precision;
};

/// Parses and validates the .dlcm `bytes`; throws artifact::FormatError.
ArtifactInfo inspectArtifact(const std::string &bytes);

} // namespace dlc::python

#endif // DLC_PYTHON_MODEL_H
