//===- Calibrate.h - int8 post-training quantization ------------*- C++ -*-===//
//
// `--precision int8 --calibrate DIR`: the fp32 graph (after the layout
// stage) runs on the reference executor over the .npy batches of DIR; the
// input of every quantizable op (passes/Passes.h isInt8Candidate: conv2d,
// depthwise_conv2d, Dense matmul) gets a histogram of |x|, from which the
// chosen method picks a clip value (max, percentile, or TensorRT's entropy
// calibration). calibrate() records it on the op (kCalibratedAmaxAttr) for
// dlc-quantize-int8; measureAccuracy() compares the int8 graph with the fp32
// one; writeReport() writes the per-layer JSON report. docs/quantization.md
// describes the method and the report.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CALIBRATE_H
#define DLC_COMPILER_CALIBRATE_H

#include "compiler/Driver.h"
#include "support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlc::driver {

/// The histogram of |x| that the percentile, entropy and mse methods read:
/// this many bins over [0, max|x|].
inline constexpr int kCalibrationBins = 2048;
/// The int8 levels of one sign (TensorRT's entropy calibration).
inline constexpr int kCalibrationLevels = 128;

/// How the activation clip value is chosen from the |x| histogram.
enum class CalibrationMethod {
  Max,        ///< the largest |x| seen
  Percentile, ///< the `percentile`-th percentile of |x|
  Entropy,    ///< TensorRT's: the clip of least KL divergence (2048 bins,
              ///< 128 levels)
  Mse,        ///< the clip of least expected squared quantization error
};
/// "max", "percentile", "entropy", "mse".
std::optional<CalibrationMethod> calibrationMethodNamed(std::string_view name);
const char *calibrationMethodName(CalibrationMethod method);

/// What `--precision int8` is asked for.
struct Int8Options {
  /// The calibration set: a folder of .npy batches (readBatches()).
  std::string calibrationDir;
  CalibrationMethod method = CalibrationMethod::Percentile;
  double percentile = 99.99; ///< CalibrationMethod::Percentile's
  /// Keep the first and the last quantizable op in f32.
  bool keepFirstLast = false;
  /// Quantize inputs that are >= 0 by construction to 256 levels with a
  /// zero point (dlc-quantize-int8's unsigned-activations).
  bool unsignedActivations = false;
  /// Empirical bias correction (`--int8-bias-correction`): each int8 op's
  /// expected output error per channel, measured on the calibration set
  /// (int8BiasCorrection in passes/Passes.h), is added back after it.
  bool biasCorrection = false;
  /// Quantize a depthwise convolution's input per channel
  /// (`--int8-depthwise-channel-scales`): each input channel gets its own
  /// clip, chosen by `method` from its own histogram
  /// (kCalibratedChannelAmaxAttr).
  bool depthwiseChannelScales = false;
  /// Store what int8 leaves in float as f16 (`--int8-fallback fp16`): the
  /// fp16 stage after the int8 one; false keeps it f32.
  bool fallbackFp16 = false;
  /// Accuracy-driven mixed precision (`--int8-accuracy-target`): when > 0,
  /// the quantizable ops whose quantization costs most accuracy stay f32
  /// until the top-1 agreement with fp32, under the error amplified by
  /// `accuracyMargin` and estimated on the calibration set
  /// (estimatedAgreement()), reaches it. 0: off.
  double accuracyTarget = 0;
  /// The accuracy target's margin (`--int8-accuracy-margin`): the int8
  /// model's deviation from fp32 on each calibration sample is multiplied by
  /// this before it is compared with the gaps between classes, so that the
  /// target holds with room for the estimate's own error.
  double accuracyMargin = 3.0;
  /// After the accuracy target's bisection (`--int8-accuracy-refine`): each
  /// op it kept f32, the least sensitive first, goes back to int8 when the
  /// model with it int8 still meets the target (one run of the calibration
  /// set per op kept).
  bool accuracyRefine = false;
  /// Where to write the JSON report; "" for none (then no accuracy is
  /// measured).
  std::string reportPath;
  /// Another folder of batches the report measures the accuracy on; "" for
  /// none.
  std::string holdoutDir;
  /// `--calibration-cache FILE`: calibrateCached() reuses the calibration
  /// FILE holds for the same graph, batches and options, else calibrates
  /// and writes it there; "" for none.
  std::string cachePath;
};

