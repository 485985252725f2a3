#include "sim/kernel/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/json_text.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::sim {
namespace {

namespace fs = std::filesystem;

TraceHeader Header(TraceLevel level = TraceLevel::kState) {
  return TraceHeader{"unclean-election", "base", 7, level};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// A small but representative run: state changes, a client op, messages, the verdict.
void WriteRun(TraceWriter& writer) {
  writer.Event(0, "broker-1", "start");
  writer.Message(1500, "broker-1", "msg_send", {{"to", "broker-2"}, {"api", "Fetch"}});
  writer.Event(1500, "broker-1", "leader_elected",
               {{"topic", "t"}, {"partition", 0}, {"leader", 1}, {"epoch", 3}});
  writer.Message(2500, "broker-2", "msg_deliver", {{"from", "broker-1"}, {"api", "Fetch"}});
  writer.Event(3000, "p1", "ack",
               {{"topic", "t"},
                {"partition", 0},
                {"offset", 41},
                {"key", nullptr},
                {"value", "hello java"}});
  writer.Message(3100, "broker-2", "msg_drop", {{"to", "broker-1"}, {"reason", "partition"}});
  writer.Verdict(90'000'000, true, {{"sent", 1}, {"acked", 1}, {"lost_acked", 0}});
}

TEST(TraceWriterTest, HeaderFirstThenEventsThenVerdictLast) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  WriteRun(writer);
  std::vector<std::string> lines = Lines(writer.bytes());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], R"({"ksim_trace":1,"scenario":"unclean-election","variant":"base","seed":7,)"
                      R"("level":"state"})");
  EXPECT_EQ(lines[1], R"({"t_us":0,"node":"broker-1","ev":"start"})");
  // Fields keep insertion order (not alphabetical).
  EXPECT_EQ(lines[2],
            R"({"t_us":1500,"node":"broker-1","ev":"leader_elected","topic":"t","partition":0,)"
            R"("leader":1,"epoch":3})");
  EXPECT_EQ(lines[3],
            R"({"t_us":3000,"node":"p1","ev":"ack","topic":"t","partition":0,"offset":41,)"
            R"("key":null,"value":"hello java"})");
  EXPECT_EQ(lines[4], R"({"t_us":90000000,"node":"checker","ev":"verdict","ok":true,)"
                      R"("metrics":{"sent":1,"acked":1,"lost_acked":0}})");
  EXPECT_EQ(writer.lines(), 5u);
  EXPECT_TRUE(writer.bytes().ends_with("\n"));
}

TEST(TraceWriterTest, MessagesLevelKeepsMessageEvents) {
  TraceWriter writer = TraceWriter::ToMemory(Header(TraceLevel::kMessages));
  EXPECT_TRUE(writer.wants_messages());
  WriteRun(writer);
  std::vector<std::string> lines = Lines(writer.bytes());
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_NE(lines[0].find(R"("level":"messages")"), std::string::npos);
  EXPECT_EQ(lines[2], R"({"t_us":1500,"node":"broker-1","ev":"msg_send","to":"broker-2",)"
                      R"("api":"Fetch"})");
  EXPECT_NE(lines[4].find("msg_deliver"), std::string::npos);
  EXPECT_NE(lines[6].find("msg_drop"), std::string::npos);
}

TEST(TraceWriterTest, StateLevelDropsOnlyMessageEvents) {
  TraceWriter state = TraceWriter::ToMemory(Header(TraceLevel::kState));
  TraceWriter messages = TraceWriter::ToMemory(Header(TraceLevel::kMessages));
  EXPECT_FALSE(state.wants_messages());
  WriteRun(state);
  WriteRun(messages);
  std::vector<std::string> kept;
  for (const std::string& line : Lines(messages.bytes())) {
    if (line.find("\"ev\":\"msg_") == std::string::npos) kept.push_back(line);
  }
  std::vector<std::string> state_lines = Lines(state.bytes());
  ASSERT_EQ(kept.size(), state_lines.size());
  // Identical apart from the header's level.
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_EQ(kept[i], state_lines[i]);
}

