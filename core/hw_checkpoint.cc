#include "core/hw_checkpoint.h"

#include <vector>

#include "core/checkpoint_file.h"

namespace ksim {
namespace {

constexpr int32_t kVersion = 0;  // OffsetCheckpointFile.CurrentVersion

std::string PathIn(const std::string& log_dir) {
  return JoinPath(log_dir, std::string(kReplicationOffsetCheckpointFileName));
}

}  // namespace

Result<std::map<TopicPartition, Offset>> ReadHighWatermarks(Env& env, const std::string& log_dir) {
  CheckpointFile file(env, PathIn(log_dir), kVersion);
  KSIM_ASSIGN_OR_RETURN(std::vector<CheckpointLine> lines, file.Read());
  std::map<TopicPartition, Offset> high_watermarks;
  for (const CheckpointLine& line : lines) {
    const std::vector<std::string_view> fields = SplitOnWhitespace(line.text);
    int32_t partition = 0;
    int64_t offset = 0;
    if (fields.size() != 3 || fields[0].empty() || !ParseJavaInt32(fields[1], partition) ||
        !ParseJavaInt64(fields[2], offset) || partition < 0 || offset < 0) {
      return file.Corruption(line.line_number, "expected \"<topic> <partition> <offset>\"");
    }
    high_watermarks[TopicPartition{std::string(fields[0]), PartitionId(partition)}] =
        Offset(offset);
  }
  return high_watermarks;
}

Status WriteHighWatermarks(Env& env, const std::string& log_dir,
                           const std::map<TopicPartition, Offset>& high_watermarks) {
  std::vector<std::string> lines;
  lines.reserve(high_watermarks.size());
  for (const auto& [tp, hw] : high_watermarks) {
    KSIM_CHECK(hw.value() >= 0);
    lines.push_back(tp.topic + " " + ToString(tp.partition) + " " + ToString(hw));
  }
  CheckpointFile file(env, PathIn(log_dir), kVersion);
  return file.Write(lines);
}

}  // namespace ksim
