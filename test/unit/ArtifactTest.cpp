//===- ArtifactTest.cpp - the .dlcm format and SHA-256 ----------*- C++ -*-===//

#include "artifact/Artifact.h"
#include "artifact/Sha256.h"
#include "test/unit/SyntheticArtifact.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

using namespace dlc;
using namespace dlc::artifact;

namespace {

using test::manifestOf;
using test::resign;
using test::withManifest;

std::string sha(std::string_view message) {
  return Sha256::hex(Sha256::hash(message));
}

// FIPS 180-4 examples and the NIST CAVP SHA-256 byte-oriented vectors, with
// the portable code and (where the CPU has them) the SHA extensions.
void expectNistVectors();

TEST(Sha256, NistVectors) {
  Sha256::useHardware(false);
  expectNistVectors();
  Sha256::useHardware(true);
  if (Sha256::hardwareAvailable())
    expectNistVectors();
}

// The SHA extensions' digest equals the portable code's on messages of
// every length up to 300 bytes (every padding case, one to five blocks)
// and on a 1 MiB one, fed in pieces of uneven sizes.
TEST(Sha256, HardwareEqualsPortable) {
  if (!Sha256::hardwareAvailable())
    GTEST_SKIP() << "this CPU has no SHA extensions";
  std::string message;
  uint32_t x = 12345;
  for (int i = 0; i < (1 << 20); ++i) {
    x = x * 1664525u + 1013904223u;
    message += char(x >> 24);
  }
  auto digest = [&](bool hardware, std::string_view m) {
    Sha256::useHardware(hardware);
    Sha256 h;
    for (size_t at = 0, step = 1; at < m.size();
         at += step, step = step * 3 % 1031)
      h.update(m.substr(at, step));
    std::string hex = Sha256::hex(h.finish());
    Sha256::useHardware(true);
    return hex;
  };
  for (size_t n = 0; n <= 300; ++n)
    EXPECT_EQ(digest(true, std::string_view(message).substr(0, n)),
              digest(false, std::string_view(message).substr(0, n)))
        << n;
  EXPECT_EQ(digest(true, message), digest(false, message));
}

void expectNistVectors() {
  EXPECT_EQ(sha(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmn"
          "oijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha(std::string("\xbd", 1)),
            "68325720aabd7c82f30f554b313d0570c95accbb7dc4b5aae11204c08ffe732b");
  EXPECT_EQ(sha(std::string("\xc9\x8c\x8e\x55", 4)),
            "7abc22c0ae5af26ce93dbb94433a0e0b2e119d014f8e7f65bd56c61ccccd9504");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string message;
  for (int i = 0; i < 1000; ++i)
    message += char(i * 7);
  // Every split point around the 55/56/64-byte padding boundaries and more.
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 119, 128, 999, 1000}) {
    Sha256 h;
    h.update(std::string_view(message).substr(0, split));
    h.update(std::string_view(message).substr(split));
    EXPECT_EQ(Sha256::hex(h.finish()), sha(message)) << split;
  }
}

//===----------------------------------------------------------------------===//
// Round trip
//===----------------------------------------------------------------------===//

void expectEqual(const Artifact &a, const Artifact &b) {
  EXPECT_EQ(a.dlcVersion, b.dlcVersion);
  EXPECT_EQ(a.archs, b.archs);
  EXPECT_EQ(a.ptxArch, b.ptxArch);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.precision, b.precision);
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (auto [x, y] :
       {std::pair{&a.inputs, &b.inputs}, {&a.outputs, &b.outputs}})
    for (size_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ((*x)[i].name, (*y)[i].name);
      EXPECT_EQ((*x)[i].type, (*y)[i].type);
      EXPECT_EQ((*x)[i].shape, (*y)[i].shape);
      EXPECT_EQ((*x)[i].arenaOffset, (*y)[i].arenaOffset);
    }
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.omittedWeightsBytes, b.omittedWeightsBytes);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const Kernel &x = a.kernels[i], &y = b.kernels[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.entry, y.entry);
    EXPECT_EQ(x.family, y.family);
    EXPECT_EQ(x.tiling, y.tiling);
    EXPECT_EQ(x.layers, y.layers);
    EXPECT_EQ(x.grid, y.grid);
    EXPECT_EQ(x.block, y.block);
    EXPECT_EQ(x.dynamicSharedBytes, y.dynamicSharedBytes);
    EXPECT_EQ(x.params, y.params);
    EXPECT_EQ(x.numIns, y.numIns);
    EXPECT_EQ(x.cubins, y.cubins);
    EXPECT_EQ(x.resources, y.resources);
    EXPECT_EQ(x.ptx, y.ptx);
    EXPECT_EQ(x.cost, y.cost);
  }
  ASSERT_EQ(a.libraryCalls.size(), b.libraryCalls.size());
  for (size_t i = 0; i < a.libraryCalls.size(); ++i) {
    const LibraryCall &x = a.libraryCalls[i], &y = b.libraryCalls[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.library, y.library);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.layers, y.layers);
    EXPECT_EQ(x.descriptor, y.descriptor);
    EXPECT_EQ(x.params, y.params);
    EXPECT_EQ(x.workspaceBytes, y.workspaceBytes);
    EXPECT_EQ(x.cost, y.cost);
  }
  EXPECT_EQ(a.program, b.program);
}

