//===- dlc-emulate.cpp - a model's generated CUDA kernels run on the host -===//
//
//   dlc-emulate MODEL|FILE.mlir --input X.npy ... --output Y.npy ...
//               [--precision fp32|fp16|int8 [--calibrate DIR]
//               [--int8-unsigned-activations] [--int8-bias-correction]
//               [--int8-depthwise-channel-scales]
//               [--int8-fallback fp32|fp16]]
//               [--batch N]
//               [--arch sm_XX]
//               [--weights FILE] [--cache-dir DIR] [--jobs N] [--cxx PATH]
//               [--reverse] [--copies-at-once] [--check-kernels]
//               [--report FILE.json]
//
// A test tool: compiles the model (or a graph-dialect module with a
// func.func @main, as the importer makes) as `dlc compile --emit cuda` does
// (driver::compile: the pipeline to the execution plan, the batch the
// inputs'; --batch N repeats or cuts their rows to N; the CUDA source of
// every step, exec.copy steps as copy kernels, no library calls, the
// heuristic's tilings without a tuning cache),
// compiles each kernel for the host (KernelCompiler.h, CudaEmulation.h) and
// walks the plan as reference::executePlan does, in one arena of
// exec.arena_size bytes that reads as NaN until written, a weight region and
// the arguments; but every step runs its generated kernel. The outputs are
// then what a GPU would compute, up to the host's rounding of the math
// functions (and no FMA contraction). --check-kernels also runs the reference
// executor on each kernel's body with the kernel's own ins, and --report
// records each kernel's error against it: a wrong kernel shows by name, not
// only through the model's outputs.
//
// Exit status: 0, 1 for a user error (as dlc's), 2 when a kernel does not
// compile for the host, 3 when the emulation finds a kernel at fault (a
// barrier that cannot complete, shared memory out of range, a fault).
//
//===----------------------------------------------------------------------===//

#include "test/emulator/KernelCompiler.h"

#include "compiler/Compile.h"
#include "compiler/Driver.h"
#include "compiler/codegen/cuda/Nvrtc.h"
#include "compiler/reference/Executor.h"
#include "dialects/exec/ExecDialect.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

using namespace mlir;
using namespace dlc;
using emulator::GuardedBuffer;

namespace {

struct Args {
  std::string model;
  std::map<std::string, std::vector<std::string>> values;
  bool has(const std::string &flag) const { return values.count(flag); }
  std::string get(const std::string &flag, const std::string &fallback) const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : it->second.back();
  }
};

Args parseArgs(int argc, char **argv) {
  static const char *const kValued[] = {
      "--input", "--output",  "--precision", "--batch",
      "--arch",  "--weights", "--cache-dir", "--jobs",
      "--cxx",   "--report",  "--calibrate", "--int8-fallback"};
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reverse" || a == "--copies-at-once" || a == "--check-kernels" ||
        a == "--int8-unsigned-activations" || a == "--int8-bias-correction" ||
        a == "--int8-depthwise-channel-scales") {
      args.values[a].push_back("");
    } else if (std::find(std::begin(kValued), std::end(kValued), a) !=
               std::end(kValued)) {
      if (i + 1 == argc)
        throw UserError(a + " needs a value");
      args.values[a].push_back(argv[++i]);
    } else if (a.rfind("--", 0) == 0 || !args.model.empty()) {
      throw UserError("unexpected argument '" + a + "'");
    } else {
      args.model = a;
    }
  }
  if (args.model.empty() || !args.has("--input") || !args.has("--output"))
    throw UserError("usage: dlc-emulate MODEL --input X.npy ... --output "
                    "Y.npy ... [--precision fp32|fp16|int8 [--calibrate "
                    "DIR]] [--batch N]");
  return args;
}

