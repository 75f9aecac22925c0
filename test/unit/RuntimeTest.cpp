//===- RuntimeTest.cpp - host-side runtime API ------------------*- C++ -*-===//

#include "dlc/runtime.h"
#include "dlc/runtime.hpp"
#include "test/unit/SyntheticArtifact.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace {

TEST(Runtime, VersionIsSemantic) {
  std::string v = dlcGetVersion();
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

TEST(Runtime, StatusNamesAreDistinct) {
  EXPECT_STREQ(dlcGetStatusName(DLC_STATUS_SUCCESS), "DLC_STATUS_SUCCESS");
  EXPECT_STREQ(dlcGetStatusName(DLC_STATUS_NO_DEVICE), "DLC_STATUS_NO_DEVICE");
  EXPECT_STREQ(dlcGetStatusName(static_cast<dlcStatus>(99)),
               "DLC_STATUS_UNKNOWN");
}

TEST(Runtime, EveryStatusHasItsOwnName) {
  std::set<std::string> names;
  for (int s = DLC_STATUS_SUCCESS; s <= DLC_STATUS_INTERNAL_ERROR; ++s) {
    std::string name = dlcGetStatusName(static_cast<dlcStatus>(s));
    EXPECT_NE(name, "DLC_STATUS_UNKNOWN") << s;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), size_t(DLC_STATUS_INTERNAL_ERROR) + 1);
  EXPECT_STREQ(dlcGetStatusName(DLC_STATUS_SESSION_POISONED),
               "DLC_STATUS_SESSION_POISONED");
}

TEST(Runtime, DTypeNames) {
  EXPECT_STREQ(dlcGetDTypeName(DLC_DTYPE_FLOAT32), "float32");
  EXPECT_STREQ(dlcGetDTypeName(DLC_DTYPE_BFLOAT16), "bfloat16");
  EXPECT_STREQ(dlcGetDTypeName(DLC_DTYPE_BOOL), "bool");
  EXPECT_STREQ(dlcGetDTypeName(static_cast<dlcDType>(42)), "unknown");
}

TEST(Runtime, NullCountIsAnInvalidArgument) {
  EXPECT_EQ(dlcGetDeviceCount(nullptr), DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(dlcGetLastErrorMessage(), "count"), nullptr);
}

TEST(Runtime, DeviceCountIsCleanWithOrWithoutAGpu) {
  int count = -1;
  dlcStatus status = dlcGetDeviceCount(&count);
  if (status == DLC_STATUS_SUCCESS) {
    EXPECT_GT(count, 0);
  } else {
    // No GPU or no driver (CI): a status and a message, never a crash.
    EXPECT_EQ(status, DLC_STATUS_NO_DEVICE) << dlcGetLastErrorMessage();
    EXPECT_EQ(count, 0);
    EXPECT_NE(std::string(dlcGetLastErrorMessage()), "");
  }
}

TEST(Runtime, ErrorMessagesArePerThread) {
  ASSERT_EQ(dlcGetDeviceCount(nullptr), DLC_STATUS_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = dlcGetLastErrorMessage(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(dlcGetLastErrorMessage()), "");
}

//===----------------------------------------------------------------------===//
// Models (host side: no GPU needed)
//===----------------------------------------------------------------------===//

std::string syntheticBytes() {
  return dlc::artifact::serialize(dlc::test::syntheticArtifact());
}

TEST(RuntimeModel, LoadFromMemoryAndQuery) {
  std::string bytes = syntheticBytes();
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  bytes.assign(bytes.size(), '\0'); // the model keeps its own copy
  size_t inputs = 0, outputs = 0;
  ASSERT_EQ(dlcModelGetInputCount(model, &inputs), DLC_STATUS_SUCCESS);
  ASSERT_EQ(dlcModelGetOutputCount(model, &outputs), DLC_STATUS_SUCCESS);
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs, 1u);
  dlcTensorInfo info;
  ASSERT_EQ(dlcModelGetOutputInfo(model, 0, &info), DLC_STATUS_SUCCESS);
  EXPECT_STREQ(info.name, "probabilities");
  EXPECT_EQ(info.dtype, DLC_DTYPE_FLOAT32);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 1);
  EXPECT_EQ(info.shape[1], 10);
  EXPECT_EQ(info.bytes, 40u);
  EXPECT_EQ(dlcModelGetInputInfo(model, 1, &info), DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "input 1 does not exist (the model has 1)");
  EXPECT_EQ(dlcModelDestroy(model), DLC_STATUS_SUCCESS);
  EXPECT_EQ(dlcModelDestroy(nullptr), DLC_STATUS_SUCCESS);
}

