//===- GemmHeuristic.cpp - tile sizes of the generated GEMMs --------------===//
//
// The rule documented in GemmHeuristic.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/GemmHeuristic.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace dlc::codegen {
namespace {

/// A CTA tile and its subdivision: the warp tile (WM x WN) for tensor cores,
/// the per-thread block (TM x TN) for SIMT.
struct TileShape {
  int bm, bn, sub1, sub2;
};

// Largest first (rule step 1).
constexpr TileShape kTensorCoreTiles[] = {
    {128, 128, 64, 32}, {128, 64, 64, 32}, {64, 128, 32, 64}, {64, 64, 32, 32},
    {64, 32, 32, 16},   {32, 64, 16, 32},  {32, 32, 16, 16},  {16, 64, 16, 16},
    {16, 32, 16, 16},   {16, 16, 16, 16}};
constexpr TileShape kSimtTiles[] = {
    {128, 128, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}, {64, 64, 4, 4},
    {64, 32, 4, 4},   {32, 64, 4, 4},  {32, 32, 4, 4},  {16, 64, 4, 4},
    {16, 32, 4, 4},   {16, 16, 4, 4}};

constexpr int kTensorCoreBK = 32;
constexpr int kMaxStages = 4;
constexpr int kMaxSlices = 16;
// At most 512 threads (128 registers each under __launch_bounds__(512, 1))
// for warp tiles of up to 16 accumulators per thread, 256 (255 registers)
// for larger ones: a 64x32 warp tile at 512 threads spills (sm_90).
constexpr int kMaxSlicedThreads = 512;
constexpr int kMaxSlicedThreadsLargeWarpTile = 256;
constexpr int kMinSliceKTiles = 4;
constexpr int kMaxStaticSharedBytes = 48 * 1024;
// Rule step 2b: K of at most 8 k-tiles (256 16-bit elements) keeps to tiles
// of at most 4 warps.
constexpr int64_t kShortKTiles = 8;
constexpr int kShortKMaxWarps = 4;
constexpr int kSimtBK = 8;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Rule step 2: the largest tile side allowed for a problem side.
int64_t tileLimit(int64_t dim) {
  int64_t limit = 16;
  while (limit < dim)
    limit *= 2;
  return limit;
}

template <size_t N>
std::vector<TileShape> fittingTiles(const TileShape (&tiles)[N], int64_t m,
                                    int64_t n) {
  std::vector<TileShape> result;
  for (const TileShape &tile : tiles)
    if (tile.bm <= tileLimit(m) && tile.bn <= tileLimit(n))
      result.push_back(tile);
  return result;
}

int tensorCoreStageBytes(int bm, int bn, int bk) { return (bm + bn) * bk * 2; }

/// Rule step 5: the K slices of a tensor-core tiling for an M x N x K GEMM
/// over `batch` grid z slices: 1 when the grid fills the SMs, else the most
/// (a power of two) that keeps kMinSliceKTiles k-tiles per slice, the
/// threads within the cap of the warp tile and the stages within the arch's
/// shared memory.
int chooseSlices(GemmTiling t, int64_t m, int64_t n, int64_t k, int64_t batch,
                 int smVersion) {
  const int64_t ctas = ceilDiv(m, t.bm) * ceilDiv(n, t.bn) * batch;
  if (ctas >= smCount(smVersion))
    return 1;
  const int64_t kTiles = ceilDiv(k, t.bk);
  t.slices = 1;
  const int threads = t.threads();
  const int accumulators = t.tensorCores ? t.wm * t.wn / 32 : t.tm * t.tn;
  const int maxThreads =
      accumulators <= 16 ? kMaxSlicedThreads : kMaxSlicedThreadsLargeWarpTile;
  // SIMT tiles are static shared memory: 48 KiB at most.
  const int maxShared =
      t.tensorCores ? maxSharedBytesPerBlock(smVersion) : kMaxStaticSharedBytes;
  int slices = 1;
  auto fits = [&](int s) {
    GemmTiling sliced = t;
    sliced.slices = s;
    return s <= kMaxSlices && s * threads <= maxThreads &&
           s * kMinSliceKTiles <= kTiles && sliced.sharedBytes() <= maxShared;
  };
  while (fits(slices * 2))
    slices *= 2;
  return slices;
}

GemmTiling makeTiling(const TileShape &tile, bool tensorCores, int bk,
                      int stages) {
  GemmTiling tiling;
  tiling.tensorCores = tensorCores;
  tiling.bm = tile.bm;
  tiling.bn = tile.bn;
  tiling.bk = bk;
  if (tensorCores) {
    tiling.wm = tile.sub1;
    tiling.wn = tile.sub2;
    tiling.stages = stages;
  } else {
    tiling.tm = tile.sub1;
    tiling.tn = tile.sub2;
  }
  return tiling;
}

/// Rule step 3: clocks per unit of K on the busiest SM.
double estimateClocks(const TileShape &tile, bool tensorCores, int64_t m,
                      int64_t n, int smVersion) {
  const int64_t ctas = ceilDiv(m, tile.bm) * ceilDiv(n, tile.bn);
  const double perSm = static_cast<double>(ceilDiv(ctas, smCount(smVersion)));
  const int units = (tile.bm / tile.sub1) * (tile.bn / tile.sub2);
  const int threads = tensorCores ? units * 32 : units;
  const double warps = static_cast<double>(ceilDiv(threads, 32));
  // Sub-partitions (schedulers) the CTAs of the SM keep busy.
  const double schedulers = std::min(4.0, perSm * warps);
  double compute, global, shared;
  if (tensorCores) {
    compute = tile.bm * tile.bn / 256.0 / schedulers;
    global = (tile.bm + tile.bn) * 2 / 32.0;
    shared = warps * (tile.sub1 + tile.sub2) * 2 / 128.0;
  } else {
    // Issue slots of a warp per k: TM*TN FMAs (2 clocks: 16 lanes), the
    // float4 shared reads, and its share of the slice loads (~4 each).
    const double issue = 2.0 * tile.sub1 * tile.sub2 +
                         (tile.sub1 + tile.sub2) / 4.0 +
                         4.0 * (tile.bm + tile.bn) / threads;
    compute = warps * issue / schedulers;
    global = (tile.bm + tile.bn) * 4 / 32.0;
    shared = threads * (tile.sub1 + tile.sub2) * 4 / 128.0;
  }
  return perSm * std::max({compute, global, shared});
}

/// Rule step 3: the tile for the shape among those of step 2.
TileShape pickTile(const std::vector<TileShape> &tiles, bool tensorCores,
                   int64_t m, int64_t n, int smVersion) {
  assert(!tiles.empty() && "the 16x16 tile always fits");
  auto padded = [&](const TileShape &t) {
    return ceilDiv(m, t.bm) * t.bm * ceilDiv(n, t.bn) * t.bn;
  };
  TileShape best = tiles.front();
  double bestClocks = estimateClocks(best, tensorCores, m, n, smVersion);
  for (const TileShape &tile : tiles) {
    const double clocks = estimateClocks(tile, tensorCores, m, n, smVersion);
    // Equal estimates: keep the larger tile (listed first), unless this one
    // pads less.
    const bool tie = std::abs(clocks - bestClocks) <= 1e-9 * bestClocks;
    if ((!tie && clocks < bestClocks) ||
        (tie && tile.bm * tile.bn == best.bm * best.bn &&
         padded(tile) < padded(best))) {
      best = tile;
      bestClocks = clocks;
    }
  }
  return best;
}

} // namespace

