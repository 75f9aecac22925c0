//===- GemmEmulationTest.cpp - GEMM templates run on the host ---*- C++ -*-===//
//
// Runs the device code of dlc_gemm_tc.cuh and dlc_gemm_simt.cuh on the CPU
// (test/emulator/CudaEmulation.h: every CUDA thread of a CTA a fiber,
// __syncthreads a barrier, ldmatrix / mma.sync / cp.async emulated with the
// PTX ISA's layouts), so that their results are checked without a GPU.
//
//===----------------------------------------------------------------------===//

#include "test/emulator/CudaEmulation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

// The dynamic shared memory that dlc_gemm_tc declares (extern __shared__).
alignas(128) unsigned char dlc_gemm_tc_smem[256 * 1024];

#include "compiler/codegen/cuda/dlc_gemm_tc.cuh"
// Static shared arrays: one per instantiation, shared by the CTA's threads.
#undef __shared__
#define __shared__ static
#include "compiler/codegen/cuda/dlc_gemm_simt.cuh"
// The generated kernels' helpers (dlc_div_rn), as dlc-emulate compiles them:
// the shim of the device intrinsics first, then the prelude.
#include "test/emulator/KernelShim.h"

#include "compiler/codegen/cuda/dlc_prelude.cuh"

namespace {

/// Runs `body` for every thread of a (gridX, gridY) grid, one CTA at a time.
template <class Body>
void launch(int gridX, int gridY, int threads, bool copiesLandAtOnce,
            const Body &body) {
  dlc_emu::Launch l;
  l.grid = dim3(gridX, gridY);
  l.block = dim3(threads);
  l.dynamicSmem = dlc_gemm_tc_smem;
  l.dynamicSmemBytes = sizeof dlc_gemm_tc_smem;
  l.copiesLandAtOnce = copiesLandAtOnce;
  l.kernel = "GEMM template";
  dlc_emu::launch(l, body);
}

/// Small integers over 32: exact in f16 and bf16, and so are their sums.
std::vector<float> exactValues(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-64, 64);
  std::vector<float> values(count);
  for (float &v : values)
    v = static_cast<float>(dist(rng)) / 32;
  return values;
}

