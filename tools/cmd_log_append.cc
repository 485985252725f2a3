// `ksim log-append`: writes records into a partition's log on the real disk with ksim's storage
// engine, for demos and checks. Opens (recovering if needed) the log in DIR/TOPIC-PARTITION/
// through the POSIX Env, appends COUNT records of VALUE-BYTES bytes in batches of BATCH-RECORDS,
// rolling at SEGMENT-BYTES, prints the offsets each batch got, and closes the log cleanly.
// --kafka-version is the broker release whose log is written (default 2.1, the latest ksim models):
// a 0.10.0 log has no .timeindex files (KIP-33 came with 0.10.1) and its default format is
// message sets v1. --message-format-version (Kafka's message.format.version: "0.10.0", "0.9.0",
// "0.11.0", "2.0") chooses the format written instead of the release's own: message sets v0/v1
// before 0.11, record batches v2 from 0.11; a log may hold both, as after an upgrade.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/config/kafka_version.h"
#include "core/config/log_config.h"
#include "core/env/posix_env.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "tools/commands.h"

namespace ksim::tools {
namespace {

struct AppendOptions {
  std::string dir;
  std::string topic;
  int32_t partition = 0;
  int64_t count = 0;
  int64_t value_bytes = 100;
  int64_t batch_records = 1;
  int64_t segment_bytes = 1LL << 30;
  std::string kafka_version = std::string(KafkaReleaseName(kLatestKafkaRelease));
  std::string message_format_version;  // empty: the release's own (its latest ApiVersion)
};

// Kafka's topic name rule (Topic.validate): 1..249 of [a-zA-Z0-9._-], not "." or "..".
std::string ValidateTopic(const std::string& topic) {
  if (topic.empty() || topic.size() > 249) return "topic names are 1 to 249 characters";
  if (topic == "." || topic == "..") return "topic name cannot be \".\" or \"..\"";
  for (char c : topic) {
    const bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!legal) return "topic names may contain only ASCII letters, digits, '.', '_' and '-'";
  }
  return "";
}

// The value of record number `n`: "record-<n> " then filler up to `size` bytes (cut when shorter).
Bytes RecordValue(int64_t n, int64_t size) {
  std::string text = "record-" + std::to_string(n) + " ";
  Bytes value(static_cast<size_t>(size));
  for (size_t i = 0; i < value.size(); ++i) {
    value[i] = i < text.size() ? static_cast<uint8_t>(text[i])
                               : static_cast<uint8_t>('a' + (n + static_cast<int64_t>(i)) % 26);
  }
  return value;
}

int RunLogAppend(const AppendOptions& options) {
  if (std::string why = ValidateTopic(options.topic); !why.empty()) {
    std::cerr << "ksim log-append: --topic \"" << options.topic << "\": " << why << "\n";
    return 2;
  }
  PosixEnv env;
  SystemClock clock;
  LogConfig config;
  config.segment_bytes = static_cast<int32_t>(options.segment_bytes);
  const Result<KafkaRelease> release = ParseKafkaRelease(options.kafka_version);
  if (!release.ok()) {
    std::cerr << "ksim log-append: --kafka-version \"" << options.kafka_version
              << "\": " << release.status().message() << "\n";
    return 2;
  }
  const std::optional<int8_t> magic =
      options.message_format_version.empty()
          ? std::optional<int8_t>(LatestApiVersion(*release).magic)
          : MessageFormatMagic(options.message_format_version, *release);
  if (!magic) {
    std::cerr << "ksim log-append: --message-format-version \"" << options.message_format_version
              << "\": not a Kafka version known to Kafka " << KafkaReleaseName(*release)
              << " (valid: 0.8.0-0.8.2, 0.9.0 (magic 0), 0.10.0-0.10.2 (magic 1), 0.11.0, 1.0, "
                 "1.1, 2.0, 2.1 (magic 2), up to the release, or an internal version such as "
                 "0.10.0-IV1; docs/versions.md)\n";
    return 2;
  }
  config.message_format_magic = *magic;
  config.time_index = *release >= KafkaRelease::k0_10_1;  // KIP-33
  const std::string dir =
      JoinPath(options.dir, options.topic + "-" + std::to_string(options.partition));
  if (Status made = env.CreateDir(options.dir); !made.ok()) {
    std::cerr << "ksim log-append: " << made.ToString() << "\n";
    return 2;
  }
  auto opened = Log::Open(env, clock, dir, config);
  if (!opened.ok()) {
    std::cerr << "ksim log-append: " << dir << ": " << opened.status().ToString() << "\n";
    return 2;
  }
  Log& log = **opened;
  const LogRecoveryReport& recovery = log.recovery_report();
  if (!recovery.first_damage.ok()) {
    std::cout << "recovered " << dir << ": cut " << recovery.bytes_truncated
              << " bytes at the first damaged batch (" << recovery.first_damage.ToString() << ")\n";
  }
  std::cout << "opened " << dir << " at log end offset " << log.log_end_offset() << "\n";

  std::vector<RecordInput> records;
  for (int64_t written = 0; written < options.count;) {
    const int64_t in_batch = std::min(options.batch_records, options.count - written);
    records.clear();
    const int64_t now_ms = clock.NowMs();
    for (int64_t i = 0; i < in_batch; ++i) {
      RecordInput record;
      record.timestamp_ms = now_ms;
      record.value = RecordValue(log.log_end_offset().value() + i, options.value_bytes);
      records.push_back(std::move(record));
    }
    // Written as a producer of that release would (the log would convert anything else).
    Bytes batch = EncodeRecords(*magic, BatchSpec{}, records);
    auto appended = log.AppendAsLeader(MutableByteView(batch), LeaderEpoch(0));
    if (!appended.ok()) {
      std::cerr << "ksim log-append: " << dir << ": " << appended.status().ToString() << "\n";
      return 2;
    }
    std::cout << "offsets " << appended->first_offset << ".." << appended->last_offset << " ("
              << appended->num_records << " records, " << appended->valid_bytes << " bytes)\n";
    written += in_batch;
  }
  if (Status closed = log.Close(); !closed.ok()) {
    std::cerr << "ksim log-append: " << dir << ": " << closed.ToString() << "\n";
    return 2;
  }
  std::cout << "log end offset " << log.log_end_offset() << ", " << log.number_of_segments()
            << " segment(s), " << log.size_in_bytes() << " bytes\n";
  return 0;
}

}  // namespace

