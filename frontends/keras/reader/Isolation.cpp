//===- Isolation.cpp - reading untrusted files in a child process -*- C++ -*-//
//
// The child writes to a pipe: "DLCKM001", the length of a JSON header (8
// bytes, little-endian), the header, then the raw bytes of every weight in
// the order the header lists them. The header is the model's structure, or
// {"error": {...}} for a UserError. The parent treats this stream as
// untrusted too (a corrupt file could have taken over the child): sizes are
// checked before anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Isolation.h"

#include "support/Error.h"
#include "support/MemorySize.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'M', '0', '0', '1'};
constexpr uint64_t kMaxHeaderBytes = uint64_t(1) << 30;
constexpr uint64_t kMaxWeightBytes = uint64_t(64) << 30;
constexpr int kMaxDepth = 64;
/// The reader program's exit status when it was started wrongly (not by
/// runIsolatedProgram, or its parent already gone); the child's own exits are
/// 0 and 1.
constexpr int kProgramUsageExit = 64;

// AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot
// bound a sanitized child, whose memory the parent's polling bounds alone.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

/// A field of /proc/PID/statm in bytes (0: the address space, 1: resident);
/// 0 when it cannot be read.
uint64_t statmBytes(const std::string &path, int field) {
  long values[2] = {0, 0};
  if (FILE *f = std::fopen(path.c_str(), "r")) {
    if (std::fscanf(f, "%ld %ld", &values[0], &values[1]) != 2)
      values[0] = values[1] = 0;
    std::fclose(f);
  }
  return static_cast<uint64_t>(values[field]) *
         static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

uint64_t residentBytes(const std::string &statm) {
  return statmBytes(statm, 1);
}

/// What the child is reading now, in a page it shares with the parent:
/// written by ReadingScope in the child, read by the parent when the child
/// crashed or was stopped. Empty: the model file itself.
struct ReadingNote {
  std::atomic<uint32_t> length{0};
  char text[4000];

  std::string get() const {
    uint32_t n = length.load(std::memory_order_acquire);
    return n <= sizeof text ? std::string(text, n) : std::string();
  }
};

/// The child's note (nullptr in the parent and outside runIsolated).
ReadingNote *gChildNote = nullptr;

/// "the model", or what the note says is being read ("weights file 'w.h5'").
std::string readingObject(const ReadingNote *note) {
  std::string what = note ? note->get() : "";
  return what.empty() ? "the model" : what;
}

UserError memoryExceeded(const IsolationLimits &limits,
                         const std::string &object = "the model") {
  return UserError("reading " + object + " needed more than " +
                   formatBytes(limits.memoryBytes) + " of memory, the limit (" +
                   limits.memorySource + ")");
}

//===----------------------------------------------------------------------===//
// Serialization
//===----------------------------------------------------------------------===//

json refJson(const TensorRef &r) {
  return json::array({r.layer, r.node, r.tensor});
}

TensorRef refFrom(const json &j) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_string() ||
      !j[1].is_number_integer() || !j[2].is_number_integer())
    throw std::runtime_error("malformed tensor reference");
  return {j[0].get<std::string>(), j[1].get<int>(), j[2].get<int>()};
}

