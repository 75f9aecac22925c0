//===- TuningCacheTest.cpp - the autotuner's cache file ---------*- C++ -*-===//
//
// compiler/codegen/cuda/TuningCache.h without a GPU: keys, the JSON round
// trip, merging writers, atomic replacement, and the entries that loading
// ignores with a warning.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/TuningCache.h"
#include "support/Error.h"
#include "support/File.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

using namespace dlc;
using namespace dlc::codegen;
namespace fs = std::filesystem;

namespace {

TuningKey key(int arch, bool tc, int64_t m, int64_t n, int64_t k,
              std::string signature = "gemm f16*f16->f16 rhs=NK") {
  TuningKey key;
  key.arch = arch;
  key.problem = {m, n, k, tc, std::move(signature)};
  return key;
}

/// An entry choosing candidate `which` of the key's shape, with a time for
/// every candidate.
TuningEntry entry(const TuningKey &k, size_t which) {
  const GemmProblem &p = k.problem;
  std::vector<GemmTiling> all =
      tilingCandidates(p.m, p.n, p.k, k.arch, p.tensorCores);
  TuningEntry e;
  e.tiling = all.at(which);
  e.device = "Test GPU";
  for (size_t i = 0; i < all.size(); ++i) {
    CandidateTime t;
    t.tiling = all[i];
    if (i == 1 && i != which)
      t.skipped = "spills 8 bytes";
    else
      t.microseconds = i == which ? 1.5 : 10.0 + double(i) / 8;
    e.candidates.push_back(t);
  }
  return e;
}

class TuningCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "dlc-tuning-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(pattern.data()));
    dir = pattern;
    path = dir + "/sub/autotune.json";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  TuningCache load() {
    warnings.clear();
    return TuningCache::load(
        path, [&](const std::string &line) { warnings.push_back(line); });
  }

  /// The files of the cache's folder other than the cache and its lock.
  std::vector<std::string> strayFiles() const {
    std::vector<std::string> stray;
    for (const auto &f : fs::directory_iterator(parentDir(path))) {
      std::string name = f.path().filename().string();
      if (name != "autotune.json" && name != "autotune.json.lock")
        stray.push_back(name);
    }
    return stray;
  }

  std::string dir, path;
  std::vector<std::string> warnings;
};

TEST(TuningKeyTest, DeterministicAndParsedBack) {
  TuningKey a = key(90, true, 6272, 64, 72,
                    "conv f16*f16->f16 in=8x28x28x8 kernel=3x3 strides=1,1 "
                    "dilations=1,1 pads=1,1,1,1 filter=ohwi");
  EXPECT_EQ(a.str(), "sm_90 tc M=6272 N=64 K=72 conv f16*f16->f16 "
                     "in=8x28x28x8 kernel=3x3 strides=1,1 dilations=1,1 "
                     "pads=1,1,1,1 filter=ohwi");
  EXPECT_EQ(a.str(), key(90, true, 6272, 64, 72, a.problem.signature).str());
  std::optional<TuningKey> back = TuningKey::parse(a.str());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->arch, 90);
  EXPECT_EQ(back->problem, a.problem);

  // Every field tells keys apart.
  EXPECT_NE(a.str(), key(80, true, 6272, 64, 72, a.problem.signature).str());
  EXPECT_NE(a.str(), key(90, false, 6272, 64, 72, a.problem.signature).str());
  EXPECT_NE(a.str(), key(90, true, 6272, 64, 80, a.problem.signature).str());
  EXPECT_NE(a.str(), key(90, true, 6272, 64, 72, "gemm").str());

  std::optional<TuningKey> simt = TuningKey::parse("sm_80 simt M=1 N=2 K=3");
  ASSERT_TRUE(simt);
  EXPECT_FALSE(simt->problem.tensorCores);
  EXPECT_EQ(simt->problem.signature, "");

  for (const char *bad :
       {"", "sm_90", "sm_90 tc M=1 N=2", "sm_90 wmma M=1 N=2 K=3",
        "sm_90 tc M=0 N=2 K=3", "sm_90 tc M=07 N=2 K=3",
        "sm_90 tc M=1 N=2 K=3 ", "sm_90  tc M=1 N=2 K=3",
        "sm_90 tc M=4294967296 N=2 K=3", "sm_90 tc N=2 M=1 K=3",
        "sm_9 tc M=1 N=2 K=3"})
    EXPECT_FALSE(TuningKey::parse(bad)) << bad;
}

TEST_F(TuningCacheTest, MissingFileIsEmpty) {
  TuningCache cache = load();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(TuningCache::load("", nullptr).size(), 0u);
}