/// One batch of a calibration folder: a tensor per model input and the
/// files they came from.
struct Batch {
  std::vector<Tensor> inputs;
  std::vector<std::string> files;
};

/// The batches of `dir` for a model of `inputCount` inputs, in file name
/// order. One input: every `*.npy` file is one batch. Several inputs: the
/// files `STEM.I.npy` (I = 0 .. inputCount-1, the model's input order) with
/// one STEM form a batch. Throws UserError for an empty or unreadable folder,
/// a file of another name, or an incomplete batch.
std::vector<Batch> readBatches(const std::string &dir, size_t inputCount);

/// The calibration of one quantizable op.
struct LayerCalibration {
  std::string layer, layerClass; ///< the Keras layer (its location)
  std::string op;                ///< "conv2d", "depthwise_conv2d", "matmul"
  double observedAmax = 0;       ///< max |x| of its input over the set
  double clip = 0;               ///< the method's clip value (amax)
  /// With --int8-depthwise-channel-scales, a depthwise convolution's clip
  /// per input channel (0 for a channel that is 0 on the whole set); else
  /// empty.
  std::vector<double> channelClips;
  bool unsignedInput = false; ///< 256 levels with a zero point
  int64_t channels = 0;       ///< output channels (weight scales)
  double weightScaleMin = 0, weightScaleMax = 0; ///< 127 / max|w| per channel
  /// --int8-bias-correction's values: the largest |correction| over the
  /// output channels, and the mean |correction| over them.
  double correctionMaxAbs = 0, correctionMeanAbs = 0;
  bool corrected = false; ///< a correction was measured and recorded
  /// Sets `corrected` and the two summaries from the correction's values
  /// (one per output channel).
  void recordCorrection(const std::vector<float> &values);
  bool int8 = false;       ///< quantized
  std::string keptBecause; ///< why not, when not
  /// With an accuracy target: the model's output error on the calibration
  /// set with this op the only one in int8 (the largest over the outputs),
  /// and its rank by that error (1: the most sensitive); 0 when not
  /// measured.
  double sensitivityRelL2 = 0, sensitivityTop1 = 1;
  size_t sensitivityRank = 0;
};

/// Sets the attributes dlc-quantize-int8 reads from an int8 `layer`'s
/// clips on its op: kCalibratedAmaxAttr, and kCalibratedChannelAmaxAttr
/// when it has channel clips.
void setClipAttributes(mlir::Operation *op, const LayerCalibration &layer);

/// One model the accuracy-target search measured on the calibration set:
/// the `keptF32` most sensitive ops in f32, the rest int8 (a bisection
/// step); or, with `refineRank` > 0 (a refinement step), the ops kept f32 so
/// far less the one of that sensitivity rank (`refineLayer`), tried back in
/// int8; `meets` is then whether it stays int8.
struct SearchStep {
  size_t keptF32 = 0;
  size_t refineRank = 0;
  std::string refineLayer;
  double top1Agreement = 0;   ///< the worst output's
  double marginAgreement = 0; ///< the same with the error amplified
  /// estimatedAgreement() of the worst output: what `meets` compares
  double estimatedAgreement = 0;
  double relL2Error = 0; ///< the worst output's
  bool meets = false;
};

struct Calibration {
  std::vector<LayerCalibration> layers; ///< the candidates, in op order
  size_t batches = 0, samples = 0;
  std::vector<SearchStep> search; ///< the accuracy target's, in order
  size_t sensitivitySamples = 0;  ///< the samples sensitivities used
};

/// The accuracy target measures each op's sensitivity on the first
/// calibration batches, up to this many samples (at least one batch).
inline constexpr size_t kSensitivitySamples = 64;

/// Calibrates `module` (graph dialect, f32, the layout stage's; a batch dim
/// left open or fixed) on `batches`: sets kCalibratedAmaxAttr on every
/// candidate op whose input the method gives a positive clip.
Calibration calibrate(mlir::ModuleOp module, const std::vector<Batch> &batches,
                      const Int8Options &options);

/// The ops calibrate() considers (passes/Passes.h isInt8Candidate) in
/// `module`'s entry function, in op order: Calibration::layers' order.
std::vector<mlir::Operation *> calibrationCandidates(mlir::ModuleOp module);

