//===- RuntimeTest.cpp - host-side runtime API ------------------*- C++ -*-===//

#include "dlc/runtime.h"
#include "dlc/runtime.hpp"
#include "runtime/src/LibraryPlans.h"
#include "test/unit/SyntheticArtifact.h"
#include "test/unit/TextEdit.h"
#include "tools/dlc/RuntimeInputs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <link.h>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

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

// The one mapping of runtime dtypes to dlc's (the CLI's and the Python
// module's): every dtype runtime.h defines, to the dtype of the same NumPy
// name; any other value is an error, not a guess.
TEST(Runtime, DTypesAsDlcs) {
  const std::pair<dlcDType, dlc::DType> expected[] = {
      {DLC_DTYPE_FLOAT32, dlc::DType::F32},
      {DLC_DTYPE_FLOAT16, dlc::DType::F16},
      {DLC_DTYPE_BFLOAT16, dlc::DType::BF16},
      {DLC_DTYPE_INT32, dlc::DType::I32},
      {DLC_DTYPE_INT64, dlc::DType::I64},
      {DLC_DTYPE_BOOL, dlc::DType::Bool}};
  for (auto [runtime, dlcType] : expected) {
    EXPECT_EQ(dlc::toDType(runtime), dlcType);
    EXPECT_STREQ(dlc::dtypeName(dlc::toDType(runtime)),
                 dlcGetDTypeName(runtime));
  }
  for (int unknown : {6, 7})
    EXPECT_THROW(dlc::toDType(static_cast<dlcDType>(unknown)),
                 std::runtime_error)
        << unknown;
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

TEST(RuntimeModel, StepInfo) {
  dlc::artifact::Artifact a = dlc::test::syntheticArtifact();
  a.kernels[1].cost = dlc::artifact::StepCost{50, 80};
  std::string bytes = dlc::artifact::serialize(a);
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  size_t steps = 0;
  ASSERT_EQ(dlcModelGetStepCount(model, &steps), DLC_STATUS_SUCCESS);
  ASSERT_EQ(steps, 2u);
  dlcStepInfo info;
  ASSERT_EQ(dlcModelGetStepInfo(model, 0, &info), DLC_STATUS_SUCCESS);
  EXPECT_STREQ(info.name, "k0_scale");
  EXPECT_EQ(info.kind, DLC_STEP_KERNEL);
  EXPECT_STREQ(info.what, "elementwise");
  EXPECT_STREQ(info.layers, "dense, scale");
  EXPECT_EQ(info.hasCost, 0); // no cost recorded: unknown, not zero
  ASSERT_EQ(dlcModelGetStepInfo(model, 1, &info), DLC_STATUS_SUCCESS);
  EXPECT_STREQ(info.name, "k1_softmax");
  EXPECT_EQ(info.hasCost, 1);
  EXPECT_EQ(info.flops, 50u);
  EXPECT_EQ(info.bytes, 80u);
  EXPECT_EQ(dlcModelGetStepInfo(model, 2, &info), DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "step 2 does not exist (the program has 2)");
  EXPECT_EQ(dlcModelGetStepInfo(model, 0, nullptr),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcModelGetStepCount(nullptr, &steps), DLC_STATUS_INVALID_ARGUMENT);
  dlcModelDestroy(model);
}

TEST(RuntimeModel, OmittedWeightsOnlyWhenAsked) {
  dlc::artifact::Artifact a = dlc::test::syntheticArtifact();
  a.omittedWeightsBytes = a.weights.size();
  a.weights.clear();
  std::string bytes = dlc::artifact::serialize(a);
  const char *saved = std::getenv("DLC_WEIGHTS_SYNTHETIC");
  std::optional<std::string> previous =
      saved ? std::optional<std::string>(saved) : std::nullopt;
  unsetenv("DLC_WEIGHTS_SYNTHETIC");
  dlcModel model = nullptr;
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "compiled with --no-weights: its 40 bytes of weights are not "
               "in the file (set DLC_WEIGHTS_SYNTHETIC=1 to run it on zero "
               "weights, for timing only)");
  setenv("DLC_WEIGHTS_SYNTHETIC", "yes", 1);
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_INVALID_ARTIFACT);
  setenv("DLC_WEIGHTS_SYNTHETIC", "1", 1);
  EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);
  if (previous)
    setenv("DLC_WEIGHTS_SYNTHETIC", previous->c_str(), 1);
  else
    unsetenv("DLC_WEIGHTS_SYNTHETIC");
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

