//===- Commands.h - the dlc subcommands -------------------------*- C++ -*-===//

#ifndef DLC_TOOLS_DLC_COMMANDS_H
#define DLC_TOOLS_DLC_COMMANDS_H

#include "tools/dlc/Cli.h"

#include "dlc/runtime.hpp"

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

/// `dlc bench OUT.dlcm`: the artifact timed on the GPU.
int benchArtifact(const Invocation &inv);
/// Times artifact bytes (from a file, or compiled in memory); `label` names
/// the artifact in errors and in the report.
int benchArtifactBytes(const Invocation &inv, std::string_view bytes,
                       const std::string &label);
/// `dlc bench MODEL`: compiles with the invocation's --batch, --precision,
/// --kernels and --weights, then benchArtifactBytes.
int runBench(const Invocation &inv);

/// Loads artifact bytes into the runtime (`dlc run` and `dlc bench`). At
/// load, the only invalid argument is a malformed DLC_MAX_MEMORY: a
/// UserError naming `label`; any other failure is the runtime::Error.
runtime::Model loadArtifact(std::string_view bytes, const std::string &label);

/// A runtime failure as dlc reports it: artifact, input and device problems
/// are the user's (a UserError, exit 1); CUDA failures and unsupported
/// features print the one line and return 2.
int reportRuntimeError(const runtime::Error &e, const std::string &path);

/// "'dlc X' is not implemented yet", exit status 2.
int notImplemented(const std::string &what);

} // namespace dlc::cli

#endif // DLC_TOOLS_DLC_COMMANDS_H
