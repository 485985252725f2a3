// The controller's sequencing helper (core/controller/steps.h) on its own: steps that finish
// inside their call and steps that finish later (their StepDone kept and called by the test, as a
// ZooKeeper callback would), ordering, the first error carried to the end, fan-in of N and of
// none, and what happens to a sequence whose pending StepDone is dropped.
#include "core/controller/steps.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ksim {
namespace {

// Records what the steps did, in order, and keeps the StepDone of the steps that finish later.
struct Script {
  std::vector<std::string> log;
  std::vector<StepDone> pending;

  // A step that logs "start <name>" and finishes at once with `status`.
  Step Now(std::string name, Status status = Status::Ok()) {
    return [this, name, status](StepDone done) {
      log.push_back("start " + name);
      done(status);
    };
  }
  // A step that logs "start <name>" and finishes when the test calls Finish.
  Step Later(std::string name) {
    return [this, name](StepDone done) {
      log.push_back("start " + name);
      pending.push_back(std::move(done));
    };
  }
  // Finishes the pending step started `index`-th among the later ones.
  void Finish(size_t index, Status status = Status::Ok()) {
    ASSERT_LT(index, pending.size());
    StepDone done = std::move(pending[index]);
    ASSERT_TRUE(done) << "finished twice";
    done(std::move(status));
  }
  StepDone Done(std::optional<Status>& out) {
    return [this, &out](Status status) {
      log.push_back("done " + std::string(ErrcName(status.code())));
      out.emplace(std::move(status));
    };
  }
};

// The composition's `done` ran, with Ok.
::testing::AssertionResult FinishedOk(const std::optional<Status>& result) {
  if (!result.has_value()) return ::testing::AssertionFailure() << "not finished";
  if (!result->ok()) return ::testing::AssertionFailure() << "finished with " << result->ToString();
  return ::testing::AssertionSuccess();
}

TEST(InOrderTest, StartsEachStepOnlyWhenThePreviousOneIsDone) {
  Script script;
  std::optional<Status> result;
  InOrder({script.Later("a"), script.Later("b"), script.Later("c")}, script.Done(result));
  EXPECT_EQ(script.log, std::vector<std::string>{"start a"});

  script.Finish(0);
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b"}));
  script.Finish(1);
  EXPECT_FALSE(result.has_value());
  script.Finish(2);
  EXPECT_TRUE(FinishedOk(result));
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b", "start c", "done NONE"}));
}

TEST(InOrderTest, MixesStepsThatFinishAtOnceWithStepsThatFinishLater) {
  Script script;
  std::optional<Status> result;
  InOrder({script.Now("a"), script.Later("b"), script.Now("c"), script.Now("d"), script.Later("e")},
          script.Done(result));
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b"}));
  script.Finish(0);
  EXPECT_EQ(script.log,
            (std::vector<std::string>{"start a", "start b", "start c", "start d", "start e"}));
  EXPECT_FALSE(result.has_value());
  script.Finish(1);
  EXPECT_TRUE(FinishedOk(result));
}

TEST(InOrderTest, FirstErrorSkipsTheRestAndReachesTheEnd) {
  Script script;
  std::optional<Status> result;
  InOrder({script.Now("a"), script.Later("b"), script.Now("c")}, script.Done(result));
  script.Finish(0, Status(Errc::kBadVersion, "/brokers/topics/t/partitions/0/state"));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), Errc::kBadVersion);
  EXPECT_EQ(result->message(), "/brokers/topics/t/partitions/0/state");
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b", "done BADVERSION"}));
}

TEST(InOrderTest, AnErrorFromAStepThatFinishesAtOnceStopsTheSequenceToo) {
  Script script;
  std::optional<Status> result;
  InOrder({script.Now("a", Status(Errc::kNoNode, "/x")), script.Now("b")}, script.Done(result));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), Errc::kNoNode);
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "done NONODE"}));
}

TEST(InOrderTest, NoStepsFinishesInsideTheCall) {
  std::optional<Status> result;
  InOrder({}, [&](Status status) { result.emplace(std::move(status)); });
  EXPECT_TRUE(FinishedOk(result));
}

TEST(InOrderTest, ManyStepsThatFinishAtOnceDoNotGrowTheStack) {
  // Without the trampoline each step would nest one call deeper than the last; this many would
  // overflow the stack.
  constexpr int kSteps = 200'000;
  int ran = 0;
  std::vector<Step> steps(kSteps, [&ran](StepDone done) {
    ++ran;
    done(Status::Ok());
  });
  std::optional<Status> result;
  InOrder(std::move(steps), [&](Status status) { result.emplace(std::move(status)); });
  EXPECT_EQ(ran, kSteps);
  EXPECT_TRUE(FinishedOk(result));
}

TEST(InOrderTest, StepsMayBeSequencesThemselves) {
  Script script;
  std::optional<Status> result;
  InOrder(
      {
          script.Now("a"),
          [&](StepDone next) {
            InOrder({script.Later("b1"), script.Now("b2")}, std::move(next));
          },
          script.Now("c"),
      },
      script.Done(result));
  script.Finish(0);
  EXPECT_EQ(script.log,
            (std::vector<std::string>{"start a", "start b1", "start b2", "start c", "done NONE"}));
}

