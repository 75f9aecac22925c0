//===- TuningCache.cpp - measured GEMM tilings per (arch, shape) ----------===//
//
// The JSON file of TuningCache.h, read and merged with nlohmann::json.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/TuningCache.h"

#include "compiler/codegen/cuda/Nvrtc.h"
#include "support/Error.h"
#include "support/File.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fcntl.h>
#include <filesystem>
#include <regex>
#include <sys/file.h>
#include <unistd.h>

using namespace dlc;
using namespace dlc::codegen;
using Json = nlohmann::json;

namespace {

constexpr const char *kFormat = "dlc-tuning-cache";
constexpr int kVersion = 1;

Json tilingToJson(const GemmTiling &t) {
  Json j = {{"bm", t.bm}, {"bn", t.bn}, {"bk", t.bk}};
  if (t.tensorCores) {
    j["wm"] = t.wm;
    j["wn"] = t.wn;
    j["stages"] = t.stages;
  } else {
    j["tm"] = t.tm;
    j["tn"] = t.tn;
  }
  if (t.slices > 1)
    j["slices"] = t.slices;
  return j;
}

/// The tiling of a JSON object, for the template of `tensorCores`.
std::optional<GemmTiling> tilingFromJson(const Json &j, bool tensorCores) {
  if (!j.is_object())
    return std::nullopt;
  auto field = [&](const char *name, int &out) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer())
      return false;
    int64_t v = it->get<int64_t>();
    if (v <= 0 || v > 1024)
      return false;
    out = int(v);
    return true;
  };
  GemmTiling t;
  t.tensorCores = tensorCores;
  bool ok = field("bm", t.bm) && field("bn", t.bn) && field("bk", t.bk);
  if (tensorCores)
    ok = ok && field("wm", t.wm) && field("wn", t.wn) &&
         field("stages", t.stages);
  else
    ok = ok && field("tm", t.tm) && field("tn", t.tn);
  ok = ok && (!j.contains("slices") || field("slices", t.slices));
  if (!ok)
    return std::nullopt;
  return t;
}

Json entryToJson(const TuningEntry &e) {
  Json candidates = Json::array();
  for (const CandidateTime &c : e.candidates) {
    Json j = {{"tiling", tilingToJson(c.tiling)}};
    if (c.microseconds >= 0)
      j["us"] = std::round(c.microseconds * 1000) / 1000;
    if (!c.skipped.empty())
      j["skipped"] = c.skipped;
    candidates.push_back(std::move(j));
  }
  return {{"tiling", tilingToJson(e.tiling)},
          {"device", e.device},
          {"candidates", std::move(candidates)}};
}

/// An entry of the file, or the reason it is not a valid one.
std::optional<TuningEntry> entryFromJson(const TuningKey &key, const Json &j,
                                         std::string &why) {
  const bool tc = key.problem.tensorCores;
  std::optional<GemmTiling> tiling;
  if (j.is_object() && j.contains("tiling"))
    tiling = tilingFromJson(j["tiling"], tc);
  if (!tiling) {
    why = std::string("no \"tiling\" of the ") + (tc ? "tc" : "simt") +
          " template";
    return std::nullopt;
  }
  const GemmProblem &p = key.problem;
  std::vector<GemmTiling> allowed =
      tilingCandidates(p.m, p.n, p.k, key.arch, tc);
  if (std::find(allowed.begin(), allowed.end(), *tiling) == allowed.end()) {
    why = "tiling " + tiling->str() + " is not a candidate for this shape";
    return std::nullopt;
  }
  TuningEntry e;
  e.tiling = *tiling;
  if (auto it = j.find("device"); it != j.end() && it->is_string())
    e.device = it->get<std::string>();
  // The candidates' times are a record for people: keep the readable ones.
  if (auto it = j.find("candidates"); it != j.end() && it->is_array()) {
    for (const Json &c : *it) {
      std::optional<GemmTiling> t;
      if (c.is_object() && c.contains("tiling"))
        t = tilingFromJson(c["tiling"], tc);
      if (!t)
        continue;
      CandidateTime time;
      time.tiling = *t;
      if (auto us = c.find("us"); us != c.end() && us->is_number())
        time.microseconds = us->get<double>();
      if (auto s = c.find("skipped"); s != c.end() && s->is_string())
        time.skipped = s->get<std::string>();
      e.candidates.push_back(std::move(time));
    }
  }
  return e;
}

