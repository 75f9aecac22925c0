//===- ReaderMain.cpp - dlc-read-model, the isolated model reader -*- C++ -*-//
//
// The process that reads a model file for a host that must not fork itself
// (dlc's Python module: Isolation.h, runIsolatedProgram). Its command line is
// runIsolatedProgram's; the read arguments are the model file and the
// weights file ("" for the default beside the model).
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Isolation.h"
#include "frontends/keras/reader/KerasModel.h"
#include "support/Error.h"

int main(int argc, char **argv) {
  dlc::keras::serveIsolatedRead(
      argc, argv, [](const std::vector<std::string> &args) {
        if (args.size() != 2)
          throw dlc::UserError("the model reader program takes a model and "
                               "a weights file");
        return dlc::keras::readKerasModelInProcess(args[0], args[1]);
      });
}