/// The two-step epilogue of dlc's kernels (dlc_gemm_tc.cuh) for a test
/// problem: values() passes the accumulators through as the floats to store
/// (int32 sums bit for bit: they exceed f32's 24 bits), store() writes them
/// to C as Acc. Checks that each pair is in C and that a thread computes
/// every value of its tile before its first store.
template <class Acc, int M, int N> struct TwoStepEpilogue {
  Acc *c;
  std::atomic<int> *stores;       // per element of C
  std::atomic<int> *threadStores; // per thread of the grid
  static size_t thread() {
    return ((size_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x +
            blockIdx.x) *
               blockDim.x +
           threadIdx.x;
  }
  static float carry(Acc value) {
    float bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  void put(int m, int n, float bits) const {
    std::memcpy(&c[m * N + n], &bits, sizeof bits);
    ++stores[m * N + n];
  }
  void values(int m, int n, Acc c0, Acc c1, float &v0, float &v1) const {
    EXPECT_TRUE(m < M && n < N && n % 2 == 0) << m << ", " << n;
    EXPECT_EQ(threadStores[thread()], 0)
        << "values of " << m << ", " << n << " after a store";
    v0 = carry(c0);
    v1 = carry(c1);
  }
  void store(int m, int n, float v0, float v1) const {
    EXPECT_TRUE(m < M && n < N && n % 2 == 0) << m << ", " << n;
    ++threadStores[thread()];
    put(m, n, v0);
    if (n + 1 < N)
      put(m, n + 1, v1);
  }
};

/// Runs dlc_gemm_tc on a TwoStepEpilogue problem of A and B, into C.
template <class Problem, int BM, int BN, int BK, int WM, int WN, int STAGES,
          int SLICES, class E, class Acc>
void launchTensorCores(const E *a, const E *b, Acc *c, std::atomic<int> *stores,
                       bool copiesLandAtOnce) {
  constexpr int gridX = (Problem::N + BN - 1) / BN;
  constexpr int gridY = (Problem::M + BM - 1) / BM;
  constexpr int threads = dlc_gemm_tc_threads<BM, BN, WM, WN, SLICES>();
  std::vector<std::atomic<int>> threadStores(size_t(gridX) * gridY * threads);
  const Problem problem{{c, stores, threadStores.data()}, a, b};
  launch(gridX, gridY, threads, copiesLandAtOnce,
         [&] { dlc_gemm_tc<BM, BN, BK, WM, WN, STAGES, SLICES>(problem); });
}

/// C = A * B, A row-major [M, K], B N-major [N, K], with every 8-element
/// chunk of A where (7m + k/8) % 11 == 0 read as zeros through nullptr.
template <class E, int M_, int N_, int K_>
struct TensorCoreProblem : TwoStepEpilogue<float, M_, N_> {
  using Elem = E;
  static constexpr int M = M_, N = N_, K = K_;
  static bool zeroChunk(int m, int k) { return (7 * m + k / 8) % 11 == 0; }
  const E *a, *b;
  const E *a_ptr(int m, int k) const {
    EXPECT_TRUE(m < M && k < K && k % 8 == 0) << m << ", " << k;
    return zeroChunk(m, k) ? nullptr : a + m * K + k;
  }
  const E *b_ptr(int n, int k) const {
    EXPECT_TRUE(n < N && k < K && k % 8 == 0) << n << ", " << k;
    return b + n * K + k;
  }
};

template <class Elem> Elem toElem(float value) {
  if constexpr (std::is_same<Elem, __half>::value)
    return __float2half(value);
  else
    return __float2bfloat16(value);
}

template <class Elem, int M, int N, int K, int BM, int BN, int BK, int WM,
          int WN, int STAGES, int SLICES = 1>
void runTensorCore(bool copiesLandAtOnce) {
  SCOPED_TRACE(testing::Message()
               << M << "x" << N << "x" << K << " tile " << BM << "x" << BN
               << "x" << BK << " warp " << WM << "x" << WN << " stages "
               << STAGES << " slices " << SLICES
               << (copiesLandAtOnce ? " copies at once" : ""));
  using Problem = TensorCoreProblem<Elem, M, N, K>;
  const std::vector<float> a = exactValues(M * K, M + K);
  const std::vector<float> b = exactValues(N * K, N + K);
  std::vector<Elem> a16, b16;
  for (float v : a)
    a16.push_back(toElem<Elem>(v));
  for (float v : b)
    b16.push_back(toElem<Elem>(v));
  std::vector<float> c(M * N, NAN);
  std::vector<std::atomic<int>> stores(M * N);
  launchTensorCores<Problem, BM, BN, BK, WM, WN, STAGES, SLICES>(
      a16.data(), b16.data(), c.data(), stores.data(), copiesLandAtOnce);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double expected = 0;
      for (int k = 0; k < K; ++k)
        if (!Problem::zeroChunk(m, k))
          expected += double(a[m * K + k]) * b[n * K + k];
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      ASSERT_EQ(c[m * N + n], expected) << m << ", " << n;
    }
  }
}

/// The int8 GEMM (mma.sync m16n8k32.s8, int32 accumulators): C = A * B
/// with A row-major [M, K], B N-major [N, K] of int8 over the whole range,
/// every 16-element chunk of A where (7m + k/16) % 11 == 0 read as zeros
/// through nullptr; the sums must be exact.
template <int M_, int N_, int K_>
struct Int8Problem : TwoStepEpilogue<int, M_, N_> {
  using Elem = signed char;
  static constexpr int M = M_, N = N_, K = K_;
  static bool zeroChunk(int m, int k) { return (7 * m + k / 16) % 11 == 0; }
  const signed char *a, *b;
  const signed char *a_ptr(int m, int k) const {
    EXPECT_TRUE(m < M && k < K && k % 16 == 0) << m << ", " << k;
    return zeroChunk(m, k) ? nullptr : a + m * K + k;
  }
  const signed char *b_ptr(int n, int k) const {
    EXPECT_TRUE(n < N && k < K && k % 16 == 0) << n << ", " << k;
    return b + n * K + k;
  }
};

/// `count` int8 values over the whole range.
std::vector<signed char> randomInt8(size_t count, std::mt19937 &rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<signed char> values(count);
  for (signed char &v : values)
    v = static_cast<signed char>(dist(rng));
  return values;
}