/// calibrate(), through options.cachePath when it is set
/// (compiler/CalibrationCache.cpp; docs/quantization.md, "The calibration
/// cache"): a file whose key — the SHA-256 of the graph with its weights,
/// the batches and the options that change the result — is this
/// calibration's gives the result and the attributes calibrate() would set,
/// without running the model; a missing file, or one written for another
/// key (a warning to `diagnostics`), is calibrated and written atomically.
/// Throws UserError (in the cache's path) for a file that is not a
/// calibration cache or does not fit the graph; it is not overwritten.
Calibration calibrateCached(mlir::ModuleOp module,
                            const std::vector<Batch> &batches,
                            const Int8Options &options,
                            const std::string &modelPath,
                            const DiagnosticSink &diagnostics);

/// The `method` object of the report and of the calibration cache: the
/// method's name and parameters, the options that change the calibration,
/// and with `withFallback` --int8-fallback fp16 (which does not).
llvm::json::Object calibrationMethodJson(const Int8Options &options,
                                         bool withFallback);

/// The accuracy target's search steps as the report and the calibration
/// cache write them (`kept_f32`, `top1_agreement`, `margin_agreement`,
/// `estimated_agreement`,
/// `rel_l2_error`, `meets`).
llvm::json::Array searchJson(const std::vector<SearchStep> &search);

/// The int8 model against the fp32 one on a set of batches.
struct Accuracy {
  size_t samples = 0;
  /// Per model output: the fraction of rows (all dims but the last) whose
  /// argmax agrees, and ||int8 - fp32||2 / ||fp32||2 over the set.
  std::vector<double> top1Agreement, relL2Error;
  /// The agreement with int8's deviation from fp32 multiplied by
  /// Int8Options::accuracyMargin, counted row by row.
  std::vector<double> marginAgreement;
  /// The same, estimated by estimatedAgreement() (the accuracy target's
  /// gate).
  std::vector<double> estimatedAgreement;
};

/// At most this many rows take part in estimatedAgreement().
inline constexpr size_t kEstimateRows = 4096;
/// The t-th row estimatedAgreement() uses of `all` rows: evenly spaced.
inline size_t estimateRow(size_t t, size_t all) {
  return all <= kEstimateRows ? t : t * all / kEstimateRows;
}

/// The expected top-1 agreement of int8 rows with fp32 ones on inputs
/// like these, with int8's error multiplied by `margin`
/// (docs/quantization.md, "The gate's estimate"): `fp32` and `int8` hold the
/// same rows of `width` scores (softmax rows are compared in log space).
/// Row i's fp32 classes in order give its gaps G_i(r) = z(best) - z(r-th),
/// and its shifts P_i(r) = margin * (the int8 error of z(r-th) - that of
/// z(best)); row j under row i's error flips when some G_j(r) < P_i(r).
/// The estimate is 1 - the fraction of the rows^2 pairs (i, j) that flip:
/// counting only the pairs i = j (the rows' own flips) is decided by the
/// few rows whose two best classes are nearly tied, and pairing every row's
/// error with every row's gaps averages over them. Of more than
/// kEstimateRows rows, kEstimateRows evenly spaced ones (row t * rows /
/// kEstimateRows) take part. 1 when width < 2.
double estimatedAgreement(llvm::ArrayRef<float> fp32,
                          llvm::ArrayRef<float> int8, int64_t width,
                          double margin);

/// Runs `fp32` and `int8` (graph dialect modules of one model) on
/// `batches` and compares their outputs. `prepareInt8`, if given, runs on
/// each copy of `int8` once it is specialized to a batch's shapes, before it
/// runs (the fuse stage's passes: where an fp16 graph rounds is the
/// kernels').
Accuracy
measureAccuracy(mlir::ModuleOp fp32, mlir::ModuleOp int8,
                const std::vector<Batch> &batches,
                const std::function<void(mlir::ModuleOp)> &prepareInt8 = {});

/// Writes the report (docs/quantization.md) of `modelPath`'s calibration to
/// options.reportPath.
void writeReport(const std::string &modelPath, const Int8Options &options,
                 const Calibration &calibration, const Accuracy &onCalibration,
                 const std::optional<Accuracy> &onHoldout);

} // namespace dlc::driver

#endif // DLC_COMPILER_CALIBRATE_H
