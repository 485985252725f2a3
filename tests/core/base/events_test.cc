// Emit's braced form builds an event's fields member by member (MakeEventFields) instead of
// through nlohmann's initializer-list constructor: the two must give the same object, since the
// trace writes it byte for byte.
#include "core/base/events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ksim {
namespace {

TEST(EventsTest, BracedEmitGivesWhatNlohmannsBracedFormGives) {
  std::vector<std::pair<std::string, EventFields>> seen;
  EventSink sink = [&seen](std::string_view ev, EventFields fields) {
    seen.emplace_back(std::string(ev), std::move(fields));
  };
  const std::string topic = "a-topic-name-longer-than-the-small-string-buffer";
  Emit(sink, "append",
       {{"topic", topic},
        {"partition", 3},
        {"values", EventFields::array({"x", nullptr})},
        {"nested", {{"b", 1}, {"a", 2}}},
        {"ok", true}});
  const EventFields nlohmann_form = {{"topic", topic},
                                     {"partition", 3},
                                     {"values", EventFields::array({"x", nullptr})},
                                     {"nested", {{"b", 1}, {"a", 2}}},
                                     {"ok", true}};
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "append");
  EXPECT_EQ(seen[0].second.dump(), nlohmann_form.dump());
  // Insertion order is kept, not sorted.
  EXPECT_EQ(seen[0].second.dump().find("\"topic\""), 1u);
}

TEST(EventsTest, ARepeatedKeyKeepsItsFirstValueAsNlohmannDoes) {
  const EventFields ours = MakeEventFields({{"k", 1}, {"j", 2}, {"k", 3}});
  const EventFields theirs = {{"k", 1}, {"j", 2}, {"k", 3}};
  EXPECT_EQ(ours.dump(), theirs.dump());
  EXPECT_EQ(ours.dump(), R"({"k":1,"j":2})");
}

TEST(EventsTest, NoFieldsIsNullAndAnEmptySinkBuildsNothing) {
  EXPECT_TRUE(MakeEventFields({}).is_null());
  EventSink empty;
  Emit(empty, "anything", {{"topic", "t"}});  // no sink: dropped, no crash
  int calls = 0;
  EventSink counting = [&calls](std::string_view, EventFields fields) {
    ++calls;
    EXPECT_TRUE(fields.is_null());
  };
  Emit(counting, "no_fields");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace ksim