template <int M, int N, int K, int BM, int BN, int BK, int WM, int WN,
          int STAGES, int SLICES = 1>
void runInt8(bool copiesLandAtOnce) {
  SCOPED_TRACE(testing::Message()
               << "int8 " << M << "x" << N << "x" << K << " tile " << BM << "x"
               << BN << "x" << BK << " warp " << WM << "x" << WN << " stages "
               << STAGES << " slices " << SLICES
               << (copiesLandAtOnce ? " copies at once" : ""));
  using Problem = Int8Problem<M, N, K>;
  std::mt19937 rng(M + N + K);
  const std::vector<signed char> a = randomInt8(M * K, rng);
  const std::vector<signed char> b = randomInt8(N * K, rng);
  std::vector<int> c(M * N, INT32_MIN);
  std::vector<std::atomic<int>> stores(M * N);
  launchTensorCores<Problem, BM, BN, BK, WM, WN, STAGES, SLICES>(
      a.data(), b.data(), c.data(), stores.data(), copiesLandAtOnce);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      int expected = 0;
      for (int k = 0; k < K; ++k)
        if (!Problem::zeroChunk(m, k))
          expected += int(a[m * K + k]) * b[n * K + k];
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      ASSERT_EQ(c[m * N + n], expected) << m << ", " << n;
    }
  }
}

/// The int8 GEMM with a Problem::Column: each column's divisor d(n) and its
/// reciprocal, which column() gives, and values() the sums de-scaled by
/// dlc_div_rn, as dlc's int8 convolutions do. Checks that column() is called
/// once per thread and column pair, before that pair's values, and that
/// values() gets the column of its n.
template <int M_, int N_, int K_>
struct ColumnInt8Problem : Int8Problem<M_, N_, K_> {
  using Base = Int8Problem<M_, N_, K_>;
  struct Column {
    int n;
    float d0, r0, d1, r1;
  };
  std::atomic<int> *columnCalls; // per thread of the grid and column
  float *out;                    // C de-scaled
  static float divisor(int n) { return 0.0371f * static_cast<float>(n + 3); }
  Column column(int n) const {
    EXPECT_TRUE(n < Base::N && n % 2 == 0) << n;
    EXPECT_EQ(columnCalls[Base::thread() * Base::N + n]++, 0)
        << "column " << n << " computed twice";
    const float d0 = divisor(n), d1 = n + 1 < Base::N ? divisor(n + 1) : 1.0f;
    return {n, d0, __frcp_rn(d0), d1, __frcp_rn(d1)};
  }
  void values(int m, int n, const Column &col, int c0, int c1, float &v0,
              float &v1) const {
    EXPECT_EQ(col.n, n);
    EXPECT_EQ(columnCalls[Base::thread() * Base::N + n], 1);
    float ignored0, ignored1; // the base checks the order
    Base::values(m, n, c0, c1, ignored0, ignored1);
    v0 = dlc_div_rn(static_cast<float>(c0), col.d0, col.r0);
    v1 = dlc_div_rn(static_cast<float>(c1), col.d1, col.r1);
  }
  void store(int m, int n, float v0, float v1) const {
    EXPECT_TRUE(m < Base::M && n < Base::N && n % 2 == 0) << m << ", " << n;
    ++this->threadStores[Base::thread()];
    ++this->stores[m * Base::N + n];
    out[m * Base::N + n] = v0;
    if (n + 1 < Base::N) {
      ++this->stores[m * Base::N + n + 1];
      out[m * Base::N + n + 1] = v1;
    }
  }
};

template <int M, int N, int K, int BM, int BN, int BK, int WM, int WN,
          int STAGES>
