#include "core/storage/hw_checkpoint.h"

#include "core/storage/checkpoint_file.h"

namespace ksim {
namespace {

std::string PathIn(const std::string& log_dir) {
  return JoinPath(log_dir, std::string(kReplicationOffsetCheckpointFileName));
}

}  // namespace

Result<std::map<TopicPartition, Offset>> ReadHighWatermarks(Env& env, const std::string& log_dir) {
  return ReadOffsetCheckpoint(env, PathIn(log_dir));
}

Status WriteHighWatermarks(Env& env, const std::string& log_dir,
                           const std::map<TopicPartition, Offset>& high_watermarks) {
  return WriteOffsetCheckpoint(env, PathIn(log_dir), high_watermarks);
}

}  // namespace ksim