int GemmTiling::threads() const {
  return (tensorCores ? (bm / wm) * (bn / wn) * 32 : (bm / tm) * (bn / tn)) *
         slices;
}

int GemmTiling::dynamicSharedBytes() const {
  // dlc_gemm_tc_smem_bytes: every slice's stages, or the accumulators the
  // slices add at the end.
  return tensorCores
             ? std::max(slices * stages * tensorCoreStageBytes(bm, bn, bk),
                        (slices - 1) * bm * bn * 4)
             : 0;
}

int GemmTiling::sharedBytes() const {
  // dlc_gemm_simt_smem_bytes: two buffers of A (rows padded by 4) and B per
  // slice, or the accumulators the slices add at the end.
  return tensorCores ? dynamicSharedBytes()
                     : std::max(slices * 2 * bk * ((bm + 4) + bn) * 4,
                                (slices - 1) * bm * bn * 4);
}

std::array<uint32_t, 3> GemmTiling::grid(int64_t m, int64_t n) const {
  // N tiles on x; M tiles on y, which CUDA bounds by 65,535: more M tiles (a
  // conv at batch 256 on 112x112 has 3.2M output pixels) are split into z
  // slices of at most that many, and the templates index tile y + Y * z.
  constexpr int64_t kMaxGridY = 65535;
  int64_t tilesM = ceilDiv(m, bm);
  int64_t slices = ceilDiv(tilesM, kMaxGridY);
  return {static_cast<uint32_t>(ceilDiv(n, bn)),
          static_cast<uint32_t>(ceilDiv(tilesM, slices)),
          static_cast<uint32_t>(slices)};
}