void runColumnInt8() {
  SCOPED_TRACE(testing::Message()
               << "int8 with columns " << M << "x" << N << "x" << K << " tile "
               << BM << "x" << BN << "x" << BK << " warp " << WM << "x" << WN);
  using Problem = ColumnInt8Problem<M, N, K>;
  std::mt19937 rng(M + N + K);
  const std::vector<signed char> a = randomInt8(M * K, rng);
  const std::vector<signed char> b = randomInt8(N * K, rng);
  constexpr int gridX = (N + BN - 1) / BN, gridY = (M + BM - 1) / BM;
  constexpr int threads = dlc_gemm_tc_threads<BM, BN, WM, WN>();
  std::vector<std::atomic<int>> threadStores(size_t(gridX) * gridY * threads);
  std::vector<std::atomic<int>> columnCalls(size_t(gridX) * gridY * threads *
                                            N);
  std::vector<std::atomic<int>> stores(M * N);
  std::vector<float> out(M * N, NAN);
  Problem problem;
  problem.c = nullptr;
  problem.stores = stores.data();
  problem.threadStores = threadStores.data();
  problem.a = a.data();
  problem.b = b.data();
  problem.columnCalls = columnCalls.data();
  problem.out = out.data();
  launch(gridX, gridY, threads, false,
         [&] { dlc_gemm_tc<BM, BN, BK, WM, WN, STAGES>(problem); });
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      int sum = 0;
      for (int k = 0; k < K; ++k)
        if (!Problem::zeroChunk(m, k))
          sum += int(a[m * K + k]) * b[n * K + k];
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      // IEEE division, bit for bit.
      ASSERT_EQ(out[m * N + n], static_cast<float>(sum) / Problem::divisor(n))
          << m << ", " << n;
    }
  }
}

/// The value of a float8 byte from the formats' definitions: e4m3fn
/// (-1)^s 2^(e-7) (1 + m/8), subnormals 2^-6 m/8; e5m2 (-1)^s 2^(e-15)
/// (1 + m/4), subnormals 2^-14 m/4. The bytes drawn below are finite.
double float8Value(unsigned char byte, bool e4m3) {
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int e = (byte & 0x7f) >> mbits, m = byte & ((1 << mbits) - 1);
  const double frac = double(m) / (1 << mbits);
  const double v =
      e ? std::pow(2.0, e - bias) * (1 + frac) : std::pow(2.0, 1 - bias) * frac;
  return byte & 0x80 ? -v : v;
}

/// The float8 GEMM (mma.sync m16n8k32 e4m3 / e5m2, f32 accumulators): C = A
/// * B with A row-major [M, K], B N-major [N, K] of float8 bytes over their
/// whole finite range, every 16-byte chunk of A where (7m + k/16) % 11 == 0
/// read as zeros through nullptr. The products are exact in f32; C must be
/// the exact sum up to f32 summation: within K * 2^-24 * sum |products|.
template <class E, int M_, int N_, int K_>
struct Float8Problem : TwoStepEpilogue<float, M_, N_> {
  using Elem = E;
  static constexpr int M = M_, N = N_, K = K_;
  static bool zeroChunk(int m, int k) { return (7 * m + k / 16) % 11 == 0; }
  const E *a, *b;
  const E *a_ptr(int m, int k) const {
    EXPECT_TRUE(m < M && k < K && k % 16 == 0) << m << ", " << k;
    return zeroChunk(m, k) ? nullptr : a + m * K + k;
  }
  const E *b_ptr(int n, int k) const {
    EXPECT_TRUE(n < N && k < K && k % 16 == 0) << n << ", " << k;
    return b + n * K + k;
  }
};

template <class E, int M, int N, int K, int BM, int BN, int BK, int WM, int WN,
          int STAGES>
void runFloat8(bool copiesLandAtOnce) {
  constexpr bool e4m3 = std::is_same<E, dlc_fp8_e4m3>::value;
  SCOPED_TRACE(testing::Message()
               << (e4m3 ? "e4m3 " : "e5m2 ") << M << "x" << N << "x" << K
               << " tile " << BM << "x" << BN << "x" << BK << " warp " << WM
               << "x" << WN << " stages " << STAGES
               << (copiesLandAtOnce ? " copies at once" : ""));
  using Problem = Float8Problem<E, M, N, K>;
  std::mt19937 rng(M + N + K);
  std::uniform_int_distribution<int> dist(0, 255);
  auto draw = [&] {
    unsigned char byte;
    do
      byte = static_cast<unsigned char>(dist(rng));
    while (e4m3 ? (byte & 0x7f) == 0x7f : ((byte >> 2) & 31) == 31);
    return E{byte};
  };
  std::vector<E> a(M * K), b(N * K);
  for (E &v : a)
    v = draw();
  for (E &v : b)
    v = draw();
  std::vector<float> c(M * N, NAN);
  std::vector<std::atomic<int>> stores(M * N);
  launchTensorCores<Problem, BM, BN, BK, WM, WN, STAGES, 1>(
      a.data(), b.data(), c.data(), stores.data(), copiesLandAtOnce);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double exact = 0, magnitude = 0;
      for (int k = 0; k < K; ++k) {
        if (Problem::zeroChunk(m, k))
          continue;
        const double p = float8Value(a[m * K + k].bits, e4m3) *
                         float8Value(b[n * K + k].bits, e4m3);
        exact += p;
        magnitude += std::fabs(p);
      }
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      ASSERT_NEAR(c[m * N + n], exact, K * std::ldexp(magnitude, -24))
          << m << ", " << n;
    }
  }
}

