// KIP-227 fetch sessions on the simulated cluster (docs/broker.md, "The replica fetcher";
// core/server/fetch_session.h): a client's session through the broker's request path, the
// followers' sessions from inter.broker.protocol.version 1.1-IV0 (and none before), and a
// follower whose session the leader evicted starting over.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/server/replica_manager.h"
#include "tests/support/core/release_param.h"
#include "tests/support/sim/broker_test_util.h"

namespace ksim::sim::testing {
namespace {

const BrokerId k1{1}, k2{2}, k3{3};

TopicPartition Tp(int partition) { return TopicPartition{"t", PartitionId(partition)}; }

class FetchSessionClusterTest : public BrokerClusterTest {
 protected:
  void Start(KafkaRelease release, int brokers, ConfigOverrides config = {}) {
    ClusterOptions options;
    options.brokers = brokers;
    options.kafka_version = release;
    options.config = std::move(config);
    StartCluster(std::move(options));
  }

  // Topic "t" of `partitions` partitions, each on `replicas` (the first leads).
  void CreateTopic(int partitions, const std::vector<BrokerId>& replicas) {
    TopicSpec spec;
    spec.name = "t";
    spec.partitions = partitions;
    spec.replication_factor = static_cast<int32_t>(replicas.size());
    for (int p = 0; p < partitions; ++p) spec.assignment[PartitionId(p)] = replicas;
    ASSERT_TRUE(cluster_->CreateTopicAndWait(std::move(spec)).ok());
    ASSERT_TRUE(cluster_->RunUntil(
        [&] {
          for (int p = 0; p < partitions; ++p) {
            for (BrokerId id : replicas) {
              Partition* partition = PartitionOn(id, Tp(p));
              if (partition == nullptr || partition->leader() != replicas[0]) return false;
            }
            if (PartitionOn(replicas[0], Tp(p))->isr().size() != replicas.size()) return false;
          }
          return true;
        },
        60 * kSecondUs));
  }

  FetchResponse SessionFetch(int32_t session_id, int32_t epoch,
                             std::vector<FetchPartition> partitions) {
    FetchRequest request;
    request.replica_id = kConsumerReplicaId;
    request.max_wait_ms = 0;
    request.session = FetchSessionRequest{.session_id = session_id, .epoch = epoch};
    request.partitions = std::move(partitions);
    return CallFor<FetchResponse>("broker-1", std::move(request));
  }

  static std::vector<TopicPartition> Tps(const FetchResponse& response) {
    std::vector<TopicPartition> tps;
    for (const FetchPartitionResponse& r : response.responses) tps.push_back(r.tp);
    return tps;
  }
};

// The broker's request path (KafkaApis.handleFetchRequest with a FetchManager): a client opens a
// session on three partitions; an incremental fetch answers only the partition that has new
// records, and nothing once they are read.
// ReplicaManager::Partitions lists a broker's partitions in partition order and gives each its
// place in the list (list_index, what the simulator's pass over changed partitions finds them by);
// a partition added makes a new list, and the places follow.
TEST_F(FetchSessionClusterTest, EachPartitionKnowsItsPlaceInItsBrokersList) {
  Start(KafkaRelease::k2_0, 1);
  CreateTopic(12, {k1});
  const ReplicaManager& broker = cluster_->broker(k1)->replica_manager();
  auto check = [&](size_t expected) {
    const std::vector<const Partition*>& list = broker.Partitions();
    ASSERT_EQ(list.size(), expected);
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i]->list_index(), i) << ToString(list[i]->tp());
      if (i > 0) {
        EXPECT_LT(list[i - 1]->tp(), list[i]->tp());
      }
    }
  };
  check(12);  // t-10 and t-11 before t-2
  TopicSpec other;
  other.name = "a";
  other.partitions = 2;
  other.replication_factor = 1;
  ASSERT_TRUE(cluster_->CreateTopicAndWait(std::move(other)).ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return broker.Partitions().size() == 14; }, 10 * kSecondUs));
  check(14);  // a-0 and a-1 first: every place of "t" moved by two
  EXPECT_EQ(broker.Partitions()[2]->tp(), Tp(0));
}

