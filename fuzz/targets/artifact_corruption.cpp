//===- artifact_corruption.cpp - every truncation and random bit flips ----===//
//
// `artifact-corruption FILE.dlcm [FLIPS] [SEED]`: loads a valid artifact,
// then every truncation of it (each length from 0 to size-1) and FLIPS
// (default 2000) copies with one random bit flipped (seeded, deterministic),
// through artifact::parse as the runtime and `dlc inspect` load it. Each
// must be refused with a FormatError; none may crash or trip a sanitizer
// (built by fuzz/sanitized/). A flip that is accepted is listed: it is only
// allowed where the format ignores the byte. Prints the counts; exits 1 when
// a corrupted copy was accepted.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

using namespace dlc::artifact;

namespace {

enum class Outcome { Accepted, Refused, OtherError };

Outcome load(std::string_view bytes, std::string &message) {
  try {
    Artifact a = parse(bytes);
    memoryUse(a);
    checkMemoryLimit(a, kDefaultMemoryLimit);
    return Outcome::Accepted;
  } catch (const FormatError &e) {
    message = e.what();
    return Outcome::Refused;
  } catch (const std::exception &e) {
    message = e.what();
    return Outcome::OtherError;
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: artifact-corruption FILE.dlcm [FLIPS] [SEED]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  int flips = argc > 2 ? std::stoi(argv[2]) : 2000;
  unsigned seed = argc > 3 ? static_cast<unsigned>(std::stoul(argv[3])) : 1;
  std::string message;
  if (load(bytes, message) != Outcome::Accepted) {
    std::fprintf(stderr, "%s: not a valid artifact: %s\n", argv[1],
                 message.c_str());
    return 2;
  }
  int bad = 0;
  uint64_t truncRefused = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    Outcome o = load(std::string_view(bytes).substr(0, n), message);
    if (o == Outcome::Refused)
      ++truncRefused;
    else if (bad++ < 20)
      std::printf("truncation to %zu bytes: %s\n", n,
                  o == Outcome::Accepted ? "accepted" : message.c_str());
  }
  std::mt19937_64 rng(seed);
  int flipRefused = 0, flipAccepted = 0;
  for (int i = 0; i < flips; ++i) {
    std::string copy = bytes;
    size_t bit = rng() % (copy.size() * 8);
    copy[bit / 8] = static_cast<char>(copy[bit / 8] ^ (1 << (bit % 8)));
    Outcome o = load(copy, message);
    if (o == Outcome::Refused) {
      ++flipRefused;
    } else {
      ++flipAccepted;
      if (bad++ < 40)
        std::printf("bit %zu (byte %zu) flipped: %s\n", bit, bit / 8,
                    o == Outcome::Accepted ? "accepted" : message.c_str());
    }
  }
  std::printf("artifact-corruption: %s, %zu bytes: %llu of %zu truncations "
              "refused; %d of %d bit flips refused, %d accepted or not a "
              "FormatError\n",
              argv[1], bytes.size(),
              static_cast<unsigned long long>(truncRefused), bytes.size(),
              flipRefused, flips, flipAccepted);
  return bad ? 1 : 0;
}
