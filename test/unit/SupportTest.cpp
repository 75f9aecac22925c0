//===- SupportTest.cpp - tensors, .npy, file reads and writes, errors -----===//

#include "support/Error.h"
#include "support/File.h"
#include "support/MemorySize.h"
#include "support/Npy.h"
#include "support/Tensor.h"

#include <gtest/gtest.h>

#include <cstring>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace dlc;

namespace {

std::string tempDir() {
  std::string dir = ::testing::TempDir() + "dlc-support-XXXXXX";
  EXPECT_NE(::mkdtemp(dir.data()), nullptr);
  return dir;
}

int countEntries(const std::string &dir) {
  int n = 0;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d))
    n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

TEST(Tensor, HalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  // 1 + 2^-11 is exactly between two halves: ties go to the even one (1.0).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // rounds to infinity
  EXPECT_EQ(floatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
}

TEST(Tensor, CheckedNumelCatchesOverflow) {
  EXPECT_EQ(checkedNumel({2, 3, 4}), 24);
  EXPECT_EQ(checkedNumel({}), 1);
  EXPECT_FALSE(checkedNumel({1LL << 40, 1LL << 40}));
  EXPECT_FALSE(checkedNumel({1LL << 61}, 8));
  EXPECT_FALSE(checkedNumel({-1, 2}));
}

TEST(Tensor, CastAndReshape) {
  Tensor t(DType::F32, {2, 2});
  float *p = t.data<float>();
  p[0] = 1.5f, p[1] = -2.5f, p[2] = 3.0f, p[3] = 0.1f;
  Tensor h = t.cast(DType::F16);
  EXPECT_EQ(h.at(0), 1.5);
  EXPECT_EQ(h.at(1), -2.5);
  EXPECT_NEAR(h.at(3), 0.1, 1e-4);
  Tensor i = t.cast(DType::I32);
  EXPECT_EQ(i.data<int32_t>()[1], -2); // truncation, as NumPy
  EXPECT_EQ(t.reshaped({4}).shape(), std::vector<int64_t>({4}));
  EXPECT_THROW(t.reshaped({3}), std::invalid_argument);
}

TEST(Npy, RoundTripsEveryDtype) {
  for (DType d :
       {DType::F32, DType::F16, DType::F64, DType::I8, DType::U8, DType::I16,
        DType::U16, DType::I32, DType::I64, DType::Bool}) {
    Tensor t(d, {3, 1, 2});
    for (int64_t i = 0; i < t.numel(); ++i)
      std::memset(static_cast<char *>(t.raw()) + i * dtypeSize(d),
                  static_cast<int>(i + 1), 1);
    Tensor back = parseNpy(serializeNpy(t));
    EXPECT_EQ(back.dtype(), d);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(0, std::memcmp(back.raw(), t.raw(), t.bytes())) << dtypeName(d);
  }
  Tensor scalar(DType::F32, {});
  EXPECT_EQ(parseNpy(serializeNpy(scalar)).rank(), 0);
  Tensor vec(DType::F32, {5});
  EXPECT_NE(serializeNpy(vec).find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, RejectsMalformedFiles) {
  Tensor t(DType::F32, {2, 3});
  std::string good = serializeNpy(t);
  auto expectError = [](const std::string &bytes, const std::string &what) {
    try {
      parseNpy(bytes);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const UserError &e) {
      EXPECT_NE(e.reason().find(what), std::string::npos) << e.reason();
    }
  };
  expectError("hello", "bad magic");
  expectError(good.substr(0, good.size() - 4), "header declares 24");
  expectError(good + "xxxx", "header declares 24");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  expectError(fortran, "Fortran");
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  expectError(bigEndian, "unsupported .npy dtype '>f4'");
  std::string huge = good;
  huge.replace(huge.find("(2, 3)"), 6, "(99999999999999, 99999999999999)");
  expectError(huge.substr(0, 128), "overflows");
}

TEST(File, AtomicWriteLeavesNoTemporary) {
  std::string dir = tempDir();
  std::string path = dir + "/y.npy";
  writeNpy(path, Tensor(DType::F32, {4}));
  EXPECT_EQ(readNpy(path).numel(), 4);
  EXPECT_EQ(countEntries(dir), 1);
  // A folder that does not exist: an error, and nothing is left behind.
  EXPECT_THROW(writeFileAtomic(dir + "/missing/y.npy", "data"), UserError);
  EXPECT_EQ(countEntries(dir), 1);
  std::remove(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(File, ReadErrorsNameTheFile) {
  try {
    readFile("/nonexistent/model.keras");
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(
        e.format(),
        "dlc: error: /nonexistent/model.keras: No such file or directory");
  }
}

/// Runs `body` on a thread and says whether it finished within `seconds`:
/// a regression that blocks (opening a FIFO) fails the test instead of
/// hanging it. The thread is left behind when it blocks.
bool finishesWithin(int seconds, std::function<void()> body) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([done, body] {
    body();
    done->set_value();
  }).detach();
  return finished.wait_for(std::chrono::seconds(seconds)) ==
         std::future_status::ready;
}

/// The one-line error readFile gives for `path`, or "".
std::string readError(const std::string &path) {
  auto error = std::make_shared<std::string>();
  bool finished = finishesWithin(30, [path, error] {
    try {
      readFile(path);
    } catch (const UserError &e) {
      *error = e.format();
    }
  });
  return finished ? *error : "blocked";
}

TEST(File, InputsMustBeRegularFilesAndNeverBlock) {
  std::string dir = tempDir();
  std::string fifo = dir + "/x.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(readError(fifo),
            "dlc: error: " + fifo + ": is a FIFO, not a regular file");
  EXPECT_EQ(readError(dir),
            "dlc: error: " + dir + ": is a directory, not a regular file");
  EXPECT_EQ(readError("/dev/zero"),
            "dlc: error: /dev/zero: is a character device, not a regular file");
  // readNpy goes through readFile.
  auto error = std::make_shared<std::string>();
  EXPECT_TRUE(finishesWithin(30, [fifo, error] {
    try {
      readNpy(fifo);
    } catch (const UserError &e) {
      *error = e.reason();
    }
  }));
  EXPECT_EQ(*error, "is a FIFO, not a regular file");
  // A regular file still reads, through a symbolic link too.
  writeFileAtomic(dir + "/a.txt", "hello");
  ASSERT_EQ(::symlink("a.txt", (dir + "/link").c_str()), 0);
  EXPECT_EQ(readFile(dir + "/link"), "hello");
  std::filesystem::remove_all(dir);
}

TEST(File, MappedFilesFollowReadFilesRules) {
  std::string dir = tempDir();
  // The bytes, an empty file, and the size limit (checked before mapping).
  writeFileAtomic(dir + "/a.bin", std::string("map\0me", 6));
  writeFileAtomic(dir + "/empty.bin", "");
  {
    MappedFile mapped(dir + "/a.bin", 6);
    EXPECT_EQ(mapped.bytes(), std::string_view("map\0me", 6));
    EXPECT_TRUE(MappedFile(dir + "/empty.bin", 0).bytes().empty());
  }
  try {
    MappedFile(dir + "/a.bin", 5);
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.format(), "dlc: error: " + dir +
                              "/a.bin: file of 6 bytes is larger than the "
                              "limit of 5");
  }
  // openInputFile's checks: a FIFO is refused at once, never opened for a
  // writer that does not come.
  std::string fifo = dir + "/x.keras";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto error = std::make_shared<std::string>();
  EXPECT_TRUE(finishesWithin(30, [fifo, error] {
    try {
      MappedFile mapped(fifo, 1 << 20);
    } catch (const UserError &e) {
      *error = e.format();
    }
  }));
  EXPECT_EQ(*error, "dlc: error: " + fifo + ": is a FIFO, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(File, DevicesAndFifosAreWrittenInPlace) {
  std::string dir = tempDir();
  // A link to a character device that discards writes: were it replaced by
  // a rename, the link would go and the device would stay (the test never
  // risks the real node). /dev/zero, not /dev/null: a process that renames
  // over /dev/null as root (the bug this tests) breaks any test that relies
  // on it.
  std::string null = dir + "/null";
  ASSERT_EQ(::symlink("/dev/zero", null.c_str()), 0);
  writeFileAtomic(null, "discarded");
  struct stat st;
  ASSERT_EQ(::lstat(null.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(countEntries(dir), 1); // no temporary left

  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto got = std::make_shared<std::string>();
  std::thread reader([fifo, got] {
    std::ifstream in(fifo, std::ios::binary);
    *got = std::string(std::istreambuf_iterator<char>(in), {});
  });
  EXPECT_TRUE(finishesWithin(
      30, [fifo] { writeFileAtomic(fifo, std::string(100000, 'x')); }));
  reader.join();
  EXPECT_EQ(*got, std::string(100000, 'x'));
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));

  try {
    writeFileAtomic(dir, "data");
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.reason(), "is a directory: outputs are regular files, "
                          "character devices or FIFOs");
  }
  try {
    writeFileAtomic(dir + "/missing/y.npy", "data");
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.reason(), "directory '" + dir + "/missing' does not exist");
  }
  // Cache entries are replaced, whatever they are.
  replaceFileAtomic(fifo, "entry");
  EXPECT_EQ(readFile(fifo), "entry");
  std::filesystem::remove_all(dir);
}

