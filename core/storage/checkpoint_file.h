// CheckpointFile: Kafka's small text checkpoint files (kafka.server.checkpoints.CheckpointFile):
// leader-epoch-checkpoint in a partition directory, and in a log directory
// replication-offset-checkpoint and recovery-point-offset-checkpoint. The format is
//
//   <version>\n
//   <number of entries>\n
//   <entry>\n            (one line per entry; its syntax belongs to the caller)
//
// Write replaces the file atomically as Kafka does: the lines go to "<path>.tmp", which is
// fsynced, renamed over <path>, and the directory is fsynced so that the rename survives a
// power loss. A crash at any point leaves either the old or the new file, whole. Read checks the
// version and the entry count and hands back the entry lines with their line numbers; damage is
// kCorruption naming "<path>:<line>", never an assertion. A missing or empty file has no entries
// (Kafka creates the file empty on first use).
//
// Holds no file open between calls; one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/env/env.h"

namespace ksim {

struct CheckpointLine {
  int line_number = 0;  // 1-based line in the file
  std::string text;
};

class CheckpointFile {
 public:
  // `env` must outlive this object.
  CheckpointFile(Env& env, std::string path, int32_t version);

  // Replaces the file with `entry_lines` (each without its newline) under the header.
  // REQUIRES: no entry line contains '\n' or '\r'.
  Status Write(const std::vector<std::string>& entry_lines);
  // The entry lines, or kCorruption ("<path>:<line>: ..."), or an I/O error.
  Result<std::vector<CheckpointLine>> Read() const;

  // A kCorruption Status for `line_number` of this file.
  Status Corruption(int line_number, std::string_view what) const;

  const std::string& path() const { return path_; }
  std::string temp_path() const { return path_ + ".tmp"; }

 private:
  Env* env_;  // not owned
  std::string path_;
  int32_t version_;
};

// Java's line.split("\\s+"): fields between runs of whitespace; a leading run gives an empty
// first field, trailing empty fields are dropped.
std::vector<std::string_view> SplitOnWhitespace(std::string_view line);

// Kafka's OffsetCheckpointFile (version 0): one "<topic> <partition> <offset>" line per
// partition, the format of recovery-point-offset-checkpoint, log-start-offset-checkpoint and
// replication-offset-checkpoint. A missing file reads as empty; a malformed line is kCorruption
// naming the file and line. The write is atomic, ordered by partition. REQUIRES: offsets >= 0.
Result<std::map<TopicPartition, Offset>> ReadOffsetCheckpoint(Env& env, const std::string& path);
Status WriteOffsetCheckpoint(Env& env, const std::string& path,
                             const std::map<TopicPartition, Offset>& offsets);

}  // namespace ksim
