//===- File.cpp - reading inputs and writing outputs safely -----*- C++ -*-===//

#include "support/File.h"

#include "support/Error.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dlc;

namespace {

/// "a FIFO", "a directory"...: what a file that is not a regular one is.
std::string kindOf(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

std::string errnoText(int err) { return std::strerror(err); }

void closeKeepingErrno(int fd) {
  int err = errno;
  ::close(fd);
  errno = err;
}

/// Why an output cannot go into `path`'s directory, or "": it must exist, be
/// a directory, and be writable.
std::string directoryProblem(const std::string &path) {
  std::string dir = parentDir(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return errno == ENOENT || errno == ENOTDIR
               ? "directory '" + dir + "' does not exist"
               : "cannot use directory '" + dir + "': " + errnoText(errno);
  if (!S_ISDIR(st.st_mode))
    return "'" + dir + "' is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write in directory '" + dir + "': " + errnoText(errno);
  return "";
}

/// Writes all of `data` to `fd`; false (errno set) on an error.
bool writeAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// An existing character device or FIFO: opened (a FIFO waits for its
/// reader, as a shell redirection does) and written, never replaced.
void writeInPlace(const std::string &path, std::string_view data) {
  int fd;
  do
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    throw UserError("cannot open for writing: " + errnoText(errno), path);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // It became a regular file since it was looked at: replace it instead,
    // so that an error cannot leave it half-written.
    ::close(fd);
    return replaceFileAtomic(path, data);
  }
  if (!writeAll(fd, data)) {
    closeKeepingErrno(fd);
    throw UserError("cannot write: " + errnoText(errno), path);
  }
  if (::close(fd) != 0)
    throw UserError("cannot close: " + errnoText(errno), path);
}

/// What identifies the file a path names: the device and inode of an
/// existing file, else those of its directory and its name.
struct FileKey {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;

  bool operator==(const FileKey &o) const {
    return dev == o.dev && ino == o.ino && name == o.name;
  }
};

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Collects the weight shard names of a TF.js model.json
/// (weightsManifest[*].paths[*]) without building a document, so that no
/// file, however nested, can make this recurse or allocate much.
class ShardNames : public nlohmann::json_sax<nlohmann::json> {
public:
  std::vector<std::string> names;
  bool isTfJs = false;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool string(string_t &value) override {
    // [{weightsManifest: [{paths: [HERE]}]}]
    if (stack_.size() == 4 && stack_[0].key == "weightsManifest" &&
        !stack_[1].object && stack_[2].key == "paths" && !stack_[3].object)
      names.push_back(value);
    return names.size() < 100000;
  }
  bool start_object(std::size_t) override { return push(true); }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override { return push(false); }
  bool end_array() override { return pop(); }
  bool key(string_t &value) override {
    stack_.back().key = value;
    if (stack_.size() == 1 && value == "weightsManifest")
      isTfJs = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &) override {
    return false;
  }

private:
  struct Level {
    bool object;
    std::string key;
  };
  bool push(bool object) {
    stack_.push_back({object, ""});
    return stack_.size() < 64;
  }
  bool pop() {
    stack_.pop_back();
    return true;
  }
  std::vector<Level> stack_;
};

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

int dlc::openInputFile(const std::string &path, uint64_t &size) {
  // Refuse what is visibly not a regular file without opening it (opening
  // some devices has effects); the fstat below is what decides.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UserError("is " + kindOf(st.st_mode) + ", not a regular file", path);
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    throw UserError(errnoText(errno), path);
  if (::fstat(fd, &st) != 0) {
    closeKeepingErrno(fd);
    throw UserError(errnoText(errno), path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError("is " + kindOf(st.st_mode) + ", not a regular file", path);
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    closeKeepingErrno(fd);
    throw UserError(errnoText(errno), path);
  }
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

std::string dlc::readAndClose(int fd, uint64_t size, const std::string &path) {
  std::string data;
  try {
    data.resize(static_cast<size_t>(size));
  } catch (...) {
    ::close(fd);
    throw;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw UserError(n == 0 ? "file shrank while reading" : errnoText(err),
                      path);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

namespace {

/// openInputFile, and a UserError (the file closed) when it is larger than
/// `maxBytes`.
int openInputFileWithin(const std::string &path, uint64_t maxBytes,
                        uint64_t &size) {
  int fd = dlc::openInputFile(path, size);
  if (size > maxBytes) {
    ::close(fd);
    throw UserError("file of " + std::to_string(size) +
                        " bytes is larger than the limit of " +
                        std::to_string(maxBytes),
                    path);
  }
  return fd;
}

} // namespace

std::string dlc::readFile(const std::string &path, uint64_t maxBytes) {
  uint64_t size = 0;
  int fd = openInputFileWithin(path, maxBytes, size);
  return readAndClose(fd, size, path);
}

dlc::MappedFile::MappedFile(const std::string &path, uint64_t maxBytes) {
  uint64_t size = 0;
  int fd = openInputFileWithin(path, maxBytes, size);
  if (size > 0) {
    void *data = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ,
                        MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw UserError("cannot map it: " + errnoText(err), path);
    }
    data_ = data;
    size_ = static_cast<size_t>(size);
  }
  ::close(fd);
}

dlc::MappedFile::~MappedFile() {
  if (data_)
    ::munmap(data_, size_);
}

void dlc::writeFileAtomic(const std::string &path, std::string_view data) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
      return writeInPlace(path, data);
    throw UserError("is " + kindOf(st.st_mode) +
                        ": outputs are regular files, character devices or "
                        "FIFOs",
                    path);
  }
  replaceFileAtomic(path, data);
}

void dlc::replaceFileAtomic(const std::string &path, std::string_view data) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    int err = errno;
    std::string problem = directoryProblem(path);
    throw UserError(problem.empty()
                        ? "cannot create a temporary file: " + errnoText(err)
                        : problem,
                    path);
  }
  auto fail = [&](const char *what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw UserError(std::string(what) + ": " + errnoText(err), path);
  };
  if (!writeAll(fd, data))
    fail("cannot write");
  // mkstemp creates 0600; give the file the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0)
    fail("cannot finish writing");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw UserError("cannot close: " + errnoText(err), path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw UserError("cannot rename into place: " + errnoText(err), path);
  }
}

void dlc::checkOutputs(const std::vector<std::string> &outputs,
                       const std::vector<std::string> &inputs) {
  struct Input {
    std::string path;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Input> regular;
  for (const std::string &in : inputs) {
    struct stat st;
    if (::stat(in.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      regular.push_back({in, st.st_dev, st.st_ino});
  }
  std::vector<std::pair<FileKey, std::string>> seen;
  for (const std::string &out : outputs) {
    if (out.empty())
      throw UserError("an output path is empty");
    FileKey key;
    bool isDevice = false;
    struct stat st;
    if (::stat(out.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
        throw UserError("is " + kindOf(st.st_mode) +
                            ": outputs are regular files, character devices "
                            "or FIFOs",
                        out);
      for (const Input &in : regular)
        if (in.dev == st.st_dev && in.ino == st.st_ino)
          throw UserError(
              "is the same file as the input '" + in.path +
                  "': refusing to overwrite an input (choose another output)",
              out);
      key = {st.st_dev, st.st_ino, ""};
      isDevice = S_ISCHR(st.st_mode);
    } else if (errno == ENOENT || errno == ENOTDIR) {
      if (std::string problem = directoryProblem(out); !problem.empty())
        throw UserError(problem, out);
      struct stat dir;
      if (::stat(parentDir(out).c_str(), &dir) != 0)
        throw UserError(directoryProblem(out), out);
      key = {dir.st_dev, dir.st_ino, baseName(out)};
    } else {
      throw UserError(errnoText(errno), out);
    }
    if (!isDevice)
      for (const auto &[other, name] : seen)
        if (other == key)
          throw UserError("is the same file as the output '" + name +
                              "': each output needs its own file",
                          out);
    seen.push_back({key, out});
  }
}

std::vector<std::string> dlc::modelFiles(const std::string &model,
                                         const std::string &weights) {
  std::vector<std::string> files = {model};
  if (!weights.empty()) {
    files.push_back(weights);
    return files;
  }
  // Only a JSON model names other files: look at its first bytes before
  // reading it whole (a config is at most 256 MiB, the reader's limit too).
  auto looksLikeJson = [](const std::string &text) {
    size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    return i < text.size() && text[i] == '{';
  };
  std::string text;
  try {
    uint64_t size = 0;
    int fd = openInputFile(model, size);
    text.resize(4096);
    ssize_t n = ::read(fd, text.data(), text.size());
    ::close(fd);
    text.resize(n > 0 ? size_t(n) : 0);
    if (!looksLikeJson(text))
      return files;
    text = readFile(model, uint64_t(256) << 20);
  } catch (const UserError &) {
    return files;
  }
  size_t i = text.find('{');
  if (i == std::string::npos)
    return files;
  ShardNames sax;
  nlohmann::json::sax_parse(text.begin() + i, text.end(), &sax);
  std::string dir = parentDir(model);
  if (sax.isTfJs) {
    for (const std::string &name : sax.names)
      if (!name.empty() && name.find('/') == std::string::npos)
        files.push_back(dir + "/" + name);
    return files;
  }
  // The reader's rule for a to_json() file: STEM.weights.h5, else STEM.h5.
  std::string stem = baseName(model);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
    stem.resize(stem.size() - 5);
  std::string prefix = model.find('/') == std::string::npos ? "" : dir + "/";
  for (const char *suffix : {".weights.h5", ".h5"})
    if (isRegularFile(prefix + stem + suffix)) {
      files.push_back(prefix + stem + suffix);
      break;
    }
  return files;
}

std::string dlc::defaultArtifactPath(const std::string &model) {
  std::string out = model;
  size_t slash = out.find_last_of('/');
  size_t dot = out.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    out.erase(dot);
  return out + ".dlcm";
}

std::string dlc::preparePrivateDir(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return "cannot use it: " + errnoText(errno);
    // The parents with the usual permissions (~/.cache), the cache itself
    // for its owner only.
    std::error_code ec;
    std::filesystem::create_directories(parentDir(dir), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create it: " + errnoText(errno);
    if (::stat(dir.c_str(), &st) != 0)
      return "cannot use it: " + errnoText(errno);
  }
  if (!S_ISDIR(st.st_mode))
    return "it is " + kindOf(st.st_mode) + ", not a directory";
  if (st.st_uid != ::geteuid())
    return "it belongs to another user (uid " + std::to_string(st.st_uid) +
           "), who could place entries in it; not used";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return std::string("it is writable by other users (mode ") + mode +
           "), who could place entries in it; not used (chmod go-w it, or "
           "set DLC_CACHE_DIR to a directory of your own)";
  }
  return "";
}

std::string dlc::parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