TEST(RuntimeModel, LoadFromFileNeverBlocks) {
  // A FIFO (no writer will come), a directory, a device: IO_ERROR at once.
  std::string dir = ::testing::TempDir() + "runtime-special-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::string fifo = dir + "/m.dlcm";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (auto [path, kind] :
       {std::pair{fifo, "a FIFO"}, std::pair{dir, "a directory"},
        std::pair{std::string("/dev/zero"), "a character device"}}) {
    auto result = std::make_shared<std::pair<dlcStatus, std::string>>();
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> finished = done->get_future();
    std::thread([path = path, result, done] {
      dlcModel model = nullptr;
      result->first = dlcModelLoadFromFile(path.c_str(), &model);
      result->second = dlcGetLastErrorMessage();
      done->set_value();
    }).detach();
    ASSERT_EQ(finished.wait_for(std::chrono::seconds(30)),
              std::future_status::ready)
        << path << " blocked";
    EXPECT_EQ(result->first, DLC_STATUS_IO_ERROR);
    EXPECT_EQ(result->second, std::string("cannot open the artifact: is ") +
                                  kind + ", not a regular file");
  }
  std::remove(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST(RuntimeModel, EnormousOutputWithAValidChecksumIsRefused) {
  // Kernels that write 40 bytes of an output declared as 4 GB: refused at
  // load, before a caller sizes a buffer from dlcTensorInfo.
  std::string bytes = syntheticBytes();
  std::string manifest = dlc::test::manifestOf(bytes);
  size_t at = manifest.find("\"shape\"", manifest.find("probabilities"));
  size_t end = manifest.find(']', at);
  std::string huge = dlc::test::withManifest(
      bytes, manifest.substr(0, at) + "\"shape\": [1, 1000000000" +
                 manifest.substr(end));
  dlcModel model = nullptr;
  EXPECT_EQ(dlcModelLoadFromMemory(huge.data(), huge.size(), &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_EQ(model, nullptr);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "manifest: outputs[0].shape: float32[1, 1000000000] is "
               "4000000000 bytes, but the program writes only 40 of them");
}

/// Sets an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST(RuntimeModel, MemoryLimit) {
  // The synthetic artifact needs 1064 bytes per session (arena 512, weights
  // 40, a 256-byte staging buffer for its input and its output).
  std::string bytes = syntheticBytes();
  ScopedEnv unset("DLC_MAX_MEMORY", nullptr);
  dlcModel model = nullptr;
  dlcLoadOptions options{};
  options.structSize = sizeof(options);
  options.maxMemoryBytes = 1064;
  ASSERT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                              &options, &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);
  options.maxMemoryBytes = 1000;
  EXPECT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                              &options, &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "manifest: a session needs 1064 bytes (arena 512, weights 40, "
               "inputs 256, outputs 256, workspace 0), more than the memory "
               "limit of 1000 bytes (dlcLoadOptions.maxMemoryBytes)");
  options.maxMemoryBytes = 100;
  EXPECT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                              &options, &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "manifest: arena_bytes: 512 bytes, more than the memory limit "
               "of 100 bytes (dlcLoadOptions.maxMemoryBytes)");
  // The file itself is held to the limit.
  std::string path = ::testing::TempDir() + "runtime-limit.dlcm";
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(dlcModelLoadFromFileWithOptions(path.c_str(), &options, &model),
            DLC_STATUS_INVALID_ARTIFACT);
  EXPECT_EQ(std::string(dlcGetLastErrorMessage()),
            "the artifact file of " + std::to_string(bytes.size()) +
                " bytes is larger than the memory limit of 100 bytes "
                "(dlcLoadOptions.maxMemoryBytes)");
  std::remove(path.c_str());

  // DLC_MAX_MEMORY when the option is 0; the option wins over it.
  {
    ScopedEnv env("DLC_MAX_MEMORY", "1K");
    EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
              DLC_STATUS_INVALID_ARTIFACT);
    EXPECT_NE(std::string(dlcGetLastErrorMessage())
                  .find("more than the memory limit of 1024 bytes "
                        "(DLC_MAX_MEMORY)"),
              std::string::npos)
        << dlcGetLastErrorMessage();
    options.maxMemoryBytes = 2048;
    EXPECT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                                &options, &model),
              DLC_STATUS_SUCCESS);
    dlcModelDestroy(model);
  }
  for (const char *good : {"2048", "2K", "2KiB", "1M", "1G", "1T", "4096B"}) {
    ScopedEnv env("DLC_MAX_MEMORY", good);
    EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
              DLC_STATUS_SUCCESS)
        << good << ": " << dlcGetLastErrorMessage();
    dlcModelDestroy(model);
  }
  for (const char *bad : {"lots", "0", "-5", "1.5G", "1KB", "99999999999T",
                          "18446744073709551616"}) {
    ScopedEnv env("DLC_MAX_MEMORY", bad);
    EXPECT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
              DLC_STATUS_INVALID_ARGUMENT)
        << bad;
    EXPECT_EQ(std::string(dlcGetLastErrorMessage()),
              std::string("DLC_MAX_MEMORY='") + bad +
                  "' is not a memory size (a positive number of bytes, "
                  "optionally with a K, M, G or T suffix)");
  }
  // structSize must be set; NULL options are the defaults.
  options.structSize = 0;
  EXPECT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                              &options, &model),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dlcModelLoadFromMemoryWithOptions(bytes.data(), bytes.size(),
                                              nullptr, &model),
            DLC_STATUS_SUCCESS);
  dlcModelDestroy(model);
  // The C++ wrapper.
  EXPECT_THROW(dlc::runtime::Model::fromMemory(bytes.data(), bytes.size(),
                                               {/*maxMemoryBytes=*/1000}),
               dlc::runtime::Error);
  EXPECT_EQ(dlc::runtime::Model::fromMemory(bytes.data(), bytes.size(), {2000})
                .numOutputs(),
            1u);
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

