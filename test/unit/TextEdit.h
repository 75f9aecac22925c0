//===- TextEdit.h - editing test inputs written as text ---------*- C++ -*-===//
//
// The unit tests write their inputs (MLIR, descriptor JSON) as text and
// derive variants from one text: the first occurrence of a piece replaced,
// or every placeholder of a template filled in.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_TEXTEDIT_H
#define DLC_TEST_UNIT_TEXTEDIT_H

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace dlc::test {

/// `text` with the first `from` replaced by `to` (a test failure when
/// `text` has no `from`).
inline std::string edit(std::string text, const std::string &from,
                        const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

/// `text` with every occurrence of each placeholder replaced by its value.
inline std::string
fill(std::string text,
     std::initializer_list<std::pair<std::string, std::string>> values) {
  for (const auto &[key, value] : values)
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

} // namespace dlc::test

#endif // DLC_TEST_UNIT_TEXTEDIT_H
