//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1-3): little-endian, C
// order, dtypes float16/32/64, int8/16/32/64, uint8/16 and bool.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_NPY_H
#define DLC_SUPPORT_NPY_H

#include "support/Tensor.h"

#include <string>
#include <string_view>

namespace dlc {

/// Parses .npy bytes; throws UserError (without a file) on malformed data.
Tensor parseNpy(std::string_view bytes);
/// Reads a .npy file; errors name the file.
Tensor readNpy(const std::string &path);

/// The .npy bytes of a tensor (version 1 header).
std::string serializeNpy(const Tensor &tensor);
/// Writes a .npy file atomically.
void writeNpy(const std::string &path, const Tensor &tensor);

} // namespace dlc

#endif // DLC_SUPPORT_NPY_H
