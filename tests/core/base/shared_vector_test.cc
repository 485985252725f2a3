// SharedVector: copies share one array until one is changed, a change is never seen through
// another copy, and it reads and compares as the vector it holds.
#include "core/base/shared_vector.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ksim {
namespace {

TEST(SharedVectorTest, CopiesShareUntilOneIsChanged) {
  SharedVector<std::string> original(std::vector<std::string>{"a", "b", "c"});
  SharedVector<std::string> copy = original;
  EXPECT_TRUE(copy.SharesWith(original));
  EXPECT_EQ(&copy.get(), &original.get());  // one array, not two

  copy.Mutable()[1] = "changed";
  EXPECT_FALSE(copy.SharesWith(original));
  EXPECT_EQ(original.get(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(copy.get(), (std::vector<std::string>{"a", "changed", "c"}));

  // Held alone now: changed in place, no copy.
  const std::vector<std::string>* before = &copy.get();
  copy.Mutable().push_back("d");
  EXPECT_EQ(&copy.get(), before);
  EXPECT_EQ(copy.size(), 4u);
  EXPECT_EQ(original.size(), 3u);
}

TEST(SharedVectorTest, AChangeThroughTheOriginalLeavesTheCopy) {
  SharedVector<int> original{1, 2, 3};
  const SharedVector<int> copy = original;
  original.Mutable().clear();
  EXPECT_TRUE(original.empty());
  EXPECT_EQ(copy.get(), (std::vector<int>{1, 2, 3}));
}

TEST(SharedVectorTest, ReadsAsAVector) {
  const SharedVector<int> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_FALSE(empty.SharesWith(SharedVector<int>()));  // nothing held: nothing shared

  const SharedVector<int> items{4, 5, 6};
  EXPECT_EQ(items[0], 4);
  EXPECT_EQ(items.at(2), 6);
  EXPECT_THROW((void)items.at(3), std::out_of_range);
  int sum = 0;
  for (int item : items) sum += item;
  EXPECT_EQ(sum, 15);
}

TEST(SharedVectorTest, EqualityComparesTheElements) {
  const SharedVector<int> a{1, 2};
  const SharedVector<int> b{1, 2};  // built apart: not shared, still equal
  EXPECT_FALSE(a.SharesWith(b));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, (SharedVector<int>{1, 3}));
  EXPECT_EQ(SharedVector<int>(), SharedVector<int>(std::vector<int>{}));
  SharedVector<int> grown;
  grown.Mutable().push_back(1);
  EXPECT_NE(grown, SharedVector<int>());
  EXPECT_EQ(grown, (SharedVector<int>{1}));
}

}  // namespace
}  // namespace ksim
