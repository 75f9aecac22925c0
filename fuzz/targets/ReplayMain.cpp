//===- ReplayMain.cpp - runs a fuzz target on files, without libFuzzer ----===//
//
// For compilers without libFuzzer: `fuzz_TARGET FILE|DIR...` calls the
// target once per file (a folder: each file in it), as libFuzzer does when
// given files.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i])) {
      for (const auto &e : fs::directory_iterator(argv[i]))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (argv[i][0] != '-') {
      files.push_back(argv[i]);
    }
    for (const fs::path &f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                             bytes.size());
      ++runs;
    }
  }
  std::printf("replayed %d inputs\n", runs);
  return 0;
}
