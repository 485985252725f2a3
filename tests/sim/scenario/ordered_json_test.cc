// ParseOrderedJson must build what Json::parse builds (the scenario loader's documents, their
// key order and its error messages depend on it), only without the quadratic key search.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sim/scenario/reader.h"

namespace ksim::sim {
namespace {

// Random JSON text, valid or nearly: nested objects and arrays, repeated keys, every scalar
// kind, and now and then a broken token.
std::string RandomJson(std::mt19937_64& random, int depth) {
  const std::vector<std::string> scalars = {
      "0",    "-7",    "18446744073709551615", "1.5e3", "true", "false",
      "null", "\"s\"", "\"\\u00e9\\n\"",       "1e999"};
  const int kind = static_cast<int>(random() % (depth > 3 ? 1 : 3));
  if (kind == 0) {
    if (random() % 200 == 0) return "[1,";  // broken
    return scalars[random() % scalars.size()];
  }
  const size_t count = random() % 6;
  std::string out = kind == 1 ? "{" : "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out += ",";
    if (kind == 1) out += "\"k" + std::to_string(random() % 4) + "\":";  // keys repeat
    out += RandomJson(random, depth + 1);
  }
  return out + (kind == 1 ? "}" : "]");
}

TEST(OrderedJsonTest, BuildsWhatJsonParseBuildsAndThrowsWhatItThrows) {
  std::mt19937_64 random(32);
  int parsed = 0;
  int failed = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::string text = RandomJson(random, 0) + (random() % 100 == 0 ? " x" : "");
    std::string theirs;
    std::string ours;
    try {
      theirs = Json::parse(text).dump();
    } catch (const std::exception& e) {
      theirs = std::string("error: ") + e.what();
    }
    try {
      ours = ParseOrderedJson(text).dump();
    } catch (const std::exception& e) {
      ours = std::string("error: ") + e.what();
    }
    ASSERT_EQ(ours, theirs) << text;
    (theirs.starts_with("error: ") ? failed : parsed) += 1;
  }
  // Both kinds were exercised.
  EXPECT_GT(parsed, 1000);
  EXPECT_GT(failed, 10);
}

TEST(OrderedJsonTest, KeepsFirstSeenOrderAndTheLastValueOfARepeatedKey) {
  const Json document = ParseOrderedJson(R"({"b": 1, "a": {"x": 1}, "b": 2, "a": [3]})");
  EXPECT_EQ(document.dump(), R"({"b":2,"a":[3]})");
  EXPECT_EQ(document.dump(), Json::parse(R"({"b": 1, "a": {"x": 1}, "b": 2, "a": [3]})").dump());
}

TEST(OrderedJsonTest, ATenThousandKeyObjectKeepsItsOrder) {
  std::string text = "{";
  for (int i = 9999; i >= 0; --i) {
    text += "\"" + std::to_string(i) + "\":[" + std::to_string(i) + "]";
    if (i > 0) text += ",";
  }
  text += "}";
  const Json document = ParseOrderedJson(text);
  ASSERT_EQ(document.size(), 10000u);
  EXPECT_EQ(document.begin().key(), "9999");
  EXPECT_EQ(document.dump(), Json::parse(text).dump());
}

}  // namespace
}  // namespace ksim::sim