TEST(TraceWriterTest, SameEventsGiveIdenticalBytesAndHash) {
  TraceWriter a = TraceWriter::ToMemory(Header());
  TraceWriter b = TraceWriter::ToMemory(Header());
  TraceWriter hash_only = TraceWriter::HashOnly(Header());
  WriteRun(a);
  WriteRun(b);
  WriteRun(hash_only);
  EXPECT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash(), hash_only.hash());
  EXPECT_EQ(a.lines(), hash_only.lines());
  Xxh64 direct;
  direct.Update(a.bytes());
  EXPECT_EQ(direct.digest(), a.hash());
}

TEST(TraceWriterTest, HashChangesWhenAnyByteChanges) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  WriteRun(writer);
  const std::string bytes = writer.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    Xxh64 hash;
    hash.Update(changed);
    ASSERT_NE(hash.digest(), writer.hash()) << "byte " << i;
  }
  // A different seed or any different field value changes the hash too.
  TraceHeader other_seed = Header();
  other_seed.seed = 8;
  TraceWriter other = TraceWriter::ToMemory(other_seed);
  WriteRun(other);
  EXPECT_NE(other.hash(), writer.hash());
}

TEST(TraceWriterTest, Xxh64MatchesPublishedVectors) {
  // XXH64 with seed 0: the empty input and "a" as xxHash's own tests have them; "foobar" and
  // 100 letters as `xxhsum -H1` prints them (xxhsum 0.8.1, Debian's).
  Xxh64 empty;
  EXPECT_EQ(empty.digest(), 0xEF46DB3751D8E999ULL);
  Xxh64 a;
  a.Update("a");
  EXPECT_EQ(a.digest(), 0xD24EC4F1A98C6E5BULL);
  Xxh64 foobar;
  foobar.Update("foo");
  foobar.Update("bar");  // incremental == one shot
  EXPECT_EQ(foobar.digest(), 0xA2AA05ED9085AAF9ULL);
  // Past a 32-byte stripe, in pieces of every length from 1 to 37, and the digest taken on the
  // way (taking it does not end the stream).
  std::string letters;
  for (int i = 0; i < 100; ++i) letters += static_cast<char>('a' + i % 26);
  for (size_t piece = 1; piece <= 37; ++piece) {
    Xxh64 hash;
    for (size_t at = 0; at < letters.size(); at += piece) {
      hash.Update(std::string_view(letters).substr(at, piece));
      (void)hash.digest();
    }
    ASSERT_EQ(hash.digest(), 0x79C9FA152BB53C71ULL) << "pieces of " << piece;
  }
  // Longer than the block Update gathers bytes into (16 KiB), split every way it handles: small
  // pieces that fill a block to the byte or cross into the next, pieces longer than a block, one
  // piece; the digest as `xxhsum -H1` prints it for the same 100,000 bytes.
  std::string long_text;
  for (size_t i = 0; i < 100'000; ++i) long_text += static_cast<char>('a' + (i * 7 + i / 26) % 26);
  for (size_t piece : {1, 150, 4096, 16383, 16384, 16385, 40000, 100000}) {
    Xxh64 hash;
    for (size_t at = 0; at < long_text.size(); at += piece) {
      hash.Update(std::string_view(long_text).substr(at, piece));
      if (at % 3 == 0) (void)hash.digest();
    }
    ASSERT_EQ(hash.digest(), 0xD50534375CBE8AE1ULL) << "pieces of " << piece;
  }
  // A moved hash carries its stream on.
  Xxh64 first;
  first.Update("foo");
  Xxh64 moved = std::move(first);
  moved.Update("bar");
  EXPECT_EQ(moved.digest(), 0xA2AA05ED9085AAF9ULL);
  EXPECT_EQ(Xxh64::Hex(0xA2AA05ED9085AAF9ULL), "a2aa05ed9085aaf9");
  EXPECT_EQ(Xxh64::Hex(1), "0000000000000001");
}

TEST(TraceWriterTest, StringsAreEscapedAndInvalidUtf8IsReplaced) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  writer.Event(1, "p\"1", "send", {{"value", std::string("line\nbreak\t\x01", 12)}});
  writer.Event(2, "p1", "send", {{"value", std::string("\xff\xfe", 2)}});
  writer.Verdict(3, false, TraceFields::object());
  std::vector<std::string> lines = Lines(writer.bytes());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], R"({"t_us":1,"node":"p\"1","ev":"send","value":"line\nbreak\t\u0001"})");
  EXPECT_EQ(lines[2],
            "{\"t_us\":2,\"node\":\"p1\",\"ev\":\"send\",\"value\":\"\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  auto trace = ParseTrace(writer.bytes());
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->events[0].node, "p\"1");
  EXPECT_EQ(trace->events[0].fields["value"], std::string("line\nbreak\t\x01", 12));
}

