//===- Runtime.cpp - dlc runtime entry points -------------------*- C++ -*-===//
//
// The C API: each entry point runs its body under `entry`, which turns
// exceptions into a status and the calling thread's message. Errors are
// recorded per thread so that concurrent sessions do not overwrite each
// other's messages.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.h"

#include "runtime/src/Session.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/MemorySize.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unistd.h>

#define DLC_STRINGIFY2(x) #x
#define DLC_STRINGIFY(x) DLC_STRINGIFY2(x)

using namespace dlc;

struct dlcModel_ {
  std::shared_ptr<const rt::Model> model;
};

struct dlcSession_ {
  std::unique_ptr<rt::Session> session;
};

namespace {
thread_local std::string lastError;

dlcStatus fail(dlcStatus status, std::string message) {
  lastError = std::move(message);
  return status;
}

/// Runs an entry point's body, mapping every exception to a status.
template <typename Body> dlcStatus entry(Body &&body) {
  try {
    body();
    return DLC_STATUS_SUCCESS;
  } catch (const rt::RuntimeError &e) {
    return fail(e.status(), e.what());
  } catch (const std::bad_alloc &) {
    return fail(DLC_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception &e) {
    return fail(DLC_STATUS_INTERNAL_ERROR, e.what());
  }
}

void require(bool condition, const char *message) {
  if (!condition)
    rt::raise(DLC_STATUS_INVALID_ARGUMENT, message);
}

/// The memory limit of a load: the option, else $DLC_MAX_MEMORY, else the
/// default; `source` says which, for messages.
uint64_t memoryLimit(const dlcLoadOptions *options, std::string &source) {
  if (options) {
    require(options->structSize != 0,
            "dlcLoadOptions.structSize must be sizeof(dlcLoadOptions)");
    if (options->structSize >=
            offsetof(dlcLoadOptions, maxMemoryBytes) + sizeof(uint64_t) &&
        options->maxMemoryBytes) {
      source = "dlcLoadOptions.maxMemoryBytes";
      return options->maxMemoryBytes;
    }
  }
  const char *env = std::getenv("DLC_MAX_MEMORY");
  if (!env || !*env) {
    source = "the default; DLC_MAX_MEMORY sets another";
    return artifact::kDefaultMemoryLimit;
  }
  std::optional<uint64_t> bytes = parseMemorySize(env);
  if (!bytes)
    rt::raise(DLC_STATUS_INVALID_ARGUMENT,
              std::string("DLC_MAX_MEMORY='") + env +
                  "' is not a memory size (" + kMemorySizeSyntax + ")");
  source = "DLC_MAX_MEMORY";
  return *bytes;
}

/// Reads a whole artifact file, no larger than the memory limit, through
/// support/File.h's openInputFile: only a regular file, opened without
/// blocking, so that a FIFO, a device or a directory is an error at once,
/// never a hang.
std::string readArtifactFile(const char *path, uint64_t limit,
                             const std::string &limitSource) {
  uint64_t size = 0;
  int fd = -1;
  try {
    fd = openInputFile(path, size);
  } catch (const UserError &e) {
    rt::raise(DLC_STATUS_IO_ERROR, "cannot open the artifact: " + e.reason());
  }
  if (size > limit) {
    ::close(fd);
    rt::raise(DLC_STATUS_INVALID_ARTIFACT,
              "the artifact file of " + std::to_string(size) +
                  " bytes is larger than the memory limit of " +
                  std::to_string(limit) + " bytes (" + limitSource + ")");
  }
  try {
    return readAndClose(fd, size, path);
  } catch (const UserError &e) {
    rt::raise(DLC_STATUS_IO_ERROR, "cannot read the artifact: " + e.reason());
  }
}

dlcStatus tensorInfo(dlcModel model, size_t index, dlcTensorInfo *info,
                     bool input) {
  return entry([&] {
    require(model && info, "model and info must not be null");
    const auto &list = input ? model->model->inputs() : model->model->outputs();
    if (index >= list.size())
      rt::raise(DLC_STATUS_INVALID_ARGUMENT,
                std::string(input ? "input " : "output ") +
                    std::to_string(index) + " does not exist (the model has " +
                    std::to_string(list.size()) + ")");
    *info = list[index];
  });
}

} // namespace

extern "C" const char *dlcGetVersion(void) {
  return DLC_STRINGIFY(DLC_VERSION_MAJOR) "." DLC_STRINGIFY(
      DLC_VERSION_MINOR) "." DLC_STRINGIFY(DLC_VERSION_PATCH);
}

extern "C" const char *dlcGetStatusName(dlcStatus status) {
  switch (status) {
  case DLC_STATUS_SUCCESS:
    return "DLC_STATUS_SUCCESS";
  case DLC_STATUS_INVALID_ARGUMENT:
    return "DLC_STATUS_INVALID_ARGUMENT";
  case DLC_STATUS_NO_DEVICE:
    return "DLC_STATUS_NO_DEVICE";
  case DLC_STATUS_CUDA_ERROR:
    return "DLC_STATUS_CUDA_ERROR";
  case DLC_STATUS_NOT_IMPLEMENTED:
    return "DLC_STATUS_NOT_IMPLEMENTED";
  case DLC_STATUS_IO_ERROR:
    return "DLC_STATUS_IO_ERROR";
  case DLC_STATUS_INVALID_ARTIFACT:
    return "DLC_STATUS_INVALID_ARTIFACT";
  case DLC_STATUS_UNSUPPORTED_DEVICE:
    return "DLC_STATUS_UNSUPPORTED_DEVICE";
  case DLC_STATUS_OUT_OF_MEMORY:
    return "DLC_STATUS_OUT_OF_MEMORY";
  case DLC_STATUS_SESSION_POISONED:
    return "DLC_STATUS_SESSION_POISONED";
  case DLC_STATUS_INTERNAL_ERROR:
    return "DLC_STATUS_INTERNAL_ERROR";
  }
  return "DLC_STATUS_UNKNOWN";
}

extern "C" const char *dlcGetDTypeName(dlcDType dtype) {
  switch (dtype) {
  case DLC_DTYPE_FLOAT32:
  case DLC_DTYPE_FLOAT16:
  case DLC_DTYPE_BFLOAT16:
  case DLC_DTYPE_INT32:
  case DLC_DTYPE_INT64:
  case DLC_DTYPE_BOOL:
    return artifact::elementTypeName(artifact::ElementType(dtype));
  }
  return "unknown";
}

extern "C" const char *dlcGetLastErrorMessage(void) {
  return lastError.c_str();
}

extern "C" dlcStatus dlcGetDeviceCount(int *count) {
  if (!count)
    return fail(DLC_STATUS_INVALID_ARGUMENT, "count must not be null");
  *count = 0;
  cudaError_t err = cudaGetDeviceCount(count);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    *count = 0;
    return fail(DLC_STATUS_NO_DEVICE,
                std::string("no CUDA device: ") + cudaGetErrorString(err));
  }
  if (err != cudaSuccess) {
    *count = 0;
    return fail(DLC_STATUS_CUDA_ERROR,
                std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err));
  }
  return DLC_STATUS_SUCCESS;
}

