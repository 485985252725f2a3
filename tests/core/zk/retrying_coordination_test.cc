// RetryingCoordination (core/zk/retrying_coordination.h) over a scripted Coordination whose calls
// the test answers one by one: a CONNECTIONLOSS issues the same call again, with the same
// arguments; every other answer goes to the caller once; nothing runs after destruction.
#include "core/zk/retrying_coordination.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace ksim {
namespace {

// A Coordination that records each call and keeps it until the test answers it, with an error
// or with the canned success of its operation.
class ScriptedZk final : public Coordination {
 public:
  struct Call {
    std::string op;
    std::string path;
    std::string data;
    int32_t version = 0;
    bool watch = false;
    CreateMode mode = CreateMode::kPersistent;
    std::function<void(Status)> fail;
    std::function<void()> succeed;
    std::string Describe() const {
      return op + " " + path + " data=" + data + " version=" + std::to_string(version) +
             " watch=" + std::to_string(watch) + " mode=" + std::string(CreateModeName(mode));
    }
  };

  void SetWatcher(Watcher) override {}
  void SetSessionListener(SessionListener) override {}
  void Connect() override {}
  void Close(std::function<void()> done) override { done(); }
  SessionState state() const override { return SessionState::kConnected; }
  ZkSessionId session_id() const override { return ZkSessionId(42); }
  TimeUs negotiated_session_timeout_us() const override { return 6'000'000; }

  void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) override {
    Call call{"create", path, data, 0, false, mode};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done, path] { done(path); };
    calls.push_back(std::move(call));
  }
  void Delete(std::string path, int32_t version, DeleteCallback done) override {
    Call call{"delete", path, "", version};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done] { done(Status::Ok()); };
    calls.push_back(std::move(call));
  }
  void Exists(std::string path, bool watch, ExistsCallback done) override {
    Call call{"exists", path, "", 0, watch};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done] { done(std::optional<ZnodeStat>(ZnodeStat{})); };
    calls.push_back(std::move(call));
  }
  void GetData(std::string path, bool watch, GetDataCallback done) override {
    Call call{"get_data", path, "", 0, watch};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done] {
      ZnodeData data;
      data.data = "1";
      data.stat.version = 3;
      done(std::move(data));
    };
    calls.push_back(std::move(call));
  }
  void SetData(std::string path, std::string data, int32_t version, SetDataCallback done) override {
    Call call{"set_data", path, data, version};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done, version] {
      ZnodeStat stat;
      stat.version = version + 1;
      done(stat);
    };
    calls.push_back(std::move(call));
  }
  void GetChildren(std::string path, bool watch, ChildrenCallback done) override {
    Call call{"get_children", path, "", 0, watch};
    call.fail = [done](Status status) { done(std::move(status)); };
    call.succeed = [done] { done(std::vector<std::string>{"a", "b"}); };
    calls.push_back(std::move(call));
  }

  // Answers the oldest unanswered call.
  void Fail(Errc code) {
    ASSERT_FALSE(calls.empty());
    Call call = std::move(calls.front());
    calls.pop_front();
    answered.push_back(call.Describe());
    call.fail(Status(code, call.path));
  }
  void Succeed() {
    ASSERT_FALSE(calls.empty());
    Call call = std::move(calls.front());
    calls.pop_front();
    answered.push_back(call.Describe());
    call.succeed();
  }

  std::deque<Call> calls;
  std::vector<std::string> answered;
};

TEST(RetryingCoordinationTest, ConnectionLossIssuesTheSameCallAgainUntilItIsAnswered) {
  ScriptedZk zk;
  RetryingCoordination retrying(zk);
  std::vector<Result<ZnodeData>> answers;
  retrying.GetData("/controller_epoch", /*watch=*/true,
                   [&](Result<ZnodeData> data) { answers.push_back(std::move(data)); });
  zk.Fail(Errc::kConnectionLoss);
  zk.Fail(Errc::kConnectionLoss);
  EXPECT_TRUE(answers.empty());
  ASSERT_EQ(zk.calls.size(), 1u);
  zk.Succeed();
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(answers[0].ok());
  EXPECT_EQ(answers[0]->data, "1");
  EXPECT_EQ(answers[0]->stat.version, 3);
  EXPECT_EQ(retrying.retries(), 2u);
  EXPECT_EQ(zk.answered, std::vector<std::string>(3,
                                                  "get_data /controller_epoch data= version=0 "
                                                  "watch=1 mode=PERSISTENT"));
}

