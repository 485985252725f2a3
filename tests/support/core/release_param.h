// gtest's name for a test instantiated once per Kafka release (INSTANTIATE_TEST_SUITE_P's last
// argument): "Kafka0_10_0", "Kafka2_1", as test names allow no dots.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/config/kafka_version.h"

namespace ksim::testing {

inline std::string ReleaseParamName(const ::testing::TestParamInfo<KafkaRelease>& info) {
  std::string name(KafkaReleaseName(info.param));
  std::replace(name.begin(), name.end(), '.', '_');
  return "Kafka" + name;
}

}  // namespace ksim::testing