TEST_F(TuningCacheTest, RoundTrip) {
  TuningKey tc = key(90, true, 4096, 256, 512);
  TuningKey simt = key(80, false, 1, 64, 1600, "gemm f32*f32->f32 rhs=KN");
  // A batch-1 dense layer: the rule's tiling has K slices.
  TuningKey sliced = key(90, true, 1, 256, 25088);
  TuningCache cache;
  cache.insert(tc, entry(tc, 2));
  cache.insert(simt, entry(simt, 3));
  cache.insert(sliced, entry(sliced, 0));
  ASSERT_EQ(cache.find(sliced)->tiling.slices, 16);
  cache.save(path); // creates the folder
  EXPECT_TRUE(strayFiles().empty());

  TuningCache back = load();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(back.size(), 3u);
  for (const TuningKey &k : {tc, simt, sliced}) {
    const TuningEntry *got = back.find(k);
    ASSERT_TRUE(got) << k.str();
    const TuningEntry want = *cache.find(k);
    EXPECT_EQ(got->tiling, want.tiling);
    EXPECT_EQ(got->device, "Test GPU");
    ASSERT_EQ(got->candidates.size(), want.candidates.size());
    for (size_t i = 0; i < want.candidates.size(); ++i) {
      EXPECT_EQ(got->candidates[i].tiling, want.candidates[i].tiling);
      EXPECT_DOUBLE_EQ(got->candidates[i].microseconds,
                       want.candidates[i].microseconds);
      EXPECT_EQ(got->candidates[i].skipped, want.candidates[i].skipped);
    }
  }
  EXPECT_FALSE(back.find(key(80, true, 4096, 256, 512)));

  // The file is the documented JSON.
  std::string text = readFile(path);
  EXPECT_NE(text.find("\"format\": \"dlc-tuning-cache\""), std::string::npos);
  EXPECT_NE(text.find("\"" + tc.str() + "\""), std::string::npos);
  EXPECT_NE(text.find("\"stages\""), std::string::npos);
  EXPECT_NE(text.find("\"tm\""), std::string::npos);
  EXPECT_NE(text.find("\"slices\": 16"), std::string::npos);
  EXPECT_NE(text.find("\"us\": 1.5"), std::string::npos);
  EXPECT_NE(text.find("\"skipped\": \"spills 8 bytes\""), std::string::npos);
}

TEST_F(TuningCacheTest, TwoWritersMerge) {
  TuningKey k1 = key(90, true, 4096, 256, 512);
  TuningKey k2 = key(90, true, 128, 128, 64);
  // Both start from the same (empty) file.
  TuningCache first = load(), second = load();
  first.insert(k1, entry(k1, 1));
  second.insert(k2, entry(k2, 2));
  first.save(path);
  second.save(path);
  TuningCache merged = load();
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged.find(k1)->tiling, entry(k1, 1).tiling);
  EXPECT_EQ(merged.find(k2)->tiling, entry(k2, 2).tiling);

  // A later measurement of a key replaces it; the others stay. Entries read
  // but not measured again are not written back over newer ones.
  TuningCache third = load();
  TuningCache fourth = load();
  third.insert(k1, entry(k1, 3));
  third.save(path);
  fourth.insert(k2, entry(k2, 0));
  fourth.save(path);
  merged = load();
  EXPECT_EQ(merged.find(k1)->tiling, entry(k1, 3).tiling);
  EXPECT_EQ(merged.find(k2)->tiling, entry(k2, 0).tiling);
}

TEST_F(TuningCacheTest, ConcurrentWritersKeepEveryEntry) {
  constexpr int kWriters = 8;
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i)
    writers.emplace_back([&, i] {
      TuningCache cache = TuningCache::load(path, nullptr);
      TuningKey k = key(80, false, 64 + i, 64, 64, "gemm f32*f32->f32 rhs=KN");
      cache.insert(k, entry(k, 0));
      cache.save(path);
    });
  for (std::thread &t : writers)
    t.join();
  EXPECT_EQ(load().size(), size_t(kWriters));
  EXPECT_TRUE(warnings.empty());
}

