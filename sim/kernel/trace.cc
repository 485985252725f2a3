#include "sim/kernel/trace.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "core/base/json_text.h"
#include "core/base/trace_names.h"

namespace ksim::sim {
std::string_view TraceLevelName(TraceLevel level) {
  switch (level) {
    case TraceLevel::kState:
      return "state";
    case TraceLevel::kMessages:
      return "messages";
  }
  KSIM_CHECK_MSG(false, "unknown trace level");
}

Result<TraceLevel> ParseTraceLevel(std::string_view name) {
  if (name == "state") return TraceLevel::kState;
  if (name == "messages") return TraceLevel::kMessages;
  return Status(Errc::kInvalidArgument,
                "unknown trace level '" + std::string(name) + "' (expected state or messages)");
}

// XXH64_state_t is complete here alone (XXH_INLINE_ALL compiles xxHash into this file, its
// names prefixed: nothing clashes with a libxxhash linked elsewhere).
// Bytes are gathered into `pending` and hashed a block at a time: XXH64_update's cost per call
// (its 32-byte stripes begun and ended, the leftover copied) was a fifth of a trace line's hash
// with each ~150-byte line a call of its own (docs/BENCHMARKS.md, "Scale", twenty-fifth change).
// The digest is the same however the bytes are split.
struct Xxh64::State {
  static constexpr size_t kBlock = 16 * 1024;
  void Drain() {
    XXH64_update(&xxh, pending, pending_size);
    pending_size = 0;
  }
  XXH64_state_t xxh;
  size_t pending_size = 0;
  char pending[kBlock];
};

Xxh64::Xxh64() : state_(std::make_unique<State>()) { XXH64_reset(&state_->xxh, 0); }
Xxh64::~Xxh64() = default;
Xxh64::Xxh64(Xxh64&&) noexcept = default;
Xxh64& Xxh64::operator=(Xxh64&&) noexcept = default;

void Xxh64::Update(std::string_view bytes) {
  State& state = *state_;
  if (bytes.size() <= State::kBlock - state.pending_size) {
    if (!bytes.empty()) std::memcpy(state.pending + state.pending_size, bytes.data(), bytes.size());
    state.pending_size += bytes.size();
    return;
  }
  state.Drain();
  if (bytes.size() >= State::kBlock) {
    XXH64_update(&state.xxh, bytes.data(), bytes.size());
    return;
  }
  std::memcpy(state.pending, bytes.data(), bytes.size());
  state.pending_size = bytes.size();
}

// (Draining changes no byte the digest covers: the hash object stays logically const.)
uint64_t Xxh64::digest() const {
  state_->Drain();
  return XXH64_digest(&state_->xxh);
}

std::string Xxh64::Hex(uint64_t digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, digest >>= 4) out[i] = kDigits[digest & 0xF];
  return out;
}

// ---------------------------------------------------------------------------------------------
// TraceWriter

TraceWriter::TraceWriter(Sink sink, TraceHeader header) : sink_(sink), header_(std::move(header)) {}

TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;
TraceWriter::~TraceWriter() = default;  // file_'s destructor abandons an uncommitted file

TraceWriter TraceWriter::ToMemory(TraceHeader header) {
  TraceWriter writer(Sink::kMemory, std::move(header));
  writer.WriteHeader();
  return writer;
}

TraceWriter TraceWriter::HashOnly(TraceHeader header) {
  TraceWriter writer(Sink::kHashOnly, std::move(header));
  writer.WriteHeader();
  return writer;
}

Result<TraceWriter> TraceWriter::ToFile(const std::string& path, TraceHeader header) {
  KSIM_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  TraceWriter writer(Sink::kFile, std::move(header));
  writer.file_ = std::make_unique<AtomicFile>(std::move(file));
  writer.WriteHeader();
  return writer;
}

void TraceWriter::WriteHeader() {
  KSIM_CHECK(lines_ == 0);
  JsonOut out(line_);
  out.Put("{\"ksim_trace\":");
  AppendJsonInteger(out, kTraceFormatVersion);
  out.Put(",\"scenario\":");
  AppendJsonString(out, header_.scenario);
  out.Put(",\"variant\":");
  AppendJsonString(out, header_.variant);
  out.Put(",\"seed\":");
  AppendJsonInteger(out, header_.seed);
  out.Put(",\"level\":");
  AppendJsonString(out, TraceLevelName(header_.level));
  if (!header_.kafka_version.empty()) {
    out.Put(",\"kafka_version\":");
    AppendJsonString(out, header_.kafka_version);
  }
  if (!header_.client_kafka_versions.empty()) {
    out.Put(",\"client_kafka_versions\":{");
    bool first = true;
    for (const auto& [client, release] : header_.client_kafka_versions) {
      if (!first) out.Put(',');
      first = false;
      AppendJsonString(out, client);
      out.Put(':');
      AppendJsonString(out, release);
    }
    out.Put('}');
  }
  out.Put("}\n");
  AppendLine(out.view());
}

void TraceWriter::Event(TimeUs t_us, std::string_view node, std::string_view ev,
                        const EventFields& fields) {
  KSIM_CHECK_MSG(!IsMessageEv(ev), "message events go through TraceWriter::Message");
  WriteLine(t_us, node, ev, fields.text());
}

