//===- TuningCache.h - measured GEMM tilings per (arch, shape) --*- C++ -*-===//
//
// The autotuner's results (compiler/Autotune.h): for one GEMM problem on one
// arch, the fastest tiling and the time of every candidate, kept in a JSON
// file that later compilations read instead of asking the heuristic
// (GemmHeuristic.h). Plain C++ (no MLIR).
//
// The file (default: $DLC_CACHE_DIR/autotune.json, beside the NVRTC cache,
// see defaultCacheDir()):
//
//   {"format": "dlc-tuning-cache", "version": 1,
//    "entries": {
//      "sm_90 tc M=6272 N=64 K=72 conv f16*f16->f16 in=8x28x28x8 ...": {
//        "tiling": {"bm": 64, "bn": 64, "bk": 32, "wm": 32, "wn": 32,
//                   "stages": 3},
//        "device": "NVIDIA H100 80GB HBM3",
//        "candidates": [{"tiling": {...}, "us": 10.25},
//                       {"tiling": {...}, "skipped": "spills 24 bytes"}]}}}
//
// An entry's key is TuningKey::str(): the arch, the template (tc or simt),
// M, N, K and GemmProblem::signature. SIMT tilings have "tm" and "tn" in
// place of "wm", "wn" and "stages"; a tiling with K slices has
// "slices" (absent: 1). An entry whose key does not parse, whose
// tiling is not one of tilingCandidates() for its key, or that is malformed,
// is ignored with a warning; a file that is not a tuning cache is ignored
// with a warning when read and is never overwritten.
//
// An entry holds no code, only the choice of one of the candidate tilings
// that dlc generates and checks itself, so a corrupt or altered entry can
// make a kernel slower, never wrong; it carries no hash (docs/security.md).
//
// Saving merges: under an exclusive lock on FILE.lock, the file is read
// again, the entries this cache measured replace those of the same key,
// every other entry stays as it is, and the result is written to a
// temporary file renamed over FILE, so a reader sees the old file or the new
// one, never a part, and two processes tuning at once keep both's entries.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_TUNINGCACHE_H
#define DLC_COMPILER_CODEGEN_CUDA_TUNINGCACHE_H

#include "compiler/codegen/cuda/GemmHeuristic.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dlc::codegen {

/// What a tuned tiling is for: a problem on an arch.
struct TuningKey {
  int arch = 0; ///< 90 for sm_90
  GemmProblem problem;

  /// "sm_90 tc M=6272 N=64 K=72 conv f16*f16->f16 in=...": one line, the
  /// same for equal keys.
  std::string str() const;
  /// The key of a str() text; nothing when it is not one.
  static std::optional<TuningKey> parse(const std::string &text);
};

/// One candidate tiling as the autotuner measured it.
struct CandidateTime {
  GemmTiling tiling;
  double microseconds = -1; ///< < 0 when not measured
  std::string skipped;      ///< why not ("spills 24 bytes"), or ""
};

struct TuningEntry {
  GemmTiling tiling; ///< the fastest candidate
  std::vector<CandidateTime> candidates;
  std::string device; ///< the GPU's name
};

class TuningCache {
public:
  /// Receives each warning, one line: "dlc: warning: FILE: ...".
  using Warn = std::function<void(const std::string &)>;

  /// The valid entries of the file at `path`: none when it does not exist
  /// (or `path` is ""). Throws UserError when it exists and cannot be read.
  static TuningCache load(const std::string &path, const Warn &warn);

  /// The entry of `key`, or null.
  const TuningEntry *find(const TuningKey &key) const;
  /// Adds or replaces an entry; save() writes the entries added this way.
  /// `entry.tiling` must be one of tilingCandidates() for the key.
  void insert(const TuningKey &key, TuningEntry entry);
  size_t size() const { return entries_.size(); }

  /// Merges the inserted entries into the file at `path` (see the file
  /// comment), creating its folder (mode 0700) when missing. Throws
  /// UserError when the file exists and is not a tuning cache, or cannot be
  /// written.
  void save(const std::string &path) const;

private:
  std::map<std::string, TuningEntry> entries_;
  std::set<std::string> inserted_;
};

/// defaultCacheDir() + "/autotune.json", or "" when there is no cache folder.
std::string defaultTuningCachePath();

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_TUNINGCACHE_H