// The writer escapes strings itself; nlohmann's dump(-1, ' ', false, replace) is the reference
// (traces written before kept their hashes). Random byte strings, weighted towards the bytes
// that matter: control characters, quotes, UTF-8 lead and continuation bytes, invalid bytes,
// sequences cut short at the end. Also nested in an array and an object, as the append event's
// "values" are.
TEST(TraceWriterTest, StringsAreWrittenAsDumpWritesThem) {
  std::mt19937_64 random(20261203);
  const std::vector<unsigned char> interesting = {
      0x00, 0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20, '"',  '\\', 'a',
      0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
      0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  TraceWriter writer = TraceWriter::ToMemory(Header());
  std::vector<std::string> expected;
  for (int i = 0; i < 20000; ++i) {
    // Short strings and, a quarter of the time, a plain run first of up to 47 bytes, and as
    // often one after: the writer copies strings up to 32 bytes while it scans them, longer ones
    // after, eight bytes a step up to the first byte to escape, which may come at any place of
    // either, and of a step.
    std::string text(random() % 4 == 0 ? random() % 48 : 0, 'a');
    const size_t length = random() % 12;
    for (size_t j = 0; j < length; ++j) {
      text += static_cast<char>(random() % 3 == 0 ? random() % 256
                                                  : interesting[random() % interesting.size()]);
    }
    if (random() % 4 == 0) text += std::string(random() % 48, 'b');
    TraceFields fields = TraceFields::object();
    fields["value"] = text;
    fields["values"] = TraceFields::array({text, 7, nullptr, true});
    fields["nested"] = TraceFields::object({{text, text}});
    writer.Event(i, "p1", "send", EventFields(fields));
    std::string line = R"({"t_us":)" + std::to_string(i) + R"(,"node":"p1","ev":"send")";
    for (const auto& [key, value] : fields.items()) {
      line += "," + nlohmann::json(key).dump() + ":" +
              value.dump(-1, ' ', false, TraceFields::error_handler_t::replace);
    }
    expected.push_back(line + "}");
  }
  writer.Verdict(20000, true, TraceFields::object());
  std::vector<std::string> lines = Lines(writer.bytes());
  ASSERT_EQ(lines.size(), expected.size() + 2);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(lines[i + 1], expected[i]) << "event " << i;
  }
}
// Every byte value at every place of a plain string of 1 to 40 bytes (a step of eight bytes, a
// part of one, short and long strings): written as dump writes it.
TEST(TraceWriterTest, EveryByteAtEveryPlaceIsWrittenAsDumpWritesIt) {
  for (size_t length = 1; length <= 40; ++length) {
    for (size_t place = 0; place < length; ++place) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(length, 'x');
        text[place] = static_cast<char>(byte);
        TextBuffer buffer;
        JsonOut out(buffer);
        AppendJsonString(out, text);
        ASSERT_EQ(out.view(), nlohmann::json(text).dump(-1, ' ', false,
                                                        nlohmann::json::error_handler_t::replace))
            << "length " << length << ", byte " << byte << " at " << place;
      }
    }
  }
}

TEST(TraceWriterTest, VerdictCarriesOkMetricsAndExtraFields) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  writer.Verdict(
      10, false, {{"lost_acked", 2}},
      {{"expectations",
        TraceFields::array(
            {{{"metric", "lost_acked"}, {"expected", 0}, {"actual", 2}, {"ok", false}}})}});
  EXPECT_TRUE(writer.has_verdict());
  EXPECT_EQ(Lines(writer.bytes())[1],
            R"({"t_us":10,"node":"checker","ev":"verdict","ok":false,"metrics":{"lost_acked":2},)"
            R"("expectations":[{"metric":"lost_acked","expected":0,"actual":2,"ok":false}]})");
  ASSERT_TRUE(writer.Commit().ok());
}

