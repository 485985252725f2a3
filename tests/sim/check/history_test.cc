#include "sim/check/history.h"

#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ksim::sim {
namespace {

std::vector<nlohmann::ordered_json> Events(const World& world) {
  std::vector<nlohmann::ordered_json> events;
  std::istringstream lines(world.trace().bytes());
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) events.push_back(nlohmann::ordered_json::parse(line));
  return events;
}

class HistoryTest : public ::testing::Test {
 protected:
  HistoryTest()
      : world_(3,
               TraceWriter::ToMemory(TraceHeader{"history-test", "base", 3, TraceLevel::kState})),
        history_(world_) {}

  // Advances virtual time by `us` (an empty timer).
  void Advance(TimeUs us) {
    world_.loop().ScheduleAfter(
        us, [] {}, "test");
    world_.loop().RunUntilIdle(100);
  }

  World world_;
  History history_;
};

// The ops' container: an op keeps its place (and its contents) while a thousand more are added
// across several chunks, and is read back in order by index and by iteration.
TEST(HistoryOpsTest, OpsStayInPlaceAcrossChunksAndReadInOrder) {
  HistoryOps ops;
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(ops.begin(), ops.end());
  std::vector<const HistoryOp*> places;
  std::deque<std::string> ids;  // what the ops' record ids view (a deque's elements stay put)
  for (uint64_t i = 0; i < 1000; ++i) {
    HistoryOp& op = ops.emplace_back();
    EXPECT_EQ(op.index, 0u);  // default-constructed
    EXPECT_EQ(op.invoke_index, kNoOpIndex);
    op.index = i;
    op.record_id = ids.emplace_back("p1-" + std::to_string(i));
    places.push_back(&op);
  }
  ASSERT_EQ(ops.size(), 1000u);
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(&ops[i], places[i]);
    EXPECT_EQ(places[i]->record_id, "p1-" + std::to_string(i));
  }
  uint64_t next = 0;
  for (const HistoryOp& op : ops) EXPECT_EQ(op.index, next++);
  EXPECT_EQ(next, 1000u);
}

TEST_F(HistoryTest, RecordIdsCountPerClientFromZero) {
  EXPECT_EQ(history_.NewRecordId("p1"), "p1-0");
  EXPECT_EQ(history_.NewRecordId("p1"), "p1-1");
  EXPECT_EQ(history_.NewRecordId("p2"), "p2-0");
  EXPECT_EQ(history_.NewRecordId("p1"), "p1-2");
}

TEST_F(HistoryTest, SendInvokeAndOkArePairedAndTraced) {
  Advance(1500);
  const uint64_t invoke = history_.SendInvoke("p1", 1, "p1-0", "t", std::nullopt, "p1-0");
  EXPECT_EQ(history_.open_sends(), 1u);
  EXPECT_EQ(history_.CompletionOf(invoke), nullptr);
  Advance(2000);
  history_.SendOk(invoke, TopicPartition{"t", PartitionId(2)}, Offset(41));
  EXPECT_EQ(history_.open_sends(), 0u);

  ASSERT_EQ(history_.ops().size(), 2u);
  const HistoryOp* ok = history_.CompletionOf(invoke);
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->type, OpType::kOk);
  EXPECT_EQ(ok->f, OpFunction::kSend);
  EXPECT_EQ(ok->invoke_index, invoke);
  EXPECT_EQ(ok->record_id, "p1-0");
  EXPECT_EQ(ok->partition, PartitionId(2));
  EXPECT_EQ(ok->offset, Offset(41));
  EXPECT_EQ(history_.ops()[invoke].t_us, 1500);
  EXPECT_EQ(ok->t_us, 3500);

  const auto events = Events(world_);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].dump(),
            R"({"t_us":1500,"node":"p1","ev":"send","record_id":"p1-0","topic":"t","key":null,)"
            R"("value":"p1-0"})");
  EXPECT_EQ(events[1].dump(),
            R"({"t_us":3500,"node":"p1","ev":"ack","record_id":"p1-0","topic":"t","partition":2,)"
            R"("offset":41,"key":null,"value":"p1-0"})");
}

