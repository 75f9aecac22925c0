//===- InitAll.h - the one registration point -------------------*- C++ -*-===//
//
// Every tool registers dlc's dialects and passes through these two functions,
// so dlc-opt, dlc and the tests see the same set.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_INITALL_H
#define DLC_COMPILER_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dlc {

/// The dialects dlc's IR uses: graph, func and builtin.
void registerAllDialects(mlir::DialectRegistry &registry);

/// dlc's passes and pipelines, plus the MLIR passes the pipelines use
/// (canonicalize, cse, ...), as command-line passes.
void registerAllPasses();

} // namespace dlc

#endif // DLC_COMPILER_INITALL_H
