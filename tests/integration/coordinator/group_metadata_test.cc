// The group coordinator's state machine (GroupMetadata, GroupCoordinator) and the
// __consumer_offsets record format. Coordinator cases after Kafka's GroupCoordinatorTest and
// GroupMetadataTest (join/sync/heartbeat/leave/commit paths, session expiry, protocol selection,
// generation checks), run on the simulator's event loop as Clock and Timers, with each offsets
// partition a real Log in a temporary directory: commits are appended to it and a coordinator
// that takes over loads them back.
#include "core/coordinator/group_metadata.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/cluster/topic.h"
#include "core/coordinator/group_coordinator.h"
#include "core/coordinator/offsets_records.h"
#include "core/env/posix_env.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/kernel/event_loop.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

constexpr int32_t kPartitions = 3;
constexpr int32_t kSessionMs = 10000;
constexpr int32_t kRebalanceMs = 20000;

GroupProtocol Protocol(std::string name, std::string metadata = "m") {
  return GroupProtocol{std::move(name), ToBytes(metadata)};
}

// ---- Records ------------------------------------------------------------------------------------

TEST(OffsetsRecordsTest, JavaStringHashCodeMatchesJava) {
  // Values of "...".hashCode() in Java.
  EXPECT_EQ(JavaStringHashCode(""), 0);
  EXPECT_EQ(JavaStringHashCode("a"), 97);
  EXPECT_EQ(JavaStringHashCode("abc"), 96354);
  EXPECT_EQ(JavaStringHashCode("hello world"), 1794106052);
  // The famous one whose hash is Integer.MIN_VALUE (toPositive makes it 0).
  EXPECT_EQ(JavaStringHashCode("polygenelubricants"), std::numeric_limits<int32_t>::min());
  // Non-ASCII: UTF-16 code units ("é" is 0xE9; U+1F600 is the pair D83D DE00).
  EXPECT_EQ(JavaStringHashCode("\xC3\xA9"), 0xE9);
  EXPECT_EQ(JavaStringHashCode("\xF0\x9F\x98\x80"), 0xD83D * 31 + 0xDE00);
}

TEST(OffsetsRecordsTest, PartitionForIsToPositiveHashModPartitions) {
  // A negative hash: toPositive masks the sign bit (not Math.abs).
  EXPECT_EQ(OffsetsPartitionFor("polygenelubricants", 50), 0);
  EXPECT_EQ(OffsetsPartitionFor("abc", 50), 96354 % 50);
  for (int32_t n = 1; n < 10; ++n) {
    const int32_t p = OffsetsPartitionFor("group-" + std::to_string(n), n);
    EXPECT_GE(p, 0);
    EXPECT_LT(p, n);
  }
}

TEST(OffsetsRecordsTest, OffsetCommitKeyAndValueRoundTrip) {
  const OffsetCommitKey key{"g", TopicPartition{"t", PartitionId(7)}};
  const Bytes key_bytes = EncodeOffsetCommitKey(key);
  // int16 version 1, "g", "t", int32 7.
  EXPECT_EQ(key_bytes, (Bytes{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 7}));
  Result<OffsetsKey> decoded_key = DecodeOffsetsKey(key_bytes);
  ASSERT_TRUE(decoded_key.ok()) << decoded_key.status().ToString();
  EXPECT_EQ(std::get<OffsetCommitKey>(*decoded_key), key);

  const CommittedOffset value{Offset(42), "meta", 1000, 2000};
  Result<CommittedOffset> decoded = DecodeOffsetCommitValue(EncodeOffsetCommitValue(value));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, value);
}

TEST(OffsetsRecordsTest, GroupMetadataRoundTripAndTombstone) {
  StoredGroup group{
      .protocol_type = "consumer",
      .generation = 3,
      .protocol = "range",
      .leader = "c-1",
      .members = {StoredMember{"c-1", "c", "/c", 20000, 10000, ToBytes("sub"), ToBytes("assign")},
                  StoredMember{"c-2", "c", "/c", 20000, 10000, {}, {}}}};
  const Bytes key = EncodeGroupMetadataKey(GroupMetadataKey{"g"});
  EXPECT_EQ(key, (Bytes{0, 2, 0, 1, 'g'}));
  Result<OffsetsRecord> record = DecodeOffsetsRecord(key, EncodeGroupMetadataValue(group));
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(std::get<GroupMetadataKey>(record->key).group, "g");
  EXPECT_EQ(std::get<StoredGroup>(record->value), group);

  Result<OffsetsRecord> tombstone = DecodeOffsetsRecord(key, std::nullopt);
  ASSERT_TRUE(tombstone.ok());
  EXPECT_TRUE(tombstone->tombstone());
  // A group without protocol or leader (Empty) keeps the nulls.
  StoredGroup empty{.protocol_type = "consumer", .generation = 4};
  Result<StoredGroup> decoded = DecodeGroupMetadataValue(EncodeGroupMetadataValue(empty));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, empty);
}

