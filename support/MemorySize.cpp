//===- MemorySize.cpp - memory sizes from environment variables -----------===//

#include "support/MemorySize.h"

#include <utility>

const char *const dlc::kMemorySizeSyntax =
    "a positive number of bytes, optionally with a K, M, G or T suffix";

std::optional<uint64_t> dlc::parseMemorySize(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    unsigned d = unsigned(text[digits++] - '0');
    if (value > (UINT64_MAX - d) / 10)
      return std::nullopt;
    value = value * 10 + d;
  }
  std::string_view suffix = text.substr(digits);
  int shift = -1;
  for (auto [name, bits] :
       {std::pair{"", 0}, std::pair{"B", 0}, std::pair{"K", 10},
        std::pair{"KiB", 10}, std::pair{"M", 20}, std::pair{"MiB", 20},
        std::pair{"G", 30}, std::pair{"GiB", 30}, std::pair{"T", 40},
        std::pair{"TiB", 40}})
    if (suffix == name)
      shift = bits;
  if (digits == 0 || shift < 0 || value == 0 || value > (UINT64_MAX >> shift))
    return std::nullopt;
  return value << shift;
}
