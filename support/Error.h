//===- Error.h - user errors ------------------------------------*- C++ -*-===//
//
// A user error (bad model, bad input, unsupported layer) is reported as one
// line, `dlc: error: FILE[: layer 'NAME' (CLASS)]: REASON`, and exit status 1.
// Code that reads untrusted files throws UserError; the driver catches it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_ERROR_H
#define DLC_SUPPORT_ERROR_H

#include <stdexcept>
#include <string>

namespace dlc {

class UserError : public std::runtime_error {
public:
  explicit UserError(std::string reason, std::string file = "",
                     std::string layer = "", std::string layerClass = "");

  const std::string &reason() const { return reason_; }
  const std::string &file() const { return file_; }
  const std::string &layer() const { return layer_; }
  const std::string &layerClass() const { return layerClass_; }

  /// The same error with the file set when it has none yet.
  UserError inFile(const std::string &file) const;
  /// The same error attributed to a layer when it has none yet.
  UserError inLayer(const std::string &layer,
                    const std::string &layerClass) const;

  /// `dlc: error: FILE[: layer 'NAME' (CLASS)]: REASON`, one line: newlines,
  /// carriage returns and tabs in the parts are replaced by spaces, other
  /// control characters by \xHH escapes. `kind` replaces "error" for
  /// warnings and remarks in the same format.
  std::string format(const char *kind = "error") const;

private:
  std::string reason_, file_, layer_, layerClass_;
};

} // namespace dlc

#endif // DLC_SUPPORT_ERROR_H
