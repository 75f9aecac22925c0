//===- RuntimeInputs.h - inputs of an artifact, from .npy files -*- C++ -*-===//
//
// Shared by `dlc run OUT.dlcm` and dlc-stress (runtime only, no LLVM): the
// runtime's dtypes as dlc's (the Python module's too), and an input read from
// .npy checked against and converted to what the artifact expects.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_RUNTIMEINPUTS_H
#define DLC_TOOLS_DLC_RUNTIMEINPUTS_H

#include "dlc/runtime.hpp"
#include "support/Tensor.h"

#include <string>

namespace dlc {

/// dlc's dtype of a runtime dtype; std::runtime_error for a value that is
/// none of runtime.h's (a newer runtime library than this code).
DType toDType(dlcDType t);

/// Converts input `index` read from `path` to the dtype the artifact
/// expects, with the conversions `dlc run --device cpu` accepts; a UserError
/// for another shape or dtype.
Tensor bindInput(Tensor t, const runtime::TensorInfo &info, size_t index,
                 const std::string &path);

} // namespace dlc

#endif // DLC_TOOLS_DLC_RUNTIMEINPUTS_H
