//===- Cli.h - the dlc command line -----------------------------*- C++ -*-===//
//
// The subcommands and options of the command line (README.md, "Command
// line"), their --help texts, and a parser that validates them. Plain C++:
// the runtime-only build has the same command line.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_CLI_H
#define DLC_TOOLS_DLC_CLI_H

#include <map>
#include <string>
#include <vector>

namespace dlc::cli {

/// One option of a subcommand.
struct OptionSpec {
  std::string name;                 ///< "--precision" (or "-o")
  std::string alias;                ///< "" or the other spelling ("--output")
  std::string metavar;              ///< "" for a flag, else "fp32|fp16", "N"...
  std::vector<std::string> choices; ///< allowed values, empty = any
  bool repeatable = false;
  bool required = false;
  bool positiveInteger = false;
  std::string help;
};

/// A subcommand: its positional argument, options and help.
struct CommandSpec {
  std::string name;
  std::string positional; ///< "MODEL", "" for none
  std::string summary;
  std::vector<OptionSpec> options;
};

/// The parsed command line.
struct Invocation {
  std::string command; ///< "compile", "run", ... ; "" for `dlc --help`
  std::string positional;
  std::map<std::string, std::vector<std::string>> values; ///< by option name
  bool help = false;
  bool version = false;

  bool has(const std::string &option) const { return values.count(option); }
  /// The last value of an option, or `fallback`.
  std::string get(const std::string &option,
                  const std::string &fallback = "") const;
};

/// Every subcommand, in the order --help lists them.
const std::vector<CommandSpec> &commands();

/// The --help text of `dlc` ("" command) or of one subcommand.
std::string helpText(const std::string &command);

/// Parses argv[1..]. On a usage error returns false and sets `error` to the
/// reason (without the "dlc: error: " prefix).
bool parse(const std::vector<std::string> &args, Invocation &out,
           std::string &error);

} // namespace dlc::cli

#endif // DLC_TOOLS_DLC_CLI_H
