//===- main.cpp - the dlc command-line tool ---------------------*- C++ -*-===//
//
// Parses the command line, checks the command's output paths against its
// inputs before any work, and dispatches to the subcommands. Subcommands
// whose issue has not landed say so and exit 2; they never print made-up
// output.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"

#include "dlc/runtime.h"
#include "support/Error.h"
#include "support/File.h"

#include <iostream>

int dlc::cli::notImplemented(const std::string &what) {
  std::cerr << "dlc: error: 'dlc " << what << "' is not implemented yet\n";
  return 2;
}

namespace {

/// Before any work: the command's outputs must replace none of its inputs,
/// be distinct, and lie in directories that exist (support/File.h).
void checkPaths(const dlc::cli::Invocation &inv) {
  using namespace dlc;
  std::vector<std::string> outputs, inputs;
  const bool artifact = cli::isArtifactPath(inv.positional);
  if (inv.command == "compile") {
    if (inv.has("-o"))
      outputs.push_back(inv.get("-o"));
    else if (inv.get("--emit", "artifact") == "artifact")
      outputs.push_back(defaultArtifactPath(inv.positional));
    if (inv.has("--tuning-cache"))
      inputs.push_back(inv.get("--tuning-cache"));
  } else if (inv.command == "run") {
    outputs = inv.values.at("--output");
    inputs = inv.values.at("--input");
  } else if (inv.command == "compare") {
    inputs = inv.values.at("--input");
  } else if (inv.command == "bench") {
    if (inv.has("--json"))
      outputs.push_back(inv.get("--json"));
  } else {
    return;
  }
  if (inv.has("--calibration-report")) // compile, run
    outputs.push_back(inv.get("--calibration-report"));
  if (inv.has("--calibration-cache")) // read, and written on a miss
    outputs.push_back(inv.get("--calibration-cache"));
  std::vector<std::string> model =
      artifact ? std::vector<std::string>{inv.positional}
               : modelFiles(inv.positional, inv.get("--weights"));
  inputs.insert(inputs.end(), model.begin(), model.end());
  checkOutputs(outputs, inputs);
}

int dispatch(const dlc::cli::Invocation &inv) {
  using namespace dlc::cli;
  checkPaths(inv);
  if (isArtifactPath(inv.positional) && inv.has("--input-shape"))
    throw dlc::UserError("--input-shape sizes a model's inputs: an artifact "
                         "is compiled for its shapes (dlc inspect shows them)",
                         inv.positional);
  if (isArtifactPath(inv.positional) && inv.command == "run")
    return runArtifact(inv);
  if (isArtifactPath(inv.positional) && inv.command == "inspect")
    return inspectArtifact(inv);
  if (isArtifactPath(inv.positional) && inv.command == "bench")
    return benchArtifact(inv);
#ifdef DLC_HAVE_COMPILER
  if (inv.command == "compile")
    return runCompile(inv);
  if (inv.command == "run")
    return runRun(inv);
  if (inv.command == "inspect")
    return runInspect(inv);
  if (inv.command == "compare")
    return runCompare(inv);
  if (inv.command == "bench")
    return runBench(inv);
#else
  // Models (not artifacts) need the compiler.
  std::cerr << "dlc: error: this dlc was built without the compiler "
               "(DLC_BUILD_COMPILER=OFF): 'dlc "
            << inv.command << "' needs it"
            << (inv.command == "bench" ? " for a model (bench an artifact)"
                                       : "")
            << "\n";
  return 2;
#endif
  return notImplemented(inv.command);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  dlc::cli::Invocation inv;
  std::string error;
  if (!dlc::cli::parse(args, inv, error)) {
    std::cerr << "dlc: error: " << error << "\n";
    return 1;
  }
  if (inv.version) {
    std::cout << "dlc " << dlcGetVersion()
#ifdef DLC_HAVE_COMPILER
              << " (compiler and runtime)\n";
#else
              << " (runtime only)\n";
#endif
    return 0;
  }
  if (inv.help) {
    std::cout << dlc::cli::helpText(inv.command);
    return 0;
  }
  try {
    return dispatch(inv);
  } catch (const dlc::UserError &e) {
    std::cerr << e.format() << "\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "dlc: internal error: " << e.what() << "\n";
    return 2;
  }
}
