//===- emit.cpp - fuzz target: graph IR -> pipeline -> CUDA source --------===//
//
// The input is an 8-byte header and graph-dialect IR text (what
// `dlc compile --emit mlir --stop-after import` writes for a Keras model;
// fuzz/corpus/emit/ holds such seeds, their weights as splat constants).
// The header:
//
//   byte 0  bit 0: fp16 (else fp32); bits 1-2: kernel choice (0 auto,
//           1 generated, 2 library, 3 generated); bit 3: sm_90 (else sm_80)
//   byte 1  which input shapes to change: bit 0 batch, bit 1 spatial,
//           bit 2 channels, bit 3 sequence
//   byte 2  batch (1 + value; the pipeline fixes the batch, as --batch)
//   byte 3  spatial size: dims 1 and 2 of a rank-4 input (1 + value)
//   byte 4  channels: the last dim of an input of rank 2 or more (1 + value)
//   byte 5  sequence length: dim 1 of a rank-3 input (1 + value)
//   bytes 6-7  reserved
//
// The IR is parsed, @main's input types changed as the header says and
// every op's result type inferred again, then the whole pipeline runs
// (passes/Pipelines.h, as `dlc compile`) and every exec.kernel of the plan
// becomes a library call (codegen-library) or CUDA C++ (codegen-cuda), as
// `dlc compile --emit cuda` and the artifact writer do; NVRTC does not run
// (too slow here). A diagnostic anywhere ends the input cleanly. Each
// generated source must be non-empty, name its entry, balance its braces,
// brackets and parentheses, and launch at most 1024 threads per block.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "artifact/LibraryCall.h"
#include "compiler/InitAll.h"
#include "compiler/codegen/cuda/Emitter.h"
#include "compiler/codegen/library/LibraryCalls.h"
#include "dialects/exec/ExecDialect.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace mlir;

namespace {

constexpr size_t kHeaderBytes = 8;
/// The most elements of any tensor of an input: a constant of more (a
/// mutated splat) would make the passes that rewrite weights allocate
/// gigabytes, which is not what this target looks for.
constexpr int64_t kMaxElements = int64_t(1) << 22;

struct Header {
  bool fp16 = false;
  dlc::driver::KernelChoice kernels = dlc::driver::KernelChoice::Auto;
  int sm = 80;
  unsigned mutate = 0;
  int64_t batch = 1, spatial = 1, channels = 1, sequence = 1;
};

Header decode(const uint8_t *data) {
  Header h;
  h.fp16 = data[0] & 1;
  static const dlc::driver::KernelChoice choices[] = {
      dlc::driver::KernelChoice::Auto, dlc::driver::KernelChoice::Generated,
      dlc::driver::KernelChoice::Library, dlc::driver::KernelChoice::Generated};
  h.kernels = choices[(data[0] >> 1) & 3];
  h.sm = data[0] & 8 ? 90 : 80;
  h.mutate = data[1];
  h.batch = 1 + int64_t(data[2]);
  h.spatial = 1 + int64_t(data[3]);
  h.channels = 1 + int64_t(data[4]);
  h.sequence = 1 + int64_t(data[5]);
  return h;
}

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "dlc fuzz emit: %s\n", what.c_str());
  std::abort();
}

bool tooLarge(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return false;
  int64_t n = 1;
  for (int64_t d : shaped.getShape()) {
    if (ShapedType::isDynamic(d))
      continue;
    if (d < 0 || (d > 0 && n > kMaxElements / d))
      return true;
    n *= d;
  }
  return n > kMaxElements;
}

/// An input type with the header's shapes (the batch, dim 0, stays as it
/// is: the pipeline fixes it).
Type mutated(Type type, const Header &h) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  SmallVector<int64_t> shape(tensor.getShape());
  const size_t rank = shape.size();
  if ((h.mutate & 2) && rank == 4)
    shape[1] = shape[2] = h.spatial;
  if ((h.mutate & 8) && rank == 3)
    shape[1] = h.sequence;
  if ((h.mutate & 4) && rank >= 2)
    shape[rank - 1] = h.channels;
  return RankedTensorType::get(shape, tensor.getElementType(),
                               tensor.getEncoding());
}

/// Changes @main's input types and infers every result type again, in
/// order; false when an op refuses its new operands (a diagnostic).
bool reshapeInputs(func::FuncOp main, const Header &h) {
  Block &body = main.getBody().front();
  SmallVector<Type> inputs;
  for (BlockArgument arg : body.getArguments()) {
    arg.setType(mutated(arg.getType(), h));
    inputs.push_back(arg.getType());
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      main.setFunctionType(FunctionType::get(main.getContext(), inputs,
                                             TypeRange(ret.getOperandTypes())));
      continue;
    }
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    if (!infer)
      continue;
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(op.getContext(), op.getLoc(),
                                      op.getOperands(), op.getAttrDictionary(),
                                      op.getPropertiesStorage(),
                                      op.getRegions(), types)) ||
        types.size() != op.getNumResults())
      return false;
    for (auto [result, type] : llvm::zip(op.getResults(), types))
      result.setType(type);
  }
  return true;
}