TEST(TraceWriterTest, VerdictWritesFieldsGivenAsTextLastAndRefusesARepeatedKey) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  EventFields more;
  more.AddWith(field::kAudit, [](JsonOut& out) { out.Put(R"([{"topic":"t","values":["a"]}])"); });
  more.Add("note", "x\"y");
  writer.Verdict(10, true, {{"sent", 1}}, {{"variant", "base"}}, more);
  EXPECT_EQ(Lines(writer.bytes())[1],
            R"({"t_us":10,"node":"checker","ev":"verdict","ok":true,"metrics":{"sent":1},)"
            R"("variant":"base","audit":[{"topic":"t","values":["a"]}],"note":"x\"y"})");
  ASSERT_TRUE(writer.Commit().ok());

  TraceWriter again = TraceWriter::ToMemory(Header());
  EventFields repeated;
  repeated.Add("variant", "other");
  EXPECT_DEATH(again.Verdict(10, true, {{"sent", 1}}, {{"variant", "base"}}, repeated),
               "repeated: variant");
}

TEST(TraceWriterDeathTest, EventEarlierThanThePreviousIsAProgrammerError) {
  TraceWriter writer = TraceWriter::ToMemory(Header(TraceLevel::kMessages));
  writer.Event(100, "broker-1", "crash");
  writer.Event(100, "broker-1", "restart");  // equal times are fine
  EXPECT_DEATH(writer.Event(99, "broker-1", "crash"), "earlier than the previous");
  EXPECT_DEATH(writer.Message(99, "broker-1", "msg_send"), "earlier than the previous");
}

TEST(TraceWriterDeathTest, FilteredMessageStillMayNotGoBackInTime) {
  TraceWriter writer = TraceWriter::ToMemory(Header(TraceLevel::kState));
  writer.Event(100, "broker-1", "crash");
  EXPECT_DEATH(writer.Message(50, "broker-1", "msg_send"), "earlier than the previous");
}

TEST(TraceWriterDeathTest, NothingAfterTheVerdict) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  writer.Verdict(5, true, TraceFields::object());
  EXPECT_DEATH(writer.Event(6, "broker-1", "crash"), "after the verdict");
  EXPECT_DEATH(writer.Verdict(6, true, TraceFields::object()), "after the verdict");
}

TEST(TraceWriterDeathTest, MisuseOfNamesAndFieldsIsAProgrammerError) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  EXPECT_DEATH(writer.Event(1, "broker-1", "msg_send"), "Message");
  EXPECT_DEATH(writer.Message(1, "broker-1", "send"), "msg_");
  EXPECT_DEATH(writer.Event(1, "broker-1", "crash", {{"t_us", 5}}), "may not repeat");
  EXPECT_DEATH(writer.Event(1, "broker-1", "crash", EventFields(TraceFields::array({1, 2}))),
               "object");
  EXPECT_DEATH(writer.Commit(), "after its verdict");
}

TEST(TraceWriterTest, FileTraceAppearsOnlyOnCommit) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.jsonl";
  auto writer = TraceWriter::ToFile(path, Header());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  TraceWriter memory = TraceWriter::ToMemory(Header());
  WriteRun(*writer);
  WriteRun(memory);
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(ReadAll(path), memory.bytes());
  EXPECT_EQ(writer->hash(), memory.hash());
  std::vector<std::string> entries;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    entries.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(entries, std::vector<std::string>{"run.jsonl"});
}

