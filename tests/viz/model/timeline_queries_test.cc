// The timeline model's derived answers, the questions the panels ask (viz/model/timeline_model.h,
// "Answers derived"), on hand-written traces where each answer can be worked out by reading the
// trace: what a `hw` event changed and which records it made committed, why a record was never
// written, the ledger's counts, the message diagram's nodes, the events per slice of the run.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/viz/model/hand_trace.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz {
namespace {

using testing::BuildHandTrace;

// The index of the first event at t named `ev`.
size_t EventAt(const TimelineModel& m, TimeUs t_us, const std::string& ev) {
  for (size_t i = m.FirstEventAtOrAfter(t_us); i < m.events().size(); ++i) {
    if (m.events()[i].t_us == t_us && m.events()[i].ev == ev) return i;
  }
  ADD_FAILURE() << "no " << ev << " at " << t_us;
  return 0;
}

std::vector<std::string> RecordIds(const TimelineModel& m, std::span<const AckedOffset> acked) {
  std::vector<std::string> ids;
  for (const AckedOffset& a : acked) ids.push_back(m.records()[a.record].id);
  return ids;
}

// t-0 on brokers 1 (leader) and 2; p1 sends four records, three acked at offsets 0..2, one
// (p1-3) never acked. The leader's HW goes 0 -> 2 -> 3 -> 3 and, at t 130, twice in one
// instant (to 4, then 5); the follower learns 3 at 100.
const char* kHighWatermarks =
    R"({"t_us":20,"node":"broker-1","ev":"leader_elected","topic":"t","partition":0,"leader":1,"epoch":0,"isr":[1,2],"unclean":false}
{"t_us":30,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1,2],"replicas":[1,2],"leo":0,"log_start_offset":0,"hw":0}
{"t_us":31,"node":"broker-2","ev":"become_follower","topic":"t","partition":0,"leader":1,"epoch":0,"leo":0,"log_start_offset":0,"hw":0}
{"t_us":40,"node":"p1","ev":"send","record_id":"p1-0","topic":"t","key":null,"value":"a"}
{"t_us":41,"node":"p1","ev":"send","record_id":"p1-1","topic":"t","key":null,"value":"b"}
{"t_us":42,"node":"p1","ev":"send","record_id":"p1-2","topic":"t","key":null,"value":"c"}
{"t_us":43,"node":"p1","ev":"send","record_id":"p1-3","topic":"t","key":null,"value":"d"}
{"t_us":50,"node":"broker-1","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":2,"leo":3,"epoch":0,"role":"leader","values":["a","b","c"]}
{"t_us":60,"node":"broker-2","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":2,"leo":3,"epoch":0,"role":"follower","values":["a","b","c"]}
{"t_us":70,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":2}
{"t_us":80,"node":"p1","ev":"ack","record_id":"p1-0","topic":"t","partition":0,"offset":0,"key":null,"value":"a"}
{"t_us":81,"node":"p1","ev":"ack","record_id":"p1-1","topic":"t","partition":0,"offset":1,"key":null,"value":"b"}
{"t_us":90,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":3}
{"t_us":95,"node":"p1","ev":"ack","record_id":"p1-2","topic":"t","partition":0,"offset":2,"key":null,"value":"c"}
{"t_us":100,"node":"broker-2","ev":"hw","topic":"t","partition":0,"hw":3}
{"t_us":110,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":3}
{"t_us":120,"node":"broker-1","ev":"append","topic":"t","partition":0,"first_offset":3,"last_offset":4,"leo":5,"epoch":0,"role":"leader","values":["d","e"]}
{"t_us":130,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":4}
{"t_us":130,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":5}
{"t_us":140,"node":"broker-1","ev":"crash","tear":false,"corrupt":false}
)";

TEST(TimelineQueriesTest, HighWatermarkChangeIsTheReplicasHwBeforeAndAtTheEvent) {
  Result<TimelineModel> built = BuildHandTrace(kHighWatermarks);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;

  const HighWatermarkChange first = m.HighWatermarkChangeAt(EventAt(m, 70, "hw"));
  EXPECT_EQ(first.before, 0);
  EXPECT_EQ(first.after, 2);
  EXPECT_TRUE(first.leader);

  const HighWatermarkChange second = m.HighWatermarkChangeAt(EventAt(m, 90, "hw"));
  EXPECT_EQ(second.before, 2);
  EXPECT_EQ(second.after, 3);

  // The follower's own HW, not the leader's; it does not lead.
  const HighWatermarkChange follower = m.HighWatermarkChangeAt(EventAt(m, 100, "hw"));
  EXPECT_EQ(follower.before, 0);
  EXPECT_EQ(follower.after, 3);
  EXPECT_FALSE(follower.leader);

  // Two changes in one instant: "at the event" is after both.
  const size_t twice = EventAt(m, 130, "hw");
  EXPECT_EQ(m.HighWatermarkChangeAt(twice).before, 3);
  EXPECT_EQ(m.HighWatermarkChangeAt(twice).after, 5);
  EXPECT_EQ(m.HighWatermarkChangeAt(twice + 1).after, 5);

  // An event about no replica: nothing known.
  const HighWatermarkChange crash = m.HighWatermarkChangeAt(EventAt(m, 140, "crash"));
  EXPECT_EQ(crash.before, -1);
  EXPECT_EQ(crash.after, -1);
  EXPECT_FALSE(crash.leader);
}

TEST(TimelineQueriesTest, RecordsCommittedByAreTheAckedOffsetsTheLeadersHwPassed) {
  Result<TimelineModel> built = BuildHandTrace(kHighWatermarks);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  const int32_t p = m.PartitionIndex("t", 0);
  ASSERT_GE(p, 0);
  const auto committed_at = [&](TimeUs t_us) {
    const size_t event = EventAt(m, t_us, "hw");
    return RecordIds(m, m.RecordsCommittedBy(p, m.HighWatermarkChangeAt(event)));
  };
  EXPECT_EQ(committed_at(70), (std::vector<std::string>{"p1-0", "p1-1"}));
  EXPECT_EQ(committed_at(90), (std::vector<std::string>{"p1-2"}));
  EXPECT_TRUE(committed_at(100).empty()) << "a follower's HW commits nothing";
  EXPECT_TRUE(committed_at(110).empty()) << "the HW did not move";
  EXPECT_TRUE(committed_at(130).empty()) << "offsets 3 and 4 hold no acked record";

  // From "no HW known" (-1) the range starts at offset 0; another partition has none of them.
  const HighWatermarkChange from_unknown{.before = -1, .after = 1, .leader = true};
  EXPECT_EQ(RecordIds(m, m.RecordsCommittedBy(p, from_unknown)),
            (std::vector<std::string>{"p1-0"}));
  EXPECT_TRUE(m.RecordsCommittedBy(p + 1, from_unknown).empty());
}

// t-0 led by broker 1, then broker 1 crashes and the partition has no leader until broker 2
// takes it; p1 (acks=0) sends while broker 1 is down, p2 while cut off from broker 2 and gives
// up, p3 while the partition has no leader, p4 with no ack or error at all. p1-0 is acked;
// p1-9 unacked but in the final log.
const char* kNeverWritten =
    R"({"t_us":20,"node":"broker-1","ev":"leader_elected","topic":"t","partition":0,"leader":1,"epoch":0,"isr":[1,2],"unclean":false}
{"t_us":30,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1,2],"replicas":[1,2],"leo":0,"log_start_offset":0,"hw":0}
{"t_us":40,"node":"p1","ev":"send","record_id":"p1-0","topic":"t","key":null,"value":"a"}
{"t_us":45,"node":"p1","ev":"ack","record_id":"p1-0","topic":"t","partition":0,"offset":0,"key":null,"value":"a"}
{"t_us":50,"node":"broker-1","ev":"crash","tear":false,"corrupt":false}
{"t_us":60,"node":"p1","ev":"send","record_id":"p1-1","topic":"t","key":null,"value":"b"}
{"t_us":61,"node":"p1","ev":"ack","record_id":"p1-1","topic":"t","partition":0,"offset":-1,"key":null,"value":"b"}
{"t_us":62,"node":"p1","ev":"send","record_id":"p1-9","topic":"t","key":null,"value":"z"}
{"t_us":70,"node":"broker-2","ev":"partition_offline","topic":"t","partition":0,"isr":[]}
{"t_us":80,"node":"p3","ev":"send","record_id":"p3-0","topic":"t","key":null,"value":"c"}
{"t_us":85,"node":"p3","ev":"error","record_id":"p3-0","topic":"t","partition":0,"error":"NOT_LEADER_OR_FOLLOWER","outcome":"fail"}
{"t_us":100,"node":"broker-2","ev":"leader_elected","topic":"t","partition":0,"leader":2,"epoch":1,"isr":[2],"unclean":true}
{"t_us":110,"node":"world","ev":"partition","sides":[["p2"],["broker-2"]],"one_way":false}
{"t_us":120,"node":"p2","ev":"send","record_id":"p2-0","topic":"t","key":null,"value":"d"}
{"t_us":130,"node":"p2","ev":"error","record_id":"p2-0","topic":"t","partition":0,"error":"REQUEST_TIMED_OUT","outcome":"fail"}
{"t_us":140,"node":"world","ev":"heal"}
{"t_us":150,"node":"p4","ev":"send","record_id":"p4-0","topic":"t","key":null,"value":"e"}
{"t_us":160,"node":"broker-2","ev":"shutdown"}
{"t_us":170,"node":"p4","ev":"send","record_id":"p4-1","topic":"t","key":null,"value":"f"}
{"t_us":171,"node":"p4","ev":"error","record_id":"p4-1","topic":"t","partition":0,"error":"REQUEST_TIMED_OUT","outcome":"unknown"}
)";

const char* kNeverWrittenVerdict =
    R"({"t_us":900,"node":"checker","ev":"verdict","ok":true,"metrics":{"sent":7},"audit":[{"topic":"t","partition":0,"values":["a","z"]}]})"
    "\n";

TEST(TimelineQueriesTest, WhyNeverWrittenReadsTheClusterAtTheSend) {
  Result<TimelineModel> built = BuildHandTrace(kNeverWritten, kNeverWrittenVerdict);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  const auto why = [&](const char* id) {
    const int32_t r = m.RecordIndex(id);
    EXPECT_GE(r, 0) << id;
    return m.WhyNeverWritten(r);
  };
  EXPECT_FALSE(why("p1-0").has_value()) << "acked";
  EXPECT_FALSE(why("p1-9").has_value()) << "unacked, yet in the final log";

  struct Expected {
    const char* id;
    LeaderAtSend leader;
    const char* leader_node;
    bool gave_up;
    bool acks_zero;
  };
  const Expected expected[] = {
      // acks=0 while the leader was crashed.
      {"p1-1", LeaderAtSend::kDown, "broker-1", false, true},
      {"p3-0", LeaderAtSend::kNone, "", true, false},
      {"p2-0", LeaderAtSend::kCut, "broker-2", true, false},
      // No ack or error named a partition: nothing known of the cluster.
      {"p4-0", LeaderAtSend::kUnknown, "", false, false},
      // Its leader shut down (not crashed).
      {"p4-1", LeaderAtSend::kDown, "broker-2", true, false},
  };
  for (const Expected& x : expected) {
    SCOPED_TRACE(x.id);
    const std::optional<NeverWrittenCause> cause = why(x.id);
    ASSERT_TRUE(cause.has_value());
    EXPECT_EQ(cause->partition, x.leader == LeaderAtSend::kUnknown ? -1 : m.PartitionIndex("t", 0));
    EXPECT_EQ(cause->leader, x.leader);
    EXPECT_EQ(cause->leader_node, x.leader_node);
    EXPECT_EQ(cause->gave_up, x.gave_up);
    EXPECT_EQ(cause->acks_zero, x.acks_zero);
  }
  // A leader down since its last crash or shutdown before the send.
  EXPECT_EQ(why("p1-1")->leader_down_event, static_cast<int32_t>(EventAt(m, 50, "crash")));
  EXPECT_EQ(why("p4-1")->leader_down_event, static_cast<int32_t>(EventAt(m, 160, "shutdown")));
}

TEST(TimelineQueriesTest, LedgerCountsCountEachPredicateAndEachFateOnce) {
  // p1-0 acked and gone (lost), p1-1 acked twice in the log (duplicated), p1-2 unacked and
  // gone (never written), p1-3 unacked but in the log once (ok), p1-4 acked, in the log once
  // and delivered twice (duplicated).
  const std::string body =
      R"({"t_us":10,"node":"p1","ev":"send","record_id":"p1-0","topic":"t","key":null,"value":"a"}
{"t_us":11,"node":"p1","ev":"send","record_id":"p1-1","topic":"t","key":null,"value":"b"}
{"t_us":12,"node":"p1","ev":"send","record_id":"p1-2","topic":"t","key":null,"value":"c"}
{"t_us":13,"node":"p1","ev":"send","record_id":"p1-3","topic":"t","key":null,"value":"d"}
{"t_us":14,"node":"p1","ev":"send","record_id":"p1-4","topic":"t","key":null,"value":"e"}
{"t_us":20,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1],"replicas":[1],"leo":0,"log_start_offset":0,"hw":0}
{"t_us":30,"node":"p1","ev":"ack","record_id":"p1-0","topic":"t","partition":0,"offset":0,"key":null,"value":"a"}
{"t_us":31,"node":"p1","ev":"ack","record_id":"p1-1","topic":"t","partition":0,"offset":1,"key":null,"value":"b"}
{"t_us":32,"node":"p1","ev":"ack","record_id":"p1-4","topic":"t","partition":0,"offset":4,"key":null,"value":"e"}
{"t_us":40,"node":"c1","ev":"deliver","group":"g","record_id":"p1-4","topic":"t","partition":0,"offset":4}
{"t_us":41,"node":"c1","ev":"deliver","group":"g","record_id":"p1-4","topic":"t","partition":0,"offset":4}
)";
  const std::string verdict =
      R"({"t_us":900,"node":"checker","ev":"verdict","ok":true,"metrics":{"sent":5},"audit":[{"topic":"t","partition":0,"values":["b","b","d","e"]}]})"
      "\n";
  Result<TimelineModel> built = BuildHandTrace(body, verdict);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  ASSERT_EQ(m.records().size(), 5u);
  const std::vector<Fate> fates = {Fate::kLost, Fate::kDuplicated, Fate::kNeverWritten, Fate::kOk,
                                   Fate::kDuplicated};
  for (size_t r = 0; r < fates.size(); ++r) {
    EXPECT_EQ(FateOf(m.records()[r]), fates[r]) << m.records()[r].id;
  }
  const LedgerCounts& counts = m.ledger_counts();
  EXPECT_EQ(counts.lost, 1u);
  EXPECT_EQ(counts.duplicated, 2u);
  EXPECT_EQ(counts.unacked, 2u);
  EXPECT_EQ(counts.never_written, 1u);
  EXPECT_EQ(counts.by_fate[static_cast<size_t>(Fate::kOk)], 1u);
  EXPECT_EQ(counts.by_fate[static_cast<size_t>(Fate::kLost)], 1u);
  EXPECT_EQ(counts.by_fate[static_cast<size_t>(Fate::kDuplicated)], 2u);
  EXPECT_EQ(counts.by_fate[static_cast<size_t>(Fate::kNeverWritten)], 1u);
}

