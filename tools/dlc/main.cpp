//===- main.cpp - the dlc command-line tool ---------------------*- C++ -*-===//
//
// Parses the command line and dispatches to the subcommands. Subcommands whose
// issue has not landed say so and exit 2; they never print made-up output.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"

#include "dlc/runtime.h"
#include "support/Error.h"

#include <iostream>

int dlc::cli::notImplemented(const std::string &what) {
  std::cerr << "dlc: error: 'dlc " << what << "' is not implemented yet\n";
  return 2;
}

namespace {

int dispatch(const dlc::cli::Invocation &inv) {
  using namespace dlc::cli;
  if (isArtifactPath(inv.positional) && inv.command == "run")
    return runArtifact(inv);
  if (isArtifactPath(inv.positional) && inv.command == "inspect")
    return inspectArtifact(inv);
#ifdef DLC_HAVE_COMPILER
  if (inv.command == "compile")
    return runCompile(inv);
  if (inv.command == "run")
    return runRun(inv);
  if (inv.command == "inspect")
    return runInspect(inv);
#else
  // Models (not artifacts) need the compiler.
  if (inv.command != "bench") {
    std::cerr << "dlc: error: this dlc was built without the compiler "
                 "(DLC_BUILD_COMPILER=OFF): 'dlc "
              << inv.command << "' needs it\n";
    return 2;
  }
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
