//===- Sha256.cpp - FIPS 180-4 SHA-256 --------------------------*- C++ -*-===//

#include "artifact/Sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define DLC_SHA256_X86 1
#endif

using namespace dlc;

namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

#ifdef DLC_SHA256_X86
/// Whether the CPU has the SHA extensions (and the SSSE3 and SSE4.1 their
/// code below needs), from CPUID: leaf 7 EBX bit 29; leaf 1 ECX bits 9, 19.
bool cpuHasSha() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
    return false;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}

/// FIPS 180-4's compression of `blocks` 64-byte blocks with the SHA
/// extensions: the state as the two vectors they take, ABEF and CDGH; each
/// sha256rnds2 does two rounds, each message vector holds four schedule
/// words W[4i .. 4i+3], big-endian in the block.
__attribute__((target("sha,sse4.1,ssse3"))) void
compressSha(uint32_t state[8], const uint8_t *data, size_t blocks) {
  const __m128i byteSwap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks; --blocks, data += 64) {
    const __m128i abefIn = abef, cdghIn = cdgh;
    __m128i w[4];
    for (int i = 0; i < 16; ++i) {
      __m128i &wi = w[i & 3];
      if (i < 4) {
        wi = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + 16 * i)),
            byteSwap);
      } else {
        // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16].
        const __m128i &w1 = w[(i - 1) & 3], &w2 = w[(i - 2) & 3];
        __m128i next = _mm_sha256msg1_epu32(wi, w[(i - 3) & 3]);
        next = _mm_add_epi32(next, _mm_alignr_epi8(w1, w2, 4));
        wi = _mm_sha256msg2_epu32(next, w1);
      }
      __m128i k = _mm_add_epi32(
          wi,
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(kRound + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
    }
    abef = _mm_add_epi32(abef, abefIn);
    cdgh = _mm_add_epi32(cdgh, cdghIn);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state),
                   _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state + 4),
                   _mm_alignr_epi8(dchg, feba, 8));
}
#endif

/// Whether compressBlocks uses the SHA extensions: where the CPU has them,
/// unless a test turned them off (Sha256::useHardware).
bool &hardwareOn() {
#ifdef DLC_SHA256_X86
  static bool on = cpuHasSha();
#else
  static bool on = false;
#endif
  return on;
}

} // namespace

bool Sha256::hardwareAvailable() {
#ifdef DLC_SHA256_X86
  static const bool available = cpuHasSha();
  return available;
#else
  return false;
#endif
}

void Sha256::useHardware(bool on) { hardwareOn() = on && hardwareAvailable(); }

void Sha256::compressBlocks(const uint8_t *data, size_t blocks) {
#ifdef DLC_SHA256_X86
  if (hardwareOn()) {
    compressSha(state_.data(), data, blocks);
    return;
  }
#endif
  for (; blocks; --blocks, data += 64)
    compress(data);
}

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::compress(const uint8_t *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 |
           uint32_t(block[4 * i + 2]) << 8 | uint32_t(block[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3],
           e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                  ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

Sha256 &Sha256::update(const void *data, size_t size) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  length_ += size;
  if (buffered_) {
    size_t take = std::min(size, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes, take);
    buffered_ += take;
    bytes += take;
    size -= take;
    if (buffered_ < buffer_.size())
      return *this;
    compressBlocks(buffer_.data(), 1);
    buffered_ = 0;
  }
  compressBlocks(bytes, size / 64);
  bytes += size / 64 * 64;
  size %= 64;
  std::memcpy(buffer_.data(), bytes, size);
  buffered_ = size;
  return *this;
}

Sha256::Digest Sha256::finish() {
  uint64_t bits = length_ * 8;
  uint8_t pad[72] = {0x80};
  // 0x80, zeros up to 56 mod 64, then the bit length big-endian.
  size_t padLength = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i)
    pad[padLength + i] = uint8_t(bits >> (56 - 8 * i));
  update(pad, padLength + 8);
  Digest digest;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      digest[4 * i + j] = uint8_t(state_[i] >> (24 - 8 * j));
  return digest;
}

Sha256::Digest Sha256::hash(std::string_view bytes) {
  return Sha256().update(bytes).finish();
}

std::string Sha256::hex(const Digest &digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}