TEST(TimelineQueriesTest, MessageNodesAreTheSendersAndReceiversInLifelineOrder) {
  // Names chosen so that name order is not lifeline order; c9 never sends or receives.
  const std::string body =
      R"({"t_us":10,"node":"a-producer","ev":"send","record_id":"r0","topic":"t","key":null,"value":"a"}
{"t_us":11,"node":"a-producer","ev":"msg_send","id":1,"from":"a-producer","to":"broker-2","kind":"Produce","size_bytes":10}
{"t_us":12,"node":"broker-2","ev":"msg_send","id":2,"from":"broker-2","to":"zk","kind":"ZkGetData","size_bytes":10}
{"t_us":13,"node":"admin","ev":"msg_send","id":3,"from":"admin","to":"broker-1","kind":"Metadata","size_bytes":10}
{"t_us":14,"node":"b-consumer","ev":"msg_send","id":4,"from":"b-consumer","to":"broker-1","kind":"Fetch","size_bytes":10}
{"t_us":15,"node":"c9","ev":"poll","count":0}
)";
  Result<TimelineModel> built = BuildHandTrace(body, testing::kHandVerdict, "messages");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  std::vector<std::string> names;
  for (int32_t node : m.message_nodes()) names.push_back(m.nodes()[node]);
  EXPECT_EQ(names, (std::vector<std::string>{"a-producer", "broker-1", "broker-2", "b-consumer",
                                             "zk", "admin"}));
}

