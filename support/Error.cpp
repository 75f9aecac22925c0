//===- Error.cpp - user errors ----------------------------------*- C++ -*-===//

#include "support/Error.h"

#include <algorithm>

using namespace dlc;

namespace {
std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}
} // namespace

UserError::UserError(std::string reason, std::string file, std::string layer,
                     std::string layerClass)
    : std::runtime_error(reason), reason_(std::move(reason)),
      file_(std::move(file)), layer_(std::move(layer)),
      layerClass_(std::move(layerClass)) {}

UserError UserError::inFile(const std::string &file) const {
  return UserError(reason_, file_.empty() ? file : file_, layer_, layerClass_);
}

UserError UserError::inLayer(const std::string &layer,
                             const std::string &layerClass) const {
  if (!layer_.empty())
    return *this;
  return UserError(reason_, file_, layer, layerClass);
}

std::string UserError::format(const char *kind) const {
  std::string line = std::string("dlc: ") + kind + ": ";
  if (!file_.empty())
    line += file_ + ": ";
  if (!layer_.empty())
    line += "layer '" + layer_ + "' (" + layerClass_ + "): ";
  line += reason_;
  return oneLine(line);
}