std::string GemmTiling::templateArgs() const {
  auto s = [](int v) { return std::to_string(v); };
  std::string args = s(bm) + ", " + s(bn) + ", " + s(bk) + ", ";
  const std::string sliced = slices > 1 ? ", " + s(slices) : "";
  if (tensorCores)
    return args + s(wm) + ", " + s(wn) + ", " + s(stages) + sliced;
  return args + s(tm) + ", " + s(tn) + sliced;
}

std::string GemmTiling::str() const {
  auto s = [](int v) { return std::to_string(v); };
  std::string text = "BM=" + s(bm) + " BN=" + s(bn) + " BK=" + s(bk);
  const std::string sliced = slices > 1 ? " slices=" + s(slices) : "";
  if (tensorCores)
    return text + " WM=" + s(wm) + " WN=" + s(wn) + " stages=" + s(stages) +
           sliced;
  return text + " TM=" + s(tm) + " TN=" + s(tn) + sliced;
}

bool GemmTiling::operator==(const GemmTiling &other) const {
  return tensorCores == other.tensorCores && bm == other.bm && bn == other.bn &&
         bk == other.bk && wm == other.wm && wn == other.wn &&
         stages == other.stages && slices == other.slices && tm == other.tm &&
         tn == other.tn;
}

int smCount(int smVersion) { return smVersion >= 90 ? 132 : 108; }

int maxSharedBytesPerBlock(int smVersion) {
  switch (smVersion) {
  case 80:
  case 87:
    return 163 * 1024;
  case 90:
  case 100:
  case 103:
    return 227 * 1024;
  default: // sm_86, sm_89, sm_120
    return 99 * 1024;
  }
}

GemmTiling chooseTiling(int64_t m, int64_t n, int64_t k, int smVersion,
                        bool tensorCores, int64_t batch) {
  assert(m > 0 && n > 0 && k > 0 && "empty GEMM");
  if (!tensorCores) {
    GemmTiling tiling = makeTiling(
        pickTile(fittingTiles(kSimtTiles, m, n), false, m, n, smVersion), false,
        kSimtBK, 0);
    tiling.slices = chooseSlices(tiling, m, n, k, batch, smVersion);
    return tiling;
  }
  std::vector<TileShape> tiles = fittingTiles(kTensorCoreTiles, m, n);
  // Rule step 2b: a short K keeps to tiles of at most 4 warps.
  if (ceilDiv(k, kTensorCoreBK) <= kShortKTiles)
    tiles.erase(std::remove_if(tiles.begin(), tiles.end(),
                               [](const TileShape &t) {
                                 return (t.bm / t.sub1) * (t.bn / t.sub2) >
                                        kShortKMaxWarps;
                               }),
                tiles.end());
  const TileShape tile = pickTile(tiles, true, m, n, smVersion);
  // Rule step 4.
  const int stageBytes = tensorCoreStageBytes(tile.bm, tile.bn, kTensorCoreBK);
  int stages = static_cast<int>(
      std::clamp<int64_t>(ceilDiv(k, kTensorCoreBK), 2, kMaxStages));
  while (stages > 2 &&
         stages * stageBytes > maxSharedBytesPerBlock(smVersion) / 2)
    --stages;
  GemmTiling tiling = makeTiling(tile, true, kTensorCoreBK, stages);
  // Rule step 5 (also below for SIMT).
  tiling.slices = chooseSlices(tiling, m, n, k, batch, smVersion);
  return tiling;
}