// Value v0 (Kafka 0.10.0) has no rebalance timeout: 4 bytes less per member; read back, the
// session timeout stands for it. The version follows inter.broker.protocol.version.
TEST(OffsetsRecordsTest, GroupMetadataValueV0HasNoRebalanceTimeout) {
  StoredGroup group{.protocol_type = "consumer",
                    .generation = 3,
                    .protocol = "range",
                    .leader = "c-1",
                    .members = {StoredMember{"c-1", "c", "/c", 20000, 10000, ToBytes("s"), {}}}};
  const Bytes v0 = EncodeGroupMetadataValue(group, 0);
  const Bytes v1 = EncodeGroupMetadataValue(group, 1);
  EXPECT_EQ(v0[1], 0);
  EXPECT_EQ(v1[1], 1);
  EXPECT_EQ(v0.size() + 4, v1.size());
  // version, "consumer", generation 3, "range", "c-1", one member: "c-1", "c", "/c", session
  // 10000, subscription "s", assignment empty.
  const Bytes expected = {0, 0,    0,    8,   'c', 'o', 'n', 's', 'u', 'm', 'e', 'r', 0,   0,   0,
                          3, 0,    5,    'r', 'a', 'n', 'g', 'e', 0,   3,   'c', '-', '1', 0,   0,
                          0, 1,    0,    3,   'c', '-', '1', 0,   1,   'c', 0,   2,   '/', 'c', 0,
                          0, 0x27, 0x10, 0,   0,   0,   1,   's', 0,   0,   0,   0};
  EXPECT_EQ(v0, expected);
  Result<StoredGroup> back = DecodeGroupMetadataValue(v0);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->members[0].rebalance_timeout_ms, 10000);
  EXPECT_EQ(back->members[0].session_timeout_ms, 10000);
  EXPECT_EQ(*DecodeGroupMetadataValue(v1), group);

  EXPECT_EQ(GroupMetadataValueVersion(LatestApiVersion(KafkaRelease::k0_10_0)), 0);
  EXPECT_EQ(GroupMetadataValueVersion(LatestApiVersion(KafkaRelease::k0_10_1)), 1);
  EXPECT_EQ(GroupMetadataValueVersion(LatestApiVersion(KafkaRelease::k2_1)), 1);
  // A 0.10.1 broker with inter.broker.protocol.version=0.10.0 still writes v0 (rolling upgrade).
  EXPECT_EQ(GroupMetadataValueVersion(*FindApiVersion("0.10.0", KafkaRelease::k0_10_1)), 0);
}

TEST(OffsetsRecordsTest, DamagedBytesAreCorruptionNeverACrash) {
  const Bytes key = EncodeOffsetCommitKey({"group", TopicPartition{"topic", PartitionId(1)}});
  const Bytes value = EncodeOffsetCommitValue({Offset(5), "", 1, 2});
  StoredGroup stored{.protocol_type = "consumer",
                     .generation = 1,
                     .protocol = "range",
                     .leader = "m",
                     .members = {StoredMember{"m", "c", "/c", 1, 1, {1}, {2}}}};
  const Bytes group_value = EncodeGroupMetadataValue(stored);
  // Every truncation is refused.
  for (size_t n = 0; n < key.size(); ++n) {
    Result<OffsetsKey> r = DecodeOffsetsKey(ByteView(key.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), Errc::kCorruption) << n;
  }
  for (size_t n = 0; n < value.size(); ++n) {
    EXPECT_EQ(DecodeOffsetCommitValue(ByteView(value.data(), n)).status().code(),
              Errc::kCorruption);
  }
  for (size_t n = 0; n < group_value.size(); ++n) {
    EXPECT_EQ(DecodeGroupMetadataValue(ByteView(group_value.data(), n)).status().code(),
              Errc::kCorruption);
  }
  // Trailing bytes, negative lengths, a huge member count, an unknown version.
  Bytes longer = value;
  longer.push_back(0);
  EXPECT_EQ(DecodeOffsetCommitValue(longer).status().code(), Errc::kCorruption);
  Bytes negative = key;
  negative[2] = 0xFF;
  negative[3] = 0xF0;
  EXPECT_EQ(DecodeOffsetsKey(negative).status().code(), Errc::kCorruption);
  Bytes many = EncodeGroupMetadataValue(StoredGroup{.protocol_type = "c", .generation = 1});
  many[many.size() - 4] = 0x7F;
  EXPECT_EQ(DecodeGroupMetadataValue(many).status().code(), Errc::kCorruption);
  Bytes version = key;
  version[1] = 9;
  EXPECT_EQ(DecodeOffsetsKey(version).status().code(), Errc::kUnsupported);
  EXPECT_EQ(DecodeOffsetsRecord(std::nullopt, value).status().code(), Errc::kCorruption);
  // Every single-byte flip either decodes or fails with a status.
  for (size_t i = 0; i < group_value.size(); ++i) {
    Bytes flipped = group_value;
    flipped[i] ^= 0xA5;
    Result<StoredGroup> r = DecodeGroupMetadataValue(flipped);
    if (!r.ok()) {
      EXPECT_TRUE(r.status().code() == Errc::kCorruption ||
                  r.status().code() == Errc::kUnsupported);
    }
  }
}

