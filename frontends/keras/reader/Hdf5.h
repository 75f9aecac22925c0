//===- Hdf5.h - a read-only, defensive view of an HDF5 file -----*- C++ -*-===//
//
// RAII wrappers over the HDF5 C API for the Keras weight files. The file is
// opened from an in-memory image (the core driver with no backing store), so
// nothing but the bytes already read is ever touched; HDF5 reads the image
// where it lies (file image callbacks that hand the core driver the caller's
// buffer instead of copies of it). Model files are
// untrusted: only hard links are followed (soft, external and user-defined
// links are refused), datasets with external storage or a virtual layout are
// refused, a dataset's declared size is checked against what the file stores
// before anything is allocated, and the number of objects opened is capped.
// Every failure throws dlc::UserError without a file name; callers add it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_HDF5_H
#define DLC_FRONTENDS_KERAS_READER_HDF5_H

#include "support/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlc::keras::h5 {

/// True when `bytes` starts with the HDF5 signature (at offset 0 or at a
/// user-block offset of 512, 1024, 2048, ...).
bool hasSignature(std::string_view bytes);

namespace detail {
struct FileState;
/// An open HDF5 identifier, closed with the matching H5?close.
class Id {
public:
  enum Kind { Group, Dataset, Attribute, Datatype, Dataspace, PropList, File };
  Id() = default;
  Id(int64_t id, Kind kind) : id_(id), kind_(kind) {}
  Id(const Id &) = delete;
  Id &operator=(const Id &) = delete;
  Id(Id &&other) noexcept { *this = std::move(other); }
  Id &operator=(Id &&other) noexcept;
  ~Id() { reset(); }
  int64_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  void reset();

private:
  int64_t id_ = -1;
  Kind kind_ = Group;
};
} // namespace detail

class Dataset;

/// A group of an open file (the root group included).
class Group {
public:
  /// "/layers/dense/vars", for messages.
  const std::string &path() const { return path_; }

  /// Names of the links in this group (alphabetical, as HDF5 indexes them).
  std::vector<std::string> children() const;
  /// True when the group has a link `name`; throws when that link is not a
  /// hard link.
  bool has(const std::string &name) const;
  /// The child group `name`, nullopt when there is no such link; throws when
  /// the link is not a hard link or the object is not a group.
  std::optional<Group> group(const std::string &name) const;
  /// The child dataset `name`; like group().
  std::optional<Dataset> dataset(const std::string &name) const;
  /// True when this group or any group below it holds a dataset.
  bool holdsData() const;

  bool hasAttribute(const std::string &name) const;
  /// A string attribute (scalar, or the first element of a 1-element array);
  /// nullopt when absent. Throws when it is not a string.
  std::optional<std::string> stringAttribute(const std::string &name) const;
  /// A string-array attribute, fixed-length (NUL- or space-padded) or
  /// variable-length; an empty non-string array (h5py writes `[]` as an empty
  /// float64 array) reads as an empty list. nullopt when absent.
  std::optional<std::vector<std::string>>
  stringListAttribute(const std::string &name) const;
  /// Keras's chunked form of a long string-array attribute: `name` itself,
  /// or `name0`, `name1`, ... concatenated. nullopt when neither exists.
  std::optional<std::vector<std::string>>
  chunkedStringListAttribute(const std::string &name) const;

private:
  friend class File;
  friend class Dataset;
  Group(std::shared_ptr<detail::FileState> file, std::shared_ptr<detail::Id> id,
        std::string path)
      : file_(std::move(file)), id_(std::move(id)), path_(std::move(path)) {}
  /// Opens the object behind hard link `name`; nullopt when absent.
  std::optional<detail::Id> openChild(const std::string &name) const;
  bool holdsData(int depth) const;

  std::shared_ptr<detail::FileState> file_;
  std::shared_ptr<detail::Id> id_;
  std::string path_;
};

class Dataset {
public:
  const std::string &path() const { return path_; }
  /// The dataspace's dimensions ([] for a scalar).
  std::vector<int64_t> shape() const;
  /// Reads the whole dataset: float16/32/64, (u)int8/16, int32/64, h5py's
  /// bool enum, and Keras 3's bfloat16 (2-byte opaque with attribute
  /// dtype="bfloat16"). Checks the declared size against the stored size
  /// before allocating.
  Tensor read() const;

private:
  friend class Group;
  Dataset(std::shared_ptr<detail::FileState> file,
          std::shared_ptr<detail::Id> id, std::string path)
      : file_(std::move(file)), id_(std::move(id)), path_(std::move(path)) {}

  std::shared_ptr<detail::FileState> file_;
  std::shared_ptr<detail::Id> id_;
  std::string path_;
};

/// An HDF5 file opened read-only from bytes in memory.
class File {
public:
  /// `what` names the image in messages ("model.weights.h5"). The File
  /// keeps `image`.
  File(std::string image, std::string what);
  /// The same over bytes the caller keeps, unchanged, until the File and
  /// every Group and Dataset of it are gone (a zip member, a mapped file).
  File(std::string_view image, std::string what);
  Group root() const;
  /// The size of the image, the bound for any dataset's stored bytes.
  uint64_t size() const;

private:
  void open(std::string_view image, std::string what);

  std::shared_ptr<detail::FileState> state_;
};

} // namespace dlc::keras::h5

#endif // DLC_FRONTENDS_KERAS_READER_HDF5_H