TEST_F(HistoryTest, FailAndInfoAreErrorsToldApartByOutcome) {
  const uint64_t a = history_.SendInvoke("p1", 1, "p1-0", "t", std::string("k"), "x");
  const uint64_t b = history_.SendInvoke("p1", 1, "p1-1", "t", std::nullopt, "y");
  const uint64_t c = history_.SendInvoke("p1", 1, "p1-2", "t", std::nullopt, "z");
  history_.SendFail(a, TopicPartition{}, Errc::kRequestTimedOut);
  history_.SendInfo(b, TopicPartition{"t", PartitionId(0)}, Errc::kNetworkException);
  history_.SendInfo(c, TopicPartition{}, Errc::kNone, /*crashed=*/true);

  EXPECT_EQ(history_.CompletionOf(a)->type, OpType::kFail);
  EXPECT_EQ(history_.CompletionOf(a)->partition, PartitionId(-1));
  EXPECT_EQ(history_.CompletionOf(a)->key, std::optional<std::string>("k"));
  EXPECT_EQ(history_.CompletionOf(b)->type, OpType::kInfo);
  EXPECT_EQ(history_.CompletionOf(b)->error, Errc::kNetworkException);
  EXPECT_TRUE(history_.CompletionOf(c)->crashed);
  EXPECT_EQ(history_.Select(OpFunction::kSend, OpType::kInfo).size(), 2u);
  EXPECT_EQ(history_.Select(OpFunction::kSend, OpType::kInvoke).size(), 3u);

  const auto events = Events(world_);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[3]["ev"], "error");
  EXPECT_EQ(events[3]["error"], "REQUEST_TIMED_OUT");
  EXPECT_EQ(events[3]["outcome"], "fail");
  EXPECT_TRUE(events[3]["partition"].is_null());
  EXPECT_EQ(events[4]["error"], "NETWORK_EXCEPTION");
  EXPECT_EQ(events[4]["outcome"], "unknown");
  EXPECT_EQ(events[4]["partition"], 0);
  EXPECT_TRUE(events[5]["error"].is_null());
  EXPECT_EQ(events[5]["crashed"], true);
}

TEST_F(HistoryTest, ConsumerOpsCarryGroupPartitionOffsetAndResolveRecordIds) {
  history_.SendInvoke("p1", 1, "p1-0", "t", std::nullopt, "hello java");
  history_.SendInvoke("p1", 1, "p1-1", "t", std::nullopt, "hello java");  // same typed text
  history_.Poll("c1", 2, "g1", 2);
  history_.Deliver("c1", 2, "g1", TopicPartition{"t", PartitionId(0)}, Offset(7), std::nullopt,
                   "hello java");
  history_.Deliver("c1", 2, "g1", TopicPartition{"t", PartitionId(0)}, Offset(8), std::nullopt,
                   "written by someone else");
  history_.Commit("c1", 2, "g1", TopicPartition{"t", PartitionId(0)}, Offset(9), Errc::kNone);
  history_.Commit("c1", 2, "g1", TopicPartition{"t", PartitionId(1)}, Offset(3),
                  Errc::kRebalanceInProgress);

  const auto delivers = history_.Select(OpFunction::kDeliver, OpType::kOk);
  ASSERT_EQ(delivers.size(), 2u);
  EXPECT_EQ(delivers[0]->record_id, "p1-0");  // the first id sent with that text
  EXPECT_EQ(delivers[0]->incarnation, 2u);
  EXPECT_EQ(delivers[1]->record_id, "");
  EXPECT_EQ(history_.Select(OpFunction::kCommit, OpType::kOk).size(), 1u);
  const auto failed = history_.Select(OpFunction::kCommit, OpType::kFail);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->error, Errc::kRebalanceInProgress);

  const auto events = Events(world_);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[2].dump(), R"({"t_us":0,"node":"c1","ev":"poll","group":"g1","count":2})");
  EXPECT_EQ(events[3].dump(),
            R"({"t_us":0,"node":"c1","ev":"deliver","group":"g1","record_id":"p1-0","topic":"t",)"
            R"("partition":0,"offset":7,"key":null,"value":"hello java"})");
  EXPECT_TRUE(events[4]["record_id"].is_null());
  EXPECT_EQ(events[5].dump(),
            R"({"t_us":0,"node":"c1","ev":"commit","group":"g1","topic":"t","partition":0,)"
            R"("offset":9,"error":null})");
  EXPECT_EQ(events[6]["error"], "REBALANCE_IN_PROGRESS");
}