// ---- GroupMetadata ------------------------------------------------------------------------------

MemberMetadata Member(std::string id, std::vector<GroupProtocol> protocols) {
  MemberMetadata member;
  member.member_id = std::move(id);
  member.protocol_type = "consumer";
  member.protocols = std::move(protocols);
  member.session_timeout_ms = kSessionMs;
  member.rebalance_timeout_ms = kRebalanceMs;
  return member;
}

TEST(GroupMetadataTest, SelectProtocolByVotes) {
  GroupMetadata group("g");
  group.Add(Member("a", {Protocol("range"), Protocol("roundrobin")}));
  group.Add(Member("b", {Protocol("roundrobin"), Protocol("range")}));
  group.Add(Member("c", {Protocol("roundrobin"), Protocol("range")}));
  EXPECT_EQ(group.SelectProtocol(), "roundrobin");
  // A protocol not everyone supports is no candidate, whatever its votes.
  GroupMetadata other("g2");
  other.Add(Member("a", {Protocol("sticky"), Protocol("range")}));
  other.Add(Member("b", {Protocol("sticky"), Protocol("range")}));
  other.Add(Member("c", {Protocol("range")}));
  EXPECT_EQ(other.SelectProtocol(), "range");
}

TEST(GroupMetadataTest, SupportsProtocolsNeedsOneCommonProtocolAndTheType) {
  GroupMetadata group("g");
  EXPECT_TRUE(group.SupportsProtocols("consumer", {Protocol("range")}));
  EXPECT_FALSE(group.SupportsProtocols("", {Protocol("range")}));
  group.Add(Member("a", {Protocol("range"), Protocol("roundrobin")}));
  EXPECT_TRUE(group.SupportsProtocols("consumer", {Protocol("roundrobin")}));
  EXPECT_FALSE(group.SupportsProtocols("consumer", {Protocol("sticky")}));
  EXPECT_FALSE(group.SupportsProtocols("connect", {Protocol("range")}));
}

TEST(GroupMetadataTest, LeaderIsFirstMemberAndMovesWhenItLeaves) {
  GroupMetadata group("g");
  group.Add(Member("b", {Protocol("range")}));
  group.Add(Member("a", {Protocol("range")}));
  EXPECT_EQ(group.leader(), "b");
  group.Remove("b");
  EXPECT_EQ(group.leader(), "a");
  group.Remove("a");
  EXPECT_FALSE(group.leader().has_value());
}

TEST(GroupMetadataTest, TransitionsFollowKafkasValidPreviousStates) {
  GroupMetadata group("g");
  group.Add(Member("a", {Protocol("range")}));
  group.TransitionTo(GroupState::kPreparingRebalance);
  group.InitNextGeneration();
  EXPECT_EQ(group.state(), GroupState::kCompletingRebalance);
  EXPECT_EQ(group.generation(), 1);
  EXPECT_EQ(group.protocol(), "range");
  group.TransitionTo(GroupState::kStable);
  group.TransitionTo(GroupState::kPreparingRebalance);
  group.Remove("a");
  group.InitNextGeneration();
  EXPECT_EQ(group.state(), GroupState::kEmpty);
  EXPECT_EQ(group.generation(), 2);
  EXPECT_FALSE(group.protocol().has_value());
  EXPECT_DEATH(group.TransitionTo(GroupState::kStable), "");
}

