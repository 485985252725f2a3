// EventFields are JSON text from the start: what they write must be what nlohmann writes of the
// same object (the trace holds it byte for byte, and readers parse it back), in the order the
// fields were added.
#include "core/base/events.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/base/trace_names.h"

namespace ksim {
namespace {

using Json = nlohmann::ordered_json;

std::string Dumped(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

TEST(EventsTest, BracedEmitWritesWhatNlohmannDumpsOfTheSameObject) {
  std::vector<std::pair<std::string, EventFields>> seen;
  EventSink sink = [&seen](std::string_view ev, const EventFields& fields) {
    seen.emplace_back(std::string(ev), fields);
  };
  const std::string topic = "a-topic-name-longer-than-the-small-string-buffer \"quoted\"\n\x01";
  const std::string bad_utf8 = "caf\xC3\xA9 \xFF\xC3";
  const std::vector<int32_t> isr = {3, 1, 2};
  const std::vector<int32_t> none;
  const std::vector<int32_t> extremes = {std::numeric_limits<int32_t>::min(), -1, 0,
                                         std::numeric_limits<int32_t>::max()};
  const Json nested = {{"b", 1}, {"a", Json::array({"x", nullptr})}};
  Emit(sink, "append",
       {{"topic", topic},
        {"partition", 3},
        {"negative", std::numeric_limits<int64_t>::min()},
        {"unsigned", std::numeric_limits<uint64_t>::max()},
        {"bytes", bad_utf8},
        {"isr", isr},
        {"none", none},
        {"extremes", extremes},
        {"nested", nested},
        {"ratio", 0.25},
        {"missing", nullptr},
        {"ok", true}});
  Json expected = Json::object();
  expected["topic"] = topic;
  expected["partition"] = 3;
  expected["negative"] = std::numeric_limits<int64_t>::min();
  expected["unsigned"] = std::numeric_limits<uint64_t>::max();
  expected["bytes"] = bad_utf8;
  expected["isr"] = isr;
  expected["none"] = Json::array();
  expected["extremes"] = extremes;
  expected["nested"] = nested;
  expected["ratio"] = 0.25;
  expected["missing"] = nullptr;
  expected["ok"] = true;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "append");
  const std::string dumped = Dumped(expected);
  // The members without the object's braces, in the order added (not sorted).
  EXPECT_EQ(seen[0].second.text(), dumped.substr(1, dumped.size() - 2));
  EXPECT_EQ(seen[0].second.size(), 12u);
  // Read back: the same object (the invalid UTF-8 as written, replaced).
  EXPECT_EQ(seen[0].second.json().dump(), Json::parse(dumped).dump());
  EXPECT_EQ(seen[0].second.json().at("partition"), 3);
  EXPECT_EQ(seen[0].second.json().at("isr"), Json::array({3, 1, 2}));
  EXPECT_EQ(seen[0].second.IntegersValue("extremes"),
            std::vector<int64_t>(extremes.begin(), extremes.end()));
}

// A byte to escape at every place of strings of every length up to past AppendJsonString's
// 32-byte limit (up to it bytes are copied as they are scanned, past it after), each kind of
// byte it must catch and the plain bytes next to them, is written as nlohmann writes it.
TEST(EventsTest, EveryByteAtEveryPlaceIsEscapedAsDumpEscapesIt) {
  const std::vector<unsigned char> bytes = {0x00, 0x01, 0x1F, 0x20, 0x21, '"',  0x23, 0x5B,
                                            '\\', 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xE2, 0xFF};
  for (size_t size = 1; size <= 40; ++size) {
    for (size_t place = 0; place < size; ++place) {
      for (unsigned char byte : bytes) {
        std::string text(size, 'a');
        text[place] = static_cast<char>(byte);
        if (byte == 0xC3 && place + 1 < size) text[place + 1] = static_cast<char>(0xA9);  // é
        TextBuffer buffer;
        JsonOut out(buffer);
        AppendJsonString(out, text);
        ASSERT_EQ(out.view(), Dumped(Json(text)))
            << "size " << size << ", byte " << int{byte} << " at " << place;
      }
    }
  }
}

TEST(EventsTest, AddAppendsAndAddWithWritesItsValueInPlace) {
  EventFields fields{{"topic", "t"}};
  fields.Add("partition", 0).AddWith("values", [](JsonOut& out) {
    out.Put('[');
    AppendJsonString(out, "v\"1");
    out.Put(",null]");
  });
  EXPECT_EQ(fields.text(), R"("topic":"t","partition":0,"values":["v\"1",null])");
  EXPECT_EQ(fields.json().at("values"), Json::array({"v\"1", nullptr}));
  // Asked once, kept; a later Add is seen.
  EXPECT_FALSE(fields.json().contains("leo"));
  fields.Add("leo", 5);
  EXPECT_EQ(fields.json().at("leo"), 5);
}

TEST(EventsTest, TraceNamesAreWrittenAsAnyKeyIs) {
  // The trace's names (PlainName) skip the scan a key of any text goes through: the same text,
  // the same repeated-key check, the same reading back.
  const std::string topic_key(field::kTopic);
  const std::string values_key(field::kValues);
  EventFields named{{field::kTopic, "t"}, {field::kPartition, 7}};
  named.Add(field::kLeo, 3).AddWith(field::kValues, [](JsonOut& out) { out.Put("[]"); });
  EventFields spelled{{topic_key, "t"}, {std::string(field::kPartition), 7}};
  spelled.Add(std::string(field::kLeo), 3).AddWith(values_key, [](JsonOut& out) { out.Put("[]"); });
  EXPECT_EQ(named.text(), spelled.text());
  EXPECT_EQ(named.text(), R"("topic":"t","partition":7,"leo":3,"values":[])");
  EXPECT_EQ(named.StringValue(field::kTopic), "t");
  EXPECT_EQ(named.IntegerValue(topic_key), std::nullopt);
  EXPECT_EQ(named.IntegerValue(field::kPartition), 7);
  EXPECT_DEATH(named.Add(field::kTopic, "u"), "repeated: topic");
  EXPECT_DEATH((EventFields{{field::kNode, "n"}}), "t_us, node or ev");
  // Every name of the vocabulary is written as AppendJsonString writes it.
  for (const std::string_view name : field::kAll) {
    TextBuffer plain;
    TextBuffer scanned;
    JsonOut a(plain);
    JsonOut b(scanned);
    AppendJsonPlain(a, name);
    AppendJsonString(b, name);
    EXPECT_EQ(a.view(), b.view()) << name;
  }
}

TEST(EventsTest, ManyFieldsReadBackAsFewDo) {
  // Past the fields whose place is kept, json() parses the text: the same object either way.
  EventFields fields;
  Json expected = Json::object();
  for (int i = 0; i < 40; ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::string text = "v\"" + std::to_string(i);
    if (i % 2 == 0) {
      fields.Add(key, i - 20);
      expected[key] = i - 20;
    } else {
      fields.Add(key, text);
      expected[key] = text;
    }
    EXPECT_EQ(fields.json().dump(), expected.dump()) << i + 1 << " fields";
  }
}

TEST(EventsTest, AConvertedValueIsCopiedWithItsOwnCopy) {
  const std::vector<int32_t> ids = {1, 2};
  const EventValue original(ids);
  const EventValue copy(original);
  EventFields fields;
  fields.Add("a", original).Add("b", copy);
  EXPECT_EQ(fields.text(), R"("a":[1,2],"b":[1,2])");
  // Written straight from the integers, read back as the JSON array it is.
  EXPECT_EQ(fields.json()["a"], Json::array({1, 2}));
  EXPECT_EQ(fields.IntegersValue("b"), (std::vector<int64_t>{1, 2}));
}

TEST(EventsTest, AMovedValueWritesWhatItHeld) {
  // Converted through JSON and held out of line: a move takes the converted value along.
  EventValue strings(std::vector<std::string>{"x", "y"});
  EventValue number(0.25);
  const EventValue moved_strings(std::move(strings));
  const EventValue moved_number(std::move(number));
  EventFields fields;
  fields.Add("a", moved_strings).Add("b", moved_number);
  EXPECT_EQ(fields.text(), R"("a":["x","y"],"b":0.25)");
  EXPECT_EQ(fields.json()["a"], Json::array({"x", "y"}));
}

TEST(EventsTest, EveryKindIsCopiedAsTheKindItHolds) {
  const EventValue values[] = {nullptr, true, false, int64_t{-7}, uint64_t{1} << 63, "text", 0.5};
  EventFields originals;
  EventFields copies;
  for (size_t i = 0; i < std::size(values); ++i) {
    const std::string key = "k" + std::to_string(i);
    const EventValue copy(values[i]);
    originals.Add(key, values[i]);
    copies.Add(key, copy);
  }
  EXPECT_EQ(
      originals.text(),
      R"("k0":null,"k1":true,"k2":false,"k3":-7,"k4":9223372036854775808,"k5":"text","k6":0.5)");
  EXPECT_EQ(copies.text(), originals.text());
}

// The typed readers say of each field what nlohmann says of json()[key]: its string, integer or
// boolean, or nullopt for another type or an absent key; past the 24 kept fields too.
void ExpectReadersAgreeWithJson(const EventFields& fields, const std::vector<std::string>& keys) {
  const Json& json = fields.json();
  for (const std::string& key : keys) {
    auto it = json.find(key);
    const bool present = it != json.end();
    SCOPED_TRACE(key);
    if (present && it->is_string()) {
      EXPECT_EQ(fields.StringValue(key), it->get<std::string>());
    } else {
      EXPECT_EQ(fields.StringValue(key), std::nullopt);
    }
    if (present && it->is_number_integer()) {
      EXPECT_EQ(fields.IntegerValue(key), it->get<int64_t>());
    } else {
      EXPECT_EQ(fields.IntegerValue(key), std::nullopt);
    }
    if (present && it->is_boolean()) {
      EXPECT_EQ(fields.BoolValue(key), it->get<bool>());
    } else {
      EXPECT_EQ(fields.BoolValue(key), std::nullopt);
    }
    if (present && it->is_array()) {
      std::vector<int64_t> integers;
      for (const Json& member : *it) {
        if (member.is_number_integer()) integers.push_back(member.get<int64_t>());
      }
      EXPECT_EQ(fields.IntegersValue(key), integers);
    } else {
      EXPECT_EQ(fields.IntegersValue(key), std::nullopt);
    }
  }
}

TEST(EventsTest, TypedReadersSayWhatTheJsonSays) {
  const std::vector<int32_t> isr = {3, 1};
  EventFields fields{{"topic", "t"},
                     {"escaped", "a \"quoted\"\n name \xC3\xA9"},
                     {"partition", 7},
                     {"negative", std::numeric_limits<int64_t>::min()},
                     {"unsigned", std::numeric_limits<uint64_t>::max()},
                     {"zero", 0},
                     {"ratio", 2.0},
                     {"unclean", true},
                     {"clean", false},
                     {"isr", isr},
                     {"missing", nullptr},
                     {"number_text", "12"}};
  fields.AddWith("written", [](JsonOut& out) { out.Put("-15"); });
  // Arrays as ksim writes them and as it never does: each read as json() reads it.
  const std::vector<int64_t> wide = {std::numeric_limits<int64_t>::min(), -1, 0, 10};
  fields.Add("wide", wide).Add("no_ids", std::vector<int32_t>());
  fields.AddWith("mixed", [](JsonOut& out) { out.Put(R"([1,"two",3.5,-4,[5],null,6])"); });
  fields.AddWith("spaced", [](JsonOut& out) { out.Put("[ 1 , 2 ]"); });
  fields.AddWith("past_int64", [](JsonOut& out) { out.Put("[18446744073709551615,7]"); });
  fields.AddWith("trailing_comma_free", [](JsonOut& out) { out.Put("[-0,1]"); });
  const std::vector<std::string> keys = {"topic",    "escaped",    "partition",
                                         "negative", "unsigned",   "zero",
                                         "ratio",    "unclean",    "clean",
                                         "isr",      "missing",    "number_text",
                                         "written",  "absent",     "topi",
                                         "wide",     "no_ids",     "mixed",
                                         "spaced",   "past_int64", "trailing_comma_free"};
  ExpectReadersAgreeWithJson(fields, keys);
  EXPECT_EQ(fields.StringValue("escaped"), "a \"quoted\"\n name \xC3\xA9");
  EXPECT_EQ(fields.IntegerValue("written"), -15);
  EXPECT_EQ(fields.IntegerValue("ratio"), std::nullopt);  // 2.0: a number, not an integer
  EXPECT_EQ(fields.IntegersValue("isr"), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(fields.IntegersValue("mixed"), (std::vector<int64_t>{1, -4, 6}));
  EXPECT_EQ(fields.IntegersValue("topic"), std::nullopt);  // not an array

  // From a JSON object (every value written as JSON), and past the fields whose place is kept.
  Json object = Json::object();
  std::vector<std::string> many;
  for (int i = 0; i < 30; ++i) {
    const std::string key = "k" + std::to_string(i);
    many.push_back(key);
    if (i % 3 == 0) object[key] = i;
    if (i % 3 == 1) object[key] = "s" + std::to_string(i);
    if (i % 3 == 2) object[key] = i % 2 == 0;
  }
  many.push_back("absent");
  ExpectReadersAgreeWithJson(EventFields(object), many);
  EXPECT_EQ(EventFields(object).IntegerValue("k27"), 27);
  EXPECT_EQ(EventFields(object).StringValue("k28"), "s28");
}

TEST(EventsTest, NoFieldsIsEmptyAndAnEmptySinkBuildsNothing) {
  EXPECT_TRUE(EventFields().empty());
  EXPECT_EQ(EventFields().text(), "");
  EXPECT_EQ(EventFields().json(), Json::object());
  EventSink empty;
  Emit(empty, "anything", {{"topic", "t"}});  // no sink: dropped, no crash
  int calls = 0;
  EventSink counting = [&calls](std::string_view, const EventFields& fields) {
    ++calls;
    EXPECT_TRUE(fields.empty());
  };
  Emit(counting, "no_fields");
  EXPECT_EQ(calls, 1);
}

// A typical event's text is kept inside the object (no allocation); a longer one moves to an
// allocated buffer. Copies and moves in every combination keep the text, the readers and the
// repeated-key check; a moved-from object is empty and usable. ASan checks that no copy points
// into another object's room.
TEST(EventsTest, TextInTheObjectOrAllocatedSurvivesCopiesAndMoves) {
  auto small = [] { return EventFields{{"topic", "t"}, {"partition", 3}, {"hw", 41}}; };
  auto large = [] {
    EventFields fields{{"topic", "t"}, {"partition", 3}};
    fields.Add("values", std::string(400, 'v'));  // past the room: allocated
    return fields;
  };
  const std::string small_text(small().text());
  const std::string large_text(large().text());
  ASSERT_EQ(small_text, R"("topic":"t","partition":3,"hw":41)");
  ASSERT_GT(large_text.size(), 400u);

  for (bool first_large : {false, true}) {
    for (bool second_large : {false, true}) {
      const std::string& first_text = first_large ? large_text : small_text;
      EventFields source = first_large ? large() : small();
      EventFields copied(source);
      EXPECT_EQ(copied.text(), first_text);
      EventFields moved(std::move(source));
      EXPECT_EQ(moved.text(), first_text);
      EXPECT_EQ(moved.IntegerValue("partition"), 3);
      EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
      EXPECT_EQ(source.text(), "");
      source.Add("again", 1);  // and usable
      EXPECT_EQ(source.text(), R"("again":1)");

      EventFields target = second_large ? large() : small();
      target = std::move(moved);
      EXPECT_EQ(target.text(), first_text);
      EXPECT_EQ(target.StringValue("topic"), "t");
      EXPECT_DEATH(target.Add("topic", "u"), "repeated");
      EventFields assigned = second_large ? large() : small();
      assigned = copied;
      EXPECT_EQ(assigned.text(), first_text);
      assigned.Add("more", std::string(300, 'm'));  // grows from wherever it is
      EXPECT_EQ(assigned.text().substr(0, first_text.size()), first_text);
      EXPECT_EQ(copied.text(), first_text);  // the copy it came from is untouched
    }
  }
  // A vector's growth moves its elements: each keeps its own text.
  std::vector<EventFields> many;
  for (int i = 0; i < 100; ++i) {
    many.push_back(i % 3 == 0 ? large() : EventFields{{"seq", i}});
  }
  for (int i = 0; i < 100; ++i) {
    if (i % 3 == 0) {
      EXPECT_EQ(many[i].text(), large_text);
    } else {
      EXPECT_EQ(many[i].IntegerValue("seq"), i);
    }
  }
}

TEST(EventsTest, AddAllAppendsAnothersFieldsAsTheyWereWritten) {
  EventFields head{{"a", 1}, {"b", "two"}};
  EventFields tail{{"c", true}, {"d", nullptr}, {"escaped \"key\"", "v\n"}, {"f", -5}};
  tail.AddWith("g", [](JsonOut& out) { out.Put("[1,{\"x\":null}]"); });
  head.AddAll(tail);
  EXPECT_EQ(head.text(), R"("a":1,"b":"two",)" + std::string(tail.text()));
  EXPECT_EQ(Dumped(head.json()), Dumped(Json{{"a", 1},
                                             {"b", "two"},
                                             {"c", true},
                                             {"d", nullptr},
                                             {"escaped \"key\"", "v\n"},
                                             {"f", -5},
                                             {"g", Json::parse("[1,{\"x\":null}]")}}));
  // Read back by kind, as the fields added one by one would be.
  EXPECT_EQ(head.BoolValue("c"), true);
  EXPECT_EQ(head.IntegerValue("f"), -5);
  EXPECT_EQ(head.StringValue("b"), "two");
  EXPECT_EQ(head.size(), 7u);
  // Past the fields whose places are kept: through the JSON, the same text.
  EventFields many;
  for (int i = 0; i < 40; ++i) many.Add("key" + std::to_string(i), i);
  EventFields all{{"first", 0}};
  all.AddAll(many);
  EXPECT_EQ(all.text(), R"("first":0,)" + std::string(many.text()));
  EXPECT_EQ(all.size(), 41u);
  // Nothing to add: nothing changes.
  EventFields same{{"a", 1}};
  same.AddAll(EventFields());
  EXPECT_EQ(same.text(), R"("a":1)");
}

TEST(EventsDeathTest, AddAllRefusesAKeyAlreadyThere) {
  EventFields head{{"a", 1}, {"b", 2}};
  EventFields tail{{"c", 3}, {"b", 4}};
  EXPECT_DEATH(head.AddAll(tail), "repeated: b");
}

TEST(EventsDeathTest, ARepeatedOrAReservedKeyIsAProgrammerError) {
  EXPECT_DEATH((EventFields{{"k", 1}, {"j", 2}, {"k", 3}}), "repeated: k");
  EXPECT_DEATH((EventFields{{"ev", "x"}}), "t_us, node or ev");
  EXPECT_DEATH((EventFields{{"t_us", 1}}), "t_us, node or ev");
  EXPECT_DEATH((EventFields{{"a", 0}, {"node", "n"}}), "t_us, node or ev");
  EventFields fields{{"partition", 1}};
  EXPECT_DEATH(fields.Add("partition", 2), "repeated: partition");
  // Same length and first letter, another key; then the first one again.
  EXPECT_DEATH((EventFields{{"ab", 1}, {"ac", 2}, {"ab", 3}}), "repeated: ab");
  // A copy remembers its keys: a repeat of one is still refused.
  const EventFields original{{"topic", "t"}, {"partition", 0}};
  EventFields copy = original;
  EXPECT_DEATH(copy.Add("partition", 1), "repeated: partition");
  EventFields assigned;
  assigned = original;
  EXPECT_DEATH(assigned.Add("topic", "u"), "repeated: topic");
  // The first of many keys, repeated last (every key of a long event is looked at).
  EventFields many;
  for (int i = 0; i < 20; ++i) many.Add("key" + std::to_string(i), i);
  EXPECT_DEATH(many.Add("key0", 0), "repeated: key0");
  // Keys near the reserved ones, and keys alike but for a letter, are fields like any other.
  const EventFields near{{"evs", 1}, {"nodes", 2}, {"t_ms", 3}, {"topic", 4}, {"tapic", 5}};
  EXPECT_EQ(near.size(), 5u);
}

}  // namespace
}  // namespace ksim
