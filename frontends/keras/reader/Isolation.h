//===- Isolation.h - reading untrusted files in a child process -*- C++ -*-===//
//
// The HDF5 C library (1.10 on Debian 12) crashes on some corrupt files:
// flipped bytes in a global heap make it read wild pointers. No check done
// before calling it can rule that out, so the readers run in a forked child
// process: whatever happens there (a crash, an abort, a runaway allocation
// against its memory limit, a hang past its time limit) comes back to the
// caller as a UserError, and a successful read comes back as the KerasModel,
// serialized through a pipe.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_ISOLATION_H
#define DLC_FRONTENDS_KERAS_READER_ISOLATION_H

#include "frontends/keras/reader/KerasModel.h"

#include <cstdint>
#include <functional>

namespace dlc::keras {

struct IsolationLimits {
  /// Address space the child may add to what it inherits; 0: as much as
  /// the machine has physical memory.
  uint64_t extraMemoryBytes = 0;
  /// Wall-clock seconds before the child is killed.
  unsigned seconds = 600;
};

/// Runs `read` in a child process and returns what it returned; its
/// UserError is rethrown as is; anything else that stops it becomes a
/// UserError saying so. The child's stderr goes to /dev/null.
KerasModel runIsolated(const std::function<KerasModel()> &read,
                       const IsolationLimits &limits = IsolationLimits());

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_ISOLATION_H