TEST(GroupMetadataTest, StoredFormRebuildsAStableGroup) {
  GroupMetadata group("g");
  group.Add(Member("a", {Protocol("range", "sub-a")}));
  group.Add(Member("b", {Protocol("range", "sub-b")}));
  group.TransitionTo(GroupState::kPreparingRebalance);
  group.InitNextGeneration();
  group.Get("a").assignment = ToBytes("p0");
  GroupMetadata loaded = GroupMetadata::FromStored("g", group.ToStored());
  EXPECT_EQ(loaded.state(), GroupState::kStable);
  EXPECT_EQ(loaded.generation(), 1);
  EXPECT_EQ(loaded.leader(), "a");
  EXPECT_EQ(loaded.Get("a").assignment, ToBytes("p0"));
  EXPECT_EQ(loaded.Get("b").Metadata("range"), ToBytes("sub-b"));
}

// ---- GroupCoordinator ---------------------------------------------------------------------------

// A coordinator whose offsets partitions are real logs. `fail_appends` makes the next appends
// fail with that produce error; `hold_appends` keeps their completions until Release().
class CoordinatorTest : public ::testing::Test {
 protected:
  CoordinatorTest() {
    config_.offsets_topic_num_partitions = kPartitions;
    for (int32_t p = 0; p < kPartitions; ++p) {
      LogConfig log_config;
      auto log = Log::Open(env_, loop_, dir_.path() + "/__consumer_offsets-" + std::to_string(p),
                           log_config);
      KSIM_CHECK(log.ok());
      logs_.push_back(std::move(log).value());
    }
    coordinator_ = MakeCoordinator();
    coordinator_->Startup();
    for (int32_t p = 0; p < kPartitions; ++p) coordinator_->OnElection(p);
    loop_.RunUntilIdle(1000000);
  }

  std::unique_ptr<GroupCoordinator> MakeCoordinator() {
    GroupCoordinatorSeams seams{
        .clock = loop_,
        .timers = loop_,
        .random = random_,
        .events = nullptr,
        .append =
            [this](const TopicPartition& tp, Bytes batch, std::function<void(Errc)> done) {
              if (fail_appends_ != Errc::kNone) return done(fail_appends_);
              auto appended = logs_[tp.partition.value()]->AppendAsLeader(MutableByteView(batch),
                                                                          LeaderEpoch(0));
              KSIM_CHECK(appended.ok());
              ++appends_;
              if (hold_appends_) {
                held_.push_back([done]() { done(Errc::kNone); });
              } else {
                done(Errc::kNone);
              }
            },
        .read = [this](const TopicPartition& tp, Offset start) -> Result<Bytes> {
          Log& log = *logs_[tp.partition.value()];
          if (start >= log.log_end_offset()) return Bytes{};
          KSIM_ASSIGN_OR_RETURN(FetchDataInfo info, log.Read(start, 1 << 20, std::nullopt, true));
          return std::move(info.records);
        },
    };
    return std::make_unique<GroupCoordinator>(config_, std::move(seams));
  }

  void Release() {
    auto held = std::move(held_);
    held_.clear();
    for (auto& f : held) f();
  }

  struct Joined {
    std::optional<JoinGroupResponse> response;
  };
  std::shared_ptr<Joined> Join(const std::string& group, const std::string& member_id,
                               std::vector<GroupProtocol> protocols = {Protocol("range")},
                               int32_t session_ms = kSessionMs, std::string client = "c") {
    auto joined = std::make_shared<Joined>();
    JoinGroupRequest request;
    request.group_id = group;
    request.member_id = member_id;
    request.session_timeout_ms = session_ms;
    request.rebalance_timeout_ms = kRebalanceMs;
    request.group_protocols = std::move(protocols);
    coordinator_->HandleJoinGroup(client, request,
                                  [joined](JoinGroupResponse r) { joined->response = r; });
    return joined;
  }
  JoinGroupResponse JoinNow(const std::string& group, const std::string& member_id = "") {
    auto joined = Join(group, member_id);
    loop_.RunUntil(loop_.Now());
    KSIM_CHECK(joined->response.has_value());
    return *joined->response;
  }

  struct Synced {
    std::optional<SyncGroupResponse> response;
  };
  std::shared_ptr<Synced> Sync(const std::string& group, int32_t generation,
                               const std::string& member_id,
                               std::vector<GroupAssignment> assignment = {}) {
    auto synced = std::make_shared<Synced>();
    SyncGroupRequest request;
    request.group_id = group;
    request.generation_id = generation;
    request.member_id = member_id;
    request.group_assignment = std::move(assignment);
    coordinator_->HandleSyncGroup(request, [synced](SyncGroupResponse r) { synced->response = r; });
    return synced;
  }

