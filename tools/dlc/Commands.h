//===- Commands.h - the dlc subcommands -------------------------*- C++ -*-===//

#ifndef DLC_TOOLS_DLC_COMMANDS_H
#define DLC_TOOLS_DLC_COMMANDS_H

#include "tools/dlc/Cli.h"

#include <string_view>

namespace dlc::cli {

/// Each returns the exit status; UserError escapes to main, which prints it.
int runCompile(const Invocation &inv);
int runRun(const Invocation &inv);
int runInspect(const Invocation &inv);
/// `dlc compare MODEL --input X.npy`: the per-layer table (compiler/Compare.h).
int runCompare(const Invocation &inv);

/// Whether a path names a compiled artifact (".dlcm").
bool isArtifactPath(const std::string &path);
/// `dlc inspect OUT.dlcm`: the artifact's kernels and library calls.
int inspectArtifact(const Invocation &inv);
/// `dlc run OUT.dlcm --device cuda`.
int runArtifact(const Invocation &inv);
/// Runs artifact bytes (from a file, or compiled in memory) on the --input
/// and --output files of `inv`; `label` names the artifact in errors.
int runArtifactBytes(const Invocation &inv, std::string_view bytes,
                     const std::string &label);

/// "'dlc X' is not implemented yet", exit status 2.
int notImplemented(const std::string &what);

} // namespace dlc::cli

#endif // DLC_TOOLS_DLC_COMMANDS_H