/// C = A * B in f32, A row-major [M, K], B row-major [K, N].
template <int M_, int N_, int K_> struct SimtProblem {
  static constexpr int M = M_, N = N_, K = K_;
  const float *aData, *bData;
  float *c;
  std::atomic<int> *stores;
  float a(int m, int k) const {
    EXPECT_TRUE(m < M && k < K) << m << ", " << k;
    return aData[m * K + k];
  }
  float b(int k, int n) const {
    EXPECT_TRUE(n < N && k < K) << n << ", " << k;
    return bData[k * N + n];
  }
  void epilogue(int m, int n, float value) const {
    EXPECT_TRUE(m < M && n < N) << m << ", " << n;
    c[m * N + n] = value;
    ++stores[m * N + n];
  }
};

template <int M, int N, int K, int BM, int BN, int BK, int TM, int TN,
          int SLICES = 1>
void runSimt() {
  SCOPED_TRACE(testing::Message() << M << "x" << N << "x" << K << " tile " << BM
                                  << "x" << BN << "x" << BK << " thread " << TM
                                  << "x" << TN << " slices " << SLICES);
  const std::vector<float> a = exactValues(M * K, M + K);
  const std::vector<float> b = exactValues(K * N, N + K);
  std::vector<float> c(M * N, NAN);
  std::vector<std::atomic<int>> stores(M * N);
  const SimtProblem<M, N, K> problem{a.data(), b.data(), c.data(),
                                     stores.data()};
  launch((N + BN - 1) / BN, (M + BM - 1) / BM,
         dlc_gemm_simt_threads<BM, BN, TM, TN, SLICES>(), false,
         [&] { dlc_gemm_simt<BM, BN, BK, TM, TN, SLICES>(problem); });
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double expected = 0;
      for (int k = 0; k < K; ++k)
        expected += double(a[m * K + k]) * b[k * N + n];
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      ASSERT_EQ(c[m * N + n], expected) << m << ", " << n;
    }
  }
}

/// SimtProblem with B stored [N, K] when KMAJOR (a Dense kernel after the
/// layout stage), [K, N] otherwise.
template <bool KMAJOR, int M_, int N_, int K_>
struct GemvProblem : SimtProblem<M_, N_, K_> {
  using Base = SimtProblem<M_, N_, K_>;
  float b(int k, int n) const {
    EXPECT_TRUE(n < Base::N && k < Base::K) << n << ", " << k;
    return KMAJOR ? this->bData[n * Base::K + k] : this->bData[k * Base::N + n];
  }
};

template <int M, int N, int K, bool KMAJOR, int COLS, int SPLIT>
void runGemv() {
  SCOPED_TRACE(testing::Message()
               << M << "x" << N << "x" << K << " KMAJOR " << KMAJOR << " COLS "
               << COLS << " SPLIT " << SPLIT);
  const std::vector<float> a = exactValues(M * K, M + K);
  const std::vector<float> b = exactValues(K * N, N + K);
  std::vector<float> c(M * N, NAN);
  std::vector<std::atomic<int>> stores(M * N);
  const GemvProblem<KMAJOR, M, N, K> problem{
      {a.data(), b.data(), c.data(), stores.data()}};
  constexpr int columns = dlc_gemv_simt_columns<KMAJOR, COLS>();
  launch((N + columns - 1) / columns, 1,
         dlc_gemv_simt_threads<KMAJOR, COLS, SPLIT>(), false,
         [&] { dlc_gemv_simt<KMAJOR, COLS, SPLIT>(problem); });
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double expected = 0;
      for (int k = 0; k < K; ++k)
        expected +=
            double(a[m * K + k]) * (KMAJOR ? b[n * K + k] : b[k * N + n]);
      ASSERT_EQ(stores[m * N + n], 1) << m << ", " << n;
      ASSERT_EQ(c[m * N + n], expected) << m << ", " << n;
    }
  }
}