  Errc Heartbeat(const std::string& group, int32_t generation, const std::string& member_id) {
    std::optional<Errc> error;
    coordinator_->HandleHeartbeat(
        HeartbeatRequest{.group_id = group, .generation_id = generation, .member_id = member_id},
        [&](HeartbeatResponse r) { error = r.error_code; });
    KSIM_CHECK(error.has_value());
    return *error;
  }
  Errc Leave(const std::string& group, const std::string& member_id) {
    std::optional<Errc> error;
    coordinator_->HandleLeaveGroup(LeaveGroupRequest{.group_id = group, .member_id = member_id},
                                   [&](LeaveGroupResponse r) { error = r.error_code; });
    KSIM_CHECK(error.has_value());
    return *error;
  }
  std::optional<Errc> Commit(const std::string& group, int32_t generation,
                             const std::string& member_id, const TopicPartition& tp,
                             int64_t offset) {
    // The answer may come after this returns (a held append): it lands in last_commit_answer_.
    auto answer = std::make_shared<std::optional<Errc>>();
    last_commit_answer_ = answer;
    OffsetCommitRequest request;
    request.group_id = group;
    request.generation_id = generation;
    request.member_id = member_id;
    request.partitions.push_back(OffsetCommitPartition{.tp = tp, .offset = Offset(offset)});
    coordinator_->HandleOffsetCommit(
        request, [answer](OffsetCommitResponse r) { *answer = r.responses.at(0).error_code; });
    return *answer;
  }
  // The answer to the last Commit, once it came.
  std::optional<Errc> last_commit_answer() const { return *last_commit_answer_; }
  OffsetFetchPartitionResponse Fetch(const std::string& group, const TopicPartition& tp) {
    OffsetFetchResponse r = coordinator_->HandleOffsetFetch(
        OffsetFetchRequest{.group_id = group, .partitions = std::vector<TopicPartition>{tp}});
    KSIM_CHECK(r.responses.size() == 1);
    return r.responses[0];
  }
  // One member, joined and synced: its id and generation.
  std::pair<std::string, int32_t> StableSingleMember(const std::string& group) {
    JoinGroupResponse joined = JoinNow(group);
    KSIM_CHECK(joined.error_code == Errc::kNone);
    auto synced = Sync(group, joined.generation_id, joined.member_id,
                       {GroupAssignment{joined.member_id, ToBytes("all")}});
    KSIM_CHECK(synced->response.has_value() && synced->response->error_code == Errc::kNone);
    return {joined.member_id, joined.generation_id};
  }

  ksim::testing::TempDir dir_;
  PosixEnv env_;
  sim::EventLoop loop_;
  StreamRandomSource random_{7};
  BrokerConfig config_;
  std::vector<std::unique_ptr<Log>> logs_;
  std::unique_ptr<GroupCoordinator> coordinator_;
  Errc fail_appends_ = Errc::kNone;
  bool hold_appends_ = false;
  std::shared_ptr<std::optional<Errc>> last_commit_answer_ =
      std::make_shared<std::optional<Errc>>();
  int appends_ = 0;
  std::vector<std::function<void()>> held_;
  const TopicPartition tp_{"t", PartitionId(0)};
};

TEST_F(CoordinatorTest, JoinWithSessionTimeoutOutOfBoundsIsInvalid) {
  auto low = Join("g", "", {Protocol("range")}, config_.group_min_session_timeout_ms - 1);
  auto high = Join("g", "", {Protocol("range")}, config_.group_max_session_timeout_ms + 1);
  EXPECT_EQ(low->response->error_code, Errc::kInvalidSessionTimeout);
  EXPECT_EQ(high->response->error_code, Errc::kInvalidSessionTimeout);
}

TEST_F(CoordinatorTest, JoinUnknownGroupWithMemberIdIsUnknownMember) {
  auto joined = Join("g", "someone");
  EXPECT_EQ(joined->response->error_code, Errc::kUnknownMemberId);
  EXPECT_EQ(Join("", "")->response->error_code, Errc::kInvalidGroupId);
}

TEST_F(CoordinatorTest, NotOwnedPartitionIsNotCoordinatorAndLoadingIsInProgress) {
  const int32_t p = coordinator_->PartitionFor("g");
  coordinator_->OnResignation(p);
  EXPECT_EQ(Join("g", "")->response->error_code, Errc::kNotCoordinator);
  coordinator_->OnElection(p);
  EXPECT_EQ(Join("g", "")->response->error_code, Errc::kCoordinatorLoadInProgress);
  EXPECT_EQ(Fetch("g", tp_).error_code, Errc::kCoordinatorLoadInProgress);
  loop_.RunUntilIdle(1000000);
  EXPECT_EQ(JoinNow("g").error_code, Errc::kNone);
}

