// InitProducerId through running brokers (KIP-98): every broker answers with an id from its own
// block of 1000 claimed from /latest_producer_id_block, so ids are unique across brokers; a
// broker that crashed and restarted claims a new block and never repeats an id.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/base/trace_names.h"
#include "core/coordinator/producer_id_manager.h"
#include "core/protocol/network_client.h"
#include "sim/world/sim_transport.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim {
namespace {

using testing::ClusterSim;
using testing::kSecondUs;

class ClusterProducerIdTest : public ::testing::Test {
 protected:
  ClusterProducerIdTest() : sim_("producer-id", 23, Options()) {}
  static ClusterOptions Options() {
    ClusterOptions options;
    options.brokers = 3;
    return options;
  }
  void SetUp() override {
    ASSERT_TRUE(sim_.Start());
    Result<Node*> node = sim_.world().AddNode("client");
    ASSERT_TRUE(node.ok());
    transport_ = std::make_unique<SimTransport>(sim_.world().network(), "client");
    transport_->Attach();
    network_ = std::make_unique<NetworkClient>(*transport_, **node, NetworkClient::Handlers{});
  }

  // One InitProducerId to `broker`, run until answered (an error when it is not).
  Result<InitProducerIdResponse> InitProducerId(BrokerId broker) {
    const std::string peer = node::Broker(broker);
    std::optional<Result<ksim::Message>> answer;
    if (!sim_.cluster().RunUntil([&] { return network_->Ready(peer); }, 10 * kSecondUs)) {
      return Status(Errc::kRequestTimedOut, "no free connection slot");
    }
    network_->Send(peer, InitProducerIdRequest{},
                   [&](Result<ksim::Message> response) { answer.emplace(std::move(response)); });
    if (!sim_.cluster().RunUntil([&] { return answer.has_value(); }, 60 * kSecondUs)) {
      return Status(Errc::kRequestTimedOut, "no answer");
    }
    if (!answer->ok()) return answer->status();
    const auto* response = std::get_if<InitProducerIdResponse>(&**answer);
    if (response == nullptr) return Status(Errc::kUnknownServerError, "not the response");
    return *response;
  }

  ClusterSim sim_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<NetworkClient> network_;
};

TEST_F(ClusterProducerIdTest, EveryBrokerHandsOutIdsFromItsOwnBlock) {
  std::set<int64_t> ids;
  std::set<int64_t> blocks;
  for (int round = 0; round < 2; ++round) {
    for (BrokerId broker : sim_.cluster().broker_ids()) {
      Result<InitProducerIdResponse> r = InitProducerId(broker);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->error_code, Errc::kNone);
      EXPECT_EQ(r->producer_epoch, ProducerEpoch(0));
      EXPECT_TRUE(ids.insert(r->producer_id.value()).second) << r->producer_id;
      blocks.insert(r->producer_id.value() / ProducerIdManager::kBlockSize);
    }
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(blocks.size(), 3u) << "one block per broker";
  const std::optional<ZnodeData> znode =
      sim_.cluster().zookeeper().Read(ProducerIdManager::kBlockPath);
  ASSERT_TRUE(znode.has_value());
  Result<ProducerIdBlock> last = ProducerIdManager::DecodeBlock(znode->data);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->block_end, 2999);
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(ClusterProducerIdTest, RestartedBrokerNeverRepeatsAnId) {
  const BrokerId broker = sim_.cluster().broker_ids().front();
  Result<InitProducerIdResponse> before = InitProducerId(broker);
  ASSERT_TRUE(before.ok() && before->error_code == Errc::kNone);
  ASSERT_TRUE(sim_.cluster().CrashBroker(broker).ok());
  sim_.cluster().RunFor(2 * kSecondUs);
  ASSERT_TRUE(sim_.cluster().RestartBroker(broker).ok());
  std::optional<InitProducerIdResponse> after;
  for (int attempt = 0; attempt < 20 && !after; ++attempt) {
    Result<InitProducerIdResponse> r = InitProducerId(broker);
    if (r.ok() && r->error_code == Errc::kNone) after = *r;
    if (!after) sim_.cluster().RunFor(kSecondUs);  // still starting: try again
  }
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(after->producer_id.value(), before->producer_id.value() + 1000)
      << "a fresh block after the restart";
  EXPECT_TRUE(sim_.NoViolations());
}

}  // namespace
}  // namespace ksim::sim
