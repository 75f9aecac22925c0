//===- KernelShim.h - a generated CUDA kernel as host C++ -------*- C++ -*-===//
//
// Follows CudaEmulation.h at the top of every kernel that dlc-emulate compiles
// with the host C++ compiler: the CUDA keywords as host C++ and the device
// intrinsics the generated code uses that the CUDA headers declare for the
// device only. dlc-emulate rewrites the rest (KernelCompiler.cpp): static
// __shared__ arrays are poisoned per CTA through dlc_emu::sharedArray,
// `extern __shared__` arrays point at the dynamic shared memory, and
// DLC_EMU_ENTRY(kernel) at the end exports the launch.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_EMULATOR_KERNELSHIM_H
#define DLC_TEST_EMULATOR_KERNELSHIM_H

#include <cmath>
#include <cstring>
#include <utility>

#undef __global__
#undef __device__
#undef __host__
#undef __constant__
#undef __shared__
#undef __forceinline__
#undef __noinline__
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

inline float __int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, sizeof i);
  return i;
}
inline float __uint_as_float(unsigned x) {
  return __int_as_float(static_cast<int>(x));
}
inline unsigned __float_as_uint(float x) {
  return static_cast<unsigned>(__float_as_int(x));
}
template <class T> T __ldg(const T *p) { return *p; }
// Round to nearest even (the host's default rounding mode), for values in
// int's range (dlc_quantize clips first).
inline int __float2int_rn(float x) {
  return static_cast<int>(std::nearbyintf(x));
}

// 1/x rounded to nearest even: the host's IEEE division.
inline float __frcp_rn(float x) { return 1.0f / x; }

namespace dlc_emu {

template <class... P, size_t... I>
void callWith(void (*kernel)(P...), void *const *args,
              std::index_sequence<I...>) {
  kernel(static_cast<P>(args[I])...);
}

/// Calls `kernel` with its parameters from `args` (one pointer each).
template <class... P> void call(void (*kernel)(P...), void *const *args) {
  callWith(kernel, args, std::index_sequence_for<P...>{});
}

} // namespace dlc_emu

/// What dlc-emulate calls: runs the grid `launch` describes, the kernel's
/// parameters in `args`.
#define DLC_EMU_ENTRY(kernel)                                                  \
  extern "C" __attribute__((visibility("default"))) void dlc_emu_launch(       \
      const dlc_emu::Launch *launch, void *const *args) {                      \
    dlc_emu::launch(*launch, [args] { dlc_emu::call(kernel, args); });         \
  }

#endif // DLC_TEST_EMULATOR_KERNELSHIM_H