TEST_F(CoordinatorTest, FirstMemberBecomesLeaderOfGenerationOne) {
  JoinGroupResponse joined = JoinNow("g");
  ASSERT_EQ(joined.error_code, Errc::kNone);
  EXPECT_EQ(joined.generation_id, 1);
  EXPECT_EQ(joined.leader_id, joined.member_id);
  EXPECT_EQ(joined.group_protocol, "range");
  ASSERT_EQ(joined.members.size(), 1u);
  EXPECT_EQ(joined.member_id.rfind("c-", 0), 0u);  // client id first
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kCompletingRebalance);
}

TEST_F(CoordinatorTest, InconsistentProtocolIsRefused) {
  JoinNow("g");
  auto other = Join("g", "", {Protocol("roundrobin")});
  EXPECT_EQ(other->response->error_code, Errc::kInconsistentGroupProtocol);
}

TEST_F(CoordinatorTest, SyncGivesTheLeadersAssignmentAndStoresTheGroup) {
  JoinGroupResponse joined = JoinNow("g");
  const int before = appends_;
  auto synced = Sync("g", joined.generation_id, joined.member_id,
                     {GroupAssignment{joined.member_id, ToBytes("t-0")}});
  ASSERT_TRUE(synced->response.has_value());
  EXPECT_EQ(synced->response->error_code, Errc::kNone);
  EXPECT_EQ(synced->response->member_assignment, ToBytes("t-0"));
  EXPECT_EQ(appends_, before + 1);  // the group metadata record
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kStable);
}

TEST_F(CoordinatorTest, SyncErrors) {
  JoinGroupResponse joined = JoinNow("g");
  EXPECT_EQ(Sync("g", joined.generation_id, "nobody")->response->error_code,
            Errc::kUnknownMemberId);
  EXPECT_EQ(Sync("g", joined.generation_id + 1, joined.member_id)->response->error_code,
            Errc::kIllegalGeneration);
  EXPECT_EQ(Sync("unknown", 1, joined.member_id)->response->error_code, Errc::kUnknownMemberId);
}

TEST_F(CoordinatorTest, TwoMembersRebalanceAndFollowerWaitsForLeaderSync) {
  auto [leader, generation] = StableSingleMember("g");
  // A second member triggers a rebalance; the first learns it by heartbeat and rejoins.
  auto second = Join("g", "");
  loop_.RunUntil(loop_.Now());
  EXPECT_FALSE(second->response.has_value());
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(Heartbeat("g", generation, leader), Errc::kRebalanceInProgress);
  auto rejoin = Join("g", leader);
  ASSERT_TRUE(second->response.has_value());
  ASSERT_TRUE(rejoin->response.has_value());
  EXPECT_EQ(second->response->generation_id, generation + 1);
  EXPECT_EQ(rejoin->response->generation_id, generation + 1);
  EXPECT_EQ(rejoin->response->leader_id, leader);
  EXPECT_EQ(rejoin->response->members.size(), 2u);
  EXPECT_TRUE(second->response->members.empty());  // only the leader gets them
  const std::string follower = second->response->member_id;
  // The follower's SyncGroup waits for the leader's.
  auto follower_sync = Sync("g", generation + 1, follower);
  EXPECT_FALSE(follower_sync->response.has_value());
  EXPECT_EQ(Heartbeat("g", generation + 1, follower), Errc::kRebalanceInProgress);
  auto leader_sync =
      Sync("g", generation + 1, leader,
           {GroupAssignment{leader, ToBytes("p0")}, GroupAssignment{follower, ToBytes("p1")}});
  ASSERT_TRUE(follower_sync->response.has_value());
  EXPECT_EQ(follower_sync->response->member_assignment, ToBytes("p1"));
  EXPECT_EQ(leader_sync->response->member_assignment, ToBytes("p0"));
  EXPECT_EQ(Heartbeat("g", generation + 1, follower), Errc::kNone);
  EXPECT_EQ(Heartbeat("g", generation, follower), Errc::kIllegalGeneration);
}

TEST_F(CoordinatorTest, LeaderSyncFailureAnswersEveryoneAndRebalances) {
  JoinGroupResponse joined = JoinNow("g");
  fail_appends_ = Errc::kNotEnoughReplicas;
  auto synced = Sync("g", joined.generation_id, joined.member_id,
                     {GroupAssignment{joined.member_id, ToBytes("x")}});
  ASSERT_TRUE(synced->response.has_value());
  EXPECT_EQ(synced->response->error_code, Errc::kCoordinatorNotAvailable);
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kPreparingRebalance);
}

