#include "sim/kernel/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "core/base/trace_names.h"

namespace ksim::sim {
namespace {

// Serialization shared by every line: compact, UTF-8 kept as is, invalid UTF-8 replaced by
// U+FFFD rather than throwing (record keys and values may be arbitrary bytes): byte for byte what
// nlohmann's dump(-1, ' ', false, error_handler_t::replace) writes, without its temporaries (its
// result, a 512-byte indent string, a JSON copy of each string, an snprintf per escaped control
// character). Integers, booleans, null, strings, and arrays and objects of these are written
// here; anything else (floating point, binary) goes through dump(). TraceWriterTest's
// StringsAreWrittenAsDumpWritesThem compares the two on random bytes.

// How many bytes the well-formed UTF-8 sequence at text[at] takes (Unicode 15, table 3-7), or,
// when it is not well formed, 0 and in `bad_at` the offset where it stops: the lead byte itself
// (at) when it cannot start a sequence, the first byte that cannot continue it, or text.size()
// when the text ends inside it. REQUIRES: text[at] >= 0x80.
size_t Utf8SequenceLength(std::string_view text, size_t at, size_t* bad_at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  size_t continuations = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuations = 2;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong form
    if (lead == 0xED) second_max = 0x9F;  // no surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuations = 3;
    if (lead == 0xF0) second_min = 0x90;  // no overlong form
    if (lead == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    *bad_at = at;  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    return 0;
  }
  for (size_t i = 1; i <= continuations; ++i) {
    if (at + i >= text.size()) {
      *bad_at = text.size();
      return 0;
    }
    const auto next = static_cast<unsigned char>(text[at + i]);
    const unsigned char min = i == 1 ? second_min : 0x80;
    const unsigned char max = i == 1 ? second_max : 0xBF;
    if (next < min || next > max) {
      *bad_at = at + i;
      return 0;
    }
  }
  return continuations + 1;
}

// The bytes a JSON string holds as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> kPlainByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// The line being written, in a std::string used as a raw buffer: its size is the room, `length`
// the bytes written. Each piece costs one bound check and a copy, where std::string's append
// and push_back pay their bookkeeping per call (a trace line is some 20 pieces, and a run writes
// a line for every record on every replica).
class LineOut {
 public:
  explicit LineOut(std::string& buffer) : buffer_(buffer) {}
  // Room for `n` more bytes; the pointer is valid until the next call.
  char* Room(size_t n) {
    if (length_ + n > buffer_.size()) [[unlikely]]
      Grow(n);
    return buffer_.data() + length_;
  }
  void Advance(size_t n) { length_ += n; }
  void Put(char c) {
    *Room(1) = c;
    ++length_;
  }
  void Put(std::string_view bytes) {
    if (bytes.empty()) return;  // data() may be null: no memcpy from it
    std::memcpy(Room(bytes.size()), bytes.data(), bytes.size());
    length_ += bytes.size();
  }
  std::string_view view() const { return {buffer_.data(), length_}; }

 private:
  [[gnu::noinline]] void Grow(size_t n) {
    buffer_.resize(std::max(buffer_.size() * 2, length_ + n));
  }