//===----------------------------------------------------------------------===//
// Library call descriptors, checked when a model loads
//===----------------------------------------------------------------------===//

// x [1, 10] (the input) times w [10, 1] (the weights) into the arena.
constexpr const char *kGemm =
    R"({"m": 1, "n": 1, "k": 10, "batch": 1, "a_batch_stride": 0,
        "b_batch_stride": 0, "transpose_b": false, "a_dtype": "float32",
        "b_dtype": "float32", "d_dtype": "float32", "compute": "float32",
        "alpha": 1.0, "beta": 0.0, "epilogue": "default"})";
// x as NHWC [1, 1, 10, 1], a 1x3 filter from the weights, y [1, 1, 8, 1].
constexpr const char *kConv =
    R"({"n": 1, "h": 1, "w": 10, "c": 1, "k": 1, "r": 1, "s": 3,
        "groups": 1, "p": 1, "q": 8, "pads": [0, 0, 0, 0], "strides": [1, 1],
        "dilations": [1, 1], "x_dtype": "float32", "w_dtype": "float32",
        "y_dtype": "float32", "compute": "float32", "activation": "relu"})";
// A 1x2 max pool of x: y [1, 1, 5, 1].
constexpr const char *kPool =
    R"({"n": 1, "h": 1, "w": 10, "c": 1, "p": 1, "q": 5, "mode": "max",
        "window": [1, 2], "strides": [1, 2], "pads": [0, 0, 0, 0],
        "dtype": "float32", "compute": "float32"})";
// softmax of x as [2, 5, 1] along its middle axis, into the arena.
constexpr const char *kSoftmax =
    R"({"outer": 2, "axis": 5, "inner": 1, "x_dtype": "float32",
        "y_dtype": "float32", "algorithm": "accurate", "compute": "float32"})";

using dlc::test::edit;

/// Loads the synthetic artifact with one library call run after its
/// kernels; the error message stays in dlcGetLastErrorMessage().
dlcStatus loadWithCall(const std::string &library, const std::string &op,
                       const std::string &descriptor,
                       std::vector<dlc::artifact::BufferRef> params) {
  using namespace dlc::artifact;
  Artifact a = dlc::test::syntheticArtifact();
  a.libraryCalls.push_back({"l2_" + op,
                            library,
                            op,
                            {"layer"},
                            descriptor,
                            std::move(params),
                            1 << 20,
                            std::nullopt});
  a.program = {{Step::Kind::Kernel, 0},
               {Step::Kind::Kernel, 1},
               {Step::Kind::LibraryCall, 0}};
  std::string bytes = serialize(a);
  dlcModel model = nullptr;
  dlcStatus status = dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model);
  dlcModelDestroy(model);
  return status;
}

