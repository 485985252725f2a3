// ProducerIdManager against the simulated ZooKeeper (Kafka's ProducerIdManagerTest, 1.x): the
// znode's JSON as Kafka writes it, the first block from a missing znode, blocks claimed one after
// another when used up, distinct blocks for brokers that claim at the same moment (the
// conditional write loses, reads again and takes the next block), a fresh block after a restart,
// and the refusals (a transactional id; a damaged znode answers the waiting producers
// COORDINATOR_NOT_AVAILABLE).
#include "core/coordinator/producer_id_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/sim/zookeeper_test_util.h"

namespace ksim::sim {
namespace {

using testing::ZooKeeperWorld;

class ProducerIdManagerTest : public ::testing::Test {
 protected:
  ProducerIdManagerTest() {
    for (int id = 1; id <= 3; ++id) {
      const std::string name = "broker-" + std::to_string(id);
      world_.StartClient(name);
      EXPECT_TRUE(world_.Connected(name));
    }
  }

  std::unique_ptr<ProducerIdManager> Manager(int id) {
    return std::make_unique<ProducerIdManager>(
        BrokerId(id), world_.client("broker-" + std::to_string(id)), EventSink());
  }

  // Sends `count` InitProducerId requests to `manager`; answers land in `answers`.
  static void Ask(ProducerIdManager& manager, int count,
                  std::vector<InitProducerIdResponse>& answers) {
    for (int i = 0; i < count; ++i) {
      InitProducerIdRequest request;
      request.correlation_id = i;
      manager.HandleInitProducerId(
          request, [&answers](InitProducerIdResponse r) { answers.push_back(std::move(r)); });
    }
  }

  std::optional<ProducerIdBlock> ZnodeBlock() {
    const std::optional<ZnodeData> data = world_.server().Read(ProducerIdManager::kBlockPath);
    if (!data) return std::nullopt;
    Result<ProducerIdBlock> block = ProducerIdManager::DecodeBlock(data->data);
    EXPECT_TRUE(block.ok()) << block.status().ToString();
    return block.ok() ? std::optional<ProducerIdBlock>(*block) : std::nullopt;
  }

  ZooKeeperWorld world_;
};

TEST(ProducerIdBlockTest, JsonIsKafkasWithTheBoundsAsStrings) {
  const ProducerIdBlock block{BrokerId(2), 1000, 1999};
  EXPECT_EQ(ProducerIdManager::EncodeBlock(block),
            R"({"version":1,"broker":2,"block_start":"1000","block_end":"1999"})");
  auto decoded = ProducerIdManager::DecodeBlock(ProducerIdManager::EncodeBlock(block));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, block);
  for (const char* bad : {"", "{", "[]", R"({"version":1,"broker":2})",
                          R"({"version":1,"broker":2,"block_start":0,"block_end":999})",
                          R"({"version":1,"broker":2,"block_start":"9","block_end":"3"})",
                          R"({"version":1,"broker":2,"block_start":"-5","block_end":"3"})",
                          R"({"version":1,"broker":2,"block_start":"1x","block_end":"3"})"}) {
    EXPECT_EQ(ProducerIdManager::DecodeBlock(bad).status().code(), Errc::kCorruption) << bad;
  }
}

TEST(ProducerIdBlockTest, NextBlockFollowsTheLastOne) {
  EXPECT_EQ(*ProducerIdManager::NextBlock(std::nullopt, BrokerId(1)),
            (ProducerIdBlock{BrokerId(1), 0, 999}));
  EXPECT_EQ(*ProducerIdManager::NextBlock(ProducerIdBlock{BrokerId(3), 0, 999}, BrokerId(1)),
            (ProducerIdBlock{BrokerId(1), 1000, 1999}));
  const ProducerIdBlock last{BrokerId(1), 0, std::numeric_limits<int64_t>::max() - 10};
  EXPECT_FALSE(ProducerIdManager::NextBlock(last, BrokerId(1)).ok());
}

TEST_F(ProducerIdManagerTest, FirstRequestsWaitForTheFirstBlockThenGetConsecutiveIds) {
  auto manager = Manager(1);
  std::vector<InitProducerIdResponse> answers;
  Ask(*manager, 3, answers);
  EXPECT_TRUE(answers.empty()) << "no block yet: the requests wait";
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 3; }));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(answers[i].error_code, Errc::kNone);
    EXPECT_EQ(answers[i].correlation_id, i);
    EXPECT_EQ(answers[i].producer_id, ProducerId(i));
    EXPECT_EQ(answers[i].producer_epoch, ProducerEpoch(0));
  }
  EXPECT_EQ(ZnodeBlock(), (ProducerIdBlock{BrokerId(1), 0, 999}));
  // Within the block, answers come at once.
  Ask(*manager, 1, answers);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[3].producer_id, ProducerId(3));
}

