//===- main.cpp - classify an image with a compiled dlc model ---*- C++ -*-===//
//
// Usage: dlc-embed-example MODEL.dlcm IMAGE.npy
//
// Loads an artifact made by `dlc compile`, runs it on one float32 .npy image
// (shaped like the model's input, batch included) and prints the top class of
// the first output and its probability. Only dlc/runtime.hpp is needed.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

/// The float32 data of a little-endian, C-ordered .npy file; throws on
/// anything else. (A real application would use its own tensor library.)
std::vector<float> readNpyFloat32(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw std::runtime_error(path + ": not a .npy file");
  size_t headerBytes = bytes[6] == 1
                           ? 10 + (uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8)
                           : 12 + (uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8 |
                                   uint8_t(bytes[10]) << 16);
  if (bytes.size() < headerBytes)
    throw std::runtime_error(path + ": truncated .npy header");
  std::string header = bytes.substr(0, headerBytes);
  if (header.find("'descr': '<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": expected a C-ordered float32 array");
  std::vector<float> data((bytes.size() - headerBytes) / sizeof(float));
  std::copy(bytes.begin() + headerBytes,
            bytes.begin() + headerBytes + data.size() * sizeof(float),
            reinterpret_cast<char *>(data.data()));
  return data;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.dlcm IMAGE.npy\n", argv[0]);
    return 2;
  }
  try {
    dlc::runtime::Model model = dlc::runtime::Model::fromFile(argv[1]);
    if (model.numInputs() != 1 || model.numOutputs() < 1)
      throw std::runtime_error("expected a model with one input");
    dlc::runtime::TensorInfo input = model.input(0);
    dlc::runtime::TensorInfo output = model.output(0);
    if (input.dtype != DLC_DTYPE_FLOAT32 || output.dtype != DLC_DTYPE_FLOAT32)
      throw std::runtime_error("expected float32 input and output");

    std::vector<float> image = readNpyFloat32(argv[2]);
    if (image.size() * sizeof(float) != input.bytes)
      throw std::runtime_error(
          std::string(argv[2]) + ": " + std::to_string(image.size()) +
          " values, the model's input '" + input.name + "' takes " +
          std::to_string(input.bytes / sizeof(float)));

    // One buffer per output; the first holds the class probabilities.
    std::vector<std::vector<float>> outputs;
    std::vector<void *> outputPointers;
    for (size_t i = 0; i < model.numOutputs(); ++i) {
      outputs.emplace_back(model.output(i).bytes / sizeof(float));
      outputPointers.push_back(outputs.back().data());
    }

    dlc::runtime::Session session(model); // on the current CUDA device
    session.runHost({image.data()}, outputPointers);

    const std::vector<float> &probabilities = outputs[0];
    size_t top = std::max_element(probabilities.begin(), probabilities.end()) -
                 probabilities.begin();
    std::printf("class %zu: probability %.4f\n", top, probabilities[top]);
    return 0;
  } catch (const dlc::runtime::Error &e) {
    std::fprintf(stderr, "%s: error: %s (%s)\n", argv[0], e.what(),
                 dlcGetStatusName(e.status()));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what());
  }
  return 1;
}