// The ops' text is the history's own copy: it reads back the same after the caller's strings are
// gone and after many more ops (several storage chunks, one value larger than a chunk), and a
// completion and a delivery view the bytes of their send.
TEST_F(HistoryTest, OpsKeepTheirTextAfterTheCallersStringsAreGone) {
  const std::string big(100'000, 'v');  // longer than a chunk of the history's text storage
  std::vector<uint64_t> invokes;
  for (int i = 0; i < 20'000; ++i) {
    std::string client = "producer-" + std::to_string(i % 3);
    std::string id = client + "-record-" + std::to_string(i);
    std::string value = i == 7 ? big : "value-" + std::to_string(i);
    std::optional<std::string> key;
    if (i % 2 == 0) key = "key-" + std::to_string(i);
    std::string topic = "topic-" + std::to_string(i % 5);
    invokes.push_back(history_.SendInvoke(client, 1, std::move(id), std::move(topic),
                                          std::move(key), std::move(value)));
  }
  for (int i = 0; i < 20'000; i += 2) {
    std::string topic = "topic-" + std::to_string(i % 5);
    history_.SendOk(invokes[static_cast<size_t>(i)], TopicPartition{topic, PartitionId(1)},
                    Offset(i));
  }
  std::string delivered = "value-11";
  history_.Deliver("c1", 1, "g1", TopicPartition{"topic-1", PartitionId(0)}, Offset(0),
                   std::nullopt, delivered);
  delivered.assign(delivered.size(), 'x');

  for (int i = 0; i < 20'000; ++i) {
    const HistoryOp& op = history_.ops()[invokes[static_cast<size_t>(i)]];
    const std::string client = "producer-" + std::to_string(i % 3);
    ASSERT_EQ(op.process, client);
    ASSERT_EQ(op.record_id, client + "-record-" + std::to_string(i));
    ASSERT_EQ(op.value, i == 7 ? big : "value-" + std::to_string(i));
    ASSERT_EQ(op.topic, "topic-" + std::to_string(i % 5));
    if (i % 2 == 0) {
      ASSERT_EQ(op.key, "key-" + std::to_string(i));
      const HistoryOp* ok = history_.CompletionOf(op.index);
      ASSERT_NE(ok, nullptr);
      EXPECT_EQ(ok->record_id.data(), op.record_id.data());  // the same bytes
      EXPECT_EQ(ok->value.data(), op.value.data());
      EXPECT_EQ(ok->topic, op.topic);
    } else {
      ASSERT_FALSE(op.key.has_value());
    }
  }
  const HistoryOp& deliver = history_.ops()[history_.ops().size() - 1];
  EXPECT_EQ(deliver.value, "value-11");
  EXPECT_EQ(deliver.record_id, "producer-2-record-11");
  EXPECT_EQ(deliver.value.data(), history_.ops()[invokes[11]].value.data());
  // A delivered value larger than a chunk names its send too, and views the send's bytes.
  history_.Deliver("c1", 1, "g1", TopicPartition{"topic-2", PartitionId(0)}, Offset(1),
                   std::nullopt, big);
  const HistoryOp& big_delivery = history_.ops()[history_.ops().size() - 1];
  EXPECT_EQ(big_delivery.record_id, "producer-1-record-7");
  EXPECT_EQ(big_delivery.value.data(), history_.ops()[invokes[7]].value.data());
}

TEST_F(HistoryTest, CompletingASendTwiceIsAProgrammerError) {
  const uint64_t invoke = history_.SendInvoke("p1", 1, "p1-0", "t", std::nullopt, "v");
  history_.SendOk(invoke, TopicPartition{"t", PartitionId(0)}, Offset(0));
  EXPECT_DEATH(history_.SendFail(invoke, TopicPartition{}, Errc::kRequestTimedOut),
               "not an open send invoke");
}

}  // namespace
}  // namespace ksim::sim
