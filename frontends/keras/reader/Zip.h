//===- Zip.h - reading members of a zip archive held in memory --*- C++ -*-===//
//
// The .keras archive reader, on libzip. The archive is untrusted: only stored
// and deflated members are read, a member's declared size is checked against
// the caller's cap and against its compressed size (no zip bombs) before any
// allocation, and the bytes produced must match the declared size and CRC.
// Errors throw dlc::UserError without a file name; callers add it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_ZIP_H
#define DLC_FRONTENDS_KERAS_READER_ZIP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct zip;

namespace dlc::keras {

/// True when `bytes` starts like a zip archive (a local file header or an
/// empty archive's end record).
bool hasZipSignature(std::string_view bytes);

class ZipArchive {
public:
  struct Member {
    std::string name;
    uint64_t size = 0;           ///< declared uncompressed size
    uint64_t compressedSize = 0; ///< declared stored size
    int32_t method = 0;          ///< ZIP_CM_*
    bool encrypted = false;
    uint64_t index = 0;
  };

  /// Opens the archive in `bytes`, which must outlive this object.
  explicit ZipArchive(std::string_view bytes);
  ~ZipArchive();
  ZipArchive(const ZipArchive &) = delete;
  ZipArchive &operator=(const ZipArchive &) = delete;

  const std::vector<Member> &members() const { return members_; }
  /// The member called `name`, nullptr when there is none; throws when the
  /// archive has several.
  const Member *find(const std::string &name) const;
  /// The member's bytes; throws when it declares more than `maxBytes`, uses
  /// another method than stored or deflate, is encrypted, or its data does
  /// not match what it declares.
  std::string read(const Member &member, uint64_t maxBytes) const;

private:
  zip *archive_ = nullptr;
  uint64_t archiveSize_ = 0;
  std::vector<Member> members_;
};

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_ZIP_H
