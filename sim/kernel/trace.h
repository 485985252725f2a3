// The trace of one simulated run: JSON Lines, written by TraceWriter and read back by
// TraceReader. The viewer, the regression tests and users' scripts all read this one format;
// docs/trace-format.md describes it field by field.
//
//   {"ksim_trace":1,"scenario":"...","variant":"base","seed":7,"level":"state",
//    "kafka_version":"0.10.0","client_kafka_versions":{"p1":"0.11.0"}}            header
//   {"t_us":1500,"node":"broker-1","ev":"leader_elected",<fields>}                 events
//   {"t_us":90000000,"node":"checker","ev":"verdict","ok":true,"metrics":{...}}      verdict
//
// Key order is fixed: t_us, node, ev, then the caller's fields in the order they were added
// (EventFields, already JSON text), so the same events give the same bytes. Events must come in
// non-decreasing time order; an earlier event is a programmer error (KSIM_CHECK), because the
// event loop that produces them never goes back in time. Network message events (ev "msg_*")
// are written only at the `messages` level; the writer filters them.
//
// Sinks: memory (keeps every byte: tests, --check-determinism), hash-only (keeps only the hash),
// file (streams to a temporary file beside the target, which appears atomically on Commit(); an
// uncommitted writer leaves the target untouched: sim/kernel/atomic_file.h). Every sink hashes the
// bytes with XXH64 as they are written. File errors are remembered and returned by Commit(),
// so that emitting an event stays a plain call. Single-threaded.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/events.h"
#include "core/base/json_text.h"
#include "core/base/status.h"
#include "core/base/trace_names.h"
#include "core/base/types.h"
#include "sim/kernel/atomic_file.h"

namespace ksim::sim {

// The fields of a line read back, and the verdict's metrics: a JSON object whose keys keep their
// order. (Events are written from EventFields: core/base/events.h.)
using TraceFields = nlohmann::ordered_json;

inline constexpr int kTraceFormatVersion = 1;

enum class TraceLevel : uint8_t {
  kState,     // state changes and client operations
  kMessages,  // also every network message (msg_send, msg_deliver, msg_drop)
};
std::string_view TraceLevelName(TraceLevel level);
// "state" or "messages"; anything else is kInvalidArgument.
Result<TraceLevel> ParseTraceLevel(std::string_view name);
// True for network message events ("msg_send", ...), the ones only the messages level keeps.
inline bool IsMessageEv(std::string_view ev) { return ev.starts_with(ev::kMessagePrefix); }

struct TraceHeader {
  std::string scenario;
  std::string variant;  // "base" for the scenario without a variant applied
  uint64_t seed = 0;
  TraceLevel level = TraceLevel::kState;
  // The Kafka release the brokers run ("0.10.0"); "" when not recorded (a trace of a test that
  // runs no scenario, or an older trace): then not written.
  std::string kafka_version;
  // Each client whose own kafka_version differs from the brokers': client id -> release. Written
  // only when not empty.
  std::map<std::string, std::string> client_kafka_versions;
  friend bool operator==(const TraceHeader&, const TraceHeader&) = default;
};

// XXH64 with seed 0 (xxHash's 64-bit hash; its specification: doc/xxhash_spec.md in
// github.com/Cyan4973/xxHash), streamed: the digest depends on the bytes alone, not on how they
// were split among the Update calls. The trace's hash, compared between runs to check
// determinism (not a cryptographic hash); `xxhsum -H1 FILE` prints the same digest for a trace
// file. From Debian's libxxhash-dev, its header compiled into trace.cc (XXH_INLINE_ALL).
class Xxh64 {
 public:
  Xxh64();
  ~Xxh64();
  Xxh64(Xxh64&&) noexcept;  // a moved-from hash may only be destroyed or assigned to
  Xxh64& operator=(Xxh64&&) noexcept;

  void Update(std::string_view bytes);
  // The digest of every byte so far; more may follow.
  uint64_t digest() const;
  // 16 lower-case hex digits (what xxhsum prints).
  static std::string Hex(uint64_t digest);

 private:
  struct State;  // XXH64_state_t
  std::unique_ptr<State> state_;
};

class TraceWriter {
 public:
  // Keeps every byte in memory (bytes()).
  static TraceWriter ToMemory(TraceHeader header);
  // Keeps only the hash and the line count: for determinism checks of long runs.
  static TraceWriter HashOnly(TraceHeader header);
  // Streams to a temporary file beside `path`; `path` appears, complete, on Commit().
  static Result<TraceWriter> ToFile(const std::string& path, TraceHeader header);

  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;
  ~TraceWriter();  // an uncommitted file trace is abandoned: the target stays untouched