TEST(Artifact, RoundTrip) {
  Artifact a = test::syntheticArtifact();
  std::string bytes = serialize(a);
  Artifact b = parse(bytes);
  // The writer fills in the version and the default program.
  EXPECT_EQ(b.dlcVersion, libraryVersion());
  ASSERT_EQ(b.program.size(), 2u);
  EXPECT_EQ(b.program[1], (Step{Step::Kind::Kernel, 1}));
  a.dlcVersion = b.dlcVersion;
  a.program = b.program;
  expectEqual(a, b);
  // Deterministic: the same artifact gives the same bytes.
  EXPECT_EQ(serialize(b), bytes);
}

TEST(Artifact, RoundTripWithLibraryCallsAndAnExplicitProgram) {
  Artifact a = test::syntheticArtifact();
  a.dlcVersion = "9.8.7";
  LibraryCall call;
  call.name = "l2_gemm";
  call.library = "cublaslt";
  call.op = "gemm_epilogue";
  call.layers = {"dense_1"};
  call.descriptor = R"({"epilogue":"relu","m":1,"n":10})";
  call.params = {{Region::Output, 0, 0, 40}, {Region::Weights, 0, 0, 40}};
  call.workspaceBytes = 1 << 20;
  a.libraryCalls = {call};
  a.program = {{Step::Kind::Kernel, 0},
               {Step::Kind::LibraryCall, 0},
               {Step::Kind::Kernel, 1}};
  expectEqual(a, parse(serialize(a)));
}