TEST_F(CoordinatorTest, MemberThatStopsHeartbeatingIsRemovedAfterSessionTimeout) {
  auto [first, generation] = StableSingleMember("g");
  auto second = Join("g", "");
  auto rejoin = Join("g", first);
  const std::string other = second->response->member_id;
  auto follower_sync = Sync("g", generation + 1, other);
  Sync("g", generation + 1, first,
       {GroupAssignment{first, ToBytes("a")}, GroupAssignment{other, ToBytes("b")}});
  ASSERT_EQ(coordinator_->group("g")->state(), GroupState::kStable);
  // `first` heartbeats every 3 s; `other` goes silent.
  const TimeUs start = loop_.Now();
  while (loop_.Now() < start + (kSessionMs + 1000) * kUsPerMs) {
    ASSERT_NE(Heartbeat("g", generation + 1, first), Errc::kUnknownMemberId);
    loop_.RunUntil(loop_.Now() + 3000 * kUsPerMs);
  }
  EXPECT_FALSE(coordinator_->group("g")->Has(other));
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(Heartbeat("g", generation + 1, other), Errc::kUnknownMemberId);
  EXPECT_EQ(Heartbeat("g", generation + 1, first), Errc::kRebalanceInProgress);
  auto again = Join("g", first);
  ASSERT_TRUE(again->response.has_value());
  EXPECT_EQ(again->response->generation_id, generation + 2);
  EXPECT_EQ(again->response->members.size(), 1u);
}

TEST_F(CoordinatorTest, MemberThatDoesNotRejoinIsRemovedAtRebalanceTimeout) {
  auto [first, generation] = StableSingleMember("g");
  auto second = Join("g", "");
  // `first` keeps heartbeating but never rejoins: after the rebalance timeout it is dropped.
  for (int i = 0; i < kRebalanceMs / 3000 + 1; ++i) {
    Heartbeat("g", generation, first);
    loop_.RunUntil(loop_.Now() + 3000 * kUsPerMs);
  }
  ASSERT_TRUE(second->response.has_value());
  EXPECT_EQ(second->response->error_code, Errc::kNone);
  EXPECT_EQ(second->response->leader_id, second->response->member_id);
  EXPECT_FALSE(coordinator_->group("g")->Has(first));
}

TEST_F(CoordinatorTest, LeaveGroupRebalancesTheRest) {
  auto [first, generation] = StableSingleMember("g");
  EXPECT_EQ(Leave("g", "nobody"), Errc::kUnknownMemberId);
  EXPECT_EQ(Leave("g", first), Errc::kNone);
  loop_.RunUntil(loop_.Now());
  // Nobody left: the group is Empty, one generation later (and stored so).
  EXPECT_EQ(coordinator_->group("g")->state(), GroupState::kEmpty);
  EXPECT_EQ(coordinator_->group("g")->generation(), generation + 1);
}

TEST_F(CoordinatorTest, CommitChecksGenerationAndMember) {
  auto [member, generation] = StableSingleMember("g");
  EXPECT_EQ(Commit("g", generation, member, tp_, 5), Errc::kNone);
  EXPECT_EQ(Fetch("g", tp_).offset, Offset(5));
  EXPECT_EQ(Commit("g", generation + 1, member, tp_, 6), Errc::kIllegalGeneration);
  EXPECT_EQ(Commit("g", generation, "nobody", tp_, 6), Errc::kUnknownMemberId);
  // A simple (group-less) commit is refused while the group has members.
  EXPECT_EQ(Commit("g", -1, "", tp_, 6), Errc::kUnknownMemberId);
  EXPECT_EQ(Fetch("g", tp_).offset, Offset(5));
  // Unknown group: no offset; a member generation to an unknown group is ILLEGAL_GENERATION.
  EXPECT_EQ(Fetch("other", tp_).offset, kUndefinedOffset);
  EXPECT_EQ(Commit("other", 3, "m", tp_, 1), Errc::kIllegalGeneration);
}

TEST_F(CoordinatorTest, SimpleCommitToEmptyGroupIsAllowed) {
  EXPECT_EQ(Commit("simple", -1, "", tp_, 9), Errc::kNone);
  EXPECT_EQ(Fetch("simple", tp_).offset, Offset(9));
  EXPECT_EQ(coordinator_->group("simple")->state(), GroupState::kEmpty);
}

TEST_F(CoordinatorTest, CommitDuringAwaitingSyncIsRebalanceInProgress) {
  JoinGroupResponse joined = JoinNow("g");
  EXPECT_EQ(Commit("g", joined.generation_id, joined.member_id, tp_, 1),
            Errc::kRebalanceInProgress);
}

