//===- GemmEmulationTest.cpp - GEMM templates run on the host ---*- C++ -*-===//
//
// Runs the device code of dlc_gemm_tc.cuh and dlc_gemm_simt.cuh on the CPU,
// so that their results are checked without a GPU. Every CUDA thread of a CTA
// is a host thread; __syncthreads is a barrier of the CTA's threads. The PTX
// primitives of dlc_gemm_tc.cuh (its host build leaves them to the includer)
// are emulated here: ldmatrix and mma.sync exchange operands between the
// lanes of a warp with the fragment layouts of the PTX ISA, and cp.async
// copies land either at once or only at the cp.async.wait_group that must
// cover them, so a stage read before its copies were waited for shows.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

/// A reusable barrier of `count` threads (std::barrier is C++20).
class Barrier {
public:
  explicit Barrier(int count) : count(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    const uint64_t arrivedIn = generation;
    if (++arrived == count) {
      arrived = 0;
      ++generation;
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return generation != arrivedIn; });
  }

private:
  std::mutex mutex;
  std::condition_variable released;
  const int count;
  int arrived = 0;
  uint64_t generation = 0;
};

/// The CTA being run.
struct Cta {
  std::unique_ptr<Barrier> barrier;
  std::vector<std::unique_ptr<Barrier>> warpBarriers;
  struct WarpOperands {
    unsigned addr[32], a[32][4], b[32][2];
  };
  std::vector<WarpOperands> warps;
  bool copiesLandAtOnce = false;
};
Cta cta;

} // namespace

// The CUDA built-ins the headers use, and the dynamic shared memory that
// dlc_gemm_tc declares.
thread_local uint3 threadIdx, blockIdx;
void __syncthreads() { cta.barrier->wait(); }
alignas(128) unsigned char dlc_gemm_tc_smem[256 * 1024];

namespace {

/// One thread's committed and uncommitted cp.async copies.
struct Copy {
  unsigned dst;
  const void *src;
};
thread_local std::vector<std::vector<Copy>> committedGroups;
thread_local std::vector<Copy> uncommitted;

void land(const Copy &copy) {
  if (copy.src)
    std::memcpy(dlc_gemm_tc_smem + copy.dst, copy.src, 16);
  else
    std::memset(dlc_gemm_tc_smem + copy.dst, 0, 16);
}

int lane() { return threadIdx.x % 32; }
Cta::WarpOperands &warpOperands() { return cta.warps[threadIdx.x / 32]; }
void syncWarp() { cta.warpBarriers[threadIdx.x / 32]->wait(); }

float toFloat(uint16_t bits, bool bf16) {
  if (bf16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

} // namespace

// The primitives of dlc_gemm_tc.cuh, emulated.
namespace dlc_tc {

unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(static_cast<const unsigned char *>(p) -
                               dlc_gemm_tc_smem);
}

void cp_async_16(unsigned dst, const void *src) {
  ASSERT_EQ(dst % 16, 0u);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(src) % 16, 0u);
  if (cta.copiesLandAtOnce)
    land({dst, src});
  else
    uncommitted.push_back({dst, src});
}

void cp_async_commit() {
  committedGroups.push_back(std::move(uncommitted));
  uncommitted.clear();
}

template <int N> void cp_async_wait() {
  while (committedGroups.size() > static_cast<size_t>(N)) {
    for (const Copy &copy : committedGroups.front())
      land(copy);
    committedGroups.erase(committedGroups.begin());
  }
}

// ldmatrix.x4: lanes 8j..8j+7 give the rows of matrix j; lane l receives
// row l/4, columns 2(l%4) and 2(l%4)+1 of each.
void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  ASSERT_EQ(addr % 16, 0u);
  warpOperands().addr[lane()] = addr;
  syncWarp();
  for (int j = 0; j < 4; ++j)
    std::memcpy(&r[j],
                dlc_gemm_tc_smem + warpOperands().addr[8 * j + lane() / 4] +
                    4 * (lane() % 4),
                4);
  syncWarp();
}

// mma.sync.m16n8k16.row.col: A(r, k) is in lane 4(r%8) + (k%8)/2, register
// r/8 + 2(k/8); B(k, n) in lane 4n + (k%8)/2, register k/8; the low half for
// even k. D rows g and g+8 (g = lane/4), columns 2(lane%4) and +1.
template <class Elem>
void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  constexpr bool bf16 = std::is_same<Elem, __nv_bfloat16>::value;
  static_assert(bf16 || std::is_same<Elem, __half>::value);
  Cta::WarpOperands &ops = warpOperands();
  std::memcpy(ops.a[lane()], a, sizeof a);
  std::memcpy(ops.b[lane()], b, sizeof b);
  syncWarp();
  auto element = [](unsigned reg, int k) {
    return toFloat(static_cast<uint16_t>(k % 2 ? reg >> 16 : reg), bf16);
  };
  for (int i = 0; i < 4; ++i) {
    const int row = lane() / 4 + 8 * (i / 2), col = 2 * (lane() % 4) + i % 2;
    float sum = 0;
    for (int k = 0; k < 16; ++k)
      sum +=
          element(ops.a[4 * (row % 8) + k % 8 / 2][row / 8 + 2 * (k / 8)], k) *
          element(ops.b[4 * col + k % 8 / 2][k / 8], k);
    d[i] += sum;
  }
  syncWarp();
}

} // namespace dlc_tc