TEST_F(FetchSessionClusterTest, AClientsIncrementalFetchAnswersOnlyWhatChanged) {
  Start(KafkaRelease::k1_1, 1);
  CreateTopic(3, {k1});
  auto at = [](int partition, int64_t offset) {
    return FetchPartition{Tp(partition), Offset(offset), kUndefinedOffset, 1 << 20};
  };
  FetchResponse full =
      SessionFetch(kInvalidSessionId, kInitialEpoch, {at(0, 0), at(1, 0), at(2, 0)});
  ASSERT_TRUE(full.session.has_value());
  EXPECT_EQ(full.session->error_code, Errc::kNone);
  const int32_t id = full.session->session_id;
  ASSERT_NE(id, kInvalidSessionId);
  EXPECT_EQ(Tps(full).size(), 3u);

  FetchResponse idle = SessionFetch(id, 1, {});
  EXPECT_EQ(idle.session->session_id, id);
  EXPECT_TRUE(idle.responses.empty());

  ASSERT_EQ(Produce("broker-1", Tp(1), 1, 4).error_code, Errc::kNone);
  FetchResponse news = SessionFetch(id, 2, {});
  ASSERT_EQ(Tps(news), std::vector<TopicPartition>{Tp(1)});
  EXPECT_EQ(RecordsIn(news.responses[0].records).size(), 4u);
  EXPECT_EQ(news.responses[0].high_watermark, Offset(4));

  // The client moved on to offset 4: named again, the partition has nothing new.
  EXPECT_TRUE(SessionFetch(id, 3, {at(1, 4)}).responses.empty());
  // A replayed epoch is refused; a restarted broker knows no session.
  EXPECT_EQ(SessionFetch(id, 3, {}).session->error_code, Errc::kInvalidFetchSessionEpoch);
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  ASSERT_TRUE(cluster_->RestartBroker(k1).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* partition = PartitionOn(k1, Tp(1));
        return partition != nullptr && partition->is_leader();
      },
      60 * kSecondUs));
  EXPECT_EQ(SessionFetch(id, 4, {}).session->error_code, Errc::kFetchSessionIdNotFound);
}

// A client's incremental fetch parked at the HW of a partition whose LEO is past it (the follower
// cut off, acks=1 appends): the session's checks skip it by its offsets, reading nothing, and the
// answer comes once the HW moves.
TEST_F(FetchSessionClusterTest, AClientsSessionFetchParkedAtTheHighWatermarkIsCheckedWithoutARead) {
  Start(KafkaRelease::k2_0, 2);
  CreateTopic(2, {k1, k2});
  ASSERT_EQ(Produce("broker-1", Tp(0), -1, 2).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k2, Tp(0))->high_watermark() == Offset(2); }, 10 * kSecondUs));
  auto at = [](int partition, int64_t offset) {
    return FetchPartition{Tp(partition), Offset(offset), kUndefinedOffset, 1 << 20};
  };
  FetchResponse full = SessionFetch(kInvalidSessionId, kInitialEpoch, {at(0, 2), at(1, 0)});
  ASSERT_TRUE(full.session.has_value());
  const int32_t id = full.session->session_id;
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2"}}).ok());
  FetchRequest parked;
  parked.replica_id = kConsumerReplicaId;
  parked.max_wait_ms = 20000;
  parked.min_bytes = 1;
  parked.session = FetchSessionRequest{.session_id = id, .epoch = 1};
  const Answer fetched = Post("broker-1", parked, kSecondUs);
  ASSERT_NE(fetched, nullptr);
  cluster_->RunFor(kSecondUs);
  ASSERT_FALSE(fetched->has_value());
  const ReplicaManager& leader = cluster_->broker(k1)->replica_manager();
  const uint64_t reads_before = leader.fetch_partition_reads();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Produce("broker-1", Tp(0), 1, 1).error_code, Errc::kNone);
  ASSERT_EQ(PartitionOn(k1, Tp(0))->log_end_offset(), Offset(5));
  ASSERT_EQ(PartitionOn(k1, Tp(0))->high_watermark(), Offset(2));
  EXPECT_FALSE(fetched->has_value());
  EXPECT_EQ(leader.fetch_partition_reads(), reads_before);  // three checks, no read
  cluster_->Heal();
  ASSERT_TRUE(cluster_->RunUntil([&] { return fetched->has_value(); }, 19 * kSecondUs));
  ASSERT_TRUE((*fetched)->ok());
  const FetchResponse& answer = std::get<FetchResponse>(***fetched);
  ASSERT_EQ(Tps(answer), std::vector<TopicPartition>{Tp(0)});
  EXPECT_EQ(answer.responses[0].high_watermark, Offset(5));
  EXPECT_EQ(RecordsIn(answer.responses[0].records).size(), 3u);
}

