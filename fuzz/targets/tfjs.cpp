//===- tfjs.cpp - fuzz target: TF.js model.json and weight shards ---------===//
//
// The input is a model.json and its one weight shard: a 4-byte
// little-endian length N, N bytes of model.json, then the bytes of
// group1-shard1of1.bin (the name the seed manifests use). Both are written
// to a folder and read as dlc reads a TF.js model.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "frontends/keras/reader/KerasModel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  uint32_t n = uint32_t(data[0]) | uint32_t(data[1]) << 8 |
               uint32_t(data[2]) << 16 | uint32_t(data[3]) << 24;
  if (n > size - 4)
    n = static_cast<uint32_t>(size - 4);
  std::string model = dlc::fuzz::writeScratch("model.json", data + 4, n);
  dlc::fuzz::writeScratch("group1-shard1of1.bin", data + 4 + n, size - 4 - n);
  dlc::fuzz::expectCleanly([&] { dlc::keras::readKerasModelInProcess(model); });
  return 0;
}