std::array<uint32_t, 3> GemvTiling::grid(int64_t n) const {
  return {static_cast<uint32_t>(ceilDiv(n, columns())), 1, 1};
}

std::string GemvTiling::templateArgs() const {
  return std::string(kMajor ? "true" : "false") + ", " + std::to_string(cols) +
         ", " + std::to_string(split);
}

std::string GemvTiling::str() const {
  return std::string("GEMV B=") + (kMajor ? "k-major" : "n-major") +
         " COLS=" + std::to_string(columns()) +
         " SPLIT=" + std::to_string(split);
}

GemvTiling chooseGemv(int64_t m, int64_t n, int64_t k, bool kMajor,
                      int smVersion) {
  assert(m > 0 && m <= kGemvMaxRows && n > 0 && k > 0 && "not a GEMV");
  (void)m;
  GemvTiling t;
  t.kMajor = kMajor;
  const int64_t sms = smCount(smVersion);
  if (kMajor) {
    // At least 256 elements of K per warp (8 loads per lane), N x SPLIT
    // warps within 32 per SM: the H200 measured the 1000-class heads with 8
    // warps per SM (SPLIT 1) at 750-930 GB/s, too few loads in flight.
    while (t.split < 8 && k >= t.split * 2 * 256 && n * t.split * 2 <= 32 * sms)
      t.split *= 2;
    t.cols = 8 / t.split;
  } else {
    // At least 64 elements of K per warp, the CTAs within 4 per SM.
    t.cols = 1;
    while (t.split < 16 && k >= t.split * 2 * 64 &&
           ceilDiv(n, 32) * t.split * 2 <= 4 * sms)
      t.split *= 2;
  }
  return t;
}

GemmTiling float8Tiling(GemmTiling tiling) {
  if (tiling.tensorCores && tiling.bk == 64 && tiling.wm * tiling.wn >= 2048 &&
      tiling.threads() <= 128)
    tiling.bk = 32;
  return tiling;
}

std::vector<GemmTiling> tilingCandidates(int64_t m, int64_t n, int64_t k,
                                         int smVersion, bool tensorCores) {
  std::vector<GemmTiling> result{chooseTiling(m, n, k, smVersion, tensorCores)};
  auto add = [&](const GemmTiling &tiling) {
    if (tiling.sharedBytes() <= maxSharedBytesPerBlock(smVersion) &&
        std::find(result.begin(), result.end(), tiling) == result.end())
      result.push_back(tiling);
  };
  if (tensorCores) {
    for (const TileShape &tile : fittingTiles(kTensorCoreTiles, m, n)) {
      for (auto [bk, stages] : {std::pair{32, 3}, {32, 4}, {64, 3}}) {
        GemmTiling t = makeTiling(tile, true, bk, stages);
        add(t);
        // The same with the rule's K slices for it, when it has some.
        t.slices = chooseSlices(t, m, n, k, 1, smVersion);
        if (t.slices > 1)
          add(t);
      }
    }
  } else {
    for (const TileShape &tile : fittingTiles(kSimtTiles, m, n)) {
      for (int bk : {8, 16}) {
        GemmTiling t = makeTiling(tile, false, bk, 0);
        add(t);
        t.slices = chooseSlices(t, m, n, k, 1, smVersion);
        if (t.slices > 1)
          add(t);
      }
    }
  }
  return result;
}

} // namespace dlc::codegen