// A follower of 30 partitions that are idle: from 1.1 its fetches name none of them (and the
// leader answers none), before 1.1 each fetch names all 30 and is answered for all 30.
class FollowerSessionTest : public FetchSessionClusterTest,
                            public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(FollowerSessionTest, AnIdleFollowersFetchesNamePartitionsOnlyBefore11) {
  constexpr int kPartitions = 30;
  Start(GetParam(), 2);
  CreateTopic(kPartitions, {k1, k2});
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(Produce("broker-1", Tp(p), -1, 2).error_code, Errc::kNone);
  }
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        for (int p = 0; p < kPartitions; ++p) {
          if (PartitionOn(k2, Tp(p))->high_watermark() != Offset(2)) return false;
        }
        return true;
      },
      30 * kSecondUs));
  cluster_->RunFor(2 * kSecondUs);

  ReplicaFetcherManager& fetchers = cluster_->broker(k2)->replica_manager().fetchers();
  const uint64_t fetches_before = fetchers.fetch_requests_sent();
  const uint64_t bytes_before = world_.network().counters().bytes_sent;
  cluster_->RunFor(10 * kSecondUs);
  const uint64_t fetches = fetchers.fetch_requests_sent() - fetches_before;
  const uint64_t bytes = world_.network().counters().bytes_sent - bytes_before;
  // The long poll paces them: about two a second.
  ASSERT_GE(fetches, 10u);

  // What one round costs when every partition is named, request and answer.
  FetchRequest full_request;
  FetchResponse full_response;
  for (int p = 0; p < kPartitions; ++p) {
    full_request.partitions.push_back(FetchPartition{Tp(p), Offset(2), Offset(0), 1 << 20});
    FetchPartitionResponse answer;
    answer.tp = Tp(p);
    full_response.responses.push_back(answer);
  }
  const uint64_t full_round =
      static_cast<uint64_t>(ApproximateWireSize(full_request) + ApproximateWireSize(full_response));
  // Every byte sent in the interval (ZooKeeper's pings included), per fetch round.
  const uint64_t per_round = bytes / fetches;
  if (GetParam() >= KafkaRelease::k1_1) {
    EXPECT_LT(per_round, full_round / 4) << bytes << " bytes in " << fetches << " fetches";
  } else {
    EXPECT_GE(per_round, full_round) << bytes << " bytes in " << fetches << " fetches";
  }
  // Either way the follower keeps up: new records arrive and the HW follows.
  ASSERT_EQ(Produce("broker-1", Tp(7), -1, 3).error_code, Errc::kNone);
  EXPECT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k2, Tp(7))->high_watermark() == Offset(5); }, 10 * kSecondUs));
}

// The leader's side of the same idle rounds: before 1.1 every fetch reads all 30 partitions; from
// 1.1 a partition found with nothing to answer and nothing moved is quiet, and the session's later
// fetches skip it (CachedPartition::quiet) until it changes. The idle follower stays in the ISR
// all along (a quiet partition's fetch still counts as caught up), and a record in a quiet
// partition reaches it (the parked fetch still watches the whole session).
TEST_P(FollowerSessionTest, TheLeaderReadsAnIdleSessionsPartitionsOnlyBefore11) {
  constexpr int kPartitions = 30;
  Start(GetParam(), 2);
  CreateTopic(kPartitions, {k1, k2});
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(Produce("broker-1", Tp(p), -1, 2).error_code, Errc::kNone);
  }
  cluster_->RunFor(3 * kSecondUs);
  ReplicaManager& leader = cluster_->broker(k1)->replica_manager();
  ReplicaFetcherManager& fetchers = cluster_->broker(k2)->replica_manager().fetchers();
  const uint64_t fetches_before = fetchers.fetch_requests_sent();
  const uint64_t reads_before = leader.fetch_partition_reads();
  // Longer than replica.lag.time.max.ms (10 s).
  cluster_->RunFor(25 * kSecondUs);
  const uint64_t fetches = fetchers.fetch_requests_sent() - fetches_before;
  const uint64_t reads = leader.fetch_partition_reads() - reads_before;
  ASSERT_GE(fetches, 20u);
  if (GetParam() >= KafkaRelease::k1_1) {
    EXPECT_EQ(reads, 0u) << fetches << " fetches";
  } else {
    EXPECT_GE(reads, fetches * kPartitions);
  }
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(PartitionOn(k1, Tp(p))->isr().size(), 2u) << p;
  }
  EXPECT_TRUE(Events("isr_shrink").empty());
  // The produce waits for the follower (acks=all): the parked fetch wakes at the append, well
  // before its 500 ms are up.
  const TimeUs before_produce = world_.Now();
  ASSERT_EQ(Produce("broker-1", Tp(11), -1, 3).error_code, Errc::kNone);
  EXPECT_LT(world_.Now() - before_produce, 200 * kUsPerMs);
  EXPECT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k2, Tp(11))->high_watermark() == Offset(5); }, kSecondUs));
}