TEST(AllOfTest, StartsEveryStepInOrderAndFinishesWhenTheLastOneDoes) {
  Script script;
  std::optional<Status> result;
  std::vector<Step> steps;
  for (int i = 0; i < 5; ++i) steps.push_back(script.Later(std::to_string(i)));
  AllOf(std::move(steps), script.Done(result));
  EXPECT_EQ(script.log,
            (std::vector<std::string>{"start 0", "start 1", "start 2", "start 3", "start 4"}));
  for (size_t i : {4u, 0u, 2u, 3u}) {
    script.Finish(i);
    EXPECT_FALSE(result.has_value()) << "after step " << i;
  }
  script.Finish(1);
  EXPECT_TRUE(FinishedOk(result));
}

TEST(AllOfTest, CarriesTheFirstErrorInStepOrderNotInTimeOrder) {
  Script script;
  std::optional<Status> result;
  AllOf({script.Later("a"), script.Later("b"), script.Later("c"), script.Later("d")},
        script.Done(result));
  script.Finish(3, Status(Errc::kNodeExists, "d"));
  script.Finish(1, Status(Errc::kNoNode, "b"));
  script.Finish(0);
  EXPECT_FALSE(result.has_value());  // an error does not end the fan-in early
  script.Finish(2);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), Errc::kNoNode);
  EXPECT_EQ(result->message(), "b");
}

TEST(AllOfTest, NoStepsFinishesInsideTheCall) {
  std::optional<Status> result;
  AllOf({}, [&](Status status) { result.emplace(std::move(status)); });
  EXPECT_TRUE(FinishedOk(result));
}

TEST(AllOfTest, StepsThatFinishAtOnceDoNotEndTheFanInBeforeTheLastStarts) {
  Script script;
  std::optional<Status> result;
  AllOf({script.Now("a"), script.Now("b", Status(Errc::kBadVersion, "b")), script.Later("c"),
         script.Now("d")},
        script.Done(result));
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b", "start c", "start d"}));
  EXPECT_FALSE(result.has_value());
  script.Finish(0);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), Errc::kBadVersion);
}

TEST(AllOfTest, AllStepsFinishingAtOnceFinishOnceAfterTheLastStarted) {
  Script script;
  int finished = 0;
  AllOf({script.Now("a"), script.Now("b")}, [&](Status status) {
    EXPECT_TRUE(status.ok());
    script.log.push_back("done");
    ++finished;
  });
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b", "done"}));
}

TEST(ForEachTest, RunsTheStepForEveryItemInTheRangesOrder) {
  std::vector<std::string> seen;
  std::vector<StepDone> pending;
  std::optional<Status> result;
  ForEach(
      std::vector<std::string>{"t-0", "t-1", "u-0"},
      [&](const std::string& item, StepDone done) {
        seen.push_back(item);
        pending.push_back(std::move(done));
      },
      [&](Status status) { result.emplace(std::move(status)); });
  EXPECT_EQ(seen, (std::vector<std::string>{"t-0", "t-1", "u-0"}));
  for (StepDone& done : pending) done(Status::Ok());
  EXPECT_TRUE(FinishedOk(result));
}

TEST(StepsTest, DroppingThePendingStepDoneReleasesTheSequenceAndItsDone) {
  // What happens when the controller crashes or resigns mid-step: ZooKeeper drops the callback
  // that holds the StepDone; nothing runs afterwards and nothing leaks.
  auto shared = std::make_shared<int>(7);
  std::weak_ptr<int> watched = shared;
  bool done_ran = false;
  Script script;
  InOrder({script.Later("a"), [shared](StepDone done) { done(Status::Ok()); }},
          [&done_ran, shared](Status) { done_ran = true; });
  AllOf({script.Later("b")}, [shared](Status) {});
  shared.reset();
  EXPECT_FALSE(watched.expired());  // the pending StepDones keep both compositions alive
  script.pending.clear();
  EXPECT_TRUE(watched.expired());
  EXPECT_FALSE(done_ran);
}

TEST(StepsTest, AnEmptyDoneIsAllowed) {
  Script script;
  InOrder({script.Later("a")}, StepDone());
  AllOf({script.Later("b")}, StepDone());
  script.Finish(0);
  script.Finish(1);
  EXPECT_EQ(script.log, (std::vector<std::string>{"start a", "start b"}));
}

TEST(StepsDeathTest, AStepDoneCalledTwiceIsAProgrammerError) {
  EXPECT_DEATH(InOrder({[](StepDone done) {
                         StepDone copy = done;
                         done(Status::Ok());
                         copy(Status::Ok());
                       }},
                       {}),
               "finished");
  EXPECT_DEATH(AllOf({[](StepDone done) {
                       StepDone copy = done;
                       done(Status::Ok());
                       copy(Status::Ok());
                     }},
                     {}),
               "finished");
}

}  // namespace
}  // namespace ksim
