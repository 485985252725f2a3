// SameText is ==, at every length around its inline limit and with a difference at every place;
// HashText gives equal text equal hashes, and the many short names of a run distinct ones.
#include "core/base/short_text.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace ksim {
namespace {

TEST(ShortTextTest, SameTextIsEqualityAtEveryLengthAndPlace) {
  for (size_t length = 0; length <= 40; ++length) {
    std::string a(length, 'x');
    for (size_t i = 0; i < length; ++i) a[i] = static_cast<char>('a' + i % 26);
    const std::string copy = a;
    EXPECT_TRUE(SameText(a, copy)) << length;
    EXPECT_EQ(HashText(a), HashText(copy)) << length;
    EXPECT_FALSE(SameText(a, a + "y")) << length;
    for (size_t i = 0; i < length; ++i) {
      std::string b = a;
      b[i] = static_cast<char>(b[i] ^ 0x80);  // a byte above 0x7f, at each place
      EXPECT_FALSE(SameText(a, b)) << length << " at " << i;
      EXPECT_NE(HashText(a), HashText(b)) << length << " at " << i;
    }
  }
}

TEST(ShortTextTest, HashTextTellsARunsNamesApart) {
  // Record ids, topic names, node names and their lengths' neighbours: no two share a hash.
  std::vector<std::string> names = {"", "t", "t1", "t-1", "__consumer_offsets"};
  for (int i = 0; i < 20000; ++i) names.push_back("p1-" + std::to_string(i));
  for (int i = 0; i < 1000; ++i) names.push_back("broker-" + std::to_string(i));
  for (int i = 0; i < 256; ++i) names.push_back(std::string(1, static_cast<char>(i)));
  for (int i = 0; i < 256; ++i) names.push_back(std::string(3, static_cast<char>(i)));
  std::unordered_set<std::string> distinct(names.begin(), names.end());
  std::unordered_set<size_t> hashes;
  for (const std::string& name : distinct) hashes.insert(HashText(name));
  EXPECT_EQ(hashes.size(), distinct.size());
}

}  // namespace
}  // namespace ksim
