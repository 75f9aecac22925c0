//===- Hdf5.cpp - a read-only, defensive view of an HDF5 file ---*- C++ -*-===//
//
// See Hdf5.h. HDF5's own error printing is switched off; a failing call is
// turned into a UserError carrying the innermost message of HDF5's error
// stack.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Hdf5.h"

#include "support/Error.h"

#include <hdf5.h>

#include <cstring>
#include <mutex>
#include <type_traits>

static_assert(std::is_same_v<hid_t, int64_t>, "hid_t is expected to be 64-bit");

using namespace dlc;
using namespace dlc::keras::h5;
using detail::Id;

namespace {

// Caps on what a file may make us do. Keras files are far below them.
constexpr uint64_t kMaxObjectsOpened = 1'000'000;
constexpr uint64_t kMaxLinksPerGroup = 1'000'000;
constexpr size_t kMaxNameLength = 1 << 16;
constexpr uint64_t kMaxAttributeBytes = uint64_t(256) << 20;
constexpr int kMaxRank = 32;
constexpr int kMaxDepth = 64;
// Deflate cannot expand data by more than about 1032:1; a filtered dataset
// that claims more is not a real compressed dataset.
constexpr uint64_t kMaxFilterRatio = 1100;

std::once_flag silenceOnce;

/// Switches off HDF5's printing of its error stack (once per process).
void silenceHdf5() {
  std::call_once(silenceOnce,
                 [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

herr_t keepInnermost(unsigned n, const H5E_error2_t *err, void *data) {
  auto *out = static_cast<std::string *>(data);
  if (n == 0 && err && err->desc)
    *out = err->desc;
  return 0;
}

/// `what`, followed by HDF5's innermost message when it has one; clears the
/// error stack.
std::string describe(const std::string &what) {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keepInnermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  if (detail.empty())
    return what;
  return what + " (HDF5: " + detail + ")";
}

[[noreturn]] void fail(const std::string &what) {
  throw UserError(describe(what));
}

Id check(hid_t id, Id::Kind kind, const std::string &what) {
  if (id < 0)
    fail(what);
  return Id(id, kind);
}

std::string joinPath(const std::string &parent, const std::string &name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

} // namespace

namespace dlc::keras::h5::detail {
/// The image the core driver reads: the caller's bytes or `owned`.
struct Image {
  const char *data = nullptr;
  size_t size = 0;
};

struct FileState {
  // Declared before `file`, so that the bytes outlive the HDF5 file.
  std::string owned; ///< the image, when the File was given it
  Image image;
  Id file;
  uint64_t size = 0;
  uint64_t opened = 0;
  std::string what;

  void countOpen(const std::string &path) {
    if (++opened > kMaxObjectsOpened)
      throw UserError("HDF5 file makes the reader open more than " +
                      std::to_string(kMaxObjectsOpened) + " objects (at '" +
                      path + "')");
  }
};
} // namespace dlc::keras::h5::detail

Id &Id::operator=(Id &&other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    kind_ = other.kind_;
    other.id_ = -1;
  }
  return *this;
}

void Id::reset() {
  if (id_ < 0)
    return;
  switch (kind_) {
  case Group:
    H5Gclose(id_);
    break;
  case Dataset:
    H5Dclose(id_);
    break;
  case Attribute:
    H5Aclose(id_);
    break;
  case Datatype:
    H5Tclose(id_);
    break;
  case Dataspace:
    H5Sclose(id_);
    break;
  case PropList:
    H5Pclose(id_);
    break;
  case File:
    H5Fclose(id_);
    break;
  }
  id_ = -1;
  H5Eclear2(H5E_DEFAULT);
}

namespace {

// File image callbacks that never copy (HDF5's "file image operations", as
// H5LTopen_file_image with H5LT_FILE_IMAGE_DONT_COPY | READ_ONLY, without
// its reference-counted buffer, which HDF5 1.10 leaks on that path): every
// "allocation" of the image, for the property list or the core driver's
// open file, is the caller's buffer; every "copy" of it onto itself does
// nothing; nothing is freed or reallocated (the file is read-only). The
// buffer is never written.
using detail::Image;

void *imageMalloc(size_t size, H5FD_file_image_op_t, void *udata) {
  auto *image = static_cast<Image *>(udata);
  return size == image->size ? const_cast<char *>(image->data) : nullptr;
}

void *imageMemcpy(void *dest, const void *src, size_t, H5FD_file_image_op_t,
                  void *) {
  return dest == src ? dest : nullptr;
}

void *imageRealloc(void *, size_t, H5FD_file_image_op_t, void *) {
  return nullptr;
}

herr_t imageFree(void *, H5FD_file_image_op_t, void *) { return 0; }

void *udataCopy(void *udata) { return udata; }

herr_t udataFree(void *) { return 0; }

} // namespace

bool dlc::keras::h5::hasSignature(std::string_view bytes) {
  static const char sig[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  for (uint64_t offset = 0; offset + 8 <= bytes.size();
       offset = offset ? offset * 2 : 512) {
    if (std::memcmp(bytes.data() + offset, sig, 8) == 0)
      return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// File
//===----------------------------------------------------------------------===//

File::File(std::string image, std::string what)
    : state_(std::make_shared<detail::FileState>()) {
  state_->owned = std::move(image);
  open(state_->owned, std::move(what));
}

File::File(std::string_view image, std::string what)
    : state_(std::make_shared<detail::FileState>()) {
  open(image, std::move(what));
}

void File::open(std::string_view image, std::string what) {
  silenceHdf5();
  state_->what = std::move(what);
  state_->size = image.size();
  state_->image = {image.data(), image.size()};
  if (!hasSignature(image))
    throw UserError(state_->what + " is not an HDF5 file");
  Id fapl = check(H5Pcreate(H5P_FILE_ACCESS), Id::PropList,
                  "cannot create an HDF5 property list");
  // The core driver keeps the file in memory; without a backing store it
  // never writes, and with a file image it never reads the disk either. The
  // callbacks (before the image: HDF5 refuses them after) give it the
  // image in place.
  H5FD_file_image_callbacks_t callbacks = {
      imageMalloc, imageMemcpy, imageRealloc,  imageFree,
      udataCopy,   udataFree,   &state_->image};
  if (H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0 ||
      H5Pset_file_image_callbacks(fapl.get(), &callbacks) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char *>(image.data()),
                        image.size()) < 0)
    fail("cannot load " + state_->what + " into memory");
  hid_t file = H5Fopen("dlc-in-memory.h5", H5F_ACC_RDONLY, fapl.get());
  if (file < 0)
    fail(state_->what + " is not a readable HDF5 file (truncated or corrupt)");
  state_->file = Id(file, Id::File);
}

Group File::root() const {
  hid_t g = H5Gopen2(state_->file.get(), "/", H5P_DEFAULT);
  if (g < 0)
    fail("cannot open the root group of " + state_->what);
  return Group(state_, std::make_shared<Id>(g, Id::Group), "/");
}

uint64_t File::size() const { return state_->size; }

//===----------------------------------------------------------------------===//
// Group
//===----------------------------------------------------------------------===//

std::vector<std::string> Group::children() const {
  H5G_info_t info;
  if (H5Gget_info(id_->get(), &info) < 0)
    fail("cannot list group '" + path_ + "'");
  if (info.nlinks > kMaxLinksPerGroup)
    throw UserError("group '" + path_ + "' has " + std::to_string(info.nlinks) +
                    " links, more than the limit of " +
                    std::to_string(kMaxLinksPerGroup));
  std::vector<std::string> names;
  names.reserve(info.nlinks);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t n = H5Lget_name_by_idx(id_->get(), ".", H5_INDEX_NAME, H5_ITER_INC,
                                   i, nullptr, 0, H5P_DEFAULT);
    if (n < 0)
      fail("cannot list group '" + path_ + "'");
    if (static_cast<size_t>(n) > kMaxNameLength)
      throw UserError("a link name in group '" + path_ + "' is " +
                      std::to_string(n) + " bytes long");
    std::string name(static_cast<size_t>(n) + 1, '\0');
    if (H5Lget_name_by_idx(id_->get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                           name.data(), name.size(), H5P_DEFAULT) < 0)
      fail("cannot list group '" + path_ + "'");
    name.resize(static_cast<size_t>(n));
    names.push_back(std::move(name));
  }
  return names;
}

std::optional<Id> Group::openChild(const std::string &name) const {
  std::string path = joinPath(path_, name);
  // A name with '/' would be resolved by HDF5 as a path (from the root when
  // it starts with '/'); callers walk paths one link at a time instead.
  if (name.empty() || name == "." || name.find('/') != std::string::npos)
    throw UserError("invalid HDF5 link name '" + name + "' under '" + path_ +
                    "'");
  htri_t exists = H5Lexists(id_->get(), name.c_str(), H5P_DEFAULT);
  if (exists < 0)
    fail("cannot look up '" + path + "'");
  if (exists == 0)
    return std::nullopt;
  H5L_info_t link;
  if (H5Lget_info(id_->get(), name.c_str(), &link, H5P_DEFAULT) < 0)
    fail("cannot look up '" + path + "'");
  if (link.type == H5L_TYPE_SOFT)
    throw UserError("'" + path + "' is a soft link; links are refused");
  if (link.type == H5L_TYPE_EXTERNAL)
    throw UserError("'" + path +
                    "' is an external link to another file; links are refused");
  if (link.type != H5L_TYPE_HARD)
    throw UserError("'" + path + "' is a user-defined link; links are refused");
  file_->countOpen(path);
  hid_t obj = H5Oopen(id_->get(), name.c_str(), H5P_DEFAULT);
  if (obj < 0)
    fail("cannot open '" + path + "'");
  switch (H5Iget_type(obj)) {
  case H5I_GROUP:
    return Id(obj, Id::Group);
  case H5I_DATASET:
    return Id(obj, Id::Dataset);
  case H5I_DATATYPE:
    return Id(obj, Id::Datatype);
  default:
    H5Oclose(obj);
    throw UserError("'" + path + "' is neither a group nor a dataset");
  }
}

bool Group::has(const std::string &name) const {
  return openChild(name).has_value();
}

std::optional<Group> Group::group(const std::string &name) const {
  std::optional<Id> id = openChild(name);
  if (!id)
    return std::nullopt;
  std::string path = joinPath(path_, name);
  if (H5Iget_type(id->get()) != H5I_GROUP)
    throw UserError("'" + path + "' is expected to be a group");
  return Group(file_, std::make_shared<Id>(std::move(*id)), path);
}

std::optional<Dataset> Group::dataset(const std::string &name) const {
  std::optional<Id> id = openChild(name);
  if (!id)
    return std::nullopt;
  std::string path = joinPath(path_, name);
  if (H5Iget_type(id->get()) != H5I_DATASET)
    throw UserError("'" + path + "' is expected to be a dataset");
  return Dataset(file_, std::make_shared<Id>(std::move(*id)), path);
}

bool Group::holdsData() const { return holdsData(0); }

bool Group::holdsData(int depth) const {
  if (depth > kMaxDepth)
    throw UserError("groups nest more than " + std::to_string(kMaxDepth) +
                    " deep at '" + path_ + "'");
  for (const std::string &name : children()) {
    std::optional<Id> id = openChild(name);
    if (!id)
      continue;
    H5I_type_t type = H5Iget_type(id->get());
    if (type == H5I_DATASET)
      return true;
    if (type == H5I_GROUP && Group(file_, std::make_shared<Id>(std::move(*id)),
                                   joinPath(path_, name))
                                 .holdsData(depth + 1))
      return true;
  }
  return false;
}

bool Group::hasAttribute(const std::string &name) const {
  htri_t exists = H5Aexists(id_->get(), name.c_str());
  if (exists < 0)
    fail("cannot look up attribute '" + name + "' of '" + path_ + "'");
  return exists > 0;
}

namespace {

/// Reads every element of a string attribute (or, for an empty non-string
/// array, nothing).
std::vector<std::string> readStrings(hid_t attr, const std::string &what) {
  Id type = check(H5Aget_type(attr), Id::Datatype, "cannot read " + what);
  Id space = check(H5Aget_space(attr), Id::Dataspace, "cannot read " + what);
  hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0)
    fail("cannot read " + what);
  if (H5Tget_class(type.get()) != H5T_STRING) {
    if (count == 0)
      return {};
    throw UserError(what + " is not a string attribute");
  }
  std::vector<std::string> out;
  if (count == 0)
    return out;
  if (static_cast<uint64_t>(count) > kMaxAttributeBytes / 8)
    throw UserError(what + " has " + std::to_string(count) + " elements");
  H5T_cset_t cset = H5Tget_cset(type.get());
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = check(H5Tcopy(H5T_C_S1), Id::Datatype, "cannot read " + what);
    if (H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(mem.get(), cset) < 0)
      fail("cannot read " + what);
    std::vector<char *> buf(static_cast<size_t>(count), nullptr);
    if (H5Aread(attr, mem.get(), buf.data()) < 0) {
      // A read that fails part-way has allocated some strings already.
      std::string message = describe("cannot read " + what);
      H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
      H5Eclear2(H5E_DEFAULT);
      throw UserError(message);
    }
    uint64_t total = 0;
    for (char *s : buf) {
      std::string str = s ? std::string(s) : std::string();
      total += str.size();
      out.push_back(std::move(str));
    }
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
    if (total > kMaxAttributeBytes)
      throw UserError(what + " is larger than " +
                      std::to_string(kMaxAttributeBytes) + " bytes");
    return out;
  }
  size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxAttributeBytes ||
      static_cast<uint64_t>(count) > kMaxAttributeBytes / size)
    throw UserError(what + " is larger than " +
                    std::to_string(kMaxAttributeBytes) + " bytes");
  bool spacePadded = H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD;
  std::string raw(size * static_cast<size_t>(count), '\0');
  if (H5Aread(attr, type.get(), raw.data()) < 0)
    fail("cannot read " + what);
  for (hssize_t i = 0; i < count; ++i) {
    std::string s = raw.substr(static_cast<size_t>(i) * size, size);
    s.resize(std::strlen(s.c_str()));
    if (spacePadded)
      s.erase(s.find_last_not_of(' ') + 1);
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace

std::optional<std::vector<std::string>>
Group::stringListAttribute(const std::string &name) const {
  if (!hasAttribute(name))
    return std::nullopt;
  std::string what = "attribute '" + name + "' of '" + path_ + "'";
  Id attr = check(H5Aopen(id_->get(), name.c_str(), H5P_DEFAULT), Id::Attribute,
                  "cannot open " + what);
  return readStrings(attr.get(), what);
}

std::optional<std::string>
Group::stringAttribute(const std::string &name) const {
  std::optional<std::vector<std::string>> list = stringListAttribute(name);
  if (!list)
    return std::nullopt;
  if (list->size() != 1)
    throw UserError("attribute '" + name + "' of '" + path_ +
                    "' is expected to be one string, it has " +
                    std::to_string(list->size()));
  return std::move((*list)[0]);
}

std::optional<std::vector<std::string>>
Group::chunkedStringListAttribute(const std::string &name) const {
  if (hasAttribute(name))
    return stringListAttribute(name);
  // Keras splits an attribute larger than HDF5's 64 KiB object-header limit
  // into `name0`, `name1`, ...
  std::optional<std::vector<std::string>> all;
  for (int chunk = 0; hasAttribute(name + std::to_string(chunk)); ++chunk) {
    if (chunk > 100000)
      throw UserError("attribute '" + name + "' of '" + path_ +
                      "' has too many chunks");
    std::vector<std::string> part =
        *stringListAttribute(name + std::to_string(chunk));
    if (!all)
      all.emplace();
    all->insert(all->end(), part.begin(), part.end());
  }
  return all;
}

//===----------------------------------------------------------------------===//
// Dataset
//===----------------------------------------------------------------------===//

std::vector<int64_t> Dataset::shape() const {
  Id space = check(H5Dget_space(id_->get()), Id::Dataspace,
                   "cannot read the shape of '" + path_ + "'");
  H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  if (cls == H5S_SCALAR)
    return {};
  if (cls != H5S_SIMPLE)
    throw UserError("dataset '" + path_ + "' has no data (null dataspace)");
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0)
    fail("cannot read the shape of '" + path_ + "'");
  if (rank > kMaxRank)
    throw UserError("dataset '" + path_ + "' has rank " + std::to_string(rank) +
                    ", more than " + std::to_string(kMaxRank));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail("cannot read the shape of '" + path_ + "'");
  std::vector<int64_t> shape;
  for (hsize_t d : dims) {
    if (d > static_cast<hsize_t>(INT64_MAX))
      throw UserError("dataset '" + path_ + "' has a dimension of " +
                      std::to_string(d));
    shape.push_back(static_cast<int64_t>(d));
  }
  return shape;
}

namespace {

struct Layout {
  DType dtype;
  hid_t memType; ///< H5T_NATIVE_* to read with, or -1: the file type
  bool viaFloat; ///< read as float, then convert (float16)
};

std::string typeName(H5T_class_t cls, size_t size) {
  static const char *names[] = {"integer",  "float",  "time",     "string",
                                "bitfield", "opaque", "compound", "reference",
                                "enum",     "vlen",   "array"};
  std::string name = cls >= 0 && cls < 11 ? names[cls] : "unknown";
  return std::to_string(size) + "-byte " + name;
}

Layout layoutFor(hid_t type, const Dataset &ds, hid_t dset) {
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    if (size == 4)
      return {DType::F32, H5T_NATIVE_FLOAT, false};
    if (size == 8)
      return {DType::F64, H5T_NATIVE_DOUBLE, false};
    if (size == 2)
      return {DType::F16, H5T_NATIVE_FLOAT, true};
  } else if (cls == H5T_INTEGER) {
    bool isSigned = H5Tget_sign(type) == H5T_SGN_2;
    if (size == 1)
      return isSigned ? Layout{DType::I8, H5T_NATIVE_INT8, false}
                      : Layout{DType::U8, H5T_NATIVE_UINT8, false};
    if (size == 2)
      return isSigned ? Layout{DType::I16, H5T_NATIVE_INT16, false}
                      : Layout{DType::U16, H5T_NATIVE_UINT16, false};
    if (size == 4 && isSigned)
      return {DType::I32, H5T_NATIVE_INT32, false};
    if (size == 8 && isSigned)
      return {DType::I64, H5T_NATIVE_INT64, false};
    throw UserError("dataset '" + ds.path() + "' has unsupported dtype " +
                    (isSigned ? "int" : "uint") + std::to_string(size * 8));
  } else if (cls == H5T_OPAQUE && size == 2) {
    // Keras 3 writes bfloat16 variables as 2-byte opaque data tagged with
    // an attribute dtype="bfloat16".
    htri_t tagged = H5Aexists(dset, "dtype");
    if (tagged > 0) {
      Id attr = check(H5Aopen(dset, "dtype", H5P_DEFAULT), Id::Attribute,
                      "cannot read the dtype of '" + ds.path() + "'");
      std::vector<std::string> v =
          readStrings(attr.get(), "attribute 'dtype' of '" + ds.path() + "'");
      if (v.size() == 1 && v[0] == "bfloat16")
        return {DType::BF16, -1, false};
    }
  } else if (cls == H5T_ENUM && size == 1 && H5Tget_nmembers(type) == 2) {
    // h5py's bool: an int8 enum {FALSE=0, TRUE=1}, read as raw bytes.
    return {DType::Bool, -1, false};
  }
  throw UserError("dataset '" + ds.path() + "' has unsupported data type (" +
                  typeName(cls, size) + ")");
}

} // namespace

Tensor Dataset::read() const {
  hid_t dset = id_->get();
  Id dcpl = check(H5Dget_create_plist(dset), Id::PropList,
                  "cannot read the layout of '" + path_ + "'");
  H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_VIRTUAL)
    throw UserError("dataset '" + path_ +
                    "' is a virtual dataset; virtual datasets are refused");
  int external = H5Pget_external_count(dcpl.get());
  if (external != 0)
    throw UserError("dataset '" + path_ +
                    "' keeps its data in external files; external storage "
                    "is refused");
  int filters = H5Pget_nfilters(dcpl.get());
  if (filters < 0)
    fail("cannot read the filters of '" + path_ + "'");

  Id type = check(H5Dget_type(dset), Id::Datatype,
                  "cannot read the data type of '" + path_ + "'");
  Layout how = layoutFor(type.get(), *this, dset);
  std::vector<int64_t> dims = shape();
  std::optional<int64_t> numel = checkedNumel(dims, dtypeSize(how.dtype));
  if (!numel)
    throw UserError("dataset '" + path_ + "' has shape " + formatShape(dims) +
                    ", whose size overflows");

  // Declared against stored bytes, before allocating anything.
  uint64_t declared = static_cast<uint64_t>(*numel) * dtypeSize(how.dtype);
  uint64_t stored = H5Dget_storage_size(dset);
  H5Eclear2(H5E_DEFAULT);
  if (stored > file_->size)
    throw UserError("dataset '" + path_ + "' claims " + std::to_string(stored) +
                    " stored bytes in a file of " +
                    std::to_string(file_->size));
  if (filters == 0 && declared != stored)
    throw UserError("dataset '" + path_ + "' declares " + formatShape(dims) +
                    " " + dtypeName(how.dtype) + " (" +
                    std::to_string(declared) + " bytes) but stores " +
                    std::to_string(stored) + " bytes");
  if (filters > 0 && declared > stored * kMaxFilterRatio)
    throw UserError("dataset '" + path_ + "' declares " +
                    std::to_string(declared) + " bytes but stores only " +
                    std::to_string(stored) + " compressed bytes");

  Tensor tensor(how.dtype, dims);
  if (tensor.numel() == 0)
    return tensor;
  herr_t status;
  if (how.viaFloat) {
    std::vector<float> wide(static_cast<size_t>(tensor.numel()));
    status =
        H5Dread(dset, how.memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, wide.data());
    auto *out = tensor.data<uint16_t>();
    for (size_t i = 0; i < wide.size(); ++i)
      out[i] = floatToHalf(wide[i]); // exact: the values were half to start
  } else {
    status = H5Dread(dset, how.memType >= 0 ? how.memType : type.get(), H5S_ALL,
                     H5S_ALL, H5P_DEFAULT, tensor.raw());
  }
  if (status < 0)
    fail("cannot read dataset '" + path_ + "'");
  return tensor;
}