json modelJson(const Model &model, std::vector<const Tensor *> &tensors,
               int depth) {
  json layers = json::array();
  for (const Layer &l : model.layers) {
    json calls = json::array();
    for (const LayerCall &c : l.calls) {
      json inputs = json::array();
      for (const TensorRef &r : c.inputs)
        inputs.push_back(refJson(r));
      calls.push_back(
          {{"inputs", inputs}, {"kwargs", c.kwargs}, {"args", c.args}});
    }
    json weights = json::array();
    for (const Tensor &t : l.weights) {
      weights.push_back(
          {{"dtype", static_cast<int>(t.dtype())}, {"shape", t.shape()}});
      tensors.push_back(&t);
    }
    layers.push_back(
        {{"name", l.name},
         {"className", l.className},
         {"module", l.module},
         {"registeredName", l.registeredName},
         {"config", l.config},
         {"weights", weights},
         {"weightPaths", l.weightPaths},
         {"calls", calls},
         {"nested",
          l.nested ? modelJson(*l.nested, tensors, depth + 1) : json()}});
  }
  json inputs = json::array(), outputs = json::array();
  for (const TensorRef &r : model.inputs)
    inputs.push_back(refJson(r));
  for (const TensorRef &r : model.outputs)
    outputs.push_back(refJson(r));
  return {{"name", model.name},     {"className", model.className},
          {"config", model.config}, {"layers", layers},
          {"inputs", inputs},       {"outputs", outputs}};
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeMessage(int fd, const json &header,
                  const std::vector<const Tensor *> &tensors) {
  // Names and messages can hold bytes from the file that are not UTF-8.
  std::string text =
      header.dump(-1, ' ', false, json::error_handler_t::replace);
  uint64_t size = text.size();
  if (!writeAll(fd, kMagic, 8) || !writeAll(fd, &size, 8) ||
      !writeAll(fd, text.data(), text.size()))
    return false;
  for (const Tensor *t : tensors)
    if (t->bytes() && !writeAll(fd, t->raw(), t->bytes()))
      return false;
  return true;
}

bool writeError(int fd, const UserError &e) {
  return writeMessage(fd,
                      {{"error",
                        {{"reason", e.reason()},
                         {"file", e.file()},
                         {"layer", e.layer()},
                         {"class", e.layerClass()}}}},
                      {});
}

/// The limit the child exceeded; the parent has killed it.
struct LimitExceeded {
  std::string message;
};

/// The parent's end of the pipe. Every read waits for the child with poll()
/// in short slices, and between them checks the wall clock and the child's
/// resident memory against the limits: a child past either is killed and
/// LimitExceeded thrown.
class ChildStream {
public:
  ChildStream(int fd, pid_t pid, const IsolationLimits &limits,
              uint64_t baseResident, const ReadingNote *note)
      : fd_(fd), pid_(pid), limits_(limits), baseResident_(baseResident),
        note_(note), start_(std::chrono::steady_clock::now()) {}

  /// Reads exactly `size` bytes; false at a premature end of the stream.
  bool read(void *data, size_t size) {
    char *p = static_cast<char *>(data);
    while (size) {
      checkLimits();
      pollfd pfd{fd_, POLLIN, 0};
      int ready = ::poll(&pfd, 1, kPollMilliseconds);
      if (ready < 0 && errno != EINTR)
        return false;
      if (ready <= 0)
        continue;
      ssize_t n = ::read(fd_, p, size);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  /// Waits for the child to exit (after the end of its stream), under the
  /// same limits; returns its wait status.
  int wait() {
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_)
        return status;
      if (r < 0 && errno != EINTR)
        return 0;
      checkLimits();
      ::usleep(kPollMilliseconds * 1000);
    }
  }

private:
  static constexpr int kPollMilliseconds = 20;

  void checkLimits() {
    // At most every poll slice: a large model streams in many reads.
    auto now = std::chrono::steady_clock::now();
    if (now - lastCheck_ < std::chrono::milliseconds(kPollMilliseconds))
      return;
    lastCheck_ = now;
    if (limits_.seconds) {
      auto elapsed = now - start_;
      if (elapsed > std::chrono::seconds(limits_.seconds)) {
        ::kill(pid_, SIGKILL);
        throw LimitExceeded{"reading " + readingObject(note_) +
                            " took longer than " +
                            std::to_string(limits_.seconds) +
                            " s, the time limit (" + limits_.timeSource + ")"};
      }
    }
    if (limits_.memoryBytes) {
      uint64_t resident =
          residentBytes("/proc/" + std::to_string(pid_) + "/statm");
      if (resident > baseResident_ &&
          resident - baseResident_ > limits_.memoryBytes) {
        ::kill(pid_, SIGKILL);
        throw memoryExceeded(limits_, readingObject(note_));
      }
    }
  }

  int fd_;
  pid_t pid_;
  const IsolationLimits &limits_;
  uint64_t baseResident_;
  const ReadingNote *note_;
  std::chrono::steady_clock::time_point start_, lastCheck_;
};

class Reader {
public:
  explicit Reader(ChildStream &in) : in_(in) {}

  std::shared_ptr<Model> model(const json &j, int depth) {
    if (depth > kMaxDepth || !j.is_object())
      throw std::runtime_error("malformed model");
    auto m = std::make_shared<Model>();
    m->name = j.at("name").get<std::string>();
    m->className = j.at("className").get<std::string>();
    m->config = j.at("config");
    for (const json &r : j.at("inputs"))
      m->inputs.push_back(refFrom(r));
    for (const json &r : j.at("outputs"))
      m->outputs.push_back(refFrom(r));
    for (const json &lj : j.at("layers")) {
      Layer l;
      l.name = lj.at("name").get<std::string>();
      l.className = lj.at("className").get<std::string>();
      l.module = lj.at("module").get<std::string>();
      l.registeredName = lj.at("registeredName").get<std::string>();
      l.config = lj.at("config");
      for (const json &cj : lj.at("calls")) {
        LayerCall c;
        for (const json &r : cj.at("inputs"))
          c.inputs.push_back(refFrom(r));
        c.kwargs = cj.at("kwargs");
        c.args = cj.at("args");
        l.calls.push_back(std::move(c));
      }
      for (const json &wj : lj.at("weights"))
        l.weights.push_back(tensor(wj));
      l.weightPaths = lj.at("weightPaths").get<std::vector<std::string>>();
      if (!lj.at("nested").is_null())
        l.nested = model(lj.at("nested"), depth + 1);
      m->layers.push_back(std::move(l));
    }
    return m;
  }

private:
  Tensor tensor(const json &wj) {
    int code = wj.at("dtype").get<int>();
    if (code < 0 || code > static_cast<int>(DType::Bool))
      throw std::runtime_error("malformed weight dtype");
    DType dtype = static_cast<DType>(code);
    std::vector<int64_t> shape = wj.at("shape").get<std::vector<int64_t>>();
    std::optional<int64_t> n = checkedNumel(shape, dtypeSize(dtype));
    if (!n)
      throw std::runtime_error("malformed weight shape");
    uint64_t bytes = static_cast<uint64_t>(*n) * dtypeSize(dtype);
    if (bytes > kMaxWeightBytes - total_)
      throw std::runtime_error("too many weight bytes");
    total_ += bytes;
    Tensor t(dtype, shape);
    if (bytes && !in_.read(t.raw(), bytes))
      throw std::runtime_error("truncated weights");
    return t;
  }

  ChildStream &in_;
  uint64_t total_ = 0;
};

/// Reads the child's message: the model, or its UserError rethrown. Any
/// other failure throws another std::exception (the child died mid-way, or
/// wrote nonsense).
KerasModel readMessage(ChildStream &in) {
  char magic[8];
  uint64_t size = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0 ||
      !in.read(&size, 8) || size > kMaxHeaderBytes)
    throw std::runtime_error("no result");
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), text.size()))
    throw std::runtime_error("truncated result");
  json header = json::parse(text);
  if (header.contains("error")) {
    const json &e = header["error"];
    throw UserError(
        e.at("reason").get<std::string>(), e.at("file").get<std::string>(),
        e.at("layer").get<std::string>(), e.at("class").get<std::string>());
  }
  KerasModel out;
  int generation = header.at("generation").get<int>();
  int format = header.at("format").get<int>();
  if (generation < 0 || generation > 2 || format < 0 || format > 3)
    throw std::runtime_error("malformed result");
  out.generation = static_cast<Generation>(generation);
  out.format = static_cast<FileFormat>(format);
  out.path = header.at("path").get<std::string>();
  out.kerasVersion = header.at("kerasVersion").get<std::string>();
  Reader reader(in);
  out.model = reader.model(header.at("model"), 0);
  return out;
}

