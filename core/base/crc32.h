// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF),
// the checksum of Kafka's message format v0 and v1 (magic 0/1), as java.util.zip.CRC32 computes
// it (Kafka's org.apache.kafka.common.utils.Crc32 before 0.11). Not CRC-32C (core/base/crc32c.h),
// which record batch v2 uses. A byte-at-a-time table: legacy messages are small and rare.
#pragma once

#include <cstdint>

#include "core/base/bytes.h"

namespace ksim::crc32 {

// Extends `crc` (the CRC of earlier bytes, 0 for none) over `data`.
uint32_t Extend(uint32_t crc, ByteView data);
inline uint32_t Value(ByteView data) { return Extend(0, data); }

}  // namespace ksim::crc32