  const TraceHeader& header() const { return header_; }
  // Whether message events are kept: lets the network skip building their fields.
  bool wants_messages() const { return header_.level == TraceLevel::kMessages; }

  // A state change or client operation.
  // REQUIRES: t_us >= the previous event's time; no verdict yet; `ev` is not a message event
  // (no "msg_" prefix). (EventFields has none of the keys t_us, node, ev.)
  void Event(TimeUs t_us, std::string_view node, std::string_view ev,
             const EventFields& fields = {});
  // A network message event (send, deliver, drop); dropped unless the level is kMessages.
  // REQUIRES: as Event, but `ev` starts with "msg_".
  void Message(TimeUs t_us, std::string_view node, std::string_view ev,
               const EventFields& fields = {});
  // The last line: {"t_us":..,"node":"checker","ev":"verdict","ok":..,"metrics":{..},<extra>,
  // <more>}: `more` for members written as text already (the audit, the run's largest).
  // REQUIRES: t_us >= the previous event's time; no verdict yet; `metrics` is an object; no key
  // repeated.
  void Verdict(TimeUs t_us, bool ok, const TraceFields& metrics,
               const TraceFields& extra = TraceFields(), const EventFields& more = {});
  // File sink: writes what is buffered, fsyncs, renames into place; returns the first error met
  // since creation (and then leaves the target untouched). Other sinks: Ok.
  // REQUIRES: the verdict was written; not committed yet.
  Status Commit();

  // XXH64 of every byte written so far (header included), whatever the sink.
  uint64_t hash() const { return hash_.digest(); }
  // Lines written (header and verdict included), message events at the state level excluded.
  uint64_t lines() const { return lines_; }
  bool has_verdict() const { return has_verdict_; }
  // The bytes, for the memory sink. REQUIRES: the sink is memory.
  const std::string& bytes() const;

 private:
  enum class Sink : uint8_t { kMemory, kHashOnly, kFile };
  // File sinks hand buffered bytes to the file in blocks of about this size.
  static constexpr size_t kFileBufferBytes = 1 << 20;

  TraceWriter(Sink sink, TraceHeader header);
  void WriteHeader();
  // `members`: EventFields::text().
  void WriteLine(TimeUs t_us, std::string_view node, std::string_view ev, std::string_view members);
  void AppendLine(std::string_view line);
  void Flush();

  Sink sink_;
  TraceHeader header_;
  std::string buffer_;  // memory: everything; file: bytes not yet handed to the file
  TextBuffer line_;     // reused for each line
  std::unique_ptr<AtomicFile> file_;
  Status file_status_;  // the first file error, reported by Commit()
  Xxh64 hash_;
  uint64_t lines_ = 0;
  TimeUs last_t_us_ = 0;
  bool has_verdict_ = false;
  bool committed_ = false;
};

// One line of a trace read back.
struct TraceEvent {
  TimeUs t_us = 0;
  std::string node;
  std::string ev;
  TraceFields fields = TraceFields::object();  // every other key, in file order
  uint64_t line = 0;                           // 1-based line number in the source
};

// A whole trace in memory.
struct Trace {
  TraceHeader header;
  std::vector<TraceEvent> events;  // in file (= time) order, verdict excluded
  TraceEvent verdict;              // its fields hold "ok", "metrics" and any extra keys
  bool ok() const { return verdict.fields.at(field::kOk).get<bool>(); }
};

// Reads a trace line by line (the viewer and regression tests may read long traces). Every
// error is kCorruption with a message starting "<name>:<line>: ".
class TraceReader {
 public:
  // Opens `path` and reads its header.
  static Result<TraceReader> OpenFile(const std::string& path);
  // Reads from a string; `name` stands for the file name in errors.
  static Result<TraceReader> FromString(std::string text, std::string name = "<memory>");

  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

  const TraceHeader& header() const { return header_; }
  // The next event (the verdict included, last); nullopt after the verdict. Checks time order,
  // that the verdict is last and that the trace is not truncated.
  Result<std::optional<TraceEvent>> Next();

 private:
  TraceReader(std::unique_ptr<std::istream> input, std::string name);
  Status ReadHeader();
  Status Error(uint64_t line, const std::string& message) const;
  Result<std::optional<TraceEvent>> ParseEventLine(const std::string& text);

  std::unique_ptr<std::istream> input_;
  std::string name_;
  TraceHeader header_;
  uint64_t line_ = 0;
  TimeUs last_t_us_ = 0;
  bool verdict_seen_ = false;
};

// Reads a whole trace.
Result<Trace> ReadTraceFile(const std::string& path);
Result<Trace> ParseTrace(std::string text, std::string name = "<memory>");

}  // namespace ksim::sim
