//===- npy.cpp - fuzz target: .npy inputs ---------------------------------===//
//
// The input is a .npy file, parsed as `dlc run --input` reads it.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "support/Npy.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::fuzz::expectCleanly([&] {
    dlc::Tensor t = dlc::parseNpy({reinterpret_cast<const char *>(data), size});
    // What was read must serialize back and parse to the same tensor.
    dlc::Tensor back = dlc::parseNpy(dlc::serializeNpy(t));
    if (back.shape() != t.shape() || back.dtype() != t.dtype() ||
        back.bytes() != t.bytes())
      std::abort();
  });
  return 0;
}