#include "compiler/codegen/cuda/dlc_gemm_tc.cuh"
// Static shared arrays: one per instantiation, shared by the CTA's threads.
#undef __shared__
#define __shared__ static
#include "compiler/codegen/cuda/dlc_gemm_simt.cuh"

namespace {

/// Runs `body` for every thread of a (gridX, gridY) grid, one CTA at a time.
void launch(int gridX, int gridY, int threads, bool copiesLandAtOnce,
            const std::function<void()> &body) {
  for (int y = 0; y < gridY; ++y) {
    for (int x = 0; x < gridX; ++x) {
      const int warps = (threads + 31) / 32;
      cta.barrier = std::make_unique<Barrier>(threads);
      cta.warpBarriers.clear();
      for (int w = 0; w < warps; ++w)
        cta.warpBarriers.push_back(std::make_unique<Barrier>(32));
      cta.warps.assign(warps, {});
      cta.copiesLandAtOnce = copiesLandAtOnce;
      // Stale shared memory reads as NaN.
      std::memset(dlc_gemm_tc_smem, 0xff, sizeof dlc_gemm_tc_smem);
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t, x, y] {
          threadIdx = {static_cast<unsigned>(t), 0, 0};
          blockIdx = {static_cast<unsigned>(x), static_cast<unsigned>(y), 0};
          committedGroups.clear();
          uncommitted.clear();
          body();
        });
      for (std::thread &thread : pool)
        thread.join();
    }
  }
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

/// C = A * B, A row-major [M, K], B N-major [N, K], with every 8-element
/// chunk of A where (7m + k/8) % 11 == 0 read as zeros through nullptr.
template <class E, int M_, int N_, int K_> struct TensorCoreProblem {
  using Elem = E;
  static constexpr int M = M_, N = N_, K = K_;
  static bool zeroChunk(int m, int k) { return (7 * m + k / 8) % 11 == 0; }
  const E *a, *b;
  float *c;
  std::atomic<int> *stores;
  const E *a_ptr(int m, int k) const {
    EXPECT_TRUE(m < M && k < K && k % 8 == 0) << m << ", " << k;
    return zeroChunk(m, k) ? nullptr : a + m * K + k;
  }
  const E *b_ptr(int n, int k) const {
    EXPECT_TRUE(n < N && k < K && k % 8 == 0) << n << ", " << k;
    return b + n * K + k;
  }
  void store(int m, int n, float value) const {
    c[m * N + n] = value;
    ++stores[m * N + n];
  }
  void epilogue(int m, int n, float c0, float c1) const {
    EXPECT_TRUE(m < M && n < N && n % 2 == 0) << m << ", " << n;
    store(m, n, c0);
    if (n + 1 < N)
      store(m, n + 1, c1);
  }
};

template <class Elem> Elem toElem(float value) {
  if constexpr (std::is_same<Elem, __half>::value)
    return __float2half(value);
  else
    return __float2bfloat16(value);
}

template <class Elem, int M, int N, int K, int BM, int BN, int BK, int WM,
          int WN, int STAGES>
void runTensorCore(bool copiesLandAtOnce) {
  SCOPED_TRACE(testing::Message()
               << M << "x" << N << "x" << K << " tile " << BM << "x" << BN
               << "x" << BK << " warp " << WM << "x" << WN << " stages "
               << STAGES << (copiesLandAtOnce ? " copies at once" : ""));
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
  const Problem problem{a16.data(), b16.data(), c.data(), stores.data()};
  launch((N + BN - 1) / BN, (M + BM - 1) / BM,
         dlc_gemm_tc_threads<BM, BN, WM, WN>(), copiesLandAtOnce,
         [&] { dlc_gemm_tc<BM, BN, BK, WM, WN, STAGES>(problem); });
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

template <int M, int N, int K, int BM, int BN, int BK, int TM, int TN>
void runSimt() {
  SCOPED_TRACE(testing::Message()
               << M << "x" << N << "x" << K << " tile " << BM << "x" << BN
               << "x" << BK << " thread " << TM << "x" << TN);
  const std::vector<float> a = exactValues(M * K, M + K);
  const std::vector<float> b = exactValues(K * N, N + K);
  std::vector<float> c(M * N, NAN);
  std::vector<std::atomic<int>> stores(M * N);
  const SimtProblem<M, N, K> problem{a.data(), b.data(), c.data(),
                                     stores.data()};
  launch((N + BN - 1) / BN, (M + BM - 1) / BM,
         dlc_gemm_simt_threads<BM, BN, TM, TN>(), false,
         [&] { dlc_gemm_simt<BM, BN, BK, TM, TN>(problem); });
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
  }
}

TEST(GemmEmulation, Simt) {
  runSimt<100, 70, 40, 64, 64, 8, 4, 4>();
  runSimt<130, 150, 37, 128, 128, 8, 8, 8>();
  runSimt<1, 10, 64, 16, 16, 8, 4, 4>();
  runSimt<77, 33, 100, 128, 64, 16, 8, 4>();
  runSimt<20, 45, 19, 16, 32, 16, 4, 4>();
}

} // namespace