/// checkOutputs' error for `outputs` and `inputs`, or "".
std::string outputError(const std::vector<std::string> &outputs,
                        const std::vector<std::string> &inputs) {
  try {
    checkOutputs(outputs, inputs);
  } catch (const UserError &e) {
    return e.format();
  }
  return "";
}

TEST(File, OutputsAreNotInputsNorEachOther) {
  std::string dir = tempDir();
  std::string model = dir + "/m.keras";
  writeFileAtomic(model, "model");
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(::link(model.c_str(), (dir + "/hard.dlcm").c_str()), 0);
  ASSERT_EQ(::symlink("m.keras", (dir + "/soft.dlcm").c_str()), 0);
  const std::string same = ": refusing to overwrite an input (choose another "
                           "output)";
  // The same file under any name: itself, another spelling, a hard link, a
  // symbolic link.
  for (const std::string &name :
       {model, dir + "/sub/../m.keras", dir + "/./m.keras", dir + "/hard.dlcm",
        dir + "/soft.dlcm"})
    EXPECT_EQ(outputError({name}, {model}),
              "dlc: error: " + name + ": is the same file as the input '" +
                  model + "'" + same);
  EXPECT_EQ(outputError({dir + "/out.dlcm"}, {model}), "");
  // Inputs that do not exist, or are not files, are for the reader.
  EXPECT_EQ(outputError({dir + "/out.dlcm"}, {dir + "/none", "/dev/zero"}), "");
  // Two outputs naming one file, whether it exists or not.
  EXPECT_EQ(outputError({dir + "/y.npy", dir + "/sub/../y.npy"}, {}),
            "dlc: error: " + dir +
                "/sub/../y.npy: is the same file as the "
                "output '" +
                dir + "/y.npy': each output needs its own file");
  EXPECT_EQ(outputError({model, dir + "/hard.dlcm"}, {}),
            "dlc: error: " + dir +
                "/hard.dlcm: is the same file as the "
                "output '" +
                model + "': each output needs its own file");
  EXPECT_EQ(outputError({"/dev/zero", "/dev/zero"}, {}), "");
  // Directories.
  EXPECT_EQ(outputError({dir + "/sub"}, {}),
            "dlc: error: " + dir +
                "/sub: is a directory: outputs are regular "
                "files, character devices or FIFOs");
  EXPECT_EQ(outputError({dir + "/none/y.npy"}, {}),
            "dlc: error: " + dir + "/none/y.npy: directory '" + dir +
                "/none' does not exist");
  EXPECT_EQ(outputError({model + "/y.npy"}, {}), "dlc: error: " + model +
                                                     "/y.npy: '" + model +
                                                     "' is not a directory");
  EXPECT_EQ(outputError({""}, {}), "dlc: error: an output path is empty");
  std::filesystem::remove_all(dir);
}

