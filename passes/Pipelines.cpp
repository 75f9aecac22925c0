//===- Pipelines.cpp - dlc's compilation pipeline -------------------------===//

#include "passes/Pipelines.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

std::unique_ptr<Pass> topDownCanonicalizer() {
  // Top-down, so that the folder finds the importer's constants already at
  // the top of the function and leaves them (and their locations) in place.
  GreedyRewriteConfig config;
  config.useTopDownTraversal = true;
  return createCanonicalizerPass(config);
}

} // namespace

std::vector<dlc::PipelineStage>
dlc::pipelineStages(const PipelineConfig &config) {
  std::vector<PipelineStage> stages;
  // --precision int8 calibrates the graph of the layout stage on batches of
  // any size (and its report measures the int8 graph on them): the batch
  // dim stays open through the int8 stage; the fuse stage fixes it.
  std::optional<int64_t> batch =
      config.int8 && !config.fp16 ? std::nullopt : config.batch;
  stages.push_back({"import",
                    [batch](OpPassManager &pm) {
                      if (batch) {
                        SpecializeBatchPassOptions options;
                        options.batch = *batch;
                        pm.addPass(createSpecializeBatchPass(options));
                      }
                      pm.addPass(topDownCanonicalizer());
                    },
                    true});
  stages.push_back({"simplify",
                    [](OpPassManager &pm) {
                      pm.addNestedPass<func::FuncOp>(createSimplifyPass());
                    },
                    true});
  // --precision int8: NHWC everywhere, as the int8 tensor-core kernels read
  // it (the layout of the fp32 graph that is calibrated, then quantized).
  std::string precision =
      config.fp16 ? "fp16" : (config.int8 ? "int8" : "fp32");
  stages.push_back({"layout",
                    [precision](OpPassManager &pm) {
                      AssignLayoutPassOptions options;
                      options.precision = precision;
                      pm.addNestedPass<func::FuncOp>(
                          createAssignLayoutPass(options));
                      pm.addNestedPass<func::FuncOp>(createSimplifyPass());
                    },
                    true});
  const PipelineStage fp16{
      "fp16",
      [](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(createLowerToFP16Pass());
        pm.addNestedPass<func::FuncOp>(createSimplifyPass());
      },
      true, /*kernelNumerics=*/false};
  if (config.fp16)
    stages.push_back(fp16);
  if (config.int8 && !config.fp16) {
    bool keep = config.int8KeepFirstLast;
    bool zeroPoint = config.int8UnsignedActivations;
    stages.push_back(
        {"int8",
         [keep, zeroPoint](OpPassManager &pm) {
           QuantizeInt8PassOptions options;
           options.keepFirstLast = keep;
           options.unsignedActivations = zeroPoint;
           pm.addNestedPass<func::FuncOp>(createQuantizeInt8Pass(options));
           // The int8 weights of the new quantized_matmuls
           // stored [N, K], as the int8 GEMM reads them.
           AssignLayoutPassOptions layout;
           layout.precision = "int8";
           pm.addNestedPass<func::FuncOp>(createAssignLayoutPass(layout));
           pm.addNestedPass<func::FuncOp>(createSimplifyPass());
           // One quantize_static per value and scale: the layers that read
           // one tensor (a ResNet stage's first block: its shortcut and its
           // first 1x1 convolution) are calibrated on the same values, and
           // their quantize_statics (with any channel padding or zero-point
           // add before them) would each be a kernel storing the same int8
           // tensor.
           pm.addNestedPass<func::FuncOp>(createCSEPass());
         },
         true, /*kernelNumerics=*/false});
    // --int8-fallback fp16: the float ops int8 leaves (and the quantized
    // ops' results) store f16, as under --precision fp16.
    if (config.int8Fp16)
      stages.push_back(fp16);
  }
  bool report = config.reportFusion;
  std::optional<int64_t> late =
      config.int8 && !config.fp16 ? config.batch : std::nullopt;
  bool float8 = config.float8 && !config.fp16;
  bool int8Library = config.int8Library;
  stages.push_back(
      {"fuse",
       [report, late, float8, int8Library](OpPassManager &pm) {
         if (late) {
           SpecializeBatchPassOptions options;
           options.batch = *late;
           pm.addPass(createSpecializeBatchPass(options));
           // The static shapes let dlc-simplify make
           // quantize_static's scale results constants.
           pm.addNestedPass<func::FuncOp>(createSimplifyPass());
         }
         FusePassOptions options;
         options.report = report;
         if (float8)
           pm.addNestedPass<func::FuncOp>(createFloat8MatmulPass());
         if (int8Library)
           pm.addNestedPass<func::FuncOp>(createIntegerMatmulPass());
         pm.addNestedPass<func::FuncOp>(createSplitRecurrentPass());
         pm.addNestedPass<func::FuncOp>(createFusePass(options));
       },
       true});
  stages.push_back(
      {"exec", [](OpPassManager &pm) { pm.addPass(createLowerToExecPass()); },
       false});
  stages.push_back(
      {"plan", [](OpPassManager &pm) { pm.addPass(createPlanMemoryPass()); },
       false});
  return stages;
}

std::vector<std::string> dlc::allStageNames() {
  PipelineConfig config;
  config.fp16 = true;
  std::vector<std::string> names;
  for (const PipelineStage &stage : pipelineStages(config)) {
    names.push_back(stage.name);
    if (stage.name == "fp16")
      names.push_back("int8");
  }
  return names;
}

void dlc::buildPipeline(OpPassManager &pm, const PipelineConfig &config) {
  for (const PipelineStage &stage : pipelineStages(config))
    stage.build(pm);
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<int64_t> batch{*this, "batch",
                        llvm::cl::desc("Fix the batch dim (0: leave it)"),
                        llvm::cl::init(0)};
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("fp32 or fp16"),
                                llvm::cl::init("fp32")};
  Option<bool> reportFusion{
      *this, "report-fusion",
      llvm::cl::desc("Remarks on producer/consumer pairs left unfused"),
      llvm::cl::init(false)};
  Option<bool> float8{
      *this, "float8",
      llvm::cl::desc("Float8 GEMMs for Keras float8 Dense (sm_89+ targets)"),
      llvm::cl::init(false)};
  Option<bool> int8Library{
      *this, "int8-library",
      llvm::cl::desc("int8 GEMMs as int32 sums for cuBLASLt (--kernels "
                     "library)"),
      llvm::cl::init(false)};
};
} // namespace

void dlc::registerPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "dlc-pipeline", "dlc's whole compilation pipeline, graph to plan",
      [](OpPassManager &pm, const PipelineOptions &options) {
        PipelineConfig config;
        if (options.batch > 0)
          config.batch = options.batch;
        config.fp16 = options.precision == "fp16";
        config.reportFusion = options.reportFusion;
        config.float8 = options.float8;
        config.int8Library = options.int8Library;
        buildPipeline(pm, config);
      });
}