using dlc::artifact::Region;
const std::vector<dlc::artifact::BufferRef> kGemmParams = {
    {Region::Input, 0, 0, 40},
    {Region::Weights, 0, 0, 40},
    {Region::Arena, 0, 256, 4}};
const std::vector<dlc::artifact::BufferRef> kConvParams = {
    {Region::Input, 0, 0, 40},
    {Region::Weights, 0, 0, 12},
    {Region::Arena, 0, 256, 32}};
const std::vector<dlc::artifact::BufferRef> kPoolParams = {
    {Region::Input, 0, 0, 40}, {Region::Arena, 0, 256, 20}};
const std::vector<dlc::artifact::BufferRef> kSoftmaxParams = {
    {Region::Input, 0, 0, 40}, {Region::Arena, 0, 256, 40}};
// Attention of one f16 query row on one key, head dims 8: Q, K, V, O of 16
// bytes each.
constexpr const char *kSdpa =
    R"({"batch": 1, "heads": 1, "seq_q": 1, "seq_kv": 1, "head_dim": 8,
        "value_dim": 8, "dtype": "float16", "compute": "float32",
        "scale": 0.35, "mask": "causal"})";
const std::vector<dlc::artifact::BufferRef> kSdpaParams = {
    {Region::Input, 0, 0, 16},
    {Region::Arena, 0, 256, 16},
    {Region::Arena, 0, 272, 16},
    {Region::Arena, 0, 288, 16}};