/// The bytes of a weight in its storage format (little-endian elements, i1
/// as one byte each).
std::string weightBytes(exec::WeightOp weight) {
  ElementsAttr value = weight.getValue();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      throw std::logic_error("a weight without data");
    return std::string(blob->getData().data(), blob->getData().size());
  }
  std::string bytes;
  auto append = [&](const APInt &bits) {
    const unsigned width = std::max(1u, bits.getBitWidth() / 8);
    for (unsigned b = 0; b < width; ++b)
      bytes.push_back(static_cast<char>(bits.extractBitsAsZExtValue(
          std::min(8u, bits.getBitWidth() - 8 * b), 8 * b)));
  };
  auto dense = cast<DenseElementsAttr>(value);
  if (isa<FloatType>(dense.getElementType()))
    for (const APFloat &v : dense.getValues<APFloat>())
      append(v.bitcastToAPInt());
  else
    for (const APInt &v : dense.getValues<APInt>())
      append(v);
  return bytes;
}

DType storageDType(Type element) {
  if (element.isF16())
    return DType::F16;
  if (element.isBF16())
    return DType::BF16;
  if (element.isInteger(8))
    return DType::I8;
  if (element.isInteger(32))
    return DType::I32;
  if (element.isInteger(64))
    return DType::I64;
  if (element.isInteger(1))
    return DType::Bool;
  return DType::F32;
}

std::vector<int64_t> shapeOf(MemRefType type) {
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

/// `t` with `rows` rows along its first dim: its own, repeated or cut.
Tensor withRows(const Tensor &t, int64_t rows) {
  if (t.rank() == 0 || t.dim(0) == 0 || rows <= 0)
    throw UserError("--batch needs inputs with rows and a positive count");
  std::vector<int64_t> shape = t.shape();
  shape[0] = rows;
  Tensor out(t.dtype(), shape);
  const size_t rowBytes = t.bytes() / static_cast<size_t>(t.dim(0));
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char *>(out.raw()) + r * rowBytes,
                static_cast<const char *>(t.raw()) + (r % t.dim(0)) * rowBytes,
                rowBytes);
  return out;
}

/// What runs, for the fault handler.
const char *runningKernel = "(none)";

void onFault(int signal) {
  const char *what = signal == SIGSEGV ? "SIGSEGV" : "SIGBUS";
  // Only async-signal-safe calls.
  auto say = [](const char *s) {
    ssize_t ignored = write(2, s, std::strlen(s));
    (void)ignored;
  };
  say("dlc-emulate: error: emulated kernel ");
  say(runningKernel);
  say(": ");
  say(what);
  say(" (an access outside its buffers, or a thread's stack overflow)\n");
  std::_Exit(3);
}

void installFaultHandler() {
  static std::vector<char> altStack(1 << 16);
  stack_t ss{};
  ss.ss_sp = altStack.data();
  ss.ss_size = altStack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction action {};
  action.sa_handler = onFault;
  action.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
}

/// One step's record for --report.
struct StepReport {
  const codegen::CudaKernel *kernel;
  double seconds;
  /// With --check-kernels: the worst relative L2 error of the kernel's outs
  /// against the reference executor's on the same ins (NaN: a NaN or a
  /// shape that differs), and its output's largest absolute difference.
  std::optional<double> error, maxAbs;
};

Tensor tensorAt(const unsigned char *at, MemRefType type) {
  Tensor t(storageDType(type.getElementType()), shapeOf(type));
  std::memcpy(t.raw(), at, t.bytes());
  return t;
}

/// What the reference executor computes for `kernel`'s body on `ins`: the
/// body cloned into a function of its own.
std::vector<Tensor> referenceOutputs(exec::KernelOp kernel,
                                     const std::vector<Tensor> &ins) {
  Block &body = kernel.getBody().front();
  Operation *yield = body.getTerminator();
  OpBuilder b(kernel.getContext());
  Location loc = kernel.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(
      loc, "kernel",
      b.getFunctionType(body.getArgumentTypes(), yield->getOperandTypes()));
  Block *entry = func.addEntryBlock();
  IRMapping map;
  map.map(body.getArguments(), entry->getArguments());
  b.setInsertionPointToEnd(entry);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  SmallVector<Value> results;
  for (Value v : yield->getOperands())
    results.push_back(map.lookupOrDefault(v));
  b.create<func::ReturnOp>(loc, results);
  return reference::execute(func, ins);
}