TEST(RuntimeModel, LoadFromFile) {
  std::string path = ::testing::TempDir() + "runtime-test.dlcm";
  std::ofstream(path, std::ios::binary) << syntheticBytes();
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromFile(path.c_str(), &model), DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);
  std::remove(path.c_str());

  EXPECT_EQ(dlcModelLoadFromFile(path.c_str(), &model), DLC_STATUS_IO_ERROR);
  EXPECT_EQ(model, nullptr);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "cannot open the artifact: No such file or directory");
}

TEST(RuntimeModel, LoadValidates) {
  std::string bytes = syntheticBytes();
  bytes[bytes.size() / 2] ^= 0x10;
  dlcModel model = nullptr;
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_EQ(model, nullptr);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "checksum mismatch: the artifact is corrupt");
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), 100, &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_EQ(dlcModelLoadFromMemory(nullptr, 0, &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_EQ(dlcModelLoadFromMemory(nullptr, 10, &model),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), nullptr),
            DLC_STATUS_INVALID_ARGUMENT);
}

TEST(RuntimeModel, LibraryCallsAreNotImplementedYet) {
  dlc::artifact::Artifact a = dlc::test::syntheticArtifact();
  a.libraryCalls.push_back(
      {"l2_gemm", "cublaslt", "gemm", {"dense"}, "{}", {}, 0});
  std::string bytes = dlc::artifact::serialize(a);
  dlcModel model = nullptr;
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_NOT_IMPLEMENTED);
  EXPECT_NE(std::strstr(dlcGetLastErrorMessage(), "l2_gemm (cublaslt)"),
            nullptr);
}

TEST(RuntimeModel, SessionWithoutADeviceIsNoDevice) {
  int count = 0;
  if (dlcGetDeviceCount(&count) == DLC_STATUS_SUCCESS)
    GTEST_SKIP() << "a GPU is present";
  std::string bytes = syntheticBytes();
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS);
  dlcSession session = reinterpret_cast<dlcSession>(&count);
  EXPECT_EQ(dlcSessionCreate(model, &session), DLC_STATUS_NO_DEVICE);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(std::string(dlcGetLastErrorMessage()).rfind("no CUDA device: ", 0),
            0u)
      << dlcGetLastErrorMessage();
  EXPECT_EQ(dlcSessionDestroy(nullptr), DLC_STATUS_SUCCESS);
  dlcModelDestroy(model);
}

TEST(RuntimeModel, NullArguments) {
  EXPECT_EQ(dlcSessionCreate(nullptr, nullptr), DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcSessionRun(nullptr, nullptr, nullptr, nullptr),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcSessionRunHost(nullptr, nullptr, nullptr),
            DLC_STATUS_INVALID_ARGUMENT);
  size_t count;
  EXPECT_EQ(dlcModelGetInputCount(nullptr, &count),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcModelLoadFromFile(nullptr, nullptr),
            DLC_STATUS_INVALID_ARGUMENT);
}

TEST(RuntimeModel, CppWrapperThrowsWithTheStatus) {
  std::string bytes = syntheticBytes();
  dlc::runtime::Model model =
      dlc::runtime::Model::fromMemory(bytes.data(), bytes.size());
  EXPECT_EQ(model.numInputs(), 1u);
  dlc::runtime::TensorInfo input = model.input(0);
  EXPECT_EQ(input.name, "image");
  EXPECT_EQ(input.shape, (std::vector<int64_t>{1, 10}));
  dlc::runtime::Model moved = std::move(model);
  EXPECT_EQ(moved.output(0).bytes, 40u);
  try {
    dlc::runtime::Model::fromFile("/nonexistent/m.dlcm");
    FAIL() << "no exception";
  } catch (const dlc::runtime::Error &e) {
    EXPECT_EQ(e.status(), DLC_STATUS_IO_ERROR);
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

TEST(RuntimeModel, ManyThreadsShareOneModel) {
  std::string bytes = syntheticBytes();
  dlc::runtime::Model model =
      dlc::runtime::Model::fromMemory(bytes.data(), bytes.size());
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i)
        ok[t] += model.input(0).name == "image" && model.numOutputs() == 1;
    });
  for (std::thread &t : threads)
    t.join();
  for (int n : ok)
    EXPECT_EQ(n, 100);
}

} // namespace
