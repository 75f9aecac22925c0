//===- MakeTestArtifact.cpp - a runnable artifact for tests -----*- C++ -*-===//
//
// Usage: dlc-make-test-artifact OUT.dlcm [X.npy EXPECTED.npy]
// Writes test/unit/RunnableArtifact.h's artifact, and optionally an input and
// the output it must produce. The lit tests (test/Driver/artifact-*.test)
// inspect it, corrupt it, and run it where there is a GPU.
//
//===----------------------------------------------------------------------===//

#include "support/File.h"
#include "support/Npy.h"
#include "test/unit/RunnableArtifact.h"

#include <cstring>
#include <iostream>

using namespace dlc;

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) {
    std::cerr
        << "usage: dlc-make-test-artifact OUT.dlcm [X.npy EXPECTED.npy]\n";
    return 2;
  }
  try {
    artifact::Artifact a = test::runnableArtifact();
    writeFileAtomic(argv[1], artifact::serialize(a));
    if (argc == 2)
      return 0;
    std::vector<float> x(10);
    for (int i = 0; i < 10; ++i)
      x[i] = 1.0f + 0.1f * float(i);
    std::vector<float> y = test::expectedOutput(a, x);
    Tensor input(DType::F32, {1, 10}), output(DType::F32, {1, 10});
    std::memcpy(input.raw(), x.data(), 40);
    std::memcpy(output.raw(), y.data(), 40);
    writeNpy(argv[2], input);
    writeNpy(argv[3], output);
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "dlc-make-test-artifact: " << e.what() << "\n";
    return 1;
  }
}
