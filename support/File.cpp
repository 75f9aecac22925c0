//===- File.cpp - whole-file I/O --------------------------------*- C++ -*-===//

#include "support/File.h"

#include "support/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dlc;

std::string dlc::readFile(const std::string &path, uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw UserError(std::strerror(errno), path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError("not a regular file", path);
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    ::close(fd);
    throw UserError("file of " + std::to_string(st.st_size) +
                        " bytes is larger than the limit of " +
                        std::to_string(maxBytes),
                    path);
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw UserError(n == 0 ? "file shrank while reading" : std::strerror(err),
                      path);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

void dlc::writeFileAtomic(const std::string &path, std::string_view data) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw UserError(std::string("cannot create a temporary file: ") +
                        std::strerror(errno),
                    path);
  auto fail = [&](const char *what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw UserError(std::string(what) + ": " + std::strerror(err), path);
  };
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail("cannot write");
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; give the file the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0)
    fail("cannot finish writing");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw UserError(std::string("cannot close: ") + std::strerror(errno), path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw UserError(
        std::string("cannot rename into place: ") + std::strerror(err), path);
  }
}

std::string dlc::parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