TEST_F(CoordinatorTest, CommitIsAnsweredOnlyOnceTheAppendCompletes) {
  auto [member, generation] = StableSingleMember("g");
  hold_appends_ = true;
  std::optional<Errc> error = Commit("g", generation, member, tp_, 12);
  EXPECT_FALSE(error.has_value());
  EXPECT_EQ(Fetch("g", tp_).offset, kUndefinedOffset);  // not in the cache before the log has it
  Release();
  EXPECT_EQ(last_commit_answer(), Errc::kNone);
  EXPECT_EQ(Fetch("g", tp_).offset, Offset(12));
}

TEST_F(CoordinatorTest, AppendErrorsAreMappedAsKafkaDoes) {
  auto [member, generation] = StableSingleMember("g");
  fail_appends_ = Errc::kNotEnoughReplicas;
  EXPECT_EQ(Commit("g", generation, member, tp_, 1), Errc::kCoordinatorNotAvailable);
  fail_appends_ = Errc::kNotLeaderForPartition;
  EXPECT_EQ(Commit("g", generation, member, tp_, 1), Errc::kNotCoordinator);
  fail_appends_ = Errc::kRequestTimedOut;
  EXPECT_EQ(Commit("g", generation, member, tp_, 1), Errc::kRequestTimedOut);
  EXPECT_EQ(Fetch("g", tp_).offset, kUndefinedOffset);
}

TEST_F(CoordinatorTest, NewCoordinatorLoadsGroupsAndOffsetsFromTheLog) {
  auto [member, generation] = StableSingleMember("g");
  EXPECT_EQ(Commit("g", generation, member, tp_, 5), Errc::kNone);
  EXPECT_EQ(Commit("g", generation, member, tp_, 8), Errc::kNone);
  EXPECT_EQ(Commit("simple", -1, "", TopicPartition{"u", PartitionId(2)}, 3), Errc::kNone);
  // Another coordinator (another broker after a failover) reads the same logs.
  coordinator_->Shutdown();
  coordinator_ = MakeCoordinator();
  coordinator_->Startup();
  for (int32_t p = 0; p < kPartitions; ++p) coordinator_->OnElection(p);
  loop_.RunUntilIdle(1000000);
  const GroupMetadata* group = coordinator_->group("g");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->state(), GroupState::kEmpty);  // the member's session ran out meanwhile
  EXPECT_EQ(Fetch("g", tp_).offset, Offset(8));
  EXPECT_EQ(Fetch("simple", TopicPartition{"u", PartitionId(2)}).offset, Offset(3));
}

TEST_F(CoordinatorTest, LoadedMembersKeepTheirGenerationUntilTheirSessionEnds) {
  auto [member, generation] = StableSingleMember("g");
  auto fresh = MakeCoordinator();
  fresh->Startup();
  fresh->OnElection(coordinator_->PartitionFor("g"));
  loop_.RunUntil(loop_.Now());
  const GroupMetadata* group = fresh->group("g");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->state(), GroupState::kStable);
  EXPECT_EQ(group->generation(), generation);
  EXPECT_TRUE(group->Has(member));
  loop_.RunUntil(loop_.Now() + (kSessionMs + 1) * kUsPerMs);
  EXPECT_FALSE(fresh->group("g")->Has(member));
}

TEST_F(CoordinatorTest, ResignationAnswersWaitingMembersNotCoordinator) {
  auto [first, generation] = StableSingleMember("g");
  auto second = Join("g", "");
  coordinator_->OnResignation(coordinator_->PartitionFor("g"));
  ASSERT_TRUE(second->response.has_value());
  EXPECT_EQ(second->response->error_code, Errc::kNotCoordinator);
  EXPECT_EQ(coordinator_->group("g"), nullptr);
  EXPECT_EQ(Heartbeat("g", generation, first), Errc::kNotCoordinator);
}

TEST_F(CoordinatorTest, InitialRebalanceDelayGathersMembers) {
  config_.group_initial_rebalance_delay_ms = 3000;
  auto a = Join("g2", "");
  loop_.RunUntil(loop_.Now() + 1000 * kUsPerMs);
  auto b = Join("g2", "");
  loop_.RunUntil(loop_.Now() + 2500 * kUsPerMs);
  EXPECT_FALSE(a->response.has_value());  // the delay started again with b
  loop_.RunUntil(loop_.Now() + 3000 * kUsPerMs);
  ASSERT_TRUE(a->response.has_value());
  ASSERT_TRUE(b->response.has_value());
  EXPECT_EQ(a->response->generation_id, 1);
  EXPECT_EQ(b->response->generation_id, 1);
}

}  // namespace
}  // namespace ksim