extern "C" dlcStatus dlcModelLoadFromFile(const char *path, dlcModel *model) {
  return dlcModelLoadFromFileWithOptions(path, nullptr, model);
}

extern "C" dlcStatus dlcModelLoadFromMemory(const void *data, size_t size,
                                            dlcModel *model) {
  return dlcModelLoadFromMemoryWithOptions(data, size, nullptr, model);
}

extern "C" dlcStatus
dlcModelLoadFromFileWithOptions(const char *path, const dlcLoadOptions *options,
                                dlcModel *model) {
  return entry([&] {
    require(path && model, "path and model must not be null");
    *model = nullptr;
    std::string source;
    uint64_t limit = memoryLimit(options, source);
    std::string bytes = readArtifactFile(path, limit, source);
    *model = new dlcModel_{rt::Model::load(bytes, limit, source)};
  });
}

extern "C" dlcStatus
dlcModelLoadFromMemoryWithOptions(const void *data, size_t size,
                                  const dlcLoadOptions *options,
                                  dlcModel *model) {
  return entry([&] {
    require(model && (data || !size), "data and model must not be null");
    *model = nullptr;
    std::string source;
    uint64_t limit = memoryLimit(options, source);
    *model = new dlcModel_{
        rt::Model::load(std::string_view(static_cast<const char *>(data), size),
                        limit, source)};
  });
}