TEST_F(ProducerIdManagerTest, UsedUpBlockIsFollowedByTheNextOne) {
  auto manager = Manager(1);
  std::vector<InitProducerIdResponse> answers;
  Ask(*manager, ProducerIdManager::kBlockSize + 2, answers);
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 1002; }));
  for (size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(answers[i].producer_id, ProducerId(static_cast<int64_t>(i)));
  }
  EXPECT_EQ(manager->blocks_claimed(), 2);
  EXPECT_EQ(ZnodeBlock(), (ProducerIdBlock{BrokerId(1), 1000, 1999}));
}

TEST_F(ProducerIdManagerTest, BrokersClaimingAtOnceGetDisjointBlocks) {
  std::vector<std::unique_ptr<ProducerIdManager>> managers;
  std::vector<std::vector<InitProducerIdResponse>> answers(3);
  for (int id = 1; id <= 3; ++id) managers.push_back(Manager(id));
  // All three read the missing (or same-version) znode before any write lands.
  for (int i = 0; i < 3; ++i) Ask(*managers[i], 2, answers[i]);
  ASSERT_TRUE(world_.RunUntil(
      [&] { return answers[0].size() == 2 && answers[1].size() == 2 && answers[2].size() == 2; }));
  int64_t conflicts = 0;
  std::set<int64_t> starts;
  std::set<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    conflicts += managers[i]->claim_conflicts();
    const ProducerIdBlock& block = managers[i]->current_block();
    EXPECT_EQ(block.block_end - block.block_start + 1, ProducerIdManager::kBlockSize);
    starts.insert(block.block_start);
    for (const InitProducerIdResponse& r : answers[i]) {
      EXPECT_EQ(r.error_code, Errc::kNone);
      EXPECT_GE(r.producer_id.value(), block.block_start);
      EXPECT_LE(r.producer_id.value(), block.block_end);
      ids.insert(r.producer_id.value());
    }
  }
  EXPECT_GE(conflicts, 2) << "the losers of the race must have retried";
  EXPECT_EQ(starts, (std::set<int64_t>{0, 1000, 2000}));
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(ZnodeBlock()->block_end, 2999);
}

TEST_F(ProducerIdManagerTest, RestartedBrokerClaimsAFreshBlock) {
  auto manager = Manager(2);
  std::vector<InitProducerIdResponse> answers;
  Ask(*manager, 5, answers);
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 5; }));
  // A crash: the manager goes with its unused ids; the next process starts a new block.
  manager.reset();
  manager = Manager(2);
  Ask(*manager, 1, answers);
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 6; }));
  EXPECT_EQ(answers.back().producer_id, ProducerId(1000));
  EXPECT_EQ(manager->current_block(), (ProducerIdBlock{BrokerId(2), 1000, 1999}));
}

TEST_F(ProducerIdManagerTest, TransactionalIdIsRefused) {
  auto manager = Manager(1);
  InitProducerIdRequest request;
  request.transactional_id = "txn-1";
  std::optional<InitProducerIdResponse> answer;
  manager->HandleInitProducerId(request, [&](InitProducerIdResponse r) { answer = r; });
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->error_code, Errc::kInvalidRequest);
  EXPECT_EQ(answer->producer_id, kNoProducerId);
}

TEST_F(ProducerIdManagerTest, DamagedZnodeAnswersRetriableErrorAndClaimsAgainLater) {
  ASSERT_TRUE(
      world_.Create("broker-3", std::string(ProducerIdManager::kBlockPath), "garbage").ok());
  auto manager = Manager(1);
  std::vector<InitProducerIdResponse> answers;
  Ask(*manager, 2, answers);
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 2; }));
  for (const InitProducerIdResponse& r : answers) {
    EXPECT_EQ(r.error_code, Errc::kCoordinatorNotAvailable);
  }
  // Repaired (an operator, or another broker's write): the next request succeeds.
  std::optional<Result<ZnodeStat>> set;
  world_.client("broker-3")
      .SetData(std::string(ProducerIdManager::kBlockPath),
               ProducerIdManager::EncodeBlock(ProducerIdBlock{BrokerId(3), 0, 999}), kAnyVersion,
               [&](Result<ZnodeStat> r) { set.emplace(std::move(r)); });
  ASSERT_TRUE(world_.Wait(set).ok());
  Ask(*manager, 1, answers);
  ASSERT_TRUE(world_.RunUntil([&] { return answers.size() == 3; }));
  EXPECT_EQ(answers.back().error_code, Errc::kNone);
  EXPECT_EQ(answers.back().producer_id, ProducerId(1000));
}

}  // namespace
}  // namespace ksim::sim
