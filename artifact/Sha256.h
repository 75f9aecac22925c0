//===- Sha256.h - FIPS 180-4 SHA-256 ----------------------------*- C++ -*-===//
//
// The checksum of the artifact format (artifact/Artifact.h) and the key of the
// NVRTC cache. The runtime may depend on nothing but CUDA, hence a small
// implementation of its own (tested against the NIST vectors), with the x86
// SHA extensions where the CPU has them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ARTIFACT_SHA256_H
#define DLC_ARTIFACT_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dlc {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  /// Appends bytes to the message.
  Sha256 &update(const void *data, size_t size);
  Sha256 &update(std::string_view bytes) {
    return update(bytes.data(), bytes.size());
  }
  /// Pads the message and returns its digest; the object is then spent.
  Digest finish();

  /// The digest of one message.
  static Digest hash(std::string_view bytes);
  /// Lower-case hexadecimal, 64 characters.
  static std::string hex(const Digest &digest);

  /// Whether this CPU has the x86 SHA extensions, which hash 3-4x faster
  /// (the artifact's load check reads every payload byte).
  static bool hardwareAvailable();
  /// Tests: hash with the SHA extensions (where available; the default) or
  /// with the portable code. Not thread-safe: call before hashing.
  static void useHardware(bool on);

private:
  void compress(const uint8_t *block);
  /// `blocks` 64-byte blocks, with the SHA extensions where they are on.
  void compressBlocks(const uint8_t *data, size_t blocks);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0; ///< message bytes so far
};

} // namespace dlc

#endif // DLC_ARTIFACT_SHA256_H