//===----------------------------------------------------------------------===//
// The child
//===----------------------------------------------------------------------===//

[[noreturn]] void child(int fd, const std::function<KerasModel()> &read,
                        const IsolationLimits &limits, ReadingNote *note) {
  gChildNote = note;
  // Die with the parent, which enforces the limits.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Die quietly on a crash: no inherited crash handler (LLVM's prints a
  // stack dump), nothing on the user's terminal.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM, SIGPIPE})
    std::signal(sig, SIG_DFL);
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull >= 0)
    ::dup2(devnull, STDERR_FILENO);
  // Backstops: the parent kills the child at the limits.
  if (limits.seconds)
    ::alarm(limits.seconds + 5);
  if (!kSanitized && limits.memoryBytes) {
    rlimit rl;
    rl.rlim_cur = rl.rlim_max =
        statmBytes("/proc/self/statm", 0) + limits.memoryBytes;
    ::setrlimit(RLIMIT_AS, &rl);
  }

  // Nothing may leave this function: an exception escaping it would unwind
  // into the caller's code, running in the child as if it were the parent.
  bool ok = false;
  try {
    try {
      KerasModel m = read();
      std::vector<const Tensor *> tensors;
      json header = {{"generation", static_cast<int>(m.generation)},
                     {"format", static_cast<int>(m.format)},
                     {"path", m.path},
                     {"kerasVersion", m.kerasVersion},
                     {"model", modelJson(*m.model, tensors, 0)}};
      ok = writeMessage(fd, header, tensors);
    } catch (const UserError &e) {
      // HDF5 reports a failed allocation (RLIMIT_AS, or a corrupt size) as
      // its own error: name the limit.
      if (limits.memoryBytes &&
          e.reason().find("memory allocation failed") != std::string::npos)
        ok = writeError(
            fd, UserError(memoryExceeded(limits).reason() + ": " + e.reason(),
                          e.file(), e.layer(), e.layerClass()));
      else
        ok = writeError(fd, e);
    } catch (const std::bad_alloc &) {
      // (A ReadingScope has cleared the note while the exception unwound:
      // errors caught here name the model, and libhdf5's say which file.)
      ok = writeError(fd, limits.memoryBytes
                              ? memoryExceeded(limits)
                              : UserError("reading the model needs more "
                                          "memory than is available"));
    } catch (const std::exception &e) {
      ok = writeError(fd, UserError(e.what()));
    }
  } catch (...) {
    ok = false;
  }
  // _exit: no atexit handlers or static destructors of the parent's state.
  ::_exit(ok ? 0 : 1);
}