/// The relative L2 error of `actual` against `expected` and the largest
/// absolute difference; NaN for a NaN in `actual` or a shape that differs.
std::pair<double, double> compare(const Tensor &actual,
                                  const Tensor &expected) {
  if (actual.shape() != expected.shape())
    return {NAN, NAN};
  double diff = 0, norm = 0, maxAbs = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.at(i), e = expected.at(i);
    if (std::isnan(a) && !std::isnan(e))
      return {NAN, NAN};
    if (std::isnan(e) || std::isinf(e))
      continue;
    diff += (a - e) * (a - e);
    norm += e * e;
    maxAbs = std::max(maxAbs, std::fabs(a - e));
  }
  return {norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff), maxAbs};
}

/// Runs the planned entry function's steps on their generated kernels.
std::vector<Tensor>
runPlan(func::FuncOp plan, const std::vector<Tensor> &inputs,
        const std::vector<std::unique_ptr<emulator::HostKernel>> &kernels,
        const emulator::RunOptions &options, bool checkKernels,
        std::vector<StepReport> &report) {
  auto attr = [&](const char *name) -> size_t {
    auto a = plan->getAttrOfType<IntegerAttr>(name);
    return a ? static_cast<size_t>(a.getInt()) : 0;
  };
  GuardedBuffer arena(attr(exec::kArenaSizeAttr));
  GuardedBuffer weights(attr(exec::kWeightsSizeAttr), 0);
  std::vector<std::unique_ptr<GuardedBuffer>> owned;
  auto own = [&](MemRefType type) {
    owned.push_back(std::make_unique<GuardedBuffer>(exec::byteSize(type)));
    return owned.back()->data();
  };
  auto place = [&](GuardedBuffer &region, std::optional<int64_t> offset,
                   MemRefType type, Operation *op) -> unsigned char * {
    if (!offset)
      return own(type);
    if (*offset < 0 || size_t(*offset + exec::byteSize(type)) > region.size())
      throw std::logic_error("a buffer outside its region at " +
                             op->getName().getStringRef().str());
    return region.data() + *offset;
  };

  Block &body = plan.getBody().front();
  llvm::DenseMap<Value, unsigned char *> where;
  std::vector<std::pair<unsigned char *, MemRefType>> outputs;
  size_t nextInput = 0;
  for (BlockArgument arg : body.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    where[arg] = own(type);
    if (plan.getArgAttr(arg.getArgNumber(), exec::kOutputAttr)) {
      outputs.push_back({where[arg], type});
      continue;
    }
    if (nextInput == inputs.size())
      throw UserError("the plan has more inputs than given");
    Tensor t = inputs[nextInput++].cast(storageDType(type.getElementType()));
    if (t.shape() != shapeOf(type))
      throw UserError("input " + std::to_string(nextInput - 1) + " has shape " +
                      formatShape(t.shape()) + ", the plan expects " +
                      formatShape(shapeOf(type)));
    std::memcpy(where[arg], t.raw(), t.bytes());
  }

  size_t next = 0;
  auto param = [&](Value v) -> emulator::Param {
    return {where.lookup(v),
            static_cast<size_t>(exec::byteSize(cast<MemRefType>(v.getType())))};
  };
  auto runStep = [&](const std::string &name,
                     const std::vector<emulator::Param> &args) {
    if (next == kernels.size() || kernels[next]->kernel().name != name)
      throw std::logic_error("the plan's step " + name +
                             " has no kernel in emitCuda's order");
    emulator::HostKernel &k = *kernels[next++];
    runningKernel = k.kernel().name.c_str();
    auto start = std::chrono::steady_clock::now();
    k.launch(args, options);
    report.push_back(
        {&k.kernel(),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count(),
         std::nullopt, std::nullopt});
    runningKernel = "(none)";
  };
  // With --check-kernels, a kernel's ins are read before it runs (an out may
  // share their bytes) and its outs compared with the reference's after.
  auto checkStep = [&](exec::KernelOp kernel,
                       const std::vector<emulator::Param> &args) {
    std::vector<Tensor> ins, expected;
    for (auto [i, v] : llvm::enumerate(kernel.getIns()))
      ins.push_back(tensorAt(static_cast<unsigned char *>(args[i].at),
                             cast<MemRefType>(v.getType())));
    expected = referenceOutputs(kernel, ins);
    runStep(kernel.getSymName().str(), args);
    double worst = 0, maxAbs = 0;
    for (auto [i, v] : llvm::enumerate(kernel.getOuts())) {
      Tensor actual =
          tensorAt(static_cast<unsigned char *>(args[ins.size() + i].at),
                   cast<MemRefType>(v.getType()));
      auto [error, abs] = compare(actual, expected[i]);
      worst =
          std::isnan(error) || std::isnan(worst) ? NAN : std::max(worst, error);
      maxAbs = std::isnan(abs) ? abs : std::max(maxAbs, abs);
    }
    report.back().error = worst;
    report.back().maxAbs = maxAbs;
  };
  unsigned copies = 0;
  for (Operation &op : body) {
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      std::string bytes = weightBytes(weight);
      if (bytes.size() != size_t(exec::byteSize(weight.getType())))
        throw std::logic_error("a weight of the wrong size");
      where[weight] = place(weights, weight.getOffset(), weight.getType(), &op);
      std::memcpy(where[weight], bytes.data(), bytes.size());
    } else if (auto alloc = dyn_cast<exec::AllocOp>(op)) {
      where[alloc] = place(arena, alloc.getOffset(), alloc.getType(), &op);
    } else if (auto view = dyn_cast<exec::ViewOp>(op)) {
      where[view] = where.lookup(view.getSource());
    } else if (auto copy = dyn_cast<exec::CopyOp>(op)) {
      runStep("c" + std::to_string(copies++) + "_copy",
              {param(copy.getSource()), param(copy.getTarget())});
    } else if (auto kernel = dyn_cast<exec::KernelOp>(op)) {
      std::vector<emulator::Param> args;
      for (Value v : kernel.getIns())
        args.push_back(param(v));
      for (Value v : kernel.getOuts())
        args.push_back(param(v));
      if (checkKernels)
        checkStep(kernel, args);
      else
        runStep(kernel.getSymName().str(), args);
    }
  }
  if (next != kernels.size())
    throw std::logic_error(
        "emitCuda made more kernels than the plan has steps");

  std::vector<Tensor> results;
  for (auto [at, type] : outputs) {
    Tensor t = tensorAt(at, type);
    results.push_back(t.dtype() == DType::BF16 ? t.cast(DType::F32) : t);
  }
  return results;
}

