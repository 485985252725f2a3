// Topic name rules, after Kafka 0.10's kafka.common.Topic (see topic.h).
#include "core/cluster/topic.h"

namespace ksim {
namespace {

// Topic.legalChars: "[a-zA-Z0-9\\._\\-]".
bool IsLegalTopicChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status InvalidTopic(std::string message) {
  return Status(Errc::kInvalidTopicException, std::move(message));
}

}  // namespace

Status ValidateTopicName(std::string_view topic) {
  if (topic.empty()) return InvalidTopic("topic name is illegal, can't be empty");
  if (topic == "." || topic == "..") return InvalidTopic("topic name cannot be \".\" or \"..\"");
  if (topic.size() > kTopicNameLengthMax) {
    return InvalidTopic("topic name is illegal, can't be longer than " +
                        std::to_string(kTopicNameLengthMax) + " characters");
  }
  for (char c : topic) {
    if (!IsLegalTopicChar(c)) {
      return InvalidTopic("topic name " + std::string(topic) +
                          " is illegal, contains a character other than ASCII alphanumerics, "
                          "'.', '_' and '-'");
    }
  }
  return Status::Ok();
}

bool HasCollisionChars(std::string_view topic) {
  return topic.find('.') != std::string_view::npos || topic.find('_') != std::string_view::npos;
}

bool TopicsCollide(std::string_view topic_a, std::string_view topic_b) {
  if (topic_a.size() != topic_b.size()) return false;
  for (size_t i = 0; i < topic_a.size(); ++i) {
    const char a = topic_a[i] == '.' ? '_' : topic_a[i];
    const char b = topic_b[i] == '.' ? '_' : topic_b[i];
    if (a != b) return false;
  }
  return true;
}

std::vector<std::string> CollidingTopics(std::string_view topic,
                                         const std::vector<std::string>& existing_topics) {
  std::vector<std::string> colliding;
  for (const std::string& existing : existing_topics) {
    if (existing != topic && TopicsCollide(topic, existing)) colliding.push_back(existing);
  }
  return colliding;
}

bool IsInternalTopic(std::string_view topic) { return topic == kGroupMetadataTopicName; }

}  // namespace ksim
