// CRC-32C, two implementations behind one entry point.
//
// Portable: slicing-by-8 over tables built at compile time.
//
// Hardware (x86-64 with SSE4.2 and PCLMULQDQ, detected once with cpuid; compiled with per-function
// target attributes so the build needs no -msse4.2): the crc32 instruction has a latency of ~3
// cycles but can issue every cycle, so one dependent chain runs at a third of its throughput. The
// buffer is therefore cut into three equal streams that run interleaved, each from its own CRC
// state, and the three states are merged with the linearity of CRCs:
//
//   crc(s, A || B || C) = shift(crc(s, A), 2L) ^ shift(crc(0, B), L) ^ crc(0, C),  |A|=|B|=|C|=L
//
// where shift(c, n) appends n zero bytes to state c, i.e. multiplies it by x^(8n) mod P. That is
// one carry-less multiply by the constant x^(8n-33) mod P followed by one crc32 instruction
// (which multiplies its 64-bit input by x^32 and reduces mod P; the carry-less product of two
// bit-reflected 32-bit values carries one extra factor x). The constants for every stream length
// that is a multiple of 8 up to kMaxStreamBytes are computed at compile time.
#include "core/base/crc32c.h"

#include <array>
#include <cstring>

#include "core/base/check.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ksim::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // Castagnoli, bit-reflected

// ---- Portable: slicing-by-8 -------------------------------------------------------------------

using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables MakeSliceTables() {
  SliceTables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    t[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}
constexpr SliceTables kSlice = MakeSliceTables();

inline uint32_t LoadLittleEndian32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// ---- GF(2) arithmetic for the stream-combination constants ----------------------------------

// Product of two bit-reflected polynomials modulo P (bit 31 is x^0).
constexpr uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & 0x80000000u) product ^= b;
    a <<= 1;
    b = (b >> 1) ^ ((b & 1) ? kPolynomial : 0);  // b *= x
  }
  return product;
}

// x^n mod P, bit-reflected, by square and multiply.
constexpr uint32_t XPowModP(uint64_t n) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t square = 0x40000000u;  // x^1
  while (n != 0) {
    if (n & 1) result = MultiplyModP(result, square);
    square = MultiplyModP(square, square);
    n >>= 1;
  }
  return result;
}

// Per-stream length limit of one interleaved round: long enough that the merge (a few cycles) is
// noise, short enough that the three streams stay in L1 together.
constexpr size_t kMaxStreamBytes = 4096;
constexpr size_t kStreamSteps = kMaxStreamBytes / 8;

// kShift[k] = x^(8 * 8k - 33) mod P: shifts a state over k 8-byte words. Entry 0 is unused.
// Built incrementally (one multiplication by x^64 per entry) to stay cheap at compile time.
using ShiftTable = std::array<uint32_t, 2 * kStreamSteps + 1>;
constexpr ShiftTable MakeShiftTable() {
  ShiftTable t{};
  const uint32_t x64 = XPowModP(64);
  t[1] = XPowModP(64 - 33);
  for (size_t k = 2; k < t.size(); ++k) t[k] = MultiplyModP(t[k - 1], x64);
  return t;
}
constexpr ShiftTable kShift = MakeShiftTable();
static_assert(kShift[3] == XPowModP(3 * 64 - 33));
static_assert(kShift[2 * kStreamSteps] == XPowModP(2 * kStreamSteps * 64 - 33));

#if defined(__x86_64__)

bool DetectHardware() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0 && (ecx & bit_PCLMUL) != 0;
}

inline uint64_t LoadWord(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Appends 8 * `steps` zero bytes to the state `crc`. REQUIRES: 1 <= steps <= 2 * kStreamSteps.
__attribute__((target("sse4.2,pclmul"))) inline uint32_t ShiftState(uint32_t crc, size_t steps) {
  const __m128i product =
      _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(crc)),
                           _mm_cvtsi32_si128(static_cast<int>(kShift[steps])), 0);
  return static_cast<uint32_t>(_mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(product))));
}

#endif  // __x86_64__

}  // namespace

uint32_t ExtendPortable(uint32_t crc, ByteView data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint32_t l = ~crc;
  // Byte steps until 4-byte aligned, so the 8-byte loop reads aligned words where it can.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 3) != 0) {
    l = (l >> 8) ^ kSlice[0][(l ^ *p++) & 0xff];
    --n;
  }
  while (n >= 8) {
    const uint32_t lo = LoadLittleEndian32(p) ^ l;
    const uint32_t hi = LoadLittleEndian32(p + 4);
    l = kSlice[7][lo & 0xff] ^ kSlice[6][(lo >> 8) & 0xff] ^ kSlice[5][(lo >> 16) & 0xff] ^
        kSlice[4][lo >> 24] ^ kSlice[3][hi & 0xff] ^ kSlice[2][(hi >> 8) & 0xff] ^
        kSlice[1][(hi >> 16) & 0xff] ^ kSlice[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    l = (l >> 8) ^ kSlice[0][(l ^ *p++) & 0xff];
    --n;
  }
  return ~l;
}

#if defined(__x86_64__)

bool HardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

__attribute__((target("sse4.2,pclmul"))) uint32_t ExtendHardware(uint32_t crc, ByteView data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint64_t l = ~crc;
  // Rounds of three interleaved streams while at least one 8-byte word per stream remains.
  while (n >= 24) {
    const size_t steps = n / 24 < kStreamSteps ? n / 24 : kStreamSteps;
    const size_t stream_bytes = steps * 8;
    const uint8_t* a = p;
    const uint8_t* b = p + stream_bytes;
    const uint8_t* c = p + 2 * stream_bytes;
    uint64_t crc_a = l, crc_b = 0, crc_c = 0;
    for (size_t i = 0; i < stream_bytes; i += 8) {
      crc_a = _mm_crc32_u64(crc_a, LoadWord(a + i));
      crc_b = _mm_crc32_u64(crc_b, LoadWord(b + i));
      crc_c = _mm_crc32_u64(crc_c, LoadWord(c + i));
    }
    l = ShiftState(static_cast<uint32_t>(crc_a), 2 * steps) ^
        ShiftState(static_cast<uint32_t>(crc_b), steps) ^ crc_c;
    p += 3 * stream_bytes;
    n -= 3 * stream_bytes;
  }
  while (n >= 8) {
    l = _mm_crc32_u64(l, LoadWord(p));
    p += 8;
    n -= 8;
  }
  uint32_t l32 = static_cast<uint32_t>(l);
  while (n > 0) {
    l32 = _mm_crc32_u8(l32, *p++);
    --n;
  }
  return ~l32;
}

uint32_t Extend(uint32_t crc, ByteView data) {
  return HardwareAvailable() ? ExtendHardware(crc, data) : ExtendPortable(crc, data);
}

#else  // !__x86_64__

bool HardwareAvailable() { return false; }

uint32_t ExtendHardware(uint32_t crc, ByteView data) {
  KSIM_CHECK_MSG(false, "crc32c::ExtendHardware called without hardware support");
}

uint32_t Extend(uint32_t crc, ByteView data) { return ExtendPortable(crc, data); }

#endif  // __x86_64__

}  // namespace ksim::crc32c