/// The child's note of what it reads, in a page shared with it: an anonymous
/// one for a fork, a memfd for a spawned program (its descriptor passed on);
/// none if the page cannot be had (the messages then name the model).
struct SharedNote {
  ReadingNote *note = nullptr;
  int fd = -1;
  explicit SharedNote(bool forProgram) {
    void *page = MAP_FAILED;
    if (!forProgram) {
      page = ::mmap(nullptr, sizeof(ReadingNote), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    } else if ((fd = ::memfd_create("dlc-reading-note", MFD_CLOEXEC)) >= 0) {
      if (::ftruncate(fd, sizeof(ReadingNote)) == 0)
        page = ::mmap(nullptr, sizeof(ReadingNote), PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
    }
    if (page != MAP_FAILED)
      note = new (page) ReadingNote();
  }
  ~SharedNote() {
    if (note)
      ::munmap(note, sizeof(ReadingNote));
    if (fd >= 0)
      ::close(fd);
  }
  SharedNote(const SharedNote &) = delete;
  SharedNote &operator=(const SharedNote &) = delete;
};

/// The parent's side of both ways of starting the reader: reads the child's
/// message from `fd` (which it closes) under the limits, reaps the child (or
/// kills it), and turns how it ended into the result or a UserError.
/// `baseResident`: the resident memory the child started with, not counted
/// against the limit (a fork shares the parent's pages).
KerasModel superviseChild(pid_t pid, int fd, const IsolationLimits &limits,
                          uint64_t baseResident, const ReadingNote *note) {
  // Reap the child on every path out; kill it if the parent gives up first.
  struct Reaper {
    pid_t pid;
    int fd;
    bool done = false;
    ~Reaper() {
      if (fd >= 0)
        ::close(fd);
      if (!done) {
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
    }
  } reaper{pid, fd};

  ChildStream in(fd, pid, limits, baseResident, note);
  KerasModel result;
  std::string failure;
  int status = 0;
  try {
    try {
      result = readMessage(in);
    } catch (const UserError &) {
      throw;
    } catch (const std::exception &e) {
      failure = e.what();
    }
    ::close(fd);
    reaper.fd = -1;
    status = in.wait();
    reaper.done = true;
  } catch (const LimitExceeded &e) {
    throw UserError(e.message);
  }
  if (failure.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return result;
  const std::string object = readingObject(note);
  const std::string subject = object == "the model" ? "the file" : object;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    throw UserError("reading " + object + " took longer than " +
                    std::to_string(limits.seconds) + " s, the time limit (" +
                    limits.timeSource + ")");
  if (WIFSIGNALED(status))
    throw UserError(subject + " is corrupt: the reader crashed on it (signal " +
                    std::to_string(WTERMSIG(status)) + ", " +
                    strsignal(WTERMSIG(status)) + ")");
  if (WIFEXITED(status) && WEXITSTATUS(status) == kProgramUsageExit)
    throw UserError("the model reader program could not start: it was not "
                    "given what it needs (a dlc installation of mixed "
                    "versions?)");
  throw UserError(subject + " is corrupt: the reader stopped without a result");
}

// The reader program's command line: a marker of this protocol's version,
// the parent's pid, the limits, then the arguments of the read. Its pipe is
// descriptor 3, its note descriptor 4.
constexpr const char *kProgramProtocol = "--dlc-isolated-reader-1";
constexpr int kProgramPipeFd = 3;
constexpr int kProgramNoteFd = 4;

std::mutex gProgramMutex;
std::string gProgram;

} // namespace

KerasModel dlc::keras::runIsolated(const std::function<KerasModel()> &read,
                                   const IsolationLimits &limits) {
  uint64_t baseResident = residentBytes("/proc/self/statm");
  SharedNote shared(false);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw UserError(std::string("cannot create a pipe: ") +
                    std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw UserError(std::string("cannot start a reader process: ") +
                    std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], read, limits, shared.note);
  }
  ::close(fds[1]);
  return superviseChild(pid, fds[0], limits, baseResident, shared.note);
}

KerasModel dlc::keras::runIsolatedProgram(const std::string &program,
                                          const std::vector<std::string> &args,
                                          const IsolationLimits &limits) {
  SharedNote shared(true);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw UserError(std::string("cannot create a pipe: ") +
                    std::strerror(errno));
  std::vector<std::string> argv = {program,
                                   kProgramProtocol,
                                   std::to_string(::getpid()),
                                   std::to_string(limits.seconds),
                                   std::to_string(limits.memoryBytes),
                                   limits.timeSource,
                                   limits.memorySource};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char *> cargv;
  for (std::string &a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);

  // The pipe's write end becomes descriptor 3 and the note 4 (dup2 clears
  // close-on-exec); every other descriptor of this process is closed. Both
  // are first moved above 4, so that neither dup2 overwrites the other's
  // source (the note's memfd may well be descriptor 3 here).
  auto above = [](int fd) {
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kProgramNoteFd + 1);
    if (moved < 0)
      throw UserError(std::string("cannot start the model reader: ") +
                      std::strerror(errno));
    ::close(fd);
    return moved;
  };
  try {
    fds[1] = above(fds[1]);
    if (shared.note)
      shared.fd = above(shared.fd);
  } catch (const UserError &) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kProgramPipeFd);
  if (shared.note)
    posix_spawn_file_actions_adddup2(&actions, shared.fd, kProgramNoteFd);
  posix_spawn_file_actions_addclosefrom_np(
      &actions, shared.note ? kProgramNoteFd + 1 : kProgramPipeFd + 1);
  // A clean signal state: the host may block signals or ignore some.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, program.c_str(), &actions, &attr, cargv.data(),
                          environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw UserError("cannot start the model reader program '" + program +
                    "': " + std::strerror(err));
  }
  return superviseChild(pid, fds[0], limits, 0, shared.note);
}

