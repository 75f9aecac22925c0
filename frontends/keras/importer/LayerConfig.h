//===- LayerConfig.h - typed reads of a layer config ------------*- C++ -*-===//
//
// Layer configs are untrusted JSON: every read checks the type and throws a
// UserError naming the key, so the importer never trips over a malformed
// config. Keras 2 and 3 spell some values differently (an int or a list of
// ints, an axis or a list of axes); these accessors accept both.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_IMPORTER_LAYERCONFIG_H
#define DLC_FRONTENDS_KERAS_IMPORTER_LAYERCONFIG_H

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dlc::keras {

/// One layer's "config" object as the converters read it: typed, checked
/// accessors by key. Holds a reference: the JSON must outlive it.
class LayerConfig {
public:
  explicit LayerConfig(const nlohmann::json &config) : config_(config) {}

  bool has(const std::string &key) const;
  /// True when the key is absent or null.
  bool isNull(const std::string &key) const;
  const nlohmann::json &raw(const std::string &key) const;

  int64_t getInt(const std::string &key) const;
  int64_t getInt(const std::string &key, int64_t fallback) const;
  double getFloat(const std::string &key) const;
  double getFloat(const std::string &key, double fallback) const;
  std::optional<double> getOptionalFloat(const std::string &key) const;
  bool getBool(const std::string &key, bool fallback) const;
  std::string getString(const std::string &key) const;
  std::string getString(const std::string &key,
                        const std::string &fallback) const;
  /// An int or a list of ints; an int is repeated `count` times. With
  /// count 0 any length is accepted.
  std::vector<int64_t> getInts(const std::string &key, size_t count) const;
  std::vector<int64_t> getInts(const std::string &key, size_t count,
                               std::vector<int64_t> fallback) const;
  /// A number or a list of numbers.
  std::vector<double> getFloats(const std::string &key) const;

private:
  [[noreturn]] void bad(const std::string &key, const char *expected) const;
  const nlohmann::json &config_;
};

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_IMPORTER_LAYERCONFIG_H
