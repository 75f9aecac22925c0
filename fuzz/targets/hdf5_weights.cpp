//===- hdf5_weights.cpp - fuzz target: HDF5 weights files -----------------===//
//
// The input is a selector byte and a weights file: an even selector pairs
// it with a Keras 3 to_json() config (a .weights.h5, "layers" layout), an
// odd one with a Keras 2 config (save_weights .h5, layer_names layout). The
// configs are the seed models' own (fuzz/corpus/configs/), compiled in.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "frontends/keras/reader/KerasModel.h"

#include "WeightsConfigs.inc" // kKeras3Config, kKeras2Config

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static const std::string keras3 = dlc::fuzz::writeScratch(
      "k3.json", reinterpret_cast<const uint8_t *>(kKeras3Config),
      std::strlen(kKeras3Config));
  static const std::string keras2 = dlc::fuzz::writeScratch(
      "k2.json", reinterpret_cast<const uint8_t *>(kKeras2Config),
      std::strlen(kKeras2Config));
  std::string weights =
      dlc::fuzz::writeScratch("weights.h5", data + 1, size - 1);
  dlc::fuzz::expectCleanly([&] {
    dlc::keras::readKerasModelInProcess(data[0] % 2 ? keras2 : keras3, weights);
  });
  return 0;
}
