//===- main.cpp - the dlc command-line tool ---------------------*- C++ -*-===//
//
// Parses the command line and dispatches to the subcommands. Subcommands whose
// issue has not landed say so and exit 2; they never print made-up output.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Cli.h"

#include "dlc/runtime.h"

#include <cstdio>
#include <iostream>

namespace {

int notImplemented(const std::string &command) {
  std::cerr << "dlc: error: 'dlc " << command << "' is not implemented yet\n";
  return 2;
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
  return notImplemented(inv.command);
}
