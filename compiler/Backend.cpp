//===- Backend.cpp - from an execution plan to CUDA and an artifact -------===//

#include "compiler/Backend.h"

#include "artifact/LibraryCall.h"
#include "compiler/Driver.h"
#include "compiler/codegen/Cost.h"
#include "compiler/codegen/ElementTypes.h"
#include "compiler/codegen/cuda/Emitter.h"
#include "compiler/codegen/cuda/Nvrtc.h"
#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"
#include "support/Error.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

using namespace mlir;
using namespace dlc;

namespace {

/// Writes the bytes of a constant in its storage format (i1 as one byte
/// each) at `out`, where `room` bytes are free; a weight's blob straight
/// from its resource, without a copy on the way.
void writeStorageBytes(ElementsAttr value, char *out, size_t room) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  const size_t width =
      element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  const size_t bytes = static_cast<size_t>(type.getNumElements()) * width;
  if (bytes > room)
    throw std::logic_error("a weight outside the planned weight region");
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes)
      throw std::logic_error("weight at " +
                             std::string(resource.getRawHandle().getKey()) +
                             " has no data of the right size");
    std::memcpy(out, blob->getData().data(), bytes);
    return;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    throw std::logic_error("a weight of an unsupported attribute kind");
  if (element.isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      *out++ = v ? 1 : 0;
    return;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      std::memcpy(out + size_t(i) * width, raw.data(), width);
    return;
  }
  if (raw.size() != bytes)
    throw std::logic_error("a weight whose data is not of its type's size");
  std::memcpy(out, raw.data(), bytes);
}

/// A copy step: `bytes` from the first parameter to the second.
codegen::CudaKernel copyKernel(unsigned index, int64_t bytes) {
  codegen::CudaKernel k;
  k.name = "c" + std::to_string(index) + "_copy";
  k.entry = "dlc_" + k.name;
  k.family = "copy";
  k.numIns = 1;
  k.numOuts = 1;
  std::ostringstream src;
  src << "// " << k.name << ": copies " << bytes << " bytes\n"
      << "extern \"C\" __global__ void " << k.entry
      << "(const unsigned char *__restrict__ in, unsigned char *__restrict__ "
         "out) {\n"
      << "  const long long n = " << bytes << "LL;\n"
      << "  // 16 bytes at a time: every buffer is 256-byte aligned.\n"
      << "  const long long vectors = n / 16;\n"
      << "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
      << "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "  for (long long v = i; v < vectors; v += stride)\n"
      << "    reinterpret_cast<uint4 *>(out)[v] =\n"
      << "        reinterpret_cast<const uint4 *>(in)[v];\n"
      << "  for (long long b = vectors * 16 + i; b < n; b += stride)\n"
      << "    out[b] = in[b];\n"
      << "}\n";
  k.source = src.str();
  const int64_t threads = 256;
  int64_t blocks = (bytes / 16 + threads - 1) / threads;
  k.launch.block = {static_cast<uint32_t>(threads), 1, 1};
  k.launch.grid = {static_cast<uint32_t>(
                       std::max<int64_t>(1, std::min<int64_t>(blocks, 65535))),
                   1, 1};
  return k;
}

/// Where one buffer value of the plan lives.
artifact::BufferRef bufferOf(Value value, func::FuncOp plan) {
  while (auto view = value.getDefiningOp<exec::ViewOp>())
    value = view.getSource();
  artifact::BufferRef ref;
  ref.bytes = exec::byteSize(cast<MemRefType>(value.getType()));
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    unsigned n = arg.getArgNumber();
    if (auto in = plan.getArgAttrOfType<IntegerAttr>(n, exec::kInputAttr)) {
      ref.region = artifact::Region::Input;
      ref.index = static_cast<uint32_t>(in.getInt());
    } else {
      auto out = plan.getArgAttrOfType<IntegerAttr>(n, exec::kOutputAttr);
      ref.region = artifact::Region::Output;
      ref.index = static_cast<uint32_t>(out.getInt());
    }
    return ref;
  }
  if (auto weight = value.getDefiningOp<exec::WeightOp>()) {
    ref.region = artifact::Region::Weights;
    ref.offset = static_cast<uint64_t>(weight.getOffset().value_or(0));
    return ref;
  }
  auto alloc = value.getDefiningOp<exec::AllocOp>();
  if (!alloc || !alloc.getOffset())
    throw std::logic_error("a buffer without a planned place (run "
                           "dlc-plan-memory first)");
  ref.region = artifact::Region::Arena;
  ref.offset = static_cast<uint64_t>(*alloc.getOffset());
  return ref;
}

