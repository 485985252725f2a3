#include "viz/model/scenario_models.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::viz {
namespace {

std::string ScenarioPath(const std::string& file) {
  return (std::filesystem::path(KSIM_SOURCE_DIR) / "scenarios" / file).string();
}

// The in-process path builds the same model as `ksim run --trace` then opening the file.
TEST(ScenarioModelsTest, InProcessModelEqualsTheModelOfTheWrittenTrace) {
  Result<sim::Scenario> scenario =
      sim::LoadScenario(ScenarioPath("teaching/acks-leader-crash.json"));
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ASSERT_FALSE(scenario->variants.empty());
  const std::string variant = scenario->variants.front().name;

  ScenarioModelsOptions options;
  options.variant = variant;
  options.level = sim::TraceLevel::kState;
  options.name = "acks-leader-crash.json";
  Result<std::vector<TimelineModel>> models = ModelsOfScenario(*scenario, options);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), 1u);
  const TimelineModel& in_process = models->front();

  testing::TempDir dir;
  sim::RunOptions run_options;
  run_options.variant = variant;
  run_options.trace_level = sim::TraceLevel::kState;
  run_options.trace_path = dir.path() + "/run.jsonl";
  Result<sim::RunResult> run = sim::RunScenario(scenario->variants.front().scenario, run_options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  Result<TimelineModel> loaded = TimelineModel::Load(run_options.trace_path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();

  EXPECT_EQ(in_process.header().variant, variant);
  EXPECT_EQ(in_process.header(), loaded->header());
  EXPECT_EQ(in_process.end_us(), loaded->end_us());
  EXPECT_EQ(in_process.metrics(), loaded->metrics());
  ASSERT_EQ(in_process.events().size(), loaded->events().size());
  for (size_t i = 0; i < in_process.events().size(); ++i) {
    EXPECT_EQ(in_process.events()[i].summary, loaded->events()[i].summary) << i;
  }
  ASSERT_EQ(in_process.records().size(), loaded->records().size());
  for (size_t i = 0; i < in_process.records().size(); ++i) {
    EXPECT_EQ(in_process.records()[i].final_copies, loaded->records()[i].final_copies) << i;
  }
  EXPECT_NE(in_process.serial(), loaded->serial());  // two models, two cache keys
}

TEST(ScenarioModelsTest, EveryVariantInOrderAndUnknownVariantsNamed) {
  Result<sim::Scenario> scenario =
      sim::LoadScenario(ScenarioPath("teaching/acks-leader-crash.json"));
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ScenarioModelsOptions options;
  options.level = sim::TraceLevel::kState;
  options.name = "a.json";
  Result<std::vector<TimelineModel>> models = ModelsOfScenario(*scenario, options);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), scenario->variants.size() + 1);
  EXPECT_EQ((*models)[0].header().variant, "base");
  for (size_t i = 0; i < scenario->variants.size(); ++i) {
    EXPECT_EQ((*models)[i + 1].header().variant, scenario->variants[i].name);
  }

  options.variant = "no-such-variant";
  Result<std::vector<TimelineModel>> unknown = ModelsOfScenario(*scenario, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(unknown.status().message().rfind("unknown variant \"no-such-variant\" in a.json: ", 0),
            0u)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("valid variants are base, "), std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace ksim::viz
