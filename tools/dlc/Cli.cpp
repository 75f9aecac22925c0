//===- Cli.cpp - the dlc command line ---------------------------*- C++ -*-===//

#include "tools/dlc/Cli.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

using namespace dlc::cli;

namespace {

OptionSpec flag(std::string name, std::string help) {
  OptionSpec o;
  o.name = std::move(name);
  o.help = std::move(help);
  return o;
}

OptionSpec value(std::string name, std::string metavar, std::string help,
                 std::vector<std::string> choices = {}) {
  OptionSpec o;
  o.name = std::move(name);
  o.metavar = std::move(metavar);
  o.help = std::move(help);
  o.choices = std::move(choices);
  return o;
}

OptionSpec positiveInt(std::string name, std::string help) {
  OptionSpec o = value(std::move(name), "N", std::move(help));
  o.positiveInteger = true;
  return o;
}

std::vector<CommandSpec> buildCommands() {
  OptionSpec precision =
      value("--precision", "fp32|fp16",
            "Arithmetic precision: fp32, or fp16 storage with fp32 "
            "accumulation (default: fp16 for mixed_float16 models, else "
            "fp32)",
            {"fp32", "fp16"});

  // compile and run also take int8, with a calibration set.
  OptionSpec precisionInt8 =
      value("--precision", "fp32|fp16|int8",
            "Arithmetic precision: fp32; fp16 storage with fp32 "
            "accumulation; or int8 (post-training quantization, needs "
            "--calibrate; int8 tensor-core kernels, docs/quantization.md) "
            "(default: fp16 for mixed_float16 models, else fp32)",
            {"fp32", "fp16", "int8"});
  std::vector<OptionSpec> int8Options = {
      value("--calibrate", "DIR",
            "--precision int8: the calibration set, a folder of .npy input "
            "batches (one file per batch; STEM.I.npy for input I of a "
            "multi-input model)"),
      value("--calibration-method", "max|percentile|entropy|mse",
            "How each activation's clip value is chosen from its |x| "
            "histogram: the largest |x|, a percentile of |x|, TensorRT's "
            "KL-divergence minimization, or the least mean squared "
            "quantization error (default percentile)",
            {"max", "percentile", "entropy", "mse"}),
      value("--calibration-percentile", "P",
            "The percentile of --calibration-method percentile, in (0, 100] "
            "(default 99.99)"),
      flag("--int8-keep-first-last",
           "Keep the first and the last quantizable layer in fp32"),
      value("--int8-fallback", "fp32|fp16",
            "The precision of what int8 leaves in float (the layers kept "
            "out of int8, the other ops, the quantized layers' results): "
            "fp32, or fp16 storage with fp32 accumulation, as TensorRT's "
            "int8 and fp16 builder flags together (default fp32)",
            {"fp32", "fp16"}),
      flag("--int8-unsigned-activations",
           "Quantize a layer input that is >= 0 by construction (after a "
           "ReLU) to all 256 int8 levels, with a zero point whose term is "
           "added back as an fp32 constant"),
      flag("--int8-bias-correction",
           "Add back each int8 layer's expected output error per channel, "
           "measured on the calibration set (empirical bias correction)"),
      flag("--int8-depthwise-channel-scales",
           "Quantize a depthwise convolution's input with one scale per "
           "channel, each calibrated on its own (its output channels read "
           "one input channel each, so the de-scaling stays per channel)"),
      value("--int8-accuracy-target", "A",
            "Mixed precision: keep the quantizable layers whose int8 costs "
            "most accuracy in fp32 until the top-1 agreement with fp32, with "
            "the int8 error multiplied by --int8-accuracy-margin, is at "
            "least A, in (0, 1], as estimated on the calibration set (every "
            "sample's error paired with every sample's gaps from its best "
            "class to the others; each layer's sensitivity is measured; "
            "docs/quantization.md)"),
      value("--int8-accuracy-margin", "M",
            "The safety factor of --int8-accuracy-target, in [1, 1000] "
            "(default 3)"),
      flag("--int8-accuracy-refine",
           "After --int8-accuracy-target's search, try each layer it kept "
           "in fp32 back in int8, the least sensitive first, and keep it "
           "int8 when the target still holds (one calibration-set run per "
           "layer)"),
      value("--calibration-report", "FILE.json",
            "Write the per-layer scales and the accuracy cost (top-1 "
            "agreement, relative L2 error vs fp32 on the calibration set, "
            "and on --calibration-holdout's)"),
      value("--calibration-holdout", "DIR",
            "Also measure the report's accuracy on these .npy batches"),
      value("--calibration-cache", "FILE",
            "Reuse the calibration FILE holds when it was made from the same "
            "graph, weights, calibration batches and calibration options "
            "(any --batch, --kernels, --arch or --int8-fallback); else "
            "calibrate and write it there"),
  };

  CommandSpec compile{"compile",
                      "MODEL",
                      "Compile a Keras or TF.js model into a .dlcm artifact",
                      {}};
  OptionSpec out =
      value("-o", "OUT.dlcm", "Output file (default: MODEL's name with .dlcm)");
  out.alias = "--output";
  OptionSpec weights =
      value("--weights", "FILE",
            "The weights of a model.to_json() file (default: STEM.weights.h5 "
            "or STEM.h5 beside it)");
  OptionSpec inputShape =
      value("--input-shape", "NAME=DIMS",
            "Sizes for input NAME's dims after the batch dim, its None dims "
            "filled, e.g. image=224x224x3 for keras.Input((None, None, 3), "
            "name='image') (repeat per input; the batch is --batch)");
  inputShape.repeatable = true;
  OptionSpec stopAfter =
      value("--stop-after", "STAGE",
            "Stop the pipeline after a stage: import, simplify, layout, fp16 "
            "or int8, fuse, exec or plan (default: plan, the whole "
            "pipeline)");
  compile.options = {
      out,
      weights,
      precisionInt8,
      value("--arch", "sm_XX[,sm_YY...]",
            "GPU architectures to compile for (default sm_80,sm_90; when "
            "all are sm_89 or newer, Keras float8 Dense runs on float8 "
            "tensor cores)"),
      positiveInt("--batch", "Fix the batch size (default: 1; kept open when "
                             "--stop-after names a graph stage)"),
      inputShape,
      value("--kernels", "auto|generated|library",
            "Generated kernels only; cuDNN/cuBLASLt calls wherever a kernel "
            "is a pattern they take whole; or auto: cuBLASLt for GEMMs of "
            "at least 2^24 multiply-adds or 2^16 weights, cuDNN for "
            "convolutions of at least 2^27 multiply-adds, generated otherwise "
            "(default)",
            {"auto", "generated", "library"}),
      value("--emit", "mlir|cuda|artifact",
            "What to write: the optimized IR, the CUDA sources, or the "
            "artifact (default artifact)",
            {"mlir", "cuda", "artifact"}),
      flag("--no-weights",
           "Leave the weights out of the artifact (its manifest keeps their "
           "size): for timing where they need not travel; it runs only with "
           "DLC_WEIGHTS_SYNTHETIC=1, on zero weights"),
      flag("--autotune",
           "Time every candidate tiling of each generated GEMM/conv kernel "
           "that the tuning cache lacks on this machine's GPU, record the "
           "fastest in the cache, then compile with it; without --arch, "
           "compiles for the GPU's arch only"),
      value("--tuning-cache", "FILE",
            "Tilings measured by --autotune, per arch and GEMM shape, used "
            "instead of the heuristic's for the oldest --arch (default: "
            "$DLC_CACHE_DIR/autotune.json, else "
            "$XDG_CACHE_HOME/dlc/autotune.json or "
            "~/.cache/dlc/autotune.json)"),
      stopAfter,
      flag("--report-fusion",
           "Say why each adjacent pair of ops was left in different kernels"),
      flag("--mlir-print-ir-after-all", "Print the IR after every pass"),
  };
  compile.options.insert(compile.options.begin() + 3, int8Options.begin(),
                         int8Options.end());

  CommandSpec run{
      "run", "MODEL|OUT.dlcm", "Run a model or an artifact on .npy inputs", {}};
  OptionSpec device =
      value("--device", "cpu|cuda",
            "cpu: the reference executor; cuda: the GPU", {"cpu", "cuda"});
  device.required = true;
  OptionSpec input = value("--input", "X.npy",
                           "An input, in the model's input order (repeat)");
  input.repeatable = input.required = true;
  OptionSpec output = value("--output", "Y.npy",
                            "An output, in the model's output order (repeat)");
  output.repeatable = output.required = true;
  run.options = {
      device,
      input,
      output,
      precisionInt8,
      weights,
      stopAfter,
      flag("--verify-stages",
           "Check every pipeline stage against the imported model on these "
           "inputs (relative L2 error <= 1e-5 in fp32, <= 1e-2 after fp16 "
           "lowering); one line per stage on stderr"),
      value("--verify-limit", "L[,L16]",
            "The stage checks' relative L2 limits instead of 1e-5 (and 1e-2 "
            "after fp16 lowering), e.g. a model's measured conditioning"),
      value("--arch", "sm_XX[,sm_YY...]",
            "The GPU architectures the pipeline plans for, as compile's "
            "(default sm_80,sm_90; all sm_89 or newer: Keras float8 Dense "
            "as float8 GEMMs, which --device cpu runs on the reference "
            "executor)"),
      value("--kernels", "auto|generated|library",
            "The steps the pipeline plans as cuDNN/cuBLASLt calls, as "
            "compile's (default auto; library: int8 GEMMs as int32 sums and "
            "their de-scaling, which --device cpu runs on the reference "
            "executor)",
            {"auto", "generated", "library"}),
  };
  run.options.insert(run.options.begin() + 4, int8Options.begin(),
                     int8Options.end());

  CommandSpec bench{
      "bench",
      "OUT.dlcm|MODEL",
      "Time an artifact (or a model, compiled first) on the GPU, whole "
      "model and per step",
      {}};
  OptionSpec kernels = value("--kernels", "auto|generated|library",
                             "A model's kernels, as for compile (default auto)",
                             {"auto", "generated", "library"});
  bench.options = {
      positiveInt("--batch",
                  "The batch: a model is compiled for it (default 1); an "
                  "artifact must have been"),
      inputShape,
      positiveInt("--iters", "Timed runs after the warm-up (default 100)"),
      positiveInt("--warmup", "Untimed runs first (default 10)"),
      value("--json", "FILE",
            "Also write the results as JSON (bench/README.md: the schema)"),
      precision,
      kernels,
      weights,
  };

  CommandSpec inspect{"inspect",
                      "MODEL|OUT.dlcm",
                      "Print a model's layers or an artifact's kernels",
                      {}};
  OptionSpec inspectShape = inputShape;
  inspectShape.help = "Show a model's layers for these sizes of input NAME's "
                      "dims after the batch dim (repeat per input; default: "
                      "None dims shown as ?)";
  inspect.options = {weights, inspectShape};

  CommandSpec compare{"compare",
                      "MODEL",
                      "Find the first layer whose output the compiled model "
                      "computes too far from the imported one",
                      {}};
  OptionSpec compareStage = value(
      "--stop-after", "STAGE",
      "The last stage run for the compiled side: import, simplify, layout, "
      "fp16 (one output per layer) or fuse (one per kernel) (default: fp16 "
      "in fp16, else layout)");
  compare.options = {
      input,
      precision,
      weights,
      compareStage,
      value("--threshold", "X",
            "The relative L2 error a layer may have (default 1e-4 in fp32, "
            "1e-2 in fp16)"),
  };

  for (CommandSpec *c : {&compile, &run, &bench, &inspect, &compare})
    c->options.push_back(flag("--help", "Show this help"));
  return {compile, run, bench, inspect, compare};
}

const CommandSpec *findCommand(const std::string &name) {
  for (const CommandSpec &c : commands())
    if (c.name == name)
      return &c;
  return nullptr;
}

const OptionSpec *findOption(const CommandSpec &c, const std::string &name) {
  for (const OptionSpec &o : c.options)
    if (o.name == name || (!o.alias.empty() && o.alias == name))
      return &o;
  return nullptr;
}

bool isPositiveInteger(const std::string &s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), ::isdigit) && std::stol(s) > 0;
}

} // namespace