void TraceWriter::Message(TimeUs t_us, std::string_view node, std::string_view ev,
                          const EventFields& fields) {
  KSIM_CHECK_MSG(IsMessageEv(ev), "a message event's name starts with msg_");
  if (!wants_messages()) {
    // Filtered, but the order contract still holds: the caller's clock must not go backwards.
    KSIM_CHECK_MSG(t_us >= last_t_us_, "trace event earlier than the previous one");
    return;
  }
  WriteLine(t_us, node, ev, fields.text());
}

void TraceWriter::Verdict(TimeUs t_us, bool ok, const TraceFields& metrics,
                          const TraceFields& extra, const EventFields& more) {
  KSIM_CHECK_MSG(metrics.is_object(), "verdict metrics must be a JSON object");
  EventFields fields{{field::kOk, ok}, {field::kMetrics, metrics}};
  if (!extra.is_null()) {
    KSIM_CHECK_MSG(extra.is_object(), "verdict extra fields must be a JSON object");
    // (A repeat of ok or metrics is refused by EventFields::Add.)
    for (const auto& [key, value] : extra.items()) fields.Add(key, value);
  }
  fields.AddAll(more);
  WriteLine(t_us, node::kChecker, ev::kVerdict, fields.text());
  has_verdict_ = true;
}

void TraceWriter::WriteLine(TimeUs t_us, std::string_view node, std::string_view ev,
                            std::string_view members) {
  KSIM_CHECK_MSG(!committed_, "trace event after Commit");
  KSIM_CHECK_MSG(!has_verdict_, "trace event after the verdict");
  KSIM_CHECK_MSG(t_us >= 0, "negative trace time");
  KSIM_CHECK_MSG(t_us >= last_t_us_, "trace event earlier than the previous one");
  JsonOut out(line_);  // reused: no allocation per line once it has grown
  out.Put("{\"t_us\":");
  AppendJsonInteger(out, t_us);
  out.Put(",\"node\":");
  AppendJsonString(out, node);
  out.Put(",\"ev\":");
  AppendJsonString(out, ev);
  if (!members.empty()) {
    out.Put(',');
    out.Put(members);
  }
  out.Put("}\n");
  last_t_us_ = t_us;
  AppendLine(out.view());
}

void TraceWriter::AppendLine(std::string_view line) {
  hash_.Update(line);
  ++lines_;
  switch (sink_) {
    case Sink::kMemory:
      buffer_ += line;
      break;
    case Sink::kHashOnly:
      break;
    case Sink::kFile:
      buffer_ += line;
      if (buffer_.size() >= kFileBufferBytes) Flush();
      break;
  }
}

void TraceWriter::Flush() {
  KSIM_CHECK(sink_ == Sink::kFile);
  if (file_status_.ok()) file_status_ = file_->Append(buffer_);
  buffer_.clear();
}

Status TraceWriter::Commit() {
  KSIM_CHECK_MSG(!committed_, "trace committed twice");
  KSIM_CHECK_MSG(has_verdict_, "a trace is committed after its verdict");
  committed_ = true;
  if (sink_ != Sink::kFile) return Status::Ok();
  Flush();
  if (!file_status_.ok()) {
    file_->Abandon();
    return file_status_;
  }
  return file_->Commit();
}

const std::string& TraceWriter::bytes() const {
  KSIM_CHECK_MSG(sink_ == Sink::kMemory, "bytes() of a trace not kept in memory");
  return buffer_;
}

// ---------------------------------------------------------------------------------------------
// TraceReader