void dlc::keras::serveIsolatedRead(
    int argc, char **argv,
    const std::function<KerasModel(const std::vector<std::string> &)> &read) {
  if (argc < 7 || std::strcmp(argv[1], kProgramProtocol) != 0) {
    std::fprintf(stderr,
                 "%s: the model reader of dlc's Python module and library, "
                 "started by them; not a command\n",
                 argc ? argv[0] : "dlc-read-model");
    ::_exit(kProgramUsageExit);
  }
  // Die with the parent, and do not start if it is already gone.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (std::to_string(::getppid()) != argv[2])
    ::_exit(kProgramUsageExit);
  IsolationLimits limits;
  limits.seconds = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  limits.memoryBytes = std::strtoull(argv[4], nullptr, 10);
  limits.timeSource = argv[5];
  limits.memorySource = argv[6];
  std::vector<std::string> args(argv + 7, argv + argc);
  ReadingNote *note = nullptr;
  void *page = ::mmap(nullptr, sizeof(ReadingNote), PROT_READ | PROT_WRITE,
                      MAP_SHARED, kProgramNoteFd, 0);
  if (page != MAP_FAILED)
    note = static_cast<ReadingNote *>(page);
  ::close(kProgramNoteFd);
  child(
      kProgramPipeFd, [&] { return read(args); }, limits, note);
}