/// Braces, brackets and parentheses balance outside comments and literals.
bool balanced(std::string_view s) {
  std::string open;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      i = s.find('\n', i);
      if (i == std::string_view::npos)
        break;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i = s.find("*/", i + 2);
      if (i == std::string_view::npos)
        return false;
      ++i;
    } else if (c == '"' && i >= 1 && s[i - 1] == 'R') {
      // A raw string literal R"delim( ... )delim".
      size_t paren = s.find('(', i);
      if (paren == std::string_view::npos)
        return false;
      std::string end =
          ")" + std::string(s.substr(i + 1, paren - i - 1)) + "\"";
      i = s.find(end, paren);
      if (i == std::string_view::npos)
        return false;
      i += end.size() - 1;
    } else if (c == '"' || c == '\'') {
      for (++i; i < s.size() && s[i] != c; ++i)
        if (s[i] == '\\')
          ++i;
      if (i >= s.size())
        return false;
    } else if (c == '{' || c == '[' || c == '(') {
      open.push_back(c);
    } else if (c == '}' || c == ']' || c == ')') {
      char want = c == '}' ? '{' : c == ']' ? '[' : '(';
      if (open.empty() || open.back() != want)
        return false;
      open.pop_back();
    }
  }
  return open.empty();
}

void checkKernel(const dlc::codegen::CudaKernel &k) {
  if (k.source.empty())
    finding("kernel " + k.name + ": empty source");
  if (k.entry.empty() || k.source.find(k.entry) == std::string::npos)
    finding("kernel " + k.name + ": the source does not define its entry '" +
            k.entry + "'");
  if (!balanced(k.source))
    finding("kernel " + k.name +
            ": unbalanced braces, brackets or "
            "parentheses in its source");
  uint64_t threads = 1;
  for (uint32_t b : k.launch.block)
    threads *= b;
  if (threads == 0 || threads > 1024)
    finding("kernel " + k.name + ": a block of " + std::to_string(threads) +
            " threads");
  for (uint32_t g : k.launch.grid)
    if (g == 0)
      finding("kernel " + k.name + ": an empty grid");
}

void compile(std::string_view text, const Header &h) {
  DialectRegistry registry;
  dlc::registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are expected (a pass refusing a mutated shape): swallowed,
  // or printed with DLC_FUZZ_VERBOSE=1 (triage), as is how far it got.
  static const bool verbose = std::getenv("DLC_FUZZ_VERBOSE");
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
    if (verbose)
      std::fprintf(stderr, "diagnostic: %s\n", d.str().c_str());
    return success();
  });
  auto reached = [](const char *what) {
    if (verbose)
      std::fprintf(stderr, "emit: %s\n", what);
  };

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      llvm::StringRef(text.data(), text.size()), &context);
  if (!module)
    return reached("no module");
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal() || failed(verify(*module)))
    return reached("no valid @main");
  if ((h.mutate & 14) && (!reshapeInputs(main, h) || failed(verify(*module))))
    return reached("the new input shapes refused");
  bool large = false;
  module->walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      large = large || tooLarge(t);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          large = large || tooLarge(a.getType());
  });
  if (large)
    return reached("a tensor too large");

  dlc::PipelineConfig config;
  if (h.mutate & 1)
    config.batch = h.batch;
  else
    config.batch = 1; // dlc compile's default
  config.fp16 = h.fp16;
  PassManager pm(&context);
  dlc::buildPipeline(pm, config);
  if (failed(pm.run(*module)))
    return reached("the pipeline failed");

  main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    finding("the pipeline dropped @main");
  dlc::codegen::EmitOptions options;
  options.smVersion = h.sm;
  for (Operation &op : main.getBody().front()) {
    auto kernel = dyn_cast<dlc::exec::KernelOp>(op);
    if (!kernel)
      continue;
    if (std::optional<dlc::driver::LibraryCallPlan> call =
            dlc::driver::planLibraryCall(kernel, h.kernels)) {
      std::string json = dlc::artifact::toJson(call->descriptor);
      if (json.size() < 2 || json.front() != '{' || json.back() != '}')
        finding("a library call descriptor that is not a JSON object: " + json);
      continue;
    }
    FailureOr<dlc::codegen::CudaKernel> emitted =
        dlc::codegen::emitKernel(kernel, options);
    if (failed(emitted))
      return reached("a kernel not generated"); // with a diagnostic
    checkKernel(*emitted);
  }
  reached("every kernel emitted");
}

} // namespace

/// ASan's default options for this target: no user poisoning. LLVM's
/// BumpPtrAllocator poisons the free part of each slab and unpoisons what it
/// hands out, but only in code compiled with ASan: MLIR's storage allocator
/// is shared by dlc's instrumented code and Debian's libMLIR.so, which is not
/// instrumented, so an attribute that libMLIR.so allocates stays poisoned,
/// and dlc reading it is reported as a use-after-poison that is not one (the
/// six "crashes" of the 2026-11-26 run, fuzz/CAMPAIGN.md). Heap, stack and
/// global errors are still detected: they do not rely on user poisoning.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < kHeaderBytes)
    return 0;
  const Header h = decode(data);
  // A copy: MLIR's lexer reads the byte after the text (a NUL, as every
  // file dlc parses has: a MemoryBuffer or a std::string), which libFuzzer's
  // exact-size buffer does not have.
  const std::string text(reinterpret_cast<const char *>(data) + kHeaderBytes,
                         size - kHeaderBytes);
  dlc::fuzz::expectCleanly([&] { compile(text, h); });
  return 0;
}
