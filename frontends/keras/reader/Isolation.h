//===- Isolation.h - reading untrusted files in a child process -*- C++ -*-===//
//
// The HDF5 C library (1.10 on Debian 12) crashes on some corrupt files:
// flipped bytes in a global heap make it read wild pointers. No check done
// before calling it can rule that out, so the readers run in a forked child
// process: whatever happens there (a crash, an abort, a runaway allocation
// against its memory limit, a hang past its time limit) comes back to the
// caller as a UserError, and a successful read comes back as the KerasModel,
// serialized through a pipe. The parent enforces the limits itself (it
// polls the pipe, the clock and the child's resident memory), so they hold
// under sanitizers too; the child's RLIMIT_AS and alarm() are a backstop.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_ISOLATION_H
#define DLC_FRONTENDS_KERAS_READER_ISOLATION_H

#include "frontends/keras/reader/KerasModel.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dlc::keras {

struct IsolationLimits {
  /// Memory the child may use on top of what it inherits from the parent:
  /// its address space (RLIMIT_AS, in builds without AddressSanitizer, which
  /// reserves terabytes of address space) and its resident memory, which the
  /// parent polls. 0: no limit.
  uint64_t memoryBytes = 0;
  /// Wall-clock seconds before the parent kills the child. 0: no limit.
  unsigned seconds = 0;
  /// Where each limit comes from, for messages: "DLC_READ_MEMORY", or "the
  /// default for an input of 31 KiB; DLC_READ_MEMORY sets another".
  std::string memorySource, timeSource;
};

/// The limits for reading model files of `inputBytes` bytes in all:
/// $DLC_READ_TIMEOUT (whole seconds) and $DLC_READ_MEMORY (parseMemorySize
/// of support/MemorySize.h; at least kMinimumMemory) when set, else
/// kDefaultSeconds plus a second per kBytesPerExtraSecond of input and
/// kDefaultMemory plus kMemoryPerInputByte times the input. Throws UserError
/// for a malformed variable.
IsolationLimits readerLimits(uint64_t inputBytes);
constexpr unsigned kDefaultSeconds = 8;
constexpr uint64_t kBytesPerExtraSecond = uint64_t(8) << 20;
constexpr uint64_t kDefaultMemory = uint64_t(1) << 30;
constexpr uint64_t kMemoryPerInputByte = 4;
/// Below this, the child could not even start reading.
constexpr uint64_t kMinimumMemory = uint64_t(64) << 20;

/// "31 KiB", "1 GiB", "1.5 GiB", "17 bytes": for messages.
std::string formatBytes(uint64_t bytes);

/// Runs `read` in a child process and returns what it returned; its
/// UserError is rethrown as is; anything else that stops it becomes a
/// UserError saying so: a crash, or a limit of `limits` exceeded ("reading
/// the model took longer than 8 s, the time limit (...)"), after which the
/// child is killed. The child's stderr goes to /dev/null. Those messages name
/// what the child was reading, as a ReadingScope there said ("weights file
/// 'w.h5' is corrupt: the reader crashed on it (signal 11, ...)"; "reading
/// weights file 'w.h5' took longer than ..."), else the model file ("the
/// file is corrupt: ...", "reading the model took longer than ...").
KerasModel runIsolated(const std::function<KerasModel()> &read,
                       const IsolationLimits &limits = IsolationLimits());

/// runIsolated in a fresh process of `program` (posix_spawn), not a fork of
/// this one: no fork handler of this process runs and none of its threads'
/// state is copied, which a multi-threaded host needs (a Python process with
/// a BLAS thread pool: OpenBLAS's fork handler stops its pool, hanging a BLAS
/// call that another thread is in). The program's main calls
/// serveIsolatedRead, which passes `args` to its read function; the limits,
/// messages and result are runIsolated's. Its descriptors 3 (the pipe) and 4
/// (the note) are set up here; no other descriptor of this process reaches it.
KerasModel runIsolatedProgram(const std::string &program,
                              const std::vector<std::string> &args,
                              const IsolationLimits &limits);

/// The reader program's side of runIsolatedProgram: checks that its command
/// line is the one runIsolatedProgram gives, runs `read` on the arguments as
/// runIsolated's child runs its function, writes the result to its parent
/// and exits. A command line of another kind gets one line on stderr and
/// exit status 64.
[[noreturn]] void serveIsolatedRead(
    int argc, char **argv,
    const std::function<KerasModel(const std::vector<std::string> &)> &read);

/// The reader program that readKerasModel starts for each read
/// (runIsolatedProgram), instead of forking this process (runIsolated);
/// empty (the default): fork. dlc's Python module sets its package's
/// dlc-read-model. Thread-safe.
void setReaderProgram(const std::string &path);
std::string readerProgram();

/// While alive, in runIsolated's child, tells the parent that the child is
/// reading `what` (a file other than the model: "weights file 'w.h5'"), for
/// the messages of a crash or limit there. Does nothing elsewhere.
class ReadingScope {
public:
  explicit ReadingScope(const std::string &what);
  ~ReadingScope();
  ReadingScope(const ReadingScope &) = delete;
  ReadingScope &operator=(const ReadingScope &) = delete;
};

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_ISOLATION_H
