// Topic names: what Kafka accepts, which names collide, which are internal. Mirrors Kafka 0.10's
// kafka.common.Topic object: validate (empty, "." and "..", longer than 249 characters, a
// character outside [a-zA-Z0-9._-]), hasCollisionChars / hasCollision (metric names turn '.'
// into '_', so "a.b" and "a_b" would report into the same metrics), and the internal topic
// __consumer_offsets that the group coordinator writes committed offsets to.
//
// Pure functions over strings; no state, safe from any thread. A rejected name is a Status with
// Kafka's INVALID_TOPIC_EXCEPTION code and the message Kafka's InvalidTopicException carries, so
// the simulated kafka-topics.sh can print it word for word.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ksim {

// Kafka's GroupMetadataTopicName: the internal topic holding committed offsets.
inline constexpr std::string_view kGroupMetadataTopicName = "__consumer_offsets";
// Topic.maxNameLength: 249, so that "<topic>-<partition>" plus a ".deleted"-style suffix still
// fits a 255-byte file name.
inline constexpr size_t kTopicNameLengthMax = 249;
// What TopicCommand prints when a created topic's name contains '.' or '_'.
inline constexpr std::string_view kTopicCollisionWarning =
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
    "could collide. To avoid issues it is best to use either, but not both.";

// ok, or kInvalidTopicException with Kafka's message, checked in Kafka's order: empty, "." or
// "..", too long, then an illegal character.
Status ValidateTopicName(std::string_view topic);

// Topic.hasCollisionChars: the name contains '.' or '_'.
bool HasCollisionChars(std::string_view topic);
// Topic.hasCollision: the names are equal once every '.' is read as '_'.
bool TopicsCollide(std::string_view topic_a, std::string_view topic_b);
// The existing topics that `topic` collides with, in the order given, excluding `topic` itself
// (AdminUtils refuses the creation with "Topic 't' collides with existing topics: a, b").
std::vector<std::string> CollidingTopics(std::string_view topic,
                                         const std::vector<std::string>& existing_topics);
// Topic.isInternal.
bool IsInternalTopic(std::string_view topic);

}  // namespace ksim