INSTANTIATE_TEST_SUITE_P(Releases, FollowerSessionTest,
                         ::testing::Values(KafkaRelease::k1_0, KafkaRelease::k1_1,
                                           KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

// A follower whose partitions are all quiet in its session, and whose fetches then stop arriving
// (15 s late for 20 s): the leader's fetch times for it stop too, and every partition's ISR
// shrinks after replica.lag.time.max.ms, as at 1.0; once the fetches arrive again it rejoins.
// (ZooKeeper sessions last 30 s here: the leader, not the controller, drops it.)
TEST_F(FetchSessionClusterTest, AQuietFollowerThatStopsFetchingLeavesTheIsr) {
  constexpr int kPartitions = 8;
  Start(KafkaRelease::k2_1, 2, {{"zookeeper.session.timeout.ms", "30000"}});
  CreateTopic(kPartitions, {k1, k2});
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(Produce("broker-1", Tp(p), -1, 1).error_code, Errc::kNone);
  }
  cluster_->RunFor(5 * kSecondUs);
  ReplicaManager& leader = cluster_->broker(k1)->replica_manager();
  const uint64_t reads_before = leader.fetch_partition_reads();
  cluster_->RunFor(2 * kSecondUs);
  ASSERT_EQ(leader.fetch_partition_reads(), reads_before);  // all quiet
  auto every_isr_has = [&](size_t members) {
    return [&, members] {
      for (int p = 0; p < kPartitions; ++p) {
        if (PartitionOn(k1, Tp(p))->isr().size() != members) return false;
      }
      return true;
    };
  };
  ASSERT_TRUE(cluster_->SlowBroker(k2, 15 * kSecondUs, 20 * kSecondUs).ok());
  ASSERT_TRUE(cluster_->RunUntil(every_isr_has(1), 20 * kSecondUs));
  EXPECT_EQ(Events("isr_shrink").size(), static_cast<size_t>(kPartitions));
  EXPECT_TRUE(cluster_->RunUntil(every_isr_has(2), 90 * kSecondUs));
}

// One session slot on the leader and two followers: the first follower's session fills it; the
// second's full fetches make none. An incremental fetch never refreshes a session's last use
// (Kafka 1.1 to 2.x), so after 120 s the first session counts as stale and the second follower's
// next full fetch evicts it: the first follower's next fetch is answered FETCH_SESSION_ID_NOT_FOUND
// and it starts over with a full fetch. Replication goes on throughout.
TEST_F(FetchSessionClusterTest, AFollowerWhoseSessionWasEvictedStartsOver) {
  Start(KafkaRelease::k1_1, 3, {{"max.incremental.fetch.session.cache.slots", "1"}});
  CreateTopic(4, {k1, k2, k3});
  cluster_->RunFor(130 * kSecondUs);
  const std::vector<nlohmann::ordered_json> resets = Events("replica_fetch_session_reset");
  ASSERT_FALSE(resets.empty());
  EXPECT_EQ(resets[0]["error"], "FETCH_SESSION_ID_NOT_FOUND");
  EXPECT_EQ(resets[0]["leader"], 1);
  ASSERT_EQ(Produce("broker-1", Tp(2), -1, 3).error_code, Errc::kNone);
  EXPECT_TRUE(cluster_->RunUntil(
      [&] {
        return PartitionOn(k2, Tp(2))->high_watermark() == Offset(3) &&
               PartitionOn(k3, Tp(2))->high_watermark() == Offset(3);
      },
      10 * kSecondUs));
  EXPECT_EQ(PartitionOn(k1, Tp(2))->isr().size(), 3u);
}

// A restarted leader knows no session; both followers start over with full fetches, each
// closing its old session by id. The new process must not hand out its previous incarnation's ids
// again: a follower closing its old id would close the other's new session, which then fails
// with FETCH_SESSION_ID_NOT_FOUND (found with the first seeding of the ids, by the broker id
// alone).
TEST_F(FetchSessionClusterTest, ARestartedLeadersNewSessionsAreNotClosedByOldIds) {
  Start(KafkaRelease::k1_1, 3);
  CreateTopic(4, {k1, k2, k3});
  cluster_->RunFor(5 * kSecondUs);
  ASSERT_TRUE(Events("replica_fetch_session_reset").empty());
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  cluster_->RunFor(kSecondUs);
  ASSERT_TRUE(cluster_->RestartBroker(k1).ok());
  // Leadership comes back to broker 1 (the preferred replica) and both follow it again.
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* leader = PartitionOn(k1, Tp(0));
        return leader != nullptr && leader->is_leader() && leader->isr().size() == 3;
      },
      600 * kSecondUs));
  cluster_->RunFor(20 * kSecondUs);
  EXPECT_TRUE(Events("replica_fetch_session_reset").empty());
}

}  // namespace
}  // namespace ksim::sim::testing
