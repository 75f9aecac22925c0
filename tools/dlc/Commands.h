//===- Commands.h - the dlc subcommands --------------------------*- C++
//-*-===//

#ifndef DLC_TOOLS_DLC_COMMANDS_H
#define DLC_TOOLS_DLC_COMMANDS_H

#include "tools/dlc/Cli.h"

namespace dlc::cli {

/// Each returns the exit status; UserError escapes to main, which prints it.
int runCompile(const Invocation &inv);
int runRun(const Invocation &inv);
int runInspect(const Invocation &inv);

/// "'dlc X' is not implemented yet", exit status 2.
int notImplemented(const std::string &what);

} // namespace dlc::cli

#endif // DLC_TOOLS_DLC_COMMANDS_H
