//===- RuntimeInputs.cpp - inputs of an artifact, from .npy files ---------===//

#include "tools/dlc/RuntimeInputs.h"

#include "support/Error.h"
#include "support/Npy.h"

#include <stdexcept>
#include <string>

using namespace dlc;

DType dlc::toDType(dlcDType t) {
  switch (t) {
  case DLC_DTYPE_FLOAT32:
    return DType::F32;
  case DLC_DTYPE_FLOAT16:
    return DType::F16;
  case DLC_DTYPE_BFLOAT16:
    return DType::BF16;
  case DLC_DTYPE_INT32:
    return DType::I32;
  case DLC_DTYPE_INT64:
    return DType::I64;
  case DLC_DTYPE_BOOL:
    return DType::Bool;
  }
  throw std::runtime_error("the runtime reports dtype " +
                           std::to_string(int(t)) +
                           ", which this dlc does not know");
}

Tensor dlc::bindInput(Tensor t, const runtime::TensorInfo &info, size_t index,
                      const std::string &path) {
  std::string label = "input " + std::to_string(index) + " (" + path + ")";
  if (t.shape() != info.shape)
    throw UserError(label + " has shape " + formatShape(t.shape()) +
                    ", the model expects " + formatShape(info.shape));
  DType want = toDType(info.dtype);
  bool ok = false;
  std::string accepted;
  if (isFloat(want)) {
    ok = t.dtype() == want || t.dtype() == DType::F32 ||
         t.dtype() == DType::F16 || t.dtype() == DType::I32 ||
         t.dtype() == DType::I64;
    accepted = std::string(dtypeName(want)) +
               (want == DType::F32 ? " (or float16, int32, int64)"
                                   : " (or float32, float16, int32, int64)");
  } else if (want == DType::I32 || want == DType::I64) {
    ok = t.dtype() == DType::I32 || t.dtype() == DType::I64;
    accepted = "int32 or int64";
  } else {
    ok = t.dtype() == want;
    accepted = dtypeName(want);
  }
  if (!ok)
    throw UserError(label + " has dtype " + dtypeName(t.dtype()) +
                    ", the model expects " + accepted);
  return t.cast(want);
}