/// Why `doc` is not a tuning cache of this version, or "".
std::string notACache(const Json &doc) {
  if (doc.is_discarded())
    return "not valid JSON";
  auto format = doc.is_object() ? doc.find("format") : doc.end();
  if (!doc.is_object() || format == doc.end() || *format != kFormat)
    return std::string("not a dlc tuning cache (no \"format\": \"") + kFormat +
           "\")";
  auto version = doc.find("version");
  if (version == doc.end() || *version != kVersion)
    return "a tuning cache of another version (dlc reads version " +
           std::to_string(kVersion) + ")";
  auto entries = doc.find("entries");
  if (entries == doc.end() || !entries->is_object())
    return "a tuning cache without an \"entries\" object";
  return "";
}

/// An exclusive lock on PATH.lock for the scope (none when it cannot be
/// had: the write stays atomic, only a concurrent writer's entries may be
/// lost).
class FileLock {
public:
  explicit FileLock(const std::string &path)
      : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC,
                   0666)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR)
        ;
  }
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;

private:
  int fd_;
};

bool fileExists(const std::string &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

} // namespace

std::string TuningKey::str() const {
  std::string text =
      "sm_" + std::to_string(arch) + (problem.tensorCores ? " tc" : " simt") +
      " M=" + std::to_string(problem.m) + " N=" + std::to_string(problem.n) +
      " K=" + std::to_string(problem.k);
  if (!problem.signature.empty())
    text += " " + problem.signature;
  return text;
}

std::optional<TuningKey> TuningKey::parse(const std::string &text) {
  static const std::regex pattern(
      R"(^sm_([0-9]{2,3}) (tc|simt) M=([0-9]{1,10}))"
      R"( N=([0-9]{1,10}) K=([0-9]{1,10})(?: (.+))?$)");
  std::smatch m;
  if (!std::regex_match(text, m, pattern))
    return std::nullopt;
  TuningKey key;
  key.arch = std::stoi(m[1].str());
  key.problem.tensorCores = m[2].str() == "tc";
  key.problem.m = std::stoll(m[3].str());
  key.problem.n = std::stoll(m[4].str());
  key.problem.k = std::stoll(m[5].str());
  key.problem.signature = m[6].str();
  constexpr int64_t kLimit = int64_t(1) << 31;
  for (int64_t d : {key.problem.m, key.problem.n, key.problem.k})
    if (d <= 0 || d >= kLimit)
      return std::nullopt;
  // One spelling per key ("M=07" is not one).
  if (key.str() != text)
    return std::nullopt;
  return key;
}

TuningCache TuningCache::load(const std::string &path, const Warn &warn) {
  TuningCache cache;
  if (path.empty() || !fileExists(path))
    return cache;
  const Json doc = Json::parse(readFile(path, uint64_t(256) << 20), nullptr,
                               /*allow_exceptions=*/false);
  auto warning = [&](const std::string &reason) {
    if (warn)
      warn(UserError(reason, path).format("warning"));
  };
  if (std::string why = notACache(doc); !why.empty()) {
    warning(why + "; ignored");
    return cache;
  }
  for (const auto &[text, value] : doc["entries"].items()) {
    std::optional<TuningKey> key = TuningKey::parse(text);
    std::string why = "not a tuning key";
    std::optional<TuningEntry> entry;
    if (key)
      entry = entryFromJson(*key, value, why);
    if (!entry) {
      warning("tuning cache entry '" + text + "': " + why + "; ignored");
      continue;
    }
    cache.entries_[text] = std::move(*entry);
  }
  return cache;
}

const TuningEntry *TuningCache::find(const TuningKey &key) const {
  auto it = entries_.find(key.str());
  return it == entries_.end() ? nullptr : &it->second;
}

void TuningCache::insert(const TuningKey &key, TuningEntry entry) {
  std::string text = key.str();
  entries_[text] = std::move(entry);
  inserted_.insert(std::move(text));
}

void TuningCache::save(const std::string &path) const {
  // A missing folder is made as the NVRTC cache's is: for its owner only.
  if (std::string dir = parentDir(path); !fileExists(dir))
    preparePrivateDir(dir);
  FileLock lock(path);
  Json doc = {
      {"format", kFormat}, {"version", kVersion}, {"entries", Json::object()}};
  if (fileExists(path)) {
    doc = Json::parse(readFile(path, uint64_t(256) << 20), nullptr,
                      /*allow_exceptions=*/false);
    if (std::string why = notACache(doc); !why.empty())
      throw UserError(why + ": not overwritten", path);
  }
  for (const std::string &text : inserted_)
    doc["entries"][text] = entryToJson(entries_.at(text));
  writeFileAtomic(path, doc.dump(2) + "\n");
}

std::string dlc::codegen::defaultTuningCachePath() {
  std::string dir = defaultCacheDir();
  return dir.empty() ? "" : dir + "/autotune.json";
}