std::string Invocation::get(const std::string &option,
                            const std::string &fallback) const {
  auto it = values.find(option);
  return it == values.end() || it->second.empty() ? fallback
                                                  : it->second.back();
}

const std::vector<CommandSpec> &dlc::cli::commands() {
  static const std::vector<CommandSpec> specs = buildCommands();
  return specs;
}

std::string dlc::cli::helpText(const std::string &command) {
  std::ostringstream os;
  const CommandSpec *spec = findCommand(command);
  if (!spec) {
    os << "dlc: compile Keras models into CUDA kernels\n\n"
       << "Usage: dlc COMMAND [OPTIONS]\n\nCommands:\n";
    for (const CommandSpec &c : commands())
      os << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary
         << "\n";
    os << "\nOptions:\n  --help     Show this help\n"
       << "  --version  Show the version\n\n"
       << "Run 'dlc COMMAND --help' for a command's options.\n"
       << "Exit status: 0 success, 1 bad input or usage, 2 internal error "
          "or not implemented.\n\n"
       << "Inputs must be regular files. An output that is one of the "
          "inputs, that two\noutputs name, or whose directory does not "
          "exist is refused before any work.\n\n"
       << "Environment:\n"
       << "  DLC_CACHE_DIR   The kernel and tuning caches (default: "
          "$XDG_CACHE_HOME/dlc or\n"
       << "                  ~/.cache/dlc); created 0700; kernels are not "
          "cached in a directory\n"
       << "                  that other users can write to\n"
       << "  DLC_MAX_MEMORY  The most memory an artifact may need per "
          "session (bytes, or 16G,\n"
       << "                  512M...; default 64G)\n"
       << "  DLC_READ_TIMEOUT  Seconds the model reader may run (default: 8 "
          "plus 1 per 8 MiB\n"
       << "                    of model files)\n"
       << "  DLC_READ_MEMORY   Memory the model reader may use (bytes, or "
          "2G, 512M...; at\n"
       << "                    least 64M; default: 1G plus 4 times the model "
          "files' size)\n"
       << "  DLC_WEIGHTS_SYNTHETIC=1  Run artifacts compiled with "
          "--no-weights on zero weights\n"
       << "  DLC_COMMIT      The dlc commit that 'dlc bench --json' "
          "records\n";
    return os.str();
  }
  os << "Usage: dlc " << spec->name;
  if (!spec->positional.empty())
    os << " " << spec->positional;
  os << " [OPTIONS]\n\n" << spec->summary << "\n\nOptions:\n";
  for (const OptionSpec &o : spec->options) {
    std::string left = o.name;
    if (!o.alias.empty())
      left += ", " + o.alias;
    if (!o.metavar.empty())
      left += " " + o.metavar;
    os << "  " << left;
    os << (left.size() < 34 ? std::string(34 - left.size(), ' ')
                            : "\n" + std::string(36, ' '));
    os << o.help;
    if (o.required)
      os << " [required]";
    os << "\n";
  }
  return os.str();
}