extern "C" dlcStatus dlcModelDestroy(dlcModel model) {
  delete model;
  return DLC_STATUS_SUCCESS;
}

extern "C" dlcStatus dlcModelGetInputCount(dlcModel model, size_t *count) {
  return entry([&] {
    require(model && count, "model and count must not be null");
    *count = model->model->inputs().size();
  });
}

extern "C" dlcStatus dlcModelGetOutputCount(dlcModel model, size_t *count) {
  return entry([&] {
    require(model && count, "model and count must not be null");
    *count = model->model->outputs().size();
  });
}

extern "C" dlcStatus dlcModelGetInputInfo(dlcModel model, size_t index,
                                          dlcTensorInfo *info) {
  return tensorInfo(model, index, info, /*input=*/true);
}

extern "C" dlcStatus dlcModelGetOutputInfo(dlcModel model, size_t index,
                                           dlcTensorInfo *info) {
  return tensorInfo(model, index, info, /*input=*/false);
}

extern "C" dlcStatus dlcModelGetStepCount(dlcModel model, size_t *count) {
  return entry([&] {
    require(model && count, "model and count must not be null");
    *count = model->model->steps().size();
  });
}

extern "C" dlcStatus dlcModelGetStepInfo(dlcModel model, size_t index,
                                         dlcStepInfo *info) {
  return entry([&] {
    require(model && info, "model and info must not be null");
    const std::vector<dlcStepInfo> &steps = model->model->steps();
    if (index >= steps.size())
      rt::raise(DLC_STATUS_INVALID_ARGUMENT,
                "step " + std::to_string(index) +
                    " does not exist (the program has " +
                    std::to_string(steps.size()) + ")");
    *info = steps[index];
  });
}

extern "C" dlcStatus dlcSessionCreate(dlcModel model, dlcSession *session) {
  return entry([&] {
    require(model && session, "model and session must not be null");
    *session = nullptr;
    auto impl = std::make_unique<rt::Session>(model->model);
    *session = new dlcSession_{std::move(impl)};
  });
}

extern "C" dlcStatus dlcSessionDestroy(dlcSession session) {
  delete session;
  return DLC_STATUS_SUCCESS;
}

extern "C" dlcStatus dlcSessionRun(dlcSession session,
                                   const void *const *inputs,
                                   void *const *outputs, cudaStream_t stream) {
  return entry([&] {
    require(session, "session must not be null");
    session->session->run(inputs, outputs, stream);
  });
}

extern "C" dlcStatus dlcSessionProfile(dlcSession session,
                                       const void *const *inputs,
                                       void *const *outputs,
                                       cudaStream_t stream,
                                       double *milliseconds) {
  return entry([&] {
    require(session && milliseconds,
            "session and milliseconds must not be null");
    session->session->profile(inputs, outputs, stream, milliseconds);
  });
}

extern "C" dlcStatus dlcSessionRunHost(dlcSession session,
                                       const void *const *inputs,
                                       void *const *outputs) {
  return entry([&] {
    require(session, "session must not be null");
    session->session->runHost(inputs, outputs);
  });
}