TraceReader::TraceReader(std::unique_ptr<std::istream> input, std::string name)
    : input_(std::move(input)), name_(std::move(name)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

Result<TraceReader> TraceReader::OpenFile(const std::string& path) {
  auto input = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!input->is_open()) return Status(Errc::kNotFound, "cannot open trace '" + path + "'");
  TraceReader reader(std::move(input), path);
  KSIM_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Result<TraceReader> TraceReader::FromString(std::string text, std::string name) {
  TraceReader reader(std::make_unique<std::istringstream>(std::move(text)), std::move(name));
  KSIM_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Status TraceReader::Error(uint64_t line, const std::string& message) const {
  return Status(Errc::kCorruption, name_ + ":" + std::to_string(line) + ": " + message);
}

Status TraceReader::ReadHeader() {
  std::string text;
  if (!std::getline(*input_, text)) return Error(1, "empty file: no trace header");
  line_ = 1;
  TraceFields json = TraceFields::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error(1, "the header is not valid JSON");
  if (!json.is_object() || !json.contains("ksim_trace")) {
    return Error(1, "not a ksim trace (the first line has no \"ksim_trace\" key)");
  }
  const TraceFields& version = json["ksim_trace"];
  if (!version.is_number_integer() || version.get<int64_t>() != kTraceFormatVersion) {
    return Error(1, "unsupported trace format version " + version.dump() + " (this ksim reads " +
                        std::to_string(kTraceFormatVersion) + ")");
  }
  if (!json.contains("scenario") || !json["scenario"].is_string()) {
    return Error(1, "header \"scenario\" must be a string");
  }
  if (!json.contains("variant") || !json["variant"].is_string()) {
    return Error(1, "header \"variant\" must be a string");
  }
  if (!json.contains("seed") || !json["seed"].is_number_unsigned()) {
    return Error(1, "header \"seed\" must be a non-negative integer");
  }
  header_.scenario = json["scenario"].get<std::string>();
  header_.variant = json["variant"].get<std::string>();
  header_.seed = json["seed"].get<uint64_t>();
  header_.level = TraceLevel::kState;
  if (json.contains("level")) {
    if (!json["level"].is_string()) return Error(1, "header \"level\" must be a string");
    Result<TraceLevel> level = ParseTraceLevel(json["level"].get<std::string>());
    if (!level.ok()) return Error(1, level.status().message());
    header_.level = *level;
  }
  if (json.contains("kafka_version")) {
    if (!json["kafka_version"].is_string()) {
      return Error(1, "header \"kafka_version\" must be a string");
    }
    header_.kafka_version = json["kafka_version"].get<std::string>();
  }
  if (json.contains("client_kafka_versions")) {
    const auto& clients = json["client_kafka_versions"];
    if (!clients.is_object()) return Error(1, "header \"client_kafka_versions\" must be an object");
    for (const auto& [client, release] : clients.items()) {
      if (!release.is_string()) {
        return Error(1, "header \"client_kafka_versions\" values must be strings");
      }
      header_.client_kafka_versions[client] = release.get<std::string>();
    }
  }
  return Status::Ok();
}

Result<std::optional<TraceEvent>> TraceReader::Next() {
  std::string text;
  if (!std::getline(*input_, text)) {
    if (input_->bad()) return Error(line_ + 1, "read error");
    if (!verdict_seen_) {
      return Error(line_, "the trace ends without a verdict line (truncated?)");
    }
    return std::optional<TraceEvent>();
  }
  ++line_;
  if (verdict_seen_) return Error(line_, "a line after the verdict");
  return ParseEventLine(text);
}

Result<std::optional<TraceEvent>> TraceReader::ParseEventLine(const std::string& text) {
  if (text.empty()) return Error(line_, "empty line");
  TraceFields json = TraceFields::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error(line_, "not valid JSON");
  if (!json.is_object()) return Error(line_, "an event must be a JSON object");
  TraceEvent event;
  event.line = line_;
  bool has_time = false, has_node = false, has_ev = false;
  for (auto& [key, value] : json.items()) {
    if (key == field::kTimeUs) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return Error(line_, "\"t_us\" must be a non-negative integer");
      }
      event.t_us = value.get<int64_t>();
      has_time = true;
    } else if (key == field::kNode) {
      if (!value.is_string()) return Error(line_, "\"node\" must be a string");
      event.node = value.get<std::string>();
      has_node = true;
    } else if (key == field::kEv) {
      if (!value.is_string()) return Error(line_, "\"ev\" must be a string");
      event.ev = value.get<std::string>();
      has_ev = true;
    } else {
      event.fields[key] = std::move(value);
    }
  }
  if (!has_time) return Error(line_, "missing \"t_us\"");
  if (!has_node) return Error(line_, "missing \"node\"");
  if (!has_ev) return Error(line_, "missing \"ev\"");
  if (event.t_us < last_t_us_) {
    return Error(line_, "time goes backwards (" + std::to_string(event.t_us) + " after " +
                            std::to_string(last_t_us_) + ")");
  }
  if (IsMessageEv(event.ev) && header_.level != TraceLevel::kMessages) {
    return Error(line_, "message event \"" + event.ev + "\" in a trace at the state level");
  }
  if (event.ev == ev::kVerdict) {
    if (!event.fields.contains(field::kOk) || !event.fields[field::kOk].is_boolean()) {
      return Error(line_, "the verdict's \"ok\" must be true or false");
    }
    if (!event.fields.contains(field::kMetrics) || !event.fields[field::kMetrics].is_object()) {
      return Error(line_, "the verdict's \"metrics\" must be an object");
    }
    verdict_seen_ = true;
  }
  last_t_us_ = event.t_us;
  return std::optional<TraceEvent>(std::move(event));
}

namespace {

Result<Trace> ReadAll(TraceReader reader) {
  Trace trace;
  trace.header = reader.header();
  for (;;) {
    KSIM_ASSIGN_OR_RETURN(std::optional<TraceEvent> event, reader.Next());
    if (!event.has_value()) break;
    if (event->ev == ev::kVerdict) {
      trace.verdict = std::move(*event);
    } else {
      trace.events.push_back(std::move(*event));
    }
  }
  return trace;
}

}  // namespace

Result<Trace> ReadTraceFile(const std::string& path) {
  KSIM_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::OpenFile(path));
  return ReadAll(std::move(reader));
}

Result<Trace> ParseTrace(std::string text, std::string name) {
  KSIM_ASSIGN_OR_RETURN(TraceReader reader,
                        TraceReader::FromString(std::move(text), std::move(name)));
  return ReadAll(std::move(reader));
}

}  // namespace ksim::sim