TEST(RetryingCoordinationTest, OtherErrorsGoToTheCallerOnce) {
  for (Errc code : {Errc::kSessionExpired, Errc::kNoNode, Errc::kBadVersion, Errc::kNodeExists,
                    Errc::kNotEmpty, Errc::kInvalidArgument}) {
    ScriptedZk zk;
    RetryingCoordination retrying(zk);
    std::vector<Result<ZnodeStat>> answers;
    retrying.SetData("/brokers/topics/t/partitions/0/state", "{}", 4,
                     [&](Result<ZnodeStat> stat) { answers.push_back(std::move(stat)); });
    zk.Fail(code);
    EXPECT_TRUE(zk.calls.empty()) << ErrcName(code);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].status().code(), code);
    EXPECT_EQ(retrying.retries(), 0u);
  }
}

TEST(RetryingCoordinationTest, EveryOperationIsIssuedAgainWithItsOwnArguments) {
  ScriptedZk zk;
  RetryingCoordination retrying(zk);
  int answered = 0;
  retrying.Create("/controller", "{\"brokerid\":1}", CreateMode::kEphemeral,
                  [&](Result<std::string> created) {
                    EXPECT_EQ(*created, "/controller");
                    ++answered;
                  });
  retrying.Delete("/admin/delete_topics/t", 2, [&](Status deleted) {
    EXPECT_TRUE(deleted.ok());
    ++answered;
  });
  retrying.Exists("/controller", /*watch=*/true, [&](Result<std::optional<ZnodeStat>> stat) {
    EXPECT_TRUE(stat->has_value());
    ++answered;
  });
  retrying.SetData("/controller_epoch", "2", 1, [&](Result<ZnodeStat> stat) {
    EXPECT_EQ(stat->version, 2);
    ++answered;
  });
  retrying.GetChildren("/brokers/ids", /*watch=*/true,
                       [&](Result<std::vector<std::string>> children) {
                         EXPECT_EQ(*children, (std::vector<std::string>{"a", "b"}));
                         ++answered;
                       });
  // The connection drops: every call fails, oldest first, and is issued again in that order.
  for (int i = 0; i < 5; ++i) zk.Fail(Errc::kConnectionLoss);
  EXPECT_EQ(answered, 0);
  for (int i = 0; i < 5; ++i) zk.Succeed();
  EXPECT_EQ(answered, 5);
  ASSERT_EQ(zk.answered.size(), 10u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(zk.answered[i], zk.answered[i + 5]);
  EXPECT_EQ(zk.answered[0],
            "create /controller data={\"brokerid\":1} version=0 watch=0 mode=EPHEMERAL");
  EXPECT_EQ(zk.answered[1],
            "delete /admin/delete_topics/t data= version=2 watch=0 mode=PERSISTENT");
  EXPECT_EQ(zk.answered[2], "exists /controller data= version=0 watch=1 mode=PERSISTENT");
  EXPECT_EQ(zk.answered[3], "set_data /controller_epoch data=2 version=1 watch=0 mode=PERSISTENT");
  EXPECT_EQ(zk.answered[4], "get_children /brokers/ids data= version=0 watch=1 mode=PERSISTENT");
}

TEST(RetryingCoordinationTest, AFireAndForgetCallIsRetriedToo) {
  ScriptedZk zk;
  RetryingCoordination retrying(zk);
  retrying.Delete("/isr_change_notification/isr_change_0000000001", kAnyVersion, {});
  zk.Fail(Errc::kConnectionLoss);
  ASSERT_EQ(zk.calls.size(), 1u);
  EXPECT_EQ(zk.calls.front().path, "/isr_change_notification/isr_change_0000000001");
  zk.Succeed();
  EXPECT_TRUE(zk.calls.empty());
}

TEST(RetryingCoordinationTest, NothingRunsAfterDestruction) {
  ScriptedZk zk;
  int answered = 0;
  {
    RetryingCoordination retrying(zk);
    retrying.GetChildren("/brokers/topics", /*watch=*/true,
                         [&](Result<std::vector<std::string>>) { ++answered; });
    retrying.GetData("/controller", /*watch=*/false, [&](Result<ZnodeData>) { ++answered; });
  }
  zk.Fail(Errc::kConnectionLoss);  // not issued again
  zk.Succeed();                    // not passed on
  EXPECT_TRUE(zk.calls.empty());
  EXPECT_EQ(answered, 0);
}

TEST(RetryingCoordinationTest, SessionCallsAreTheWrappedClients) {
  ScriptedZk zk;
  RetryingCoordination retrying(zk);
  EXPECT_EQ(retrying.session_id(), ZkSessionId(42));
  EXPECT_EQ(retrying.state(), SessionState::kConnected);
  EXPECT_EQ(retrying.negotiated_session_timeout_us(), 6'000'000);
}

}  // namespace
}  // namespace ksim
