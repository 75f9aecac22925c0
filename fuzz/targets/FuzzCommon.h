//===- FuzzCommon.h - what the libFuzzer targets share ----------*- C++ -*-===//
//
// The fuzz targets call dlc's readers in process (no child process: the
// sanitizers and libFuzzer's own limits watch them). What a reader may do
// with a malformed input: throw dlc::UserError (dlc's one-line error) or
// another std::exception (the isolated reader turns it into one line too).
// What it may not: crash, trip a sanitizer, leak, run away with memory
// (std::bad_alloc: a size that was not checked against the input) or time.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FUZZ_TARGETS_FUZZCOMMON_H
#define DLC_FUZZ_TARGETS_FUZZCOMMON_H

#include "support/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <unistd.h>

namespace dlc::fuzz {

/// Runs `fn`; an expected error is swallowed, std::bad_alloc aborts (a
/// finding: the reader allocated from an unchecked size).
template <typename Fn> void expectCleanly(Fn &&fn) {
  try {
    fn();
  } catch (const UserError &) {
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "dlc fuzz: std::bad_alloc escaped the reader\n");
    std::abort();
  } catch (const std::exception &) {
  }
}

/// A private folder for the files a target writes (under $TMPDIR, else
/// /dev/shm when it exists, else /tmp), made once per process.
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    const char *base = std::getenv("TMPDIR");
    std::string root = base && *base                     ? base
                       : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                         : "/tmp";
    std::string path = root + "/dlc-fuzz-XXXXXX";
    if (!::mkdtemp(path.data()))
      std::abort();
    return path;
  }();
  return dir;
}

/// Writes `size` bytes to `name` in scratchDir() and returns its path.
inline std::string writeScratch(const std::string &name, const uint8_t *data,
                                size_t size) {
  std::string path = scratchDir() + "/" + name;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  if (size && std::fwrite(data, 1, size, f) != size)
    std::abort();
  std::fclose(f);
  return path;
}

} // namespace dlc::fuzz

#endif // DLC_FUZZ_TARGETS_FUZZCOMMON_H