TEST_F(TuningCacheTest, ReadersNeverSeeAPartialFile) {
  TuningKey first = key(90, true, 4096, 256, 512);
  TuningCache seed;
  seed.insert(first, entry(first, 0));
  seed.save(path);

  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad{0};
  std::thread reader([&] {
    while (!done) {
      size_t n =
          TuningCache::load(path, [&](const std::string &) { ++bad; }).size();
      if (n == 0)
        ++bad;
      ++reads;
    }
  });
  for (int i = 0; i < 40; ++i) {
    TuningCache cache;
    TuningKey k = key(90, true, 16 * (i + 1), 512, 1024);
    cache.insert(k, entry(k, size_t(i % 3)));
    cache.save(path);
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(load().size(), 41u);
  EXPECT_TRUE(strayFiles().empty());
}

TEST_F(TuningCacheTest, NeverOverwritesAnotherFile) {
  fs::create_directories(parentDir(path));
  writeFileAtomic(path, "{\"not\": \"a cache\"}\n");
  TuningCache cache = load();
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "dlc: warning: " + path +
                             ": not a dlc tuning cache (no \"format\": "
                             "\"dlc-tuning-cache\"); ignored");
  TuningKey k = key(90, true, 4096, 256, 512);
  cache.insert(k, entry(k, 0));
  try {
    cache.save(path);
    FAIL() << "saved over another file";
  } catch (const UserError &e) {
    EXPECT_EQ(e.file(), path);
  }
  EXPECT_EQ(readFile(path), "{\"not\": \"a cache\"}\n");
  EXPECT_TRUE(strayFiles().empty());

  writeFileAtomic(path, "{\"format\": \"dlc-tuning-cache\", \"version\": 2, "
                        "\"entries\": {}}");
  EXPECT_EQ(load().size(), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("another version"), std::string::npos);

  writeFileAtomic(path, "{\"format\": ");
  EXPECT_EQ(load().size(), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not valid JSON"), std::string::npos);
}

TEST_F(TuningCacheTest, InvalidEntriesAreIgnoredWithAWarning) {
  TuningKey good = key(90, true, 4096, 256, 512);
  // A tiling of the shape's template that tilingCandidates() does not list
  // for it: a tile larger than the problem rounded up (rule step 2).
  TuningKey small = key(90, true, 16, 16, 64);
  TuningKey simt = key(80, false, 1, 64, 1600, "gemm f32*f32->f32 rhs=KN");
  const std::string valid =
      R"({"tiling": {"bm": 128, "bn": 128, "bk": 32, "wm": 64, "wn": 32,
                     "stages": 4}})";
  fs::create_directories(parentDir(path));
  writeFileAtomic(path, R"({"format": "dlc-tuning-cache", "version": 1,
    "entries": {
      ")" + good.str() + R"(": )" +
                            valid + R"(,
      ")" + small.str() + R"(": )" +
                            valid + R"(,
      ")" + simt.str() + R"(": )" +
                            valid + R"(,
      "sm_90 tc M=1 N=2": )" +
                            valid + R"(,
      ")" + key(90, true, 64, 64, 64).str() +
                            R"(": {"tiling": {"bm": 64}},
      ")" + key(90, true, 32, 32, 64).str() +
                            R"(": [1, 2]
    }})");
  TuningCache cache = load();
  ASSERT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.find(good));
  EXPECT_EQ(cache.find(good)->tiling.str(),
            "BM=128 BN=128 BK=32 WM=64 WN=32 stages=4");
  EXPECT_TRUE(cache.find(good)->candidates.empty());
  ASSERT_EQ(warnings.size(), 5u);
  const std::string prefix = "dlc: warning: " + path + ": tuning cache entry '";
  // Entries come in key order.
  EXPECT_EQ(warnings[0], prefix + "sm_80 simt M=1 N=64 K=1600 gemm "
                                  "f32*f32->f32 rhs=KN': no \"tiling\" of "
                                  "the simt template; ignored");
  EXPECT_EQ(warnings[1], prefix + "sm_90 tc M=1 N=2': not a tuning key; "
                                  "ignored");
  EXPECT_EQ(warnings[2], prefix + small.str() +
                             "': tiling BM=128 BN=128 BK=32 WM=64 WN=32 "
                             "stages=4 is not a candidate for this shape; "
                             "ignored");
  for (const std::string &w : warnings)
    EXPECT_EQ(w.rfind(prefix, 0), 0u) << w;

  // Saving keeps the entries this dlc ignores, as they were.
  TuningKey other = key(90, true, 2048, 2048, 2048);
  cache.insert(other, entry(other, 1));
  cache.save(path);
  std::string text = readFile(path);
  EXPECT_NE(text.find("\"" + small.str() + "\""), std::string::npos);
  EXPECT_NE(text.find("\"sm_90 tc M=1 N=2\""), std::string::npos);
  EXPECT_EQ(load().size(), 2u);
}

TEST(TuningCachePath, BesideTheNvrtcCache) {
  const char *old = std::getenv("DLC_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("DLC_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(defaultTuningCachePath(), "/some/where/autotune.json");
  if (old)
    ::setenv("DLC_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("DLC_CACHE_DIR");
}

} // namespace
