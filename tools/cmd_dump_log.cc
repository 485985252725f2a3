// `ksim dump-log`: prints segment files the way Kafka's kafka-dump-log.sh (DumpLogSegments)
// does: each batch of a .log file with its offsets, producer fields, position, CRC and whether
// it is valid, and with --print-data-log each record; the entries of .index and .timeindex
// files. --json prints the same as one JSON document. Message format v0/v1 entries (magic 0/1)
// print as Kafka 0.10.0.1's DumpLogSegments prints them ("offset: 0 position: 0 isvalid: true
// payloadsize: 5 magic: 1 compresscodec: NoCompressionCodec crc: 1234"), v2 batches as later
// releases do, each entry of a mixed log in its own format. Damage is reported with the file and
// position and exits 2 after printing everything valid before it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env/env.h"
#include "core/env/posix_env.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"
#include "core/storage/file_batch_reader.h"
#include "core/storage/log_segment.h"
#include "core/storage/offset_index.h"
#include "core/storage/time_index.h"
#include "tools/commands.h"

namespace ksim::tools {
namespace {

enum class FileKind { kLog, kIndex, kTimeIndex, kOther };

FileKind KindOf(std::string_view path) {
  const std::string_view name = path.substr(path.find_last_of('/') + 1);
  if (!OffsetFromFileName(name)) return FileKind::kOther;
  const std::string_view suffix = name.substr(20);
  if (suffix == kLogFileSuffix) return FileKind::kLog;
  if (suffix == kIndexFileSuffix) return FileKind::kIndex;
  if (suffix == kTimeIndexFileSuffix) return FileKind::kTimeIndex;
  return FileKind::kOther;
}

Offset BaseOffsetOf(std::string_view path) {
  return *OffsetFromFileName(path.substr(path.find_last_of('/') + 1));
}

struct DumpOptions {
  std::vector<std::string> files;
  bool print_data_log = false;
  bool json = false;
};

// Bytes as text: printable ASCII as is, anything else as \xNN (Kafka prints raw bytes; escaping
// keeps terminals and JSON intact).
std::string Printable(const std::optional<Bytes>& bytes) {
  if (!bytes) return "null";
  std::string out;
  for (uint8_t c : *bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

nlohmann::ordered_json BatchJson(const BatchHeader& h, uint64_t position, bool valid) {
  nlohmann::ordered_json j;
  j["baseOffset"] = h.base_offset.value();
  j["lastOffset"] = h.last_offset().value();
  j["count"] = h.records_count;
  j["baseSequence"] = h.base_sequence.value();
  j["lastSequence"] = h.base_sequence == kNoSequence ? -1 : h.last_sequence().value();
  j["producerId"] = h.producer_id.value();
  j["producerEpoch"] = h.producer_epoch.value();
  j["partitionLeaderEpoch"] = h.partition_leader_epoch.value();
  j["isTransactional"] = h.transactional();
  j["isControl"] = h.control();
  j["position"] = position;
  j[h.log_append_time() ? "LogAppendTime" : "CreateTime"] = h.max_timestamp;
  j["size"] = h.size_in_bytes();
  j["magic"] = h.magic;
  j["compresscodec"] = h.compression() == 0 ? "NONE" : "UNSUPPORTED";
  j["crc"] = h.crc;
  j["isvalid"] = valid;
  return j;
}

std::string BatchLine(const nlohmann::ordered_json& j) {
  std::string line;
  for (const auto& [key, value] : j.items()) {
    if (!line.empty()) line += ' ';
    line += key + ": " + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return line;
}

// Kafka 0.10.0.1's CompressionCodec names (kafka.message.CompressionCodec).
const char* LegacyCodecName(int codec) {
  switch (codec) {
    case 0:
      return "NoCompressionCodec";
    case 1:
      return "GZIPCompressionCodec";
    case 2:
      return "SnappyCompressionCodec";
    case 3:
      return "LZ4CompressionCodec";
    default:
      return "UnknownCompressionCodec";
  }
}

// One v0/v1 entry as Kafka 0.10.0.1's DumpLogSegments.dumpLog prints it: offset, position,
// isvalid (the CRC), payloadsize (-1: null), magic, compresscodec, crc (unsigned), keysize when
// there is a key, and with --print-data-log the key (when there is one) and the payload (unless
// it is null). A compressed wrapper prints shallowly (its last inner offset, as without
// --deep-iteration); its records cannot be printed. Returns the damage (ok when none).
Status LegacyEntry(ByteView entry, uint64_t position, const DumpOptions& options,
                   nlohmann::ordered_json& out) {
  Result<LegacyMessage> message = ParseLegacyMessage(entry);
  if (!message.ok()) return message.status();
  const BatchHeader& h = message->header;
  const bool valid = message->ComputedCrc(entry) == h.crc;
  out["offset"] = h.base_offset.value();
  out["position"] = position;
  out["isvalid"] = valid;
  out["payloadsize"] = message->value_length;
  out["magic"] = h.magic;
  out["compresscodec"] = LegacyCodecName(h.compression());
  out["crc"] = h.crc;
  if (message->key_length >= 0) out["keysize"] = message->key_length;
  if (!valid) return VerifyBatch(entry);
  if (!options.print_data_log) return Status::Ok();
  KSIM_ASSIGN_OR_RETURN(std::vector<Record> records, DecodeRecords(entry));
  if (records[0].key) out["key"] = Printable(records[0].key);
  if (records[0].value) out["payload"] = Printable(records[0].value);
  return Status::Ok();
}

// Dumps one .log file; returns false (after reporting) when the file is damaged.
bool DumpLogFile(Env& env, const std::string& path, const DumpOptions& options,
                 nlohmann::ordered_json& out) {
  auto file = env.OpenFile(path, OpenMode::kOpenExisting);
  if (!file.ok()) {
    std::cerr << "ksim dump-log: " << path << ": " << file.status().ToString() << "\n";
    return false;
  }
  const uint64_t file_size = (*file)->Size();
  FileBatchReader reader(**file, 0, file_size, /*whole_batches=*/true);
  out["file"] = path;
  out["kind"] = "log";
  out["batches"] = nlohmann::ordered_json::array();
  if (!options.json) {
    std::cout << "Dumping " << path << "\n";
    std::cout << "Starting offset: " << BaseOffsetOf(path) << "\n";
  }
  Status damage;
  while (true) {
    Result<bool> next = reader.Next();
    if (!next.ok()) {
      damage = next.status();
      break;
    }
    if (!*next) break;
    const BatchHeader& header = reader.header();
    if (header.magic != kMagicV2) {
      nlohmann::ordered_json entry;
      const Status entry_damage = LegacyEntry(reader.batch(), reader.position(), options, entry);
      if (!options.json && !entry.empty()) std::cout << BatchLine(entry) << "\n";
      if (!entry.empty()) out["batches"].push_back(std::move(entry));
      if (!entry_damage.ok()) {
        damage =
            Status(entry_damage.code(), "batch at position " + std::to_string(reader.position()) +
                                            ": " + entry_damage.message());
        break;
      }
      continue;
    }
    const Status verified = VerifyBatch(reader.batch());
    nlohmann::ordered_json batch = BatchJson(header, reader.position(), verified.ok());
    if (!options.json) std::cout << BatchLine(batch) << "\n";
    if (!verified.ok()) {
      damage = Status(verified.code(), "batch at position " + std::to_string(reader.position()) +
                                           ": " + verified.message());
      out["batches"].push_back(std::move(batch));
      break;
    }
    if (options.print_data_log) {
      auto records = DecodeRecords(reader.batch());
      KSIM_CHECK(records.ok());  // VerifyBatch decoded them already
      batch["records"] = nlohmann::ordered_json::array();
      Sequence sequence = header.base_sequence;
      for (const Record& record : *records) {
        nlohmann::ordered_json r;
        r["offset"] = record.offset.value();
        r[header.log_append_time() ? "LogAppendTime" : "CreateTime"] = record.timestamp_ms;
        r["keysize"] = record.key ? static_cast<int64_t>(record.key->size()) : -1;
        r["valuesize"] = record.value ? static_cast<int64_t>(record.value->size()) : -1;
        r["sequence"] = sequence.value();
        nlohmann::ordered_json header_keys = nlohmann::ordered_json::array();
        for (const RecordHeader& h : record.headers) header_keys.push_back(h.key);
        r["headerKeys"] = header_keys;
        if (record.key) r["key"] = Printable(record.key);
        r["payload"] = Printable(record.value);
        if (!options.json) std::cout << "| " << BatchLine(r) << "\n";
        batch["records"].push_back(std::move(r));
        if (sequence != kNoSequence) {
          sequence = sequence.value() == INT32_MAX ? Sequence(0) : sequence + 1;
        }
      }
    }
    out["batches"].push_back(std::move(batch));
  }
  if (damage.ok() && !reader.damage().ok()) damage = reader.damage();
  if (damage.ok() && reader.partial()) {
    damage = Status(Errc::kCorruption, "incomplete batch at position " +
                                           std::to_string(reader.position()) + " (" +
                                           std::to_string(file_size - reader.position()) +
                                           " bytes to the end of the file)");
  }
  if (!damage.ok()) {
    out["error"] = damage.ToString();
    std::cerr << "ksim dump-log: " << path << ": " << damage.ToString() << "\n";
    return false;
  }
  return true;
}

// Prints the entries of an index file. An index left preallocated by a crash ends in zero
// entries; like DumpLogSegments, stop at the first entry after the first that points back to the
// base offset.
bool DumpIndexFile(Env& env, const std::string& path, bool time_index, const DumpOptions& options,
                   nlohmann::ordered_json& out) {
  out["file"] = path;
  out["kind"] = time_index ? "timeindex" : "index";
  out["entries"] = nlohmann::ordered_json::array();
  const Offset base = BaseOffsetOf(path);
  auto print = [&](nlohmann::ordered_json entry) {
    if (!options.json) std::cout << BatchLine(entry) << "\n";
    out["entries"].push_back(std::move(entry));
  };
  if (!options.json) std::cout << "Dumping " << path << "\n";
  // An existing index is mapped at its length (the size limit only shapes new files).
  if (time_index) {
    auto index = TimeIndex::Open(env, path, base, LogConfig{}.max_index_size_bytes);
    if (!index.ok()) {
      std::cerr << "ksim dump-log: " << path << ": " << index.status().ToString() << "\n";
      return false;
    }
    for (size_t i = 0; i < (*index)->entries(); ++i) {
      const TimestampOffset entry = (*index)->EntryAt(i);
      if (i > 0 && entry.offset == base) break;
      print({{"timestamp", entry.timestamp_ms}, {"offset", entry.offset.value()}});
    }
  } else {
    auto index = OffsetIndex::Open(env, path, base, LogConfig{}.max_index_size_bytes);
    if (!index.ok()) {
      std::cerr << "ksim dump-log: " << path << ": " << index.status().ToString() << "\n";
      return false;
    }
    for (size_t i = 0; i < (*index)->entries(); ++i) {
      const OffsetPosition entry = (*index)->EntryAt(i);
      if (i > 0 && entry.offset == base) break;
      print({{"offset", entry.offset.value()}, {"position", entry.position}});
    }
  }
  return true;
}

int RunDumpLog(const DumpOptions& options) {
  PosixEnv env;
  std::vector<std::string> paths;
  for (const std::string& file : options.files) {
    std::error_code error;
    if (std::filesystem::is_directory(file, error)) {
      auto names = env.ListDir(file);
      if (!names.ok()) {
        std::cerr << "ksim dump-log: " << file << ": " << names.status().ToString() << "\n";
        return 2;
      }
      for (const std::string& name : *names) {
        if (KindOf(name) != FileKind::kOther) paths.push_back(JoinPath(file, name));
      }
    } else {
      paths.push_back(file);
    }
  }
  bool ok = true;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const std::string& path : paths) {
    nlohmann::ordered_json out;
    switch (KindOf(path)) {
      case FileKind::kLog:
        ok &= DumpLogFile(env, path, options, out);
        break;
      case FileKind::kIndex:
        ok &= DumpIndexFile(env, path, false, options, out);
        break;
      case FileKind::kTimeIndex:
        ok &= DumpIndexFile(env, path, true, options, out);
        break;
      case FileKind::kOther:
        std::cerr
            << "ksim dump-log: " << path
            << ": not a segment file (expected <20-digit offset>.log, .index or .timeindex)\n";
        ok = false;
        continue;
    }
    files.push_back(std::move(out));
  }
  if (options.json) std::cout << files.dump(2) << "\n";
  return ok ? 0 : 2;
}

}  // namespace

Command AddDumpLog(CLI::App& app) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* sub =
      app.add_subcommand("dump-log",
                         "Print the batches, records and index entries of segment files (like "
                         "kafka-dump-log.sh)");
  sub->add_option("--files", options->files,
                  "Segment files (.log, .index, .timeindex) or partition directories")
      ->required()
      ->check(CLI::ExistingPath);
  sub->add_flag("--print-data-log", options->print_data_log, "Also print each record");
  sub->add_flag("--json", options->json, "Print one JSON document instead of text");
  return [options] { return RunDumpLog(*options); };
}

}  // namespace ksim::tools