/// One step of the program: a generated kernel or a library call.
struct Step {
  codegen::CudaKernel kernel;
  std::optional<artifact::LibraryCall> call;
  /// A library call's constant operands: (parameter index, bytes), placed in
  /// the weight region by buildArtifact.
  std::vector<std::pair<size_t, std::string>> constants;
  std::vector<artifact::BufferRef> params;
  /// Its FLOPs and bytes (compiler/codegen/Cost.h).
  artifact::StepCost cost;
};

/// The library call step of `kernel`: its buffers, and its constants to be
/// placed.
Step libraryStep(exec::KernelOp kernel, driver::LibraryCallPlan plan,
                 func::FuncOp func) {
  Step step;
  artifact::LibraryCall call;
  // "k3_matmul" -> "l3_matmul": the plan's step number stays visible.
  call.name = kernel.getSymName().str();
  if (!call.name.empty() && call.name[0] == 'k')
    call.name[0] = 'l';
  call.library = artifact::libraryOf(plan.descriptor);
  call.op = artifact::opOf(plan.descriptor);
  for (Attribute layer : kernel.getLayers())
    call.layers.push_back(cast<StringAttr>(layer).str());
  call.descriptor = artifact::toJson(plan.descriptor);
  call.workspaceBytes = plan.workspaceBytes;
  for (driver::LibraryOperand &operand : plan.operands) {
    if (operand.buffer) {
      step.params.push_back(bufferOf(operand.buffer, func));
    } else {
      step.constants.emplace_back(step.params.size(),
                                  std::move(operand.constant));
      step.params.emplace_back();
    }
  }
  step.call = std::move(call);
  return step;
}

/// The code generator's options for `options.archs`: the oldest arch's
/// heuristic and tuning cache entries.
codegen::EmitOptions emitOptions(const driver::BackendOptions &options) {
  codegen::EmitOptions emit;
  if (!options.archs.empty())
    emit.smVersion =
        int(*std::min_element(options.archs.begin(), options.archs.end()));
  if (const codegen::TuningCache *cache = options.tuning) {
    const int arch = emit.smVersion;
    emit.tiling = [cache, arch](const codegen::GemmProblem &problem)
        -> std::optional<codegen::TilingChoice> {
      if (const codegen::TuningEntry *entry = cache->find({arch, problem}))
        return codegen::TilingChoice{entry->tiling, "tuned"};
      return std::nullopt;
    };
  }
  return emit;
}

