//===- RuntimeTest.cpp - host-side runtime API ------------------*- C++ -*-===//

#include "dlc/runtime.h"

#include <gtest/gtest.h>

#include <cstring>
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

} // namespace