  std::string& buffer_;
  size_t length_ = 0;
};

void AppendString(LineOut& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  size_t i = 0;
  while (i < text.size() && kPlainByte[static_cast<unsigned char>(text[i])]) ++i;
  if (i == text.size()) {  // the common case: nothing to escape
    char* at = out.Room(text.size() + 2);
    at[0] = '"';
    if (!text.empty()) std::memcpy(at + 1, text.data(), text.size());
    at[text.size() + 1] = '"';
    out.Advance(text.size() + 2);
    return;
  }
  out.Put('"');
  size_t plain_from = 0;  // the start of the bytes not yet copied that need no escape
  auto copy_plain = [&](size_t end) { out.Put(text.substr(plain_from, end - plain_from)); };
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (kPlainByte[c]) {
      ++i;
      continue;
    }
    copy_plain(i);
    if (c < 0x80) {
      out.Put('\\');
      switch (c) {
        case '"':
        case '\\':
          out.Put(static_cast<char>(c));
          break;
        case '\b':
          out.Put('b');
          break;
        case '\t':
          out.Put('t');
          break;
        case '\n':
          out.Put('n');
          break;
        case '\f':
          out.Put('f');
          break;
        case '\r':
          out.Put('r');
          break;
        default:
          out.Put("u00");
          out.Put(kHex[c >> 4]);
          out.Put(kHex[c & 0xF]);
      }
      plain_from = ++i;
      continue;
    }
    size_t bad_at = 0;
    const size_t length = Utf8SequenceLength(text, i, &bad_at);
    if (length > 0) {
      out.Put(text.substr(i, length));  // kept as is
      i += length;
    } else {
      // One U+FFFD for the bytes read so far; a byte that could not continue a sequence is read
      // again as the start of the next (a lead byte that starts nothing is dropped).
      out.Put(kReplacement);
      i = bad_at == i ? i + 1 : bad_at;
    }
    plain_from = i;
  }
  copy_plain(text.size());
  out.Put('"');
}

// std::to_string's digits, without its string.
template <class Integer>
void AppendInteger(LineOut& out, Integer value) {
  char* at = out.Room(24);
  const std::to_chars_result end = std::to_chars(at, at + 24, value);
  out.Advance(static_cast<size_t>(end.ptr - at));
}

template <class Json>
void AppendDump(LineOut& out, const Json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::number_unsigned:
      return AppendInteger(out, value.template get_ref<const typename Json::number_unsigned_t&>());
    case nlohmann::json::value_t::number_integer:
      return AppendInteger(out, value.template get_ref<const typename Json::number_integer_t&>());
    case nlohmann::json::value_t::boolean:
      return out.Put(value.template get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string:
      return AppendString(out, value.template get_ref<const typename Json::string_t&>());
    case nlohmann::json::value_t::null:
      return out.Put("null");
    case nlohmann::json::value_t::array: {
      out.Put('[');
      bool first = true;
      for (const Json& element : value.template get_ref<const typename Json::array_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendDump(out, element);
      }
      return out.Put(']');
    }
    case nlohmann::json::value_t::object: {
      out.Put('{');
      bool first = true;
      for (const auto& [key, element] : value.template get_ref<const typename Json::object_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendString(out, key);
        out.Put(':');
        AppendDump(out, element);
      }
      return out.Put('}');
    }
    default:
      return out.Put(value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

bool IsReservedKey(std::string_view key) {
  return key == field::kTimeUs || key == field::kNode || key == field::kEv;
}

}  // namespace

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

void Fnv1a64::Update(std::string_view bytes) {
  constexpr uint64_t kPrime = 0x100000001B3ULL;
  uint64_t state = state_;
  const auto* at = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char* const end = at + bytes.size();
  // Eight bytes a turn: the same byte-serial function with an eighth of the loop's overhead.
  for (; end - at >= 8; at += 8) {
    state = (state ^ at[0]) * kPrime;
    state = (state ^ at[1]) * kPrime;
    state = (state ^ at[2]) * kPrime;
    state = (state ^ at[3]) * kPrime;
    state = (state ^ at[4]) * kPrime;
    state = (state ^ at[5]) * kPrime;
    state = (state ^ at[6]) * kPrime;
    state = (state ^ at[7]) * kPrime;
  }
  for (; at != end; ++at) state = (state ^ *at) * kPrime;
  state_ = state;
}

std::string Fnv1a64::Hex(uint64_t digest) {
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
  LineOut out(line_);
  out.Put("{\"ksim_trace\":");
  AppendInteger(out, kTraceFormatVersion);
  out.Put(",\"scenario\":");
  AppendString(out, header_.scenario);
  out.Put(",\"variant\":");
  AppendString(out, header_.variant);
  out.Put(",\"seed\":");
  AppendInteger(out, header_.seed);
  out.Put(",\"level\":");
  AppendString(out, TraceLevelName(header_.level));
  if (!header_.kafka_version.empty()) {
    out.Put(",\"kafka_version\":");
    AppendString(out, header_.kafka_version);
  }
  if (!header_.client_kafka_versions.empty()) {
    out.Put(",\"client_kafka_versions\":{");
    bool first = true;
    for (const auto& [client, release] : header_.client_kafka_versions) {
      if (!first) out.Put(',');
      first = false;
      AppendString(out, client);
      out.Put(':');
      AppendString(out, release);
    }
    out.Put('}');
  }
  out.Put("}\n");
  AppendLine(out.view());
}

void TraceWriter::Event(TimeUs t_us, std::string_view node, std::string_view ev,
                        const TraceFields& fields) {
  KSIM_CHECK_MSG(!IsMessageEv(ev), "message events go through TraceWriter::Message");
  WriteLine(t_us, node, ev, fields);
}

void TraceWriter::Message(TimeUs t_us, std::string_view node, std::string_view ev,
                          const TraceFields& fields) {
  KSIM_CHECK_MSG(IsMessageEv(ev), "a message event's name starts with msg_");
  if (!wants_messages()) {
    // Filtered, but the order contract still holds: the caller's clock must not go backwards.
    KSIM_CHECK_MSG(t_us >= last_t_us_, "trace event earlier than the previous one");
    return;
  }
  WriteLine(t_us, node, ev, fields);
}

void TraceWriter::Verdict(TimeUs t_us, bool ok, const TraceFields& metrics,
                          const TraceFields& extra) {
  KSIM_CHECK_MSG(metrics.is_object(), "verdict metrics must be a JSON object");
  TraceFields fields = TraceFields::object();
  fields[field::kOk] = ok;
  fields[field::kMetrics] = metrics;
  if (!extra.is_null()) {
    KSIM_CHECK_MSG(extra.is_object(), "verdict extra fields must be a JSON object");
    for (const auto& [key, value] : extra.items()) {
      KSIM_CHECK_MSG(key != field::kOk && key != field::kMetrics,
                     "verdict extra field repeats ok/metrics");
      fields[key] = value;
    }
  }
  WriteLine(t_us, node::kChecker, ev::kVerdict, fields);
  has_verdict_ = true;
}

void TraceWriter::WriteLine(TimeUs t_us, std::string_view node, std::string_view ev,
                            const TraceFields& fields) {
  KSIM_CHECK_MSG(!committed_, "trace event after Commit");
  KSIM_CHECK_MSG(!has_verdict_, "trace event after the verdict");
  KSIM_CHECK_MSG(t_us >= 0, "negative trace time");
  KSIM_CHECK_MSG(t_us >= last_t_us_, "trace event earlier than the previous one");
  KSIM_CHECK_MSG(fields.is_null() || fields.is_object(), "trace fields must be a JSON object");
  LineOut out(line_);  // reused: no allocation per line once it has grown
  out.Put("{\"t_us\":");
  AppendInteger(out, t_us);
  out.Put(",\"node\":");
  AppendString(out, node);
  out.Put(",\"ev\":");
  AppendString(out, ev);
  if (!fields.is_null()) {
    for (const auto& [key, value] : fields.get_ref<const TraceFields::object_t&>()) {
      KSIM_CHECK_MSG(!IsReservedKey(key), "trace fields may not repeat t_us, node or ev");
      out.Put(',');
      AppendString(out, key);
      out.Put(':');
      AppendDump(out, value);
    }
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
