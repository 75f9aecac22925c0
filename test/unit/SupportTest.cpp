//===- SupportTest.cpp - tensors, .npy, atomic writes, errors ---*- C++ -*-===//

#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"
#include "support/Tensor.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <cstdio>
#include <dirent.h>
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

TEST(Error, FormatsTheOneLine) {
  UserError e("unsupported layer class", "m.keras", "lambda", "Lambda");
  EXPECT_EQ(e.format(),
            "dlc: error: m.keras: layer 'lambda' (Lambda): unsupported layer "
            "class");
  EXPECT_EQ(UserError("bad\nthing").inFile("f").format(),
            "dlc: error: f: bad thing");
}

} // namespace