TEST(TimelineQueriesTest, EventHistogramCountsEachKindPerSliceOfTheRun) {
  // The verdict at 900: three slices of 300 us; the event at 900 falls in the last.
  const std::string body =
      R"({"t_us":10,"node":"broker-1","ev":"crash","tear":false,"corrupt":false}
{"t_us":299,"node":"broker-1","ev":"restart","incarnation":2}
{"t_us":300,"node":"broker-1","ev":"controller_elected","epoch":1}
{"t_us":900,"node":"broker-1","ev":"crash","tear":false,"corrupt":false}
)";
  Result<TimelineModel> built = BuildHandTrace(body);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const std::vector<EventKindCounts> columns = built->EventHistogram(3);
  ASSERT_EQ(columns.size(), 3u);
  const auto count = [&](size_t column, EventKind kind) {
    return columns[column][static_cast<size_t>(kind)];
  };
  EXPECT_EQ(count(0, EventKind::kFault), 2u);
  EXPECT_EQ(count(0, EventKind::kElection), 0u);
  EXPECT_EQ(count(1, EventKind::kElection), 1u);
  EXPECT_EQ(count(1, EventKind::kFault), 0u);
  EXPECT_EQ(count(2, EventKind::kFault), 1u);
  // One column holds everything.
  EXPECT_EQ(built->EventHistogram(1)[0][static_cast<size_t>(EventKind::kFault)], 3u);
}

}  // namespace
}  // namespace ksim::viz
