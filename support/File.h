//===- File.h - whole-file I/O ----------------------------------*- C++ -*-===//
//
// Reading untrusted files with a size cap, and writing outputs atomically: to
// a temporary name in the same folder, renamed over the target only once the
// data is complete, so an error never leaves a half-written file.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_FILE_H
#define DLC_SUPPORT_FILE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace dlc {

/// The whole file; throws UserError (with the path) when it cannot be read
/// or is larger than `maxBytes`.
std::string readFile(const std::string &path, uint64_t maxBytes = uint64_t(16)
                                                                  << 30);

/// Writes `data` to `path` through a temporary file and a rename. Throws
/// UserError on failure, after removing the temporary file.
void writeFileAtomic(const std::string &path, std::string_view data);

/// The folder part of a path ("." for a bare file name).
std::string parentDir(const std::string &path);

} // namespace dlc

#endif // DLC_SUPPORT_FILE_H
