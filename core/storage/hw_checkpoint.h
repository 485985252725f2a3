// The replication-offset-checkpoint file of a log directory: the high watermark of every replica
// whose log lives there (Kafka's ReplicaManager.highWatermarkCheckpoints, an
// OffsetCheckpointFile). Same text format as the other offset checkpoints
// (core/storage/checkpoint_file.h):
//
//   0\n<count>\n<topic> <partition> <high watermark>\n...
//
// Written every replica.high.watermark.checkpoint.interval.ms and on clean shutdown, read at
// startup: a restarted replica starts with the HW it had checkpointed (clamped to its log), which
// is what Kafka 0.10's truncate-to-HW rule relies on. Writes are atomic (tmp file, fsync, rename,
// dir fsync): a crash leaves the old or the new file. Damage is kCorruption naming file and line.
// Pure functions over the Env; no state.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/env/env.h"

namespace ksim {

inline constexpr std::string_view kReplicationOffsetCheckpointFileName =
    "replication-offset-checkpoint";

// The checkpointed HWs of `log_dir` (empty when the file is missing or empty).
Result<std::map<TopicPartition, Offset>> ReadHighWatermarks(Env& env, const std::string& log_dir);
// Replaces the file with `high_watermarks`, ordered by partition.
Status WriteHighWatermarks(Env& env, const std::string& log_dir,
                           const std::map<TopicPartition, Offset>& high_watermarks);

}  // namespace ksim