TEST(File, ModelFilesFollowTheReadersRules) {
  std::string dir = tempDir();
  writeFileAtomic(dir + "/m.keras", "PK\x03\x04 not JSON");
  EXPECT_EQ(modelFiles(dir + "/m.keras", ""),
            std::vector<std::string>{dir + "/m.keras"});
  EXPECT_EQ(modelFiles(dir + "/m.keras", dir + "/w.h5"),
            (std::vector<std::string>{dir + "/m.keras", dir + "/w.h5"}));
  // A to_json() file: STEM.weights.h5, else STEM.h5, beside it.
  writeFileAtomic(dir + "/m.json", " {\"class_name\": \"Sequential\"}");
  EXPECT_EQ(modelFiles(dir + "/m.json", ""),
            std::vector<std::string>{dir + "/m.json"});
  writeFileAtomic(dir + "/m.h5", "h5");
  EXPECT_EQ(modelFiles(dir + "/m.json", ""),
            (std::vector<std::string>{dir + "/m.json", dir + "/m.h5"}));
  writeFileAtomic(dir + "/m.weights.h5", "h5");
  EXPECT_EQ(modelFiles(dir + "/m.json", ""),
            (std::vector<std::string>{dir + "/m.json", dir + "/m.weights.h5"}));
  // TF.js: the shards of weightsManifest, plain names only.
  writeFileAtomic(dir + "/model.json",
                  R"({"modelTopology": {"paths": ["no"]}, "weightsManifest":
                      [{"paths": ["g1-shard1of2.bin", "g1-shard2of2.bin"],
                        "weights": [{"name": "paths"}]},
                       {"paths": ["../outside.bin"]}]})");
  EXPECT_EQ(
      modelFiles(dir + "/model.json", ""),
      (std::vector<std::string>{dir + "/model.json", dir + "/g1-shard1of2.bin",
                                dir + "/g1-shard2of2.bin"}));
  // Deeply nested or broken JSON adds nothing and never throws.
  writeFileAtomic(dir + "/deep.json", std::string(100000, '[') + "{");
  EXPECT_EQ(modelFiles(dir + "/deep.json", ""),
            std::vector<std::string>{dir + "/deep.json"});
  EXPECT_EQ(modelFiles(dir + "/none.json", ""),
            std::vector<std::string>{dir + "/none.json"});
  std::filesystem::remove_all(dir);
}

