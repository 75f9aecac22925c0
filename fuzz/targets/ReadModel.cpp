//===- ReadModel.cpp - dlc's isolated model reader as a command -----------===//
//
// `dlc-read-model MODEL [--weights FILE]` reads a model exactly as `dlc
// compile` and `dlc inspect` do (readKerasModel: a child process under the
// DLC_READ_TIMEOUT / DLC_READ_MEMORY limits) and prints its layer count, or
// the one line `dlc: error: ...` and exits 1. Built with the sanitizers
// (fuzz/sanitized/), it replays the malformed corpus and the regressions.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/KerasModel.h"

#include "support/Error.h"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  std::string model, weights;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--weights") == 0 && i + 1 < argc)
      weights = argv[++i];
    else if (model.empty())
      model = argv[i];
    else {
      std::fprintf(stderr, "usage: dlc-read-model MODEL [--weights FILE]\n");
      return 2;
    }
  }
  if (model.empty()) {
    std::fprintf(stderr, "usage: dlc-read-model MODEL [--weights FILE]\n");
    return 2;
  }
  try {
    dlc::keras::KerasModel m = dlc::keras::readKerasModel(model, weights);
    std::printf("%s: %zu layers\n", model.c_str(), m.model->layers.size());
    return 0;
  } catch (const dlc::UserError &e) {
    std::fprintf(stderr, "%s\n", e.format().c_str());
    return 1;
  }
}