TEST(RuntimeLibraryCalls, WellFormedDescriptorsLoad) {
  EXPECT_EQ(loadWithCall("cublaslt", "gemm", kGemm, kGemmParams),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  EXPECT_EQ(loadWithCall("cudnn", "conv2d", kConv, kConvParams),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  EXPECT_EQ(loadWithCall("cudnn", "pool2d", kPool, kPoolParams),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  EXPECT_EQ(loadWithCall("cudnn", "softmax", kSoftmax, kSoftmaxParams),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  EXPECT_EQ(loadWithCall("cudnn", "sdpa", kSdpa, kSdpaParams),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  // A bias epilogue with its bias (the weights' first float).
  std::vector<dlc::artifact::BufferRef> withBias = kGemmParams;
  withBias.insert(withBias.begin() + 2, {Region::Weights, 0, 0, 4});
  EXPECT_EQ(loadWithCall("cublaslt", "gemm",
                         edit(kGemm, R"("epilogue": "default")",
                              R"("epilogue": "relu_bias",
                                 "bias_dtype": "float32")"),
                         withBias),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
}

TEST(RuntimeLibraryCalls, StepInfo) {
  using namespace dlc::artifact;
  Artifact a = dlc::test::syntheticArtifact();
  LibraryCall call{"l2_gemm", "cublaslt",  "gemm", {"dense", "head"},
                   kGemm,     kGemmParams, 0,      StepCost{200, 84}};
  a.libraryCalls = {call};
  a.program = {{Step::Kind::LibraryCall, 0}, {Step::Kind::Kernel, 1}};
  std::string bytes = serialize(a);
  dlc::runtime::Model model =
      dlc::runtime::Model::fromMemory(bytes.data(), bytes.size());
  ASSERT_EQ(model.numSteps(), 2u);
  dlc::runtime::StepInfo s = model.step(0);
  EXPECT_EQ(s.name, "l2_gemm");
  EXPECT_EQ(s.kind, DLC_STEP_LIBRARY_CALL);
  EXPECT_EQ(s.what, "cublaslt gemm");
  EXPECT_EQ(s.layers, "dense, head");
  EXPECT_TRUE(s.hasCost);
  EXPECT_EQ(s.flops, 200u);
  EXPECT_EQ(s.bytes, 84u);
  EXPECT_EQ(model.step(1).name, "k1_softmax");
  EXPECT_FALSE(model.step(1).hasCost);
  try {
    model.step(2);
    FAIL() << "no exception";
  } catch (const dlc::runtime::Error &e) {
    EXPECT_EQ(e.status(), DLC_STATUS_INVALID_ARGUMENT);
  }
}

// Every rule of the schema is tested in LibraryCallTest.cpp; here, that the
// runtime refuses the model at load with the schema's message.
TEST(RuntimeLibraryCalls, MalformedDescriptorsAreInvalidArtifacts) {
  struct Case {
    std::string library, op, descriptor;
    std::vector<dlc::artifact::BufferRef> params;
    std::string message;
  };
  const Case cases[] = {
      {"cublaslt", "gemm", edit(kGemm, R"("n": 1, )", ""), kGemmParams,
       "library call l2_gemm (cublaslt gemm): descriptor.n: missing"},
      {"cublaslt",
       "gemm",
       kGemm,
       {kGemmParams[0], kGemmParams[1]},
       "library call l2_gemm (cublaslt gemm): params: 2 parameters, the "
       "descriptor needs 3"},
      {"cudnn", "conv2d", edit(kConv, R"("q": 8)", R"("q": 9)"), kConvParams,
       "library call l2_conv2d (cudnn conv2d): descriptor: p, q do not match "
       "the convolution's geometry"},
      {"cudnn", "pool2d",
       edit(kPool, R"("pads": [0, 0, 0, 0])", R"("pads": [0, 0, 2, 0])"),
       kPoolParams,
       "library call l2_pool2d (cudnn pool2d): descriptor.pads: each pad "
       "must be smaller than the window"},
      {"cudnn", "softmax", edit(kSoftmax, R"("axis": 5)", R"("axis": 10)"),
       kSoftmaxParams,
       "library call l2_softmax (cudnn softmax): params[0]: 40 bytes, the "
       "descriptor needs 80"},
      {"cudnn", "sdpa",
       edit(kSdpa, R"("dtype": "float16")", R"("dtype": "float32")"),
       kSdpaParams,
       "library call l2_sdpa (cudnn sdpa): descriptor.dtype: expected one of "
       "float16, bfloat16"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(loadWithCall(c.library, c.op, c.descriptor, c.params),
              DLC_STATUS_INVALID_ARTIFACT)
        << c.message;
    EXPECT_EQ(dlcGetLastErrorMessage(), c.message);
  }
}

TEST(RuntimeLibraryCalls, UnknownOpsAreNotImplemented) {
  EXPECT_EQ(loadWithCall("cudnn", "layer_norm", "{}", {}),
            DLC_STATUS_NOT_IMPLEMENTED);
  EXPECT_STREQ(dlcGetLastErrorMessage(),
               "library call l2_layer_norm: cudnn layer_norm is not supported "
               "by this runtime");
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
  double ms = 0;
  EXPECT_EQ(dlcSessionProfile(nullptr, nullptr, nullptr, nullptr, &ms),
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

/// Whether a shared object whose path contains `name` is loaded.
bool sharedObjectLoaded(const char *name) {
  struct Search {
    const char *name;
    bool found;
  } search{name, false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        if (info->dlpi_name && std::strstr(info->dlpi_name, s->name))
          s->found = true;
        return 0;
      },
      &search);
  return search.found;
}

// libcublasLt is not loaded with the runtime (its start-up costs every dlc
// command 0.15 s) but on the first cublasLt(), here without a GPU: every
// function the runtime calls resolves, and the table is loaded once.
TEST(CublasLtLoading, LoadedOnFirstUseWithEveryFunction) {
  EXPECT_FALSE(sharedObjectLoaded("libcublasLt"));
  const dlc::rt::CublasLt &lt = dlc::rt::cublasLt();
  EXPECT_TRUE(sharedObjectLoaded("libcublasLt"));
#define DLC_EXPECT_RESOLVED(name) EXPECT_NE(lt.name, nullptr) << #name;
  DLC_CUBLASLT_FUNCTIONS(DLC_EXPECT_RESOLVED)
#undef DLC_EXPECT_RESOLVED
  EXPECT_STREQ(lt.cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED),
               "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(&dlc::rt::cublasLt(), &lt);
}

} // namespace
