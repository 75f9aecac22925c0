//===- GemmTemplates.cpp - CUDA GEMM device templates ---------------------===//
//
// dlc_gemm_tc.cuh and dlc_gemm_simt.cuh as string literals: CMake writes each
// header into the build tree as a raw string literal (<header>.inc).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/GemmTemplates.h"

namespace dlc::codegen {

const char *gemmTensorCoreHeader() {
  return
#include "compiler/codegen/cuda/dlc_gemm_tc.cuh.inc"
      ;
}

const char *gemmSimtHeader() {
  return
#include "compiler/codegen/cuda/dlc_gemm_simt.cuh.inc"
      ;
}

const char *attentionHeader() {
  return
#include "compiler/codegen/cuda/dlc_attention.cuh.inc"
      ;
}

} // namespace dlc::codegen
