//===- MemorySize.h - memory sizes from environment variables ---*- C++ -*-===//
//
// The one syntax of the memory limits dlc reads from the environment
// (DLC_MAX_MEMORY, the runtime's; DLC_READ_MEMORY, the model reader's): a
// positive number of bytes, optionally followed by K, M, G or T (powers of
// 1024), each optionally followed by "iB" ("512M", "2GiB"), or by "B"
// ("4096B"). Nothing else: no spaces, no sign, no fractions, no lower case.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_MEMORYSIZE_H
#define DLC_SUPPORT_MEMORYSIZE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc {

/// The syntax, for messages: "a positive number of bytes, optionally with a
/// K, M, G or T suffix".
extern const char *const kMemorySizeSyntax;

/// The bytes `text` says; nullopt for an empty text, zero, another form or a
/// size that does not fit in 64 bits.
std::optional<uint64_t> parseMemorySize(std::string_view text);

} // namespace dlc

#endif // DLC_SUPPORT_MEMORYSIZE_H