TEST(Artifact, StepCostsRoundTripAndAreOptional) {
  Artifact a = test::syntheticArtifact();
  a.dlcVersion = libraryVersion();
  // Without costs (as every artifact before the field): none written, none
  // read.
  std::string bytes = serialize(a);
  EXPECT_EQ(bytes.find("\"cost\""), std::string::npos);
  Artifact old = parse(bytes);
  EXPECT_FALSE(old.kernels[0].cost);
  EXPECT_FALSE(old.kernels[1].cost);

  a.kernels[0].cost = StepCost{20, 120};
  a.kernels[1].cost = StepCost{0, (uint64_t(1) << 40) + 3};
  LibraryCall call;
  call.name = "l2_gemm";
  call.library = "cublaslt";
  call.op = "gemm";
  call.descriptor = R"({"m":1})";
  call.params = {{Region::Output, 0, 0, 40}};
  call.cost = StepCost{5588480, 372000};
  a.libraryCalls = {call};
  a.program = {{Step::Kind::Kernel, 0},
               {Step::Kind::LibraryCall, 0},
               {Step::Kind::Kernel, 1}};
  bytes = serialize(a);
  Artifact b = parse(bytes);
  expectEqual(a, b);
  ASSERT_TRUE(b.libraryCalls[0].cost);
  EXPECT_EQ(b.libraryCalls[0].cost->flops, 5588480u);
  // The last key of its object, as docs/artifact.md says.
  EXPECT_NE(bytes.find("\"workspace_bytes\": 0,\n   \"cost\": {\n    "
                       "\"flops\": 5588480,\n    \"bytes\": 372000"),
            std::string::npos);
  EXPECT_EQ(serialize(b), bytes);

  // A malformed cost is a clean error naming its path.
  for (const char *bad : {R"("cost": {"flops": -1, "bytes": 0})",
                          R"("cost": {"flops": 1})", R"("cost": [1, 2])"}) {
    std::string manifest =
        test::manifestOf(serialize(test::syntheticArtifact()));
    const std::string key = "\"num_ins\"";
    manifest.insert(manifest.find(key), std::string(bad) + ", ");
    try {
      parse(test::withManifest(serialize(test::syntheticArtifact()), manifest));
      ADD_FAILURE() << bad;
    } catch (const FormatError &e) {
      EXPECT_NE(std::string(e.what()).find("manifest.kernels[0]"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Artifact, OmittedWeights) {
  Artifact a = test::syntheticArtifact();
  a.dlcVersion = libraryVersion();
  // k0 reads the 40 weight bytes; the region keeps its size, not its bytes.
  const uint64_t size = a.weights.size();
  a.weights.clear();
  a.omittedWeightsBytes = size;
  std::string bytes = serialize(a);
  EXPECT_NE(bytes.find("\"weights_omitted\": 40"), std::string::npos);
  Artifact b = parse(bytes);
  a.program = b.program; // the writer fills in the default program
  expectEqual(a, b);
  EXPECT_EQ(b.omittedWeightsBytes, 40u);
  EXPECT_EQ(weightRegionBytes(b), 40u);
  EXPECT_EQ(weightsReached(b), 40u);
  EXPECT_EQ(memoryUse(b).weights, 40u);
  EXPECT_THROW(checkMemoryLimit(b, 39), FormatError);
  // Without it, none written.
  EXPECT_EQ(serialize(test::syntheticArtifact()).find("weights_omitted"),
            std::string::npos);

  // A size the program does not read, or with weight bytes too: refused.
  a.omittedWeightsBytes = 1 << 20;
  try {
    serialize(a);
    ADD_FAILURE() << "no error";
  } catch (const FormatError &e) {
    EXPECT_STREQ(e.what(), "weights_omitted: 1048576 bytes, but the program "
                           "reads only 40");
  }
  a.omittedWeightsBytes = 40;
  a.weights = std::string(40, '\0');
  EXPECT_THROW(serialize(a), FormatError);
}

uint64_t manifestSize(const std::string &bytes) {
  uint64_t size = 0;
  std::memcpy(&size, &bytes[kHeaderBytes], 8);
  return size;
}

uint64_t dataStart(const std::string &bytes) {
  return alignUp(kHeaderBytes + 8 + manifestSize(bytes));
}

TEST(Artifact, BlobsAreAligned) {
  Artifact a = test::syntheticArtifact();
  std::string bytes = serialize(a);
  EXPECT_EQ(bytes.compare(0, 8, "DLCM\r\n\x1a\n"), 0);
  uint64_t data = dataStart(bytes);
  EXPECT_EQ(bytes.substr(data, a.weights.size()), a.weights);
  // The weights take 40 bytes; the first cubin starts at the next boundary.
  EXPECT_EQ(bytes.substr(data + kAlignment, a.kernels[0].cubins[0].size()),
            a.kernels[0].cubins[0]);
}

TEST(Artifact, AlignmentOfOffsets) {
  EXPECT_EQ(kAlignment, 256u);
  EXPECT_EQ(alignUp(0), 0u);
  EXPECT_EQ(alignUp(1), 256u);
  EXPECT_EQ(alignUp(256), 256u);
  EXPECT_EQ(alignUp(257), 512u);
  // A region starts aligned: an offset's alignment is its lowest set bit,
  // at most kAlignment.
  auto at = [](uint64_t offset) {
    return alignmentOf({Region::Arena, 0, offset, 4});
  };
  EXPECT_EQ(at(0), 256u);
  EXPECT_EQ(at(1), 1u);
  EXPECT_EQ(at(4), 4u);
  EXPECT_EQ(at(48), 16u);
  EXPECT_EQ(at(512), 256u);
  EXPECT_EQ(at(768), 256u);
  EXPECT_EQ(alignmentOf({Region::Input, 1, 0, 40}), 256u);
}

//===----------------------------------------------------------------------===//
// Corruption
//===----------------------------------------------------------------------===//

/// Parses and returns the error message, "" if the bytes parse.
std::string parseError(std::string_view bytes) {
  try {
    parse(bytes);
  } catch (const FormatError &e) {
    return e.what();
  }
  return "";
}

bool oneLine(const std::string &s) {
  return !s.empty() && s.find('\n') == std::string::npos;
}

TEST(Artifact, EveryTruncationIsACleanError) {
  std::string bytes = serialize(test::syntheticArtifact());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string error = parseError(std::string_view(bytes).substr(0, n));
    ASSERT_TRUE(oneLine(error)) << n << ": '" << error << "'";
    if (n >= 8) {
      ASSERT_NE(error.find("truncated"), std::string::npos)
          << n << ": " << error;
    }
  }
  EXPECT_EQ(parseError(bytes), "");
}

TEST(Artifact, RandomBitFlipsAreCleanErrors) {
  std::string bytes = serialize(test::syntheticArtifact());
  std::mt19937 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::string copy = bytes;
    size_t bit = rng() % (copy.size() * 8);
    copy[bit / 8] ^= char(1 << (bit % 8));
    std::string error = parseError(copy);
    ASSERT_TRUE(oneLine(error)) << "bit " << bit << ": '" << error << "'";
  }
}

TEST(Artifact, CorruptManifestsWithAValidChecksumAreCleanErrors) {
  // Past the checksum, the manifest parser and the range checks see bytes
  // that are well signed but wrong: they must fail cleanly, never crash.
  std::string bytes = serialize(test::syntheticArtifact());
  uint64_t manifestBytes = 0;
  std::memcpy(&manifestBytes, &bytes[kHeaderBytes], 8);
  std::mt19937 rng(7);
  int rejected = 0;
  for (int i = 0; i < 400; ++i) {
    std::string copy = bytes;
    size_t at = kHeaderBytes + 8 + rng() % manifestBytes;
    copy[at] = "0123456789{}[]\":,-e. x"[rng() % 22];
    resign(copy);
    std::string error = parseError(copy);
    if (!error.empty()) {
      ++rejected;
      ASSERT_TRUE(oneLine(error)) << error;
    }
  }
  EXPECT_GT(rejected, 200);
}

TEST(Artifact, HeaderErrors) {
  std::string bytes = serialize(test::syntheticArtifact());
  EXPECT_EQ(parseError("hello world, not an artifact at all"),
            "not a dlc artifact (bad magic)");
  std::string v2 = bytes;
  v2[8] = 2;
  EXPECT_EQ(parseError(v2), "artifact format version 2 is not supported (this "
                            "dlc reads version 1)");
  std::string longer = bytes + "x";
  EXPECT_NE(parseError(longer).find("corrupt artifact"), std::string::npos);
  std::string flipped = bytes;
  flipped[bytes.size() - 1] ^= 1;
  EXPECT_EQ(parseError(flipped), "checksum mismatch: the artifact is corrupt");
  std::string arch = bytes;
  arch[76] = 75; // sm_80 -> sm_75 in the header only
  EXPECT_EQ(parseError(arch), "manifest: archs differ from the header's");
}

std::string serializeError(const Artifact &a);

TEST(Artifact, ManifestEditsAreValidated) {
  std::string bytes = serialize(test::syntheticArtifact());
  std::string manifest = manifestOf(bytes);
  EXPECT_EQ(parseError(withManifest(bytes, manifest)), "");
  auto edited = [&](const std::string &pattern, const std::string &with) {
    return parseError(withManifest(
        bytes, std::regex_replace(manifest, std::regex(pattern), with,
                                  std::regex_constants::format_first_only)));
  };
  EXPECT_EQ(edited(R"("arena_bytes": 512)", R"("arena_bytes": 100)"),
            "manifest: kernels[0].params[2]: bytes [256, +40) outside the "
            "arena (100 bytes)");
  EXPECT_EQ(edited(R"("region": "arena")", R"("region": "heap")"),
            "manifest.kernels[0].params[0].region: unknown region 'heap'");
  EXPECT_EQ(edited(R"("dtype": "float32")", R"("dtype": "float8")"),
            "manifest.inputs[0].dtype: unknown dtype 'float8'");
  EXPECT_EQ(edited(R"("grid": \[\s*1)", R"("grid": [-1)"),
            "manifest.kernels[0].grid[0]: expected an integer in [0, "
            "4294967295]");
  EXPECT_EQ(edited(R"("num_ins": 2)", R"("num_ins": "2")"),
            "manifest.kernels[0].num_ins: expected an integer in [0, "
            "4294967295]");
  EXPECT_EQ(edited(R"("kernels")", R"("kernelz")"),
            "manifest: missing 'kernels'");
  EXPECT_EQ(edited(R"(^\{)", std::string(40, '[')),
            "manifest: nested deeper than 32");
  EXPECT_EQ(edited(R"(^\{)", "{{"), "manifest: not valid JSON");
  // Blobs must lie in the data section, aligned, and not overlap.
  EXPECT_EQ(edited(R"("weights": \{[^}]*\})",
                   R"("weights": {"offset": 1, "bytes": 4})"),
            "manifest.weights: offset 1 is not 256-byte aligned");
  EXPECT_NE(edited(R"("weights": \{[^}]*\})",
                   R"("weights": {"offset": 0, "bytes": 99999999})")
                .find("outside the data section"),
            std::string::npos);
}

TEST(Artifact, SizesNothingBacksAreBoundedByTheProgram) {
  // A well-signed manifest may declare an enormous output that the kernels
  // write 40 bytes of, or an arena far beyond what the program uses: both
  // refused by the reader, before a runtime allocates for them.
  std::string bytes = serialize(test::syntheticArtifact());
  std::string manifest = manifestOf(bytes);
  auto edited = [&](const std::string &pattern, const std::string &with) {
    return parseError(withManifest(
        bytes, std::regex_replace(manifest, std::regex(pattern), with,
                                  std::regex_constants::format_first_only)));
  };
  const std::string output =
      R"(("name": "probabilities",\s*"dtype": "float32",\s*"shape": )\[[^\]]*\])";
  EXPECT_EQ(edited(output, "$1[1, 1000000000]"),
            "manifest: outputs[0].shape: float32[1, 1000000000] is "
            "4000000000 bytes, but the program writes only 40 of them");
  EXPECT_EQ(edited(output, "$1[1024, 1024, 1024, 1024]"),
            "manifest: outputs[0].shape: float32[1024, 1024, 1024, 1024] is "
            "4398046511104 bytes, but the program writes only 40 of them");
  EXPECT_EQ(edited(output, "$1[1, 5]"),
            "manifest: kernels[1].params[1]: bytes [0, +40) outside the "
            "output (20 bytes)");
  EXPECT_EQ(edited(R"("arena_bytes": 512)", R"("arena_bytes": 1099511627776)"),
            "manifest: arena_bytes: 1099511627776 bytes, but the program "
            "uses only 296");

  // The writer holds the compiler to the same rule.
  Artifact a = test::syntheticArtifact();
  a.outputs[0].shape = {2, 10};
  EXPECT_EQ(serializeError(a), "outputs[0].shape: float32[2, 10] is 80 "
                               "bytes, but the program writes only 40 of "
                               "them");
  a = test::syntheticArtifact();
  a.kernels[1].params[1] = {Region::Arena, 0, 256, 40};
  EXPECT_EQ(serializeError(a), "outputs[0].shape: float32[1, 10] is 40 "
                               "bytes, but the program never writes it");
  a = test::syntheticArtifact();
  a.arenaBytes = 768;
  EXPECT_EQ(serializeError(a),
            "arena_bytes: 768 bytes, but the program uses only 296");
  // An output the runtime copies out of the arena is bounded by the arena.
  a = test::syntheticArtifact();
  a.kernels[1].params[1] = {Region::Arena, 0, 384, 40};
  a.outputs[0].arenaOffset = 384;
  EXPECT_EQ(serializeError(a), "");
}

TEST(Artifact, MemoryLimitNamesTheField) {
  Artifact a = test::syntheticArtifact();
  MemoryUse use = memoryUse(a);
  EXPECT_EQ(use.arena, 512u);
  EXPECT_EQ(use.weights, 40u);
  EXPECT_EQ(use.inputs, 256u); // one 40-byte input, staged 256-aligned
  EXPECT_EQ(use.outputs, 256u);
  EXPECT_EQ(use.workspace, 0u);
  EXPECT_EQ(use.total(), 1064u);
  auto limitError = [&](uint64_t limit) {
    try {
      checkMemoryLimit(a, limit, "DLC_MAX_MEMORY");
    } catch (const FormatError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(limitError(1064), "");
  EXPECT_EQ(limitError(1063),
            "a session needs 1064 bytes (arena 512, weights 40, inputs 256, "
            "outputs 256, workspace 0), more than the memory limit of 1063 "
            "bytes (DLC_MAX_MEMORY)");
  EXPECT_EQ(limitError(500), "arena_bytes: 512 bytes, more than the memory "
                             "limit of 500 bytes (DLC_MAX_MEMORY)");
  a.arenaBytes = 0;
  EXPECT_EQ(limitError(39), "weights: 40 bytes, more than the memory limit "
                            "of 39 bytes (DLC_MAX_MEMORY)");
  a.weights.clear();
  EXPECT_EQ(limitError(39), "inputs[0].shape: float32[1, 10] is 40 bytes, "
                            "more than the memory limit of 39 bytes "
                            "(DLC_MAX_MEMORY)");
  a.inputs.clear();
  a.libraryCalls.push_back({});
  a.libraryCalls[0].workspaceBytes = uint64_t(1) << 40;
  EXPECT_EQ(limitError(kDefaultMemoryLimit),
            "library_calls[0].workspace_bytes: 1099511627776 bytes, more "
            "than the memory limit of 68719476736 bytes (DLC_MAX_MEMORY)");
}

TEST(Artifact, OverlappingBlobsCannotMultiplyMemory) {
  // Every cubin pointing at the same large weight blob: more bytes than the
  // file holds, refused before anything is copied.
  Artifact a = test::syntheticArtifact();
  a.weights = std::string(4096, 'w');
  std::string bytes = serialize(a);
  std::string manifest =
      std::regex_replace(manifestOf(bytes), std::regex(R"("image": \{[^}]*\})"),
                         R"("image": {"offset": 0, "bytes": 4096})");
  std::string error = parseError(withManifest(bytes, manifest));
  EXPECT_NE(error.find("blobs overlap"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Validation (writer and reader)
//===----------------------------------------------------------------------===//

std::string serializeError(const Artifact &a) {
  try {
    serialize(a);
  } catch (const FormatError &e) {
    return e.what();
  }
  return "";
}

TEST(Artifact, WriterValidates) {
  Artifact a = test::syntheticArtifact();
  a.kernels[1].params[0].offset = 500;
  EXPECT_EQ(serializeError(a), "kernels[1].params[0]: bytes [500, +40) outside "
                               "the arena (512 bytes)");

  a = test::syntheticArtifact();
  a.kernels[0].cubins.pop_back();
  EXPECT_EQ(serializeError(a), "kernels[0]: 1 cubins and 2 resource records "
                               "for 2 archs");

  a = test::syntheticArtifact();
  a.kernels[0].params[1] = {Region::Input, 3, 0, 4};
  EXPECT_EQ(serializeError(a), "kernels[0].params[1]: input 3 does not exist "
                               "(the model has 1)");

  a = test::syntheticArtifact();
  a.archs = {90, 80};
  EXPECT_EQ(serializeError(a),
            "archs must be ascending sm numbers in [50, 1000)");

  a = test::syntheticArtifact();
  a.kernels[0].block = {32, 64, 1};
  EXPECT_EQ(serializeError(a), "kernels[0]: a block of 2048 threads");

  a = test::syntheticArtifact();
  a.inputs[0].shape = {1, -10};
  EXPECT_NE(serializeError(a).find("inputs[0]: invalid shape"),
            std::string::npos);

  a = test::syntheticArtifact();
  a.kernels[0].entry = "not an identifier";
  EXPECT_NE(serializeError(a).find("is not an identifier"), std::string::npos);

  a = test::syntheticArtifact();
  a.program = {{Step::Kind::LibraryCall, 0}};
  EXPECT_EQ(serializeError(a), "program[0]: library call 0 does not exist");
}

} // namespace

// weightsReached and the extents check walk library calls' buffers as they
// walk kernels' (forEachParam): a region only a library call reaches counts.
TEST(Artifact, LibraryCallBuffersCountAsKernelBuffers) {
  Artifact a = test::syntheticArtifact();
  a.dlcVersion = libraryVersion();
  a.arenaBytes = 768;
  a.kernels[0].params[1] = {Region::Weights, 0, 0, 8};
  EXPECT_EQ(serializeError(a),
            "arena_bytes: 768 bytes, but the program uses only 296");
  LibraryCall call;
  call.name = "l2_softmax";
  call.library = "cudnn";
  call.op = "softmax";
  call.descriptor = R"({"axis":1})";
  call.params = {{Region::Arena, 0, 512, 256}, {Region::Weights, 0, 8, 32}};
  a.libraryCalls = {call};
  a.program = {{Step::Kind::Kernel, 0},
               {Step::Kind::LibraryCall, 0},
               {Step::Kind::Kernel, 1}};
  Artifact b = parse(serialize(a));
  EXPECT_EQ(b.arenaBytes, 768u);
  EXPECT_EQ(weightsReached(b), 40u);
  b.libraryCalls.clear();
  EXPECT_EQ(weightsReached(b), 8u);
}
