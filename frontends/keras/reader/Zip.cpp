//===- Zip.cpp - reading members of a zip archive in memory ---*- C++ -*-===//

#include "frontends/keras/reader/Zip.h"

#include "support/Error.h"

#include <zip.h>

#include <cstring>

using namespace dlc;
using namespace dlc::keras;

namespace {

constexpr uint64_t kMaxMembers = 1'000'000;
// Deflate cannot expand data by more than about 1032:1; a member that claims
// more is corrupt. Weights compress far less than 100:1, so a large member
// that does is a zip bomb; below kBombFloor the ratio does not matter.
constexpr uint64_t kMaxDeflateRatio = 1100;
constexpr uint64_t kMaxLargeMemberRatio = 100;
constexpr uint64_t kBombFloor = uint64_t(64) << 20;

std::string zipMessage(zip_error_t *err) {
  const char *msg = zip_error_strerror(err);
  return msg ? msg : "unknown error";
}

/// Closes a zip_file_t on every path out.
struct MemberFile {
  zip_file_t *file;
  ~MemberFile() {
    if (file)
      zip_fclose(file);
  }
};

} // namespace

bool dlc::keras::hasZipSignature(std::string_view bytes) {
  return bytes.size() >= 4 && bytes[0] == 'P' && bytes[1] == 'K' &&
         ((bytes[2] == '\x03' && bytes[3] == '\x04') ||
          (bytes[2] == '\x05' && bytes[3] == '\x06'));
}

ZipArchive::ZipArchive(std::string_view bytes) : archiveSize_(bytes.size()) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src =
      zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  if (!src) {
    std::string msg = zipMessage(&err);
    zip_error_fini(&err);
    throw UserError("cannot read the zip archive: " + msg);
  }
  // ZIP_CHECKCONS cross-checks the central directory against the local
  // headers, which catches truncated and spliced archives early.
  archive_ = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!archive_) {
    zip_source_free(src);
    std::string msg = zipMessage(&err);
    zip_error_fini(&err);
    throw UserError("not a readable zip archive (truncated or corrupt): " +
                    msg);
  }
  zip_error_fini(&err);

  zip_int64_t count = zip_get_num_entries(archive_, 0);
  // Each member takes at least a 46-byte central directory entry.
  if (count < 0 || static_cast<uint64_t>(count) > kMaxMembers ||
      static_cast<uint64_t>(count) > archiveSize_ / 46) {
    zip_discard(archive_);
    throw UserError("zip archive has " + std::to_string(count) +
                    " members, more than the limit of " +
                    std::to_string(kMaxMembers) + " or than its size can hold");
  }
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive_, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW,
                       &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_METHOD)) {
      std::string msg = zipMessage(zip_get_error(archive_));
      zip_discard(archive_);
      throw UserError("cannot read member " + std::to_string(i) +
                      " of the zip archive: " + msg);
    }
    Member m;
    m.name = st.name;
    m.size = st.size;
    m.compressedSize = st.comp_size;
    m.method = st.comp_method;
    m.encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
                  st.encryption_method != ZIP_EM_NONE;
    m.index = static_cast<uint64_t>(i);
    members_.push_back(std::move(m));
  }
}

ZipArchive::~ZipArchive() {
  if (archive_)
    zip_discard(archive_);
}

const ZipArchive::Member *ZipArchive::find(const std::string &name) const {
  const Member *found = nullptr;
  for (const Member &m : members_) {
    if (m.name != name)
      continue;
    if (found)
      throw UserError("zip archive has more than one member named '" + name +
                      "'");
    found = &m;
  }
  return found;
}

std::string ZipArchive::read(const Member &m, uint64_t maxBytes) const {
  std::string what = "zip member '" + m.name + "'";
  if (m.encrypted)
    throw UserError(what + " is encrypted");
  if (m.method != ZIP_CM_STORE && m.method != ZIP_CM_DEFLATE)
    throw UserError(what + " uses compression method " +
                    std::to_string(m.method) +
                    "; only stored and deflate are supported");
  if (m.size > maxBytes)
    throw UserError(what + " declares " + std::to_string(m.size) +
                    " bytes, more than the limit of " +
                    std::to_string(maxBytes));
  if (m.compressedSize > archiveSize_)
    throw UserError(what + " declares " + std::to_string(m.compressedSize) +
                    " compressed bytes in an archive of " +
                    std::to_string(archiveSize_));
  if (m.method == ZIP_CM_STORE && m.size != m.compressedSize)
    throw UserError(what + " is stored uncompressed but declares " +
                    std::to_string(m.size) + " bytes and stores " +
                    std::to_string(m.compressedSize));
  if (m.method == ZIP_CM_DEFLATE &&
      (m.size > (m.compressedSize + 1) * kMaxDeflateRatio ||
       (m.size > kBombFloor &&
        m.size > (m.compressedSize + 1) * kMaxLargeMemberRatio)))
    throw UserError(what + " declares " + std::to_string(m.size) +
                    " bytes from " + std::to_string(m.compressedSize) +
                    " compressed bytes; refusing a likely zip bomb");

  MemberFile file{zip_fopen_index(archive_, m.index, 0)};
  if (!file.file)
    throw UserError("cannot open " + what + ": " +
                    zipMessage(zip_get_error(archive_)));
  std::string data(static_cast<size_t>(m.size), '\0');
  uint64_t done = 0;
  while (done < m.size) {
    zip_int64_t n = zip_fread(file.file, data.data() + done, m.size - done);
    if (n < 0)
      throw UserError("cannot read " + what + ": " +
                      zipMessage(zip_file_get_error(file.file)));
    if (n == 0)
      throw UserError(what + " declares " + std::to_string(m.size) +
                      " bytes but holds " + std::to_string(done));
    done += static_cast<uint64_t>(n);
  }
  // One more read reaches the end, where libzip checks the CRC, and shows
  // whether the data runs past its declared size.
  char extra;
  zip_int64_t n = zip_fread(file.file, &extra, 1);
  if (n < 0)
    throw UserError("cannot read " + what + ": " +
                    zipMessage(zip_file_get_error(file.file)));
  if (n > 0)
    throw UserError(what + " holds more than the " + std::to_string(m.size) +
                    " bytes it declares");
  return data;
}
