// message.format.version's magic. See core/config/log_config.h.
#include "core/config/log_config.h"

namespace ksim {

std::optional<int8_t> MessageFormatMagic(std::string_view version, KafkaRelease release) {
  const ApiVersion* found = FindApiVersion(version, release);
  if (found == nullptr) return std::nullopt;
  return found->magic;
}

}  // namespace ksim