// Ragged M and N, a K tail, fewer k-tiles than stages, 2 to 4 stages, BK 32
// and 64, one to eight warps, f16 and bf16.
TEST(GemmEmulation, TensorCores) {
  for (bool copiesLandAtOnce : {false, true}) {
    runTensorCore<__half, 100, 70, 40, 64, 64, 32, 32, 32, 3>(copiesLandAtOnce);
    runTensorCore<__half, 130, 150, 200, 128, 128, 32, 64, 32, 4>(
        copiesLandAtOnce);
    runTensorCore<__nv_bfloat16, 37, 90, 264, 64, 32, 64, 32, 16, 3>(
        copiesLandAtOnce);
    runTensorCore<__half, 1, 10, 64, 16, 16, 32, 16, 16, 2>(copiesLandAtOnce);
    runTensorCore<__half, 50, 33, 512, 32, 64, 32, 16, 32, 4>(copiesLandAtOnce);
    runTensorCore<__half, 140, 70, 136, 128, 64, 64, 64, 32, 2>(
        copiesLandAtOnce);
    // Tiles that divide M and N: no bounds checks compiled in.
    runTensorCore<__half, 128, 64, 96, 64, 32, 32, 32, 16, 2>(copiesLandAtOnce);
  }
}

// K slices: M = 1 (a batch-1 dense layer) with 16 slices, K tiles not
// divisible by the slices (the last slice past K), more slices than some
// slices have k-tiles, several warps per slice, ragged M and N, bf16.
TEST(GemmEmulation, TensorCoresKSlices) {
  for (bool copiesLandAtOnce : {false, true}) {
    runTensorCore<__half, 1, 40, 2048, 16, 16, 32, 16, 16, 3, 16>(
        copiesLandAtOnce);
    runTensorCore<__half, 3, 20, 360, 16, 16, 32, 16, 16, 2, 4>(
        copiesLandAtOnce);
    runTensorCore<__half, 5, 18, 40, 16, 16, 32, 16, 16, 2, 4>(
        copiesLandAtOnce);
    runTensorCore<__nv_bfloat16, 49, 70, 1000, 64, 32, 64, 32, 16, 3, 4>(
        copiesLandAtOnce);
    runTensorCore<__half, 33, 64, 576, 32, 64, 32, 16, 32, 4, 2>(
        copiesLandAtOnce);
    runInt8<1, 24, 4096, 16, 16, 64, 16, 16, 3, 8>(copiesLandAtOnce);
    runInt8<37, 40, 1040, 64, 32, 128, 32, 16, 2, 3>(copiesLandAtOnce);
  }
}

// int8: ragged M and N, a K tail (K % 64 == 16), fewer k-tiles than stages,
// many k-tiles, BK 64 and 128 (64 and 128 bytes), one to eight warps.
TEST(GemmEmulation, TensorCoresInt8) {
  for (bool copiesLandAtOnce : {false, true}) {
    runInt8<100, 70, 80, 64, 64, 64, 32, 32, 3>(copiesLandAtOnce);
    runInt8<130, 150, 400, 128, 128, 64, 64, 32, 4>(copiesLandAtOnce);
    runInt8<37, 90, 528, 64, 32, 128, 32, 16, 3>(copiesLandAtOnce);
    runInt8<1, 10, 32, 16, 16, 64, 16, 16, 2>(copiesLandAtOnce);
    runInt8<140, 70, 272, 128, 64, 128, 64, 32, 2>(copiesLandAtOnce);
  }
}

// Problem::Column (the divisors of dlc's int8 convolutions): ragged M and N,
// N odd (the last pair's second column past C), and tiles that divide M and N
// (no bounds checks compiled in), one to eight warps.
TEST(GemmEmulation, TensorCoresInt8Columns) {
  runColumnInt8<100, 70, 80, 64, 64, 64, 32, 32, 3>();
  runColumnInt8<37, 45, 528, 64, 32, 128, 32, 16, 3>();
  runColumnInt8<128, 96, 16, 64, 32, 64, 32, 16, 2>();
  runColumnInt8<256, 128, 272, 128, 64, 128, 64, 32, 2>();
}