TEST(File, DefaultArtifactPath) {
  EXPECT_EQ(defaultArtifactPath("m.keras"), "m.dlcm");
  EXPECT_EQ(defaultArtifactPath("dir.v2/model"), "dir.v2/model.dlcm");
  EXPECT_EQ(defaultArtifactPath("a/model.json"), "a/model.dlcm");
}

TEST(File, PrivateDirectories) {
  std::string dir = tempDir();
  std::string cache = dir + "/home/.cache/dlc";
  EXPECT_EQ(preparePrivateDir(cache), "");
  struct stat st;
  ASSERT_EQ(::stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // An existing directory's permissions are left alone: readable by others
  // is fine, writable by others is not used.
  ASSERT_EQ(::chmod(cache.c_str(), 0755), 0);
  EXPECT_EQ(preparePrivateDir(cache), "");
  ASSERT_EQ(::chmod(cache.c_str(), 0775), 0);
  EXPECT_EQ(preparePrivateDir(cache),
            "it is writable by other users (mode 0775), who could place "
            "entries in it; not used (chmod go-w it, or set DLC_CACHE_DIR to "
            "a directory of your own)");
  ASSERT_EQ(::stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  writeFileAtomic(dir + "/file", "x");
  EXPECT_EQ(preparePrivateDir(dir + "/file"),
            "it is a regular file, not a directory");
  if (::geteuid() == 0) {
    // Another owner (root can make one).
    ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
    ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
    EXPECT_EQ(preparePrivateDir(cache),
              "it belongs to another user (uid 65534), who could place "
              "entries in it; not used");
  }
  std::filesystem::remove_all(dir);
}

TEST(Error, FormatsTheOneLine) {
  UserError e("unsupported layer class", "m.keras", "lambda", "Lambda");
  EXPECT_EQ(e.format(),
            "dlc: error: m.keras: layer 'lambda' (Lambda): unsupported layer "
            "class");
  EXPECT_EQ(UserError("bad\nthing").inFile("f").format(),
            "dlc: error: f: bad thing");
  // Names from corrupt files: no byte a terminal acts on (the hdf5_weights
  // fuzz target found a weight name holding \x1d, a line separator to
  // Python's splitlines; an escape sequence would recolour a terminal).
  EXPECT_EQ(UserError("weight 'a\x1d/b' \x1b[31mred\x7f\t!", "m.json").format(),
            "dlc: error: m.json: weight 'a\\x1d/b' \\x1b[31mred\\x7f !");
}

} // namespace

TEST(MemorySize, Suffixes) {
  EXPECT_EQ(parseMemorySize("1"), 1u);
  EXPECT_EQ(parseMemorySize("4096B"), 4096u);
  EXPECT_EQ(parseMemorySize("2K"), 2048u);
  EXPECT_EQ(parseMemorySize("2KiB"), 2048u);
  EXPECT_EQ(parseMemorySize("512M"), uint64_t(512) << 20);
  EXPECT_EQ(parseMemorySize("3MiB"), uint64_t(3) << 20);
  EXPECT_EQ(parseMemorySize("16G"), uint64_t(16) << 30);
  EXPECT_EQ(parseMemorySize("1GiB"), uint64_t(1) << 30);
  EXPECT_EQ(parseMemorySize("7T"), uint64_t(7) << 40);
  EXPECT_EQ(parseMemorySize("7TiB"), uint64_t(7) << 40);
  EXPECT_EQ(parseMemorySize("0064M"), uint64_t(64) << 20);
}

TEST(MemorySize, Overflow) {
  EXPECT_EQ(parseMemorySize("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parseMemorySize("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parseMemorySize("99999999999999999999999"), std::nullopt);
  // The largest that fits with each suffix, and one more.
  EXPECT_EQ(parseMemorySize("16777215T"), uint64_t(16777215) << 40);
  EXPECT_EQ(parseMemorySize("16777216T"), std::nullopt);
  EXPECT_EQ(parseMemorySize("17179869183G"), uint64_t(17179869183) << 30);
  EXPECT_EQ(parseMemorySize("17179869184G"), std::nullopt);
  EXPECT_EQ(parseMemorySize("18014398509481984K"), std::nullopt);
}

TEST(MemorySize, GarbageAndEmpty) {
  for (const char *bad : {"",     "0",   "0K",  "K",     "B",    "iB",  "lots",
                          "-5",   "+5",  " 5",  "5 ",    "1.5G", "1KB", "1k",
                          "1kib", "1Ki", "1Gb", "1GiBs", "1P",   "5s",  "0x10"})
    EXPECT_EQ(parseMemorySize(bad), std::nullopt) << "'" << bad << "'";
  EXPECT_EQ(parseMemorySize(std::string_view("12\0", 3)), std::nullopt);
  EXPECT_NE(std::string(kMemorySizeSyntax).find("K, M, G or T"),
            std::string::npos);
}
