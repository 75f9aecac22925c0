//===- hdf5_model.cpp - fuzz target: legacy full-model .h5 files ----------===//
//
// The input is a legacy .h5 model (model_config attribute and
// model_weights group, Keras 2 or 3 writers), read as dlc reads a model.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "frontends/keras/reader/KerasModel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::writeScratch("model.h5", data, size);
  dlc::fuzz::expectCleanly([&] { dlc::keras::readKerasModelInProcess(path); });
  return 0;
}
