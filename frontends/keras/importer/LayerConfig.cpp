//===- LayerConfig.cpp - typed reads of a layer config ----------*- C++ -*-===//

#include "frontends/keras/importer/LayerConfig.h"

#include "support/Error.h"

#include <cmath>

using namespace dlc::keras;
using nlohmann::json;

namespace {
const json &nullJson() {
  static const json value;
  return value;
}
bool isInteger(const json &v) {
  if (v.is_number_integer())
    return true;
  // Some writers store integral values as floats (3.0).
  return v.is_number_float() && std::isfinite(v.get<double>()) &&
         std::floor(v.get<double>()) == v.get<double>() &&
         std::fabs(v.get<double>()) < 9e15;
}
int64_t asInt(const json &v) {
  return v.is_number_integer() ? v.get<int64_t>()
                               : static_cast<int64_t>(v.get<double>());
}
} // namespace

bool LayerConfig::has(const std::string &key) const {
  return config_.is_object() && config_.contains(key);
}

bool LayerConfig::isNull(const std::string &key) const {
  return !has(key) || config_.at(key).is_null();
}

const json &LayerConfig::raw(const std::string &key) const {
  return has(key) ? config_.at(key) : nullJson();
}

void LayerConfig::bad(const std::string &key, const char *expected) const {
  std::string got = isNull(key) ? "nothing" : raw(key).dump();
  if (got.size() > 60)
    got = got.substr(0, 57) + "...";
  throw UserError("config key '" + key + "' must be " + expected + ", got " +
                  got);
}

int64_t LayerConfig::getInt(const std::string &key) const {
  if (!has(key) || !isInteger(raw(key)))
    bad(key, "an integer");
  return asInt(raw(key));
}

int64_t LayerConfig::getInt(const std::string &key, int64_t fallback) const {
  return isNull(key) ? fallback : getInt(key);
}

double LayerConfig::getFloat(const std::string &key) const {
  if (!has(key) || !raw(key).is_number() ||
      !std::isfinite(raw(key).get<double>()))
    bad(key, "a finite number");
  return raw(key).get<double>();
}

double LayerConfig::getFloat(const std::string &key, double fallback) const {
  return isNull(key) ? fallback : getFloat(key);
}

std::optional<double>
LayerConfig::getOptionalFloat(const std::string &key) const {
  if (isNull(key))
    return std::nullopt;
  return getFloat(key);
}

bool LayerConfig::getBool(const std::string &key, bool fallback) const {
  if (isNull(key))
    return fallback;
  if (!raw(key).is_boolean())
    bad(key, "true or false");
  return raw(key).get<bool>();
}

std::string LayerConfig::getString(const std::string &key) const {
  if (!has(key) || !raw(key).is_string())
    bad(key, "a string");
  return raw(key).get<std::string>();
}

std::string LayerConfig::getString(const std::string &key,
                                   const std::string &fallback) const {
  return isNull(key) ? fallback : getString(key);
}

std::vector<int64_t> LayerConfig::getInts(const std::string &key,
                                          size_t count) const {
  const json &v = raw(key);
  std::vector<int64_t> out;
  if (isInteger(v) && count > 0) {
    out.assign(count, asInt(v));
    return out;
  }
  if (!v.is_array() || (count > 0 && v.size() != count))
    bad(key, count
                 ? ("a list of " + std::to_string(count) + " integers").c_str()
                 : "a list of integers");
  for (const json &e : v) {
    if (!isInteger(e))
      bad(key, "a list of integers");
    out.push_back(asInt(e));
  }
  return out;
}

std::vector<int64_t> LayerConfig::getInts(const std::string &key, size_t count,
                                          std::vector<int64_t> fallback) const {
  return isNull(key) ? fallback : getInts(key, count);
}

std::vector<double> LayerConfig::getFloats(const std::string &key) const {
  const json &v = raw(key);
  if (v.is_number())
    return {v.get<double>()};
  if (!v.is_array())
    bad(key, "a number or a list of numbers");
  std::vector<double> out;
  for (const json &e : v) {
    if (!e.is_number())
      bad(key, "a number or a list of numbers");
    out.push_back(e.get<double>());
  }
  return out;
}