void writeReport(const std::string &path, const std::vector<StepReport> &steps,
                 unsigned compiled, double compileSeconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, 1);
  json.object([&] {
    json.attribute("compiled", compiled);
    json.attribute("compile_seconds", compileSeconds);
    json.attributeArray("kernels", [&] {
      for (const StepReport &s : steps)
        json.object([&] {
          const codegen::CudaKernel &k = *s.kernel;
          json.attribute("name", k.name);
          json.attribute("family", k.family);
          json.attribute("tiling", k.tiling);
          json.attributeArray("grid", [&] {
            for (uint32_t g : k.launch.grid)
              json.value(g);
          });
          json.attributeArray("block", [&] {
            for (uint32_t b : k.launch.block)
              json.value(b);
          });
          json.attribute("dynamic_smem", k.launch.dynamicSharedBytes);
          json.attribute("seconds", s.seconds);
          if (s.error) {
            // JSON has no NaN: null.
            json.attribute("error", std::isnan(*s.error)
                                        ? llvm::json::Value(nullptr)
                                        : llvm::json::Value(*s.error));
            json.attribute("max_abs", std::isnan(*s.maxAbs)
                                          ? llvm::json::Value(nullptr)
                                          : llvm::json::Value(*s.maxAbs));
          }
        });
    });
  });
  os << "\n";
  writeFileAtomic(path, os.str());
}

