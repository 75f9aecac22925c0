//===- keras_archive.cpp - fuzz target: .keras zip archives ---------------===//
//
// The input is a .keras file: the zip, its config.json and metadata.json,
// and its model.weights.h5, read whole as dlc reads a model.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "frontends/keras/reader/KerasModel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::writeScratch("model.keras", data, size);
  dlc::fuzz::expectCleanly([&] { dlc::keras::readKerasModelInProcess(path); });
  return 0;
}