void dlc::keras::setReaderProgram(const std::string &path) {
  std::lock_guard<std::mutex> lock(gProgramMutex);
  gProgram = path;
}

std::string dlc::keras::readerProgram() {
  std::lock_guard<std::mutex> lock(gProgramMutex);
  return gProgram;
}

dlc::keras::ReadingScope::ReadingScope(const std::string &what) {
  if (!gChildNote)
    return;
  gChildNote->length.store(0, std::memory_order_relaxed);
  size_t n = std::min(what.size(), sizeof gChildNote->text);
  std::memcpy(gChildNote->text, what.data(), n);
  gChildNote->length.store(static_cast<uint32_t>(n), std::memory_order_release);
}

dlc::keras::ReadingScope::~ReadingScope() {
  if (gChildNote)
    gChildNote->length.store(0, std::memory_order_release);
}

std::string dlc::keras::formatBytes(uint64_t bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  uint64_t scaled = bytes;
  while (unit < 4 && scaled >= 1024) {
    scaled /= 1024;
    ++unit;
  }
  if (unit == 0)
    return std::to_string(bytes) + " bytes";
  // One decimal when the value is not whole and below 10.
  uint64_t base = uint64_t(1) << (10 * unit);
  uint64_t tenths = (bytes % base) * 10 / base;
  std::string text = std::to_string(scaled);
  if (scaled < 10 && tenths)
    text += "." + std::to_string(tenths);
  return text + " " + units[unit];
}

IsolationLimits dlc::keras::readerLimits(uint64_t inputBytes) {
  IsolationLimits limits;
  std::string forInput =
      "the default for an input of " + formatBytes(inputBytes) + "; DLC_READ_";
  const char *time = std::getenv("DLC_READ_TIMEOUT");
  if (time && *time) {
    std::optional<uint64_t> s = parseMemorySize(time);
    if (!s ||
        std::string(time).find_first_not_of("0123456789") !=
            std::string::npos ||
        *s > 1'000'000)
      throw UserError(std::string("DLC_READ_TIMEOUT='") + time +
                      "' is not a time limit (whole seconds, 1 to 1000000)");
    limits.seconds = static_cast<unsigned>(*s);
    limits.timeSource = "DLC_READ_TIMEOUT";
  } else {
    limits.seconds =
        kDefaultSeconds + static_cast<unsigned>(std::min<uint64_t>(
                              inputBytes / kBytesPerExtraSecond, 1'000'000));
    limits.timeSource = forInput + "TIMEOUT sets another";
  }
  const char *memory = std::getenv("DLC_READ_MEMORY");
  if (memory && *memory) {
    std::optional<uint64_t> m = parseMemorySize(memory);
    if (!m || *m < kMinimumMemory)
      throw UserError(std::string("DLC_READ_MEMORY='") + memory +
                      "' is not a memory size of at least " +
                      formatBytes(kMinimumMemory) + " (" + kMemorySizeSyntax +
                      ")");
    limits.memoryBytes = *m;
    limits.memorySource = "DLC_READ_MEMORY";
  } else {
    uint64_t scaled =
        inputBytes > (UINT64_MAX - kDefaultMemory) / kMemoryPerInputByte
            ? UINT64_MAX
            : kDefaultMemory + inputBytes * kMemoryPerInputByte;
    limits.memoryBytes = scaled;
    limits.memorySource = forInput + "MEMORY sets another";
  }
  return limits;
}