Command AddLogAppend(CLI::App& app) {
  auto options = std::make_shared<AppendOptions>();
  CLI::App* sub = app.add_subcommand(
      "log-append", "Append records to a partition's log on disk with ksim's storage engine");
  sub->add_option("--dir", options->dir, "Log directory (holds TOPIC-PARTITION/)")->required();
  sub->add_option("--topic", options->topic, "Topic name")->required();
  sub->add_option("--partition", options->partition, "Partition number")
      ->required()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--count", options->count, "Records to append")
      ->required()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  sub->add_option("--value-bytes", options->value_bytes, "Bytes per record value")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{64} << 20));
  sub->add_option("--batch-records", options->batch_records, "Records per batch")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  // Kafka's minimum segment.bytes is 14 (LegacyRecord.RECORD_OVERHEAD_V0); the max an int32.
  sub->add_option("--segment-bytes", options->segment_bytes, "Roll a new segment at this size")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{14}, int64_t{INT32_MAX}));
  sub->add_option("--kafka-version", options->kafka_version,
                  "The broker release whose log is written: 0.10.0 keeps no .timeindex, and "
                  "each release writes its own message format by default")
      ->capture_default_str();
  sub->add_option("--message-format-version", options->message_format_version,
                  "Kafka's message.format.version: 0.9.0 writes magic 0, 0.10.0 magic 1, 0.11.0 "
                  "and later record batches v2 (default: the release's own)");
  return [options] { return RunLogAppend(*options); };
}

}  // namespace ksim::tools
