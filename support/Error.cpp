//===- Error.cpp - user errors ----------------------------------*- C++ -*-===//

#include "support/Error.h"

#include <cstdio>

using namespace dlc;

namespace {
/// `s` on one line, with nothing a terminal acts on: newlines, carriage
/// returns and tabs become spaces, the other control characters (a name in
/// a corrupt file may hold any byte: \x1d, an escape sequence) \xHH.
std::string oneLine(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
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
