//===- File.h - reading inputs and writing outputs safely -------*- C++ -*-===//
//
// Every file dlc reads (model files, weights, .npy inputs, artifacts, the
// caches) is opened through openInputFile: only a regular file is accepted,
// and opening never blocks, so a FIFO, a device or a directory given as an
// input is a one-line error instead of a hang (the runtime's
// dlcModelLoadFromFile reads artifacts through it too).
//
// Outputs are written by writeFileAtomic: a regular file through a temporary
// file in the same folder renamed over the target only once the data is
// complete, so an error never leaves a half-written file; an existing
// character device or FIFO (/dev/null, a pipe to another program) is written
// in place, never replaced. checkOutputs runs before a command does any work:
// it refuses an output that is one of the command's inputs (same device and
// inode, whatever the names), that two outputs share, or whose directory does
// not exist.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_FILE_H
#define DLC_SUPPORT_FILE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlc {

/// Opens an existing regular file for reading and returns its descriptor
/// (the caller closes it) and its size. The open uses O_NONBLOCK, so that a
/// FIFO without a writer or a device cannot block it; fstat then refuses
/// anything but a regular file ("is a FIFO, not a regular file"), and
/// O_NONBLOCK is cleared. Throws UserError naming the path.
int openInputFile(const std::string &path, uint64_t &size);

/// Reads the `size` bytes of a file that openInputFile opened, and closes
/// it. Throws UserError naming `path`.
std::string readAndClose(int fd, uint64_t size, const std::string &path);

/// The whole file, through openInputFile; throws UserError (with the path)
/// when it cannot be read or is larger than `maxBytes`.
std::string readFile(const std::string &path, uint64_t maxBytes = uint64_t(16)
                                                                  << 30);

/// A regular file mapped read-only, to read a large input (a model's
/// weights) without copying it: openInputFile's checks and limit, then mmap
/// with MAP_POPULATE (the page-cache pages mapped in one call, not faulted
/// in one by one). A file truncated while it is mapped raises SIGBUS where
/// its lost pages are read, so it serves readers that run in a child
/// process (the Keras reader, frontends/keras/reader/Isolation.h), where
/// that ends the child, not dlc. Throws UserError naming the path.
class MappedFile {
public:
  MappedFile(const std::string &path, uint64_t maxBytes);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  std::string_view bytes() const {
    return {static_cast<const char *>(data_), size_};
  }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

/// Writes an output. A regular file (or a new one) is written to a temporary
/// file and renamed into place; an existing character device or FIFO is
/// opened and written directly (it stays what it is). A directory, a block
/// device or a socket is refused, as is a path whose directory does not
/// exist. Throws UserError naming the path; a failed write removes the
/// temporary file and leaves the target as it was.
void writeFileAtomic(const std::string &path, std::string_view data);

/// Always through a temporary file and a rename, whatever `path` is (except
/// a directory): for cache entries, which must be replaced, never written
/// into.
void replaceFileAtomic(const std::string &path, std::string_view data);

/// Checks the outputs of a command before it does any work, and throws
/// UserError naming the offending output when one
///  - is the same file (device and inode) as one of `inputs`,
///  - names the same file as an earlier output (character devices such as
///    /dev/null excepted),
///  - is a directory, a block device or a socket,
///  - lies in a directory that does not exist or cannot be written.
/// Inputs that do not exist or are not regular files are skipped: reading
/// them reports them.
void checkOutputs(const std::vector<std::string> &outputs,
                  const std::vector<std::string> &inputs);

/// The files a Keras model is read from, as far as they are known before it
/// is read: `model`, `weights` when given, and for a JSON model without
/// `weights` the files the reader looks for beside it (STEM.weights.h5,
/// STEM.h5) and, for a TF.js model.json, the weight shards its
/// weightsManifest names (frontends/keras/reader/Formats.cpp and
/// TfJsWeights.cpp have the rules). Never throws: a file that cannot be read
/// adds nothing. For checkOutputs.
std::vector<std::string> modelFiles(const std::string &model,
                                    const std::string &weights);

/// Where `dlc compile MODEL` writes its artifact without -o: MODEL's name
/// with its extension replaced by .dlcm, beside it.
std::string defaultArtifactPath(const std::string &model);

/// Makes `dir` usable as a per-user cache directory: creates it (and its
/// parents) when missing, the directory itself with mode 0700. Returns "" when
/// it can be used, else why not (one line, for a warning): it is not a
/// directory, belongs to another user, or is writable by group or others
/// (someone else could place entries in it). An existing directory's
/// permissions are never changed.
std::string preparePrivateDir(const std::string &dir);

/// The folder part of a path ("." for a bare file name).
std::string parentDir(const std::string &path);

} // namespace dlc

#endif // DLC_SUPPORT_FILE_H