int run(int argc, char **argv) {
  Args args = parseArgs(argc, argv);
  const std::vector<std::string> &inputPaths = args.values["--input"];
  const std::vector<std::string> &outputPaths = args.values["--output"];
  std::vector<Tensor> inputs;
  for (const std::string &p : inputPaths) {
    inputs.push_back(readNpy(p));
    if (args.has("--batch"))
      inputs.back() =
          withRows(inputs.back(), std::stoll(args.get("--batch", "")));
  }

  auto context = driver::makeContext();
  keras::ImportResult model;
  if (StringRef(args.model).ends_with(".mlir")) {
    // Graph IR written by hand (the tests of single kernel families).
    model.module = parseSourceFile<ModuleOp>(args.model, context.get());
    if (!model.module)
      throw UserError("cannot parse the graph IR", args.model);
  } else {
    // Sized by the inputs, as `dlc run` does (None dims besides the batch).
    model = driver::loadModelFor(*context, args.model,
                                 args.get("--weights", ""), inputs, inputPaths);
  }
  func::FuncOp func = driver::mainFunction(*model.module);
  if (outputPaths.size() != func.getNumResults())
    throw UserError("the model has " + std::to_string(func.getNumResults()) +
                        " outputs, --output given " +
                        std::to_string(outputPaths.size()) + " times",
                    args.model);
  try {
    inputs = driver::bindInputs(func, std::move(inputs), inputPaths);
  } catch (const UserError &e) {
    throw e.inFile(args.model);
  }
  // `dlc compile --emit cuda`'s kernels, from the heuristic's tilings only.
  driver::CompileOptions cudaOptions;
  if (args.has("--precision")) {
    const std::string precision = args.get("--precision", "");
    cudaOptions.precision = precision == "fp16"   ? driver::Precision::FP16
                            : precision == "int8" ? driver::Precision::Int8
                                                  : driver::Precision::FP32;
  }
  // --precision int8: the calibration set (batches of the inputs' shapes:
  // the model is bound to them first).
  cudaOptions.int8.calibrationDir = args.get("--calibrate", "");
  cudaOptions.int8.unsignedActivations =
      args.has("--int8-unsigned-activations");
  cudaOptions.int8.biasCorrection = args.has("--int8-bias-correction");
  cudaOptions.int8.depthwiseChannelScales =
      args.has("--int8-depthwise-channel-scales");
  cudaOptions.int8.fallbackFp16 = args.get("--int8-fallback", "") == "fp16";
  if (args.has("--arch"))
    cudaOptions.archs = driver::parseArchs(args.get("--arch", ""));
  cudaOptions.emit = driver::Emit::Cuda;
  cudaOptions.useTuningCache = false;
  std::vector<codegen::CudaKernel> cuda =
      driver::compile(*model.module, args.model, cudaOptions).kernels;

  emulator::CompileOptions compile;
  compile.cxx = args.get("--cxx", DLC_EMULATOR_CXX);
  compile.cudaInclude = DLC_EMULATOR_CUDA_INCLUDE;
  std::string cache = codegen::defaultCacheDir();
  compile.cacheDir = args.get(
      "--cache-dir", cache.empty() ? "/tmp/dlc-emulator" : cache + "/emulator");
  compile.jobs = static_cast<unsigned>(std::stoul(args.get(
      "--jobs",
      std::to_string(std::max(1u, std::thread::hardware_concurrency())))));
  unsigned compiled = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<emulator::HostKernel>> kernels;
  try {
    kernels = emulator::compileKernels(cuda, compile, &compiled);
  } catch (const std::runtime_error &e) {
    std::cerr << "dlc-emulate: error: " << e.what() << "\n";
    return 2;
  }
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  emulator::RunOptions options;
  options.reverse = args.has("--reverse");
  options.copiesLandAtOnce = args.has("--copies-at-once");
  installFaultHandler();
  std::vector<StepReport> steps;
  std::vector<Tensor> results =
      runPlan(driver::mainFunction(*model.module), inputs, kernels, options,
              args.has("--check-kernels"), steps);
  for (size_t i = 0; i < results.size(); ++i)
    writeNpy(outputPaths[i], results[i]);
  if (args.has("--report"))
    writeReport(args.get("--report", ""), steps, compiled, compileSeconds);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const UserError &e) {
    // UserError's line says "dlc: error: ...".
    std::cerr << "dlc-emulate" << e.format().substr(3) << "\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "dlc-emulate: internal error: " << e.what() << "\n";
    return 2;
  }
}