TEST(TraceWriterTest, LargeFileTraceStreamsThroughTheBuffer) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/big.jsonl";
  auto writer = TraceWriter::ToFile(path, Header(TraceLevel::kMessages));
  ASSERT_TRUE(writer.ok());
  TraceWriter hash_only = TraceWriter::HashOnly(Header(TraceLevel::kMessages));
  for (int i = 0; i < 40'000; ++i) {  // ~3 MB: several buffer flushes
    const EventFields fields = {{"to", "broker-2"}, {"seq", i}, {"pad", std::string(20, 'x')}};
    writer->Message(i, "broker-1", "msg_send", fields);
    hash_only.Message(i, "broker-1", "msg_send", fields);
  }
  writer->Verdict(40'000, true, TraceFields::object());
  hash_only.Verdict(40'000, true, TraceFields::object());
  ASSERT_TRUE(writer->Commit().ok());
  Xxh64 file_hash;
  file_hash.Update(ReadAll(path));
  EXPECT_EQ(file_hash.digest(), hash_only.hash());
  auto trace = ReadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->events.size(), 40'000u);
}

TEST(TraceWriterTest, AbandonedFileTraceLeavesThePreviousFileUntouched) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.jsonl";
  {
    std::ofstream previous(path);
    previous << "previous\n";
  }
  {
    auto writer = TraceWriter::ToFile(path, Header());
    ASSERT_TRUE(writer.ok());
    writer->Event(1, "broker-1", "crash");
    // Destroyed without a verdict or Commit: e.g. the run failed.
  }
  EXPECT_EQ(ReadAll(path), "previous\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(TraceWriterTest, MissingDirectoryIsAClearError) {
  testing::TempDir dir;
  auto writer = TraceWriter::ToFile(dir.path() + "/nope/run.jsonl", Header());
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), Errc::kNotFound);
  EXPECT_NE(writer.status().message().find("does not exist"), std::string::npos);
}

TEST(TraceReaderTest, RoundTripsEveryEvent) {
  TraceWriter writer = TraceWriter::ToMemory(Header(TraceLevel::kMessages));
  WriteRun(writer);
  auto trace = ParseTrace(writer.bytes(), "run.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->header, Header(TraceLevel::kMessages));
  ASSERT_EQ(trace->events.size(), 6u);
  const TraceEvent& elected = trace->events[2];
  EXPECT_EQ(elected.t_us, 1500);
  EXPECT_EQ(elected.node, "broker-1");
  EXPECT_EQ(elected.ev, "leader_elected");
  EXPECT_EQ(elected.line, 4u);
  EXPECT_EQ(elected.fields.dump(), R"({"topic":"t","partition":0,"leader":1,"epoch":3})");
  EXPECT_TRUE(IsMessageEv(trace->events[1].ev));
  EXPECT_TRUE(trace->ok());
  EXPECT_EQ(trace->verdict.fields["metrics"]["acked"], 1);
  EXPECT_EQ(trace->verdict.line, 8u);

  // Writing the read events again reproduces the bytes exactly.
  TraceWriter again = TraceWriter::ToMemory(trace->header);
  for (const TraceEvent& event : trace->events) {
    if (IsMessageEv(event.ev)) {
      again.Message(event.t_us, event.node, event.ev, EventFields(event.fields));
    } else {
      again.Event(event.t_us, event.node, event.ev, EventFields(event.fields));
    }
  }
  TraceFields metrics = trace->verdict.fields["metrics"];
  again.Verdict(trace->verdict.t_us, trace->ok(), metrics);
  EXPECT_EQ(again.bytes(), writer.bytes());
}

// The header records the brokers' Kafka release and each client of another release (sorted by
// id), and reads them back; without them (an older trace) both are empty.
TEST(TraceReaderTest, HeaderCarriesTheKafkaReleases) {
  TraceHeader header = Header(TraceLevel::kState);
  header.kafka_version = "0.10.0";
  header.client_kafka_versions = {{"p1", "0.11.0"}, {"c1", "2.0"}};
  TraceWriter writer = TraceWriter::ToMemory(header);
  writer.Verdict(10, true, TraceFields::object());
  const std::string first = writer.bytes().substr(0, writer.bytes().find('\n'));
  EXPECT_TRUE(first.ends_with(
      R"("level":"state","kafka_version":"0.10.0","client_kafka_versions":{"c1":"2.0","p1":"0.11.0"}})"))
      << first;
  auto trace = ParseTrace(writer.bytes(), "run.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->header, header);

  TraceWriter plain = TraceWriter::ToMemory(Header(TraceLevel::kState));
  plain.Verdict(10, true, TraceFields::object());
  EXPECT_EQ(plain.bytes().find("kafka_version"), std::string::npos);
  auto old = ParseTrace(plain.bytes(), "old.jsonl");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->header.kafka_version.empty());
  EXPECT_TRUE(old->header.client_kafka_versions.empty());
  EXPECT_FALSE(
      ParseTrace(R"({"ksim_trace":1,"scenario":"s","variant":"base","seed":1,"kafka_version":7})"
                 "\n",
                 "bad.jsonl")
          .ok());
}

TEST(TraceReaderTest, StreamingReaderStopsAfterTheVerdict) {
  TraceWriter writer = TraceWriter::ToMemory(Header());
  WriteRun(writer);
  auto reader = TraceReader::FromString(writer.bytes());
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->header().seed, 7u);
  std::vector<std::string> evs;
  for (;;) {
    auto event = reader->Next();
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    if (!event->has_value()) break;
    evs.push_back((*event)->ev);
  }
  EXPECT_EQ(evs, (std::vector<std::string>{"start", "leader_elected", "ack", "verdict"}));
}