// dlc_div_rn is IEEE division bit for bit on what int8 de-scaling divides:
// x an int32 sum (here every integer in [-1000, 1000) and random ones up to
// 2^31 in magnitude), d in [2^-64, 2^64] (random, and the extremes of the
// significand in each binade): 10^6 quotients.
TEST(GemmEmulation, DivExact) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> exponent(-64, 64);
  for (int i = 0; i < 400; ++i) {
    float d = static_cast<float>(std::exp2(exponent(rng)));
    if (i % 4 < 2) {
      unsigned bits = __float_as_uint(d) & 0xff800000u;
      d = __uint_as_float(bits | (i % 4 == 0 ? 0x7fffffu : 1u));
    }
    const float r = __frcp_rn(d);
    for (int k = 0; k < 2500; ++k) {
      const float x = k < 2000 ? static_cast<float>(k - 1000)
                               : static_cast<float>(static_cast<int>(rng()));
      const float q = dlc_div_rn(x, d, r), expected = x / d;
      ASSERT_EQ(__float_as_uint(q), __float_as_uint(expected))
          << std::hexfloat << x << " / " << d;
    }
  }
}

// float8 (e4m3 and e5m2): the int8 shapes (ragged M and N, a K tail of 16
// bytes, fewer k-tiles than stages, BK 64 and 128 bytes).
TEST(GemmEmulation, TensorCoresFloat8) {
  for (bool copiesLandAtOnce : {false, true}) {
    runFloat8<dlc_fp8_e4m3, 100, 70, 80, 64, 64, 64, 32, 32, 3>(
        copiesLandAtOnce);
    runFloat8<dlc_fp8_e4m3, 37, 90, 528, 64, 32, 128, 32, 16, 3>(
        copiesLandAtOnce);
    runFloat8<dlc_fp8_e4m3, 1, 10, 32, 16, 16, 64, 16, 16, 2>(copiesLandAtOnce);
    runFloat8<dlc_fp8_e5m2, 140, 70, 272, 128, 64, 128, 64, 32, 2>(
        copiesLandAtOnce);
  }
}

TEST(GemmEmulation, Simt) {
  runSimt<100, 70, 40, 64, 64, 8, 4, 4>();
  runSimt<130, 150, 37, 128, 128, 8, 8, 8>();
  runSimt<1, 10, 64, 16, 16, 8, 4, 4>();
  runSimt<77, 33, 100, 128, 64, 16, 8, 4>();
  runSimt<20, 45, 19, 16, 32, 16, 4, 4>();
}

// K slices on the SIMT template: M = 1 f32 logits (8 slices), a K tail, more
// slices than some groups have K slices, a larger register block.
TEST(GemmEmulation, SimtKSlices) {
  runSimt<1, 70, 1280, 16, 64, 8, 4, 4, 8>();
  runSimt<3, 20, 100, 16, 16, 8, 4, 4, 4>();
  runSimt<2, 10, 20, 16, 16, 8, 4, 4, 4>();
  runSimt<40, 33, 300, 64, 32, 16, 8, 4, 2>();
}

// GEMV (rule step 6): B contiguous in K (a warp per column and K part, lane
// sums added by shuffles) and in N (a lane per column); one to four rows;
// the ResNet50 head (1 x 10 x 2048, 8 parts); N not a multiple of the CTA's
// columns; K shorter than a part (parts past K); a K tail within a part;
// one part; more outputs than threads.
TEST(GemmEmulation, Gemv) {
  runGemv<1, 10, 2048, true, 1, 8>();
  runGemv<3, 21, 300, true, 4, 2>();
  runGemv<4, 9, 40, true, 2, 4>();
  runGemv<2, 5, 33, true, 8, 1>();
  runGemv<1, 70, 1280, false, 1, 16>();
  runGemv<4, 33, 100, false, 1, 4>();
  runGemv<2, 10, 20, false, 1, 8>();
  runGemv<1, 64, 7, false, 1, 1>();
  // Fewer parts than rows with B contiguous in N: more outputs (32 x M) than
  // threads (32 x SPLIT).
  runGemv<2, 24, 32, false, 1, 1>();
  runGemv<4, 40, 50, false, 1, 2>();
}

} // namespace