bool dlc::cli::parse(const std::vector<std::string> &args, Invocation &out,
                     std::string &error) {
  out = Invocation();
  if (args.empty()) {
    error = "no command given (see 'dlc --help')";
    return false;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    out.help = true;
    return true;
  }
  if (args[0] == "--version") {
    out.version = true;
    return true;
  }
  const CommandSpec *spec = findCommand(args[0]);
  if (!spec) {
    error = "unknown command '" + args[0] + "' (see 'dlc --help')";
    return false;
  }
  out.command = spec->name;
  const std::string where = " (see 'dlc " + spec->name + " --help')";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!out.positional.empty() || spec->positional.empty()) {
        error = "unexpected argument '" + arg + "'" + where;
        return false;
      }
      out.positional = arg;
      continue;
    }
    std::string name = arg, val;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      val = arg.substr(eq + 1);
      inlineValue = true;
    }
    const OptionSpec *opt = findOption(*spec, name);
    if (!opt) {
      error = "unknown option '" + name + "'" + where;
      return false;
    }
    if (opt->name == "--help") {
      out.help = true;
      return true;
    }
    if (opt->metavar.empty()) {
      if (inlineValue) {
        error = "option '" + name + "' takes no value";
        return false;
      }
      out.values[opt->name].push_back("");
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size()) {
        error = "option '" + name + "' needs a value " + opt->metavar;
        return false;
      }
      val = args[++i];
    }
    if (!opt->choices.empty() &&
        std::find(opt->choices.begin(), opt->choices.end(), val) ==
            opt->choices.end()) {
      error = "invalid value '" + val + "' for " + opt->name + " (expected " +
              opt->metavar + ")";
      return false;
    }
    if (opt->positiveInteger && !isPositiveInteger(val)) {
      error = "invalid value '" + val + "' for " + opt->name +
              " (expected a positive integer)";
      return false;
    }
    if (opt->name == "--arch" &&
        !std::regex_match(val,
                          std::regex("sm_[0-9]{2,3}a?(,sm_[0-9]{2,3}a?)*"))) {
      error = "invalid value '" + val +
              "' for --arch (expected a list like sm_80,sm_90)";
      return false;
    }
    if (opt->name == "--input-shape" &&
        !std::regex_match(val,
                          std::regex("[^=]+=[0-9]{1,10}(x[0-9]{1,10})*"))) {
      error = "invalid value '" + val +
              "' for --input-shape (expected NAME=DIMS, e.g. "
              "image=224x224x3)";
      return false;
    }
    if (opt->name == "--int8-accuracy-target") {
      char *end = nullptr;
      double a = std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0' || !(a > 0 && a <= 1)) {
        error = "invalid value '" + val +
                "' for --int8-accuracy-target (expected a number in (0, 1])";
        return false;
      }
    }
    if (opt->name == "--int8-accuracy-margin") {
      char *end = nullptr;
      double m = std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0' || !(m >= 1 && m <= 1000)) {
        error = "invalid value '" + val +
                "' for --int8-accuracy-margin (expected a number in [1, 1000])";
        return false;
      }
    }
    if (opt->name == "--calibration-percentile") {
      char *end = nullptr;
      double p = std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0' || !(p > 0 && p <= 100)) {
        error = "invalid value '" + val +
                "' for --calibration-percentile (expected a number in "
                "(0, 100])";
        return false;
      }
    }
    if (opt->name == "--verify-limit" &&
        !std::regex_match(val, std::regex("[0-9.eE+-]+(,[0-9.eE+-]+)?"))) {
      error = "invalid value '" + val +
              "' for --verify-limit (expected L or L,L16, e.g. 2e-5,1e-2)";
      return false;
    }
    std::vector<std::string> &slot = out.values[opt->name];
    if (!opt->repeatable && !slot.empty()) {
      error = "option '" + opt->name + "' given more than once";
      return false;
    }
    slot.push_back(val);
  }
  if (!spec->positional.empty() && out.positional.empty()) {
    error = "missing " + spec->positional + where;
    return false;
  }
  for (const OptionSpec &o : spec->options) {
    if (o.required && !out.has(o.name)) {
      error = "missing required option " + o.name + where;
      return false;
    }
  }
  return true;
}