// Parses `text` and returns the error message ("" if it parsed).
std::string ParseError(const std::string& text) {
  auto trace = ParseTrace(text, "bad.jsonl");
  if (trace.ok()) return "";
  EXPECT_EQ(trace.status().code(), Errc::kCorruption);
  return trace.status().message();
}

constexpr char kHeaderLine[] =
    R"({"ksim_trace":1,"scenario":"s","variant":"base","seed":1,"level":"state"})"
    "\n";
constexpr char kVerdictLine[] =
    R"({"t_us":9,"node":"checker","ev":"verdict","ok":true,"metrics":{}})"
    "\n";

TEST(TraceReaderTest, ErrorsNameTheFileAndLine) {
  const std::string event = R"({"t_us":5,"node":"b","ev":"crash"})"
                            "\n";
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + event + kVerdictLine), "");
  EXPECT_EQ(ParseError(""), "bad.jsonl:1: empty file: no trace header");
  EXPECT_EQ(ParseError("{\"scenario\":1}\n"),
            "bad.jsonl:1: not a ksim trace (the first line has no \"ksim_trace\" key)");
  EXPECT_EQ(ParseError("{\"ksim_trace\":2}\n"),
            "bad.jsonl:1: unsupported trace format version 2 (this ksim reads 1)");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + event + "{\"t_us\":6,\n" + kVerdictLine),
            "bad.jsonl:3: not valid JSON");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + event + R"({"t_us":4,"node":"b","ev":"x"})" +
                       "\n" + kVerdictLine),
            "bad.jsonl:3: time goes backwards (4 after 5)");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + R"({"t_us":"5","node":"b","ev":"x"})"
                                                  "\n"),
            "bad.jsonl:2: \"t_us\" must be a non-negative integer");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + R"({"t_us":5,"ev":"x"})"
                                                  "\n"),
            "bad.jsonl:2: missing \"node\"");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + event),
            "bad.jsonl:2: the trace ends without a verdict line (truncated?)");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + kVerdictLine + event),
            "bad.jsonl:3: a line after the verdict");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) + "\n" + kVerdictLine), "bad.jsonl:2: empty line");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) +
                       R"({"t_us":1,"node":"b","ev":"msg_send"})"
                       "\n" +
                       kVerdictLine),
            "bad.jsonl:2: message event \"msg_send\" in a trace at the state level");
  EXPECT_EQ(ParseError(std::string(kHeaderLine) +
                       R"({"t_us":9,"node":"checker","ev":"verdict","ok":1,"metrics":{}})"
                       "\n"),
            "bad.jsonl:2: the verdict's \"ok\" must be true or false");
}

TEST(TraceReaderTest, MissingFileIsNotFound) {
  testing::TempDir dir;
  auto trace = ReadTraceFile(dir.path() + "/absent.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), Errc::kNotFound);
}

TEST(TraceReaderTest, FileErrorsNameThePath) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/cut.jsonl";
  {
    std::ofstream out(path);
    out << kHeaderLine
        << R"({"t_us":5,"node":"b","ev":"crash"})"
           "\n"
        << R"({"t_us":6,"no)";
  }
  auto trace = ReadTraceFile(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(), path + ":3: not valid JSON");
}

TEST(TraceLevelTest, NamesRoundTrip) {
  for (TraceLevel level : {TraceLevel::kState, TraceLevel::kMessages}) {
    auto parsed = ParseTraceLevel(TraceLevelName(level));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_EQ(ParseTraceLevel("verbose").status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace ksim::sim
