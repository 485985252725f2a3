// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka's record batch
// v2 (over attributes..end). Uses the SSE4.2 crc32 instruction when the CPU has it, else a
// slicing-by-8 table; both give identical results (tests/core/base/crc32c_test.cc checks known
// vectors from RFC 3720 against each).
#pragma once

#include <cstdint>

#include "core/base/bytes.h"

namespace ksim::crc32c {

// Extends `crc` (the CRC of earlier bytes, 0 for none) over `data`.
uint32_t Extend(uint32_t crc, ByteView data);
inline uint32_t Value(ByteView data) { return Extend(0, data); }

// The two implementations, exposed for tests and benchmarks.
uint32_t ExtendPortable(uint32_t crc, ByteView data);
uint32_t ExtendHardware(uint32_t crc, ByteView data);  // REQUIRES: HardwareAvailable()
bool HardwareAvailable();

}  // namespace ksim::crc32c
