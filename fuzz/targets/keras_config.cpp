//===- keras_config.cpp - fuzz target: Keras config JSON ------------------===//
//
// The input is the text of a model config (a to_json() file, a .keras
// config.json, a legacy model_config): parsed, its generation detected, and
// read into a Model, as every format's reader does.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "frontends/keras/reader/ModelConfig.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::fuzz::expectCleanly([&] {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    nlohmann::json top = dlc::keras::parseJson(text, "the config");
    dlc::keras::Generation generation = dlc::keras::generationOfConfig(top);
    dlc::keras::readModelConfig(top, generation);
  });
  return 0;
}