std::vector<Step> emitSteps(ModuleOp module, const std::string &modelPath,
                            const driver::BackendOptions &options,
                            driver::KernelChoice choice) {
  func::FuncOp plan = driver::mainFunction(module);
  const codegen::EmitOptions emit = emitOptions(options);
  driver::FirstError error(*module.getContext(), modelPath,
                           /*printRemarks=*/false, options.diagnostics);
  std::vector<Step> steps;
  unsigned copies = 0;
  for (Operation &op : plan.getBody().front()) {
    if (auto kernel = dyn_cast<exec::KernelOp>(op)) {
      if (std::optional<driver::LibraryCallPlan> call =
              driver::planLibraryCall(kernel, choice)) {
        steps.push_back(libraryStep(kernel, std::move(*call), plan));
        steps.back().cost = codegen::kernelCost(kernel);
        continue;
      }
      FailureOr<codegen::CudaKernel> emitted =
          codegen::emitKernel(kernel, emit);
      if (failed(emitted))
        error.raise("the CUDA code generator failed");
      Step step;
      step.kernel = std::move(*emitted);
      for (Value v : kernel.getIns())
        step.params.push_back(bufferOf(v, plan));
      for (Value v : kernel.getOuts())
        step.params.push_back(bufferOf(v, plan));
      step.cost = codegen::kernelCost(kernel);
      steps.push_back(std::move(step));
    } else if (auto copy = dyn_cast<exec::CopyOp>(op)) {
      Step step;
      step.kernel =
          copyKernel(copies++, exec::byteSize(copy.getTarget().getType()));
      step.params = {bufferOf(copy.getSource(), plan),
                     bufferOf(copy.getTarget(), plan)};
      step.cost = codegen::copyCost(
          uint64_t(exec::byteSize(copy.getTarget().getType())));
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

} // namespace

std::vector<codegen::CudaKernel>
driver::emitCuda(ModuleOp module, const BackendOptions &options,
                 const std::string &modelPath) {
  std::vector<codegen::CudaKernel> kernels;
  for (Step &step :
       emitSteps(module, modelPath, options, KernelChoice::Generated))
    kernels.push_back(std::move(step.kernel));
  return kernels;
}

std::string
driver::formatCuda(const std::vector<codegen::CudaKernel> &kernels) {
  std::ostringstream os;
  for (const codegen::CudaKernel &k : kernels)
    os << codegen::kernelHeader(k) << "\n" << k.source << "\n";
  return os.str();
}

artifact::Artifact driver::buildArtifact(ModuleOp module,
                                         const BackendOptions &options,
                                         const std::string &modelPath) {
  func::FuncOp plan = mainFunction(module);
  std::vector<Step> steps =
      emitSteps(module, modelPath, options, options.kernels);

  artifact::Artifact a;
  a.dlcVersion = artifact::libraryVersion();
  a.archs = options.archs;
  std::sort(a.archs.begin(), a.archs.end());
  a.ptxArch = a.archs.front();
  std::string source = modelPath;
  if (size_t slash = source.find_last_of('/'); slash != std::string::npos)
    source = source.substr(slash + 1);
  a.source = source;
  a.precision = options.int8 ? "int8" : options.fp16 ? "fp16" : "fp32";

  Block &body = plan.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    artifact::TensorSpec spec;
    spec.type = codegen::elementTypeOf(type.getElementType());
    spec.shape.assign(type.getShape().begin(), type.getShape().end());
    unsigned n = arg.getArgNumber();
    if (auto in = plan.getArgAttrOfType<IntegerAttr>(n, exec::kInputAttr)) {
      StringRef layer = graph::layerOf(arg.getLoc()).name;
      spec.name =
          layer.empty() ? "input_" + std::to_string(in.getInt()) : layer.str();
      a.inputs.push_back(std::move(spec));
    } else {
      spec.name = "output_" + std::to_string(a.outputs.size());
      a.outputs.push_back(std::move(spec));
    }
  }
  auto attr = [&](const char *name) -> uint64_t {
    auto v = plan->getAttrOfType<IntegerAttr>(name);
    return v ? static_cast<uint64_t>(v.getInt()) : 0;
  };
  a.arenaBytes = attr(exec::kArenaSizeAttr);
  a.weights.assign(attr(exec::kWeightsSizeAttr), '\0');
  for (auto weight : body.getOps<exec::WeightOp>()) {
    uint64_t offset = weight.getOffset().value_or(0);
    if (offset > a.weights.size())
      throw std::logic_error("a weight outside the planned weight region");
    writeStorageBytes(weight.getValue(), a.weights.data() + offset,
                      a.weights.size() - offset);
  }

  // Library calls' constants go after the planned weights.
  for (Step &step : steps)
    for (auto &[param, bytes] : step.constants) {
      a.weights.resize(artifact::alignUp(a.weights.size()), '\0');
      step.params[param] = {artifact::Region::Weights, 0, a.weights.size(),
                            bytes.size()};
      a.weights += bytes;
    }

  std::vector<codegen::CudaKernel> kernels;
  for (const Step &s : steps)
    if (!s.call)
      kernels.push_back(s.kernel);
  codegen::NvrtcOptions nvrtc;
  nvrtc.archs = a.archs;
  nvrtc.progress = options.progress;
  std::vector<codegen::CompiledKernel> code =
      codegen::compileKernels(kernels, nvrtc);
  size_t compiled = 0;
  for (Step &s : steps) {
    if (s.call) {
      s.call->params = std::move(s.params);
      s.call->cost = s.cost;
      a.program.push_back({artifact::Step::Kind::LibraryCall,
                           static_cast<uint32_t>(a.libraryCalls.size())});
      a.libraryCalls.push_back(std::move(*s.call));
    } else {
      a.program.push_back({artifact::Step::Kind::Kernel,
                           static_cast<uint32_t>(a.kernels.size())});
      a.kernels.push_back(codegen::makeArtifactKernel(
          s.kernel, std::move(code[compiled++]), std::move(s.params)));
      a.kernels.back().cost = s.cost;
    }
  }
  return a;
}
