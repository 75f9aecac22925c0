//===- artifact.cpp - fuzz target: the .dlcm artifact loader (host side) --===//
//
// The input is a .dlcm file. It is parsed twice: as is (the checksum
// catches most mutations), and with its header's payload size and SHA-256
// recomputed, so that mutations reach the manifest parser and the
// validation of every size and offset. A parsed artifact's memory use is
// computed and checked against a limit, as the runtime does before it
// allocates.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "artifact/Artifact.h"
#include "artifact/Sha256.h"

#include <cstring>
#include <string_view>

namespace {

void load(std::string_view bytes) {
  dlc::fuzz::expectCleanly([&] {
    dlc::artifact::Artifact a = dlc::artifact::parse(bytes);
    dlc::artifact::memoryUse(a);
    dlc::artifact::checkMemoryLimit(a, uint64_t(1) << 30, "the fuzz limit");
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  load(bytes);
  if (bytes.size() >= 128) {
    uint64_t payload = bytes.size() - 128;
    std::memcpy(bytes.data() + 16, &payload, 8);
    dlc::Sha256::Digest digest =
        dlc::Sha256::hash(std::string_view(bytes).substr(128));
    std::memcpy(bytes.data() + 24, digest.data(), digest.size());
    load(bytes);
  }
  return 0;
}
