// core/base/trace_names.h against docs/trace-format.md, "Vocabulary": the header is the one place
// the trace's names are spelled, the document the one place they are explained, and neither may
// gain or lose a name without the other (as scenario keys are checked against the JSON Schema).
#include "core/base/trace_names.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace ksim {
namespace {

std::string ReadDoc() {
  std::ifstream in(std::string(KSIM_SOURCE_DIR) + "/docs/trace-format.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first cell's backquoted name of every row of the table under `heading` (a "### " line of
// the "## Vocabulary" section), in document order; empty if there is no such table.
std::vector<std::string> TableNames(const std::string& doc, const std::string& heading) {
  std::vector<std::string> names;
  const size_t section = doc.find("\n## Vocabulary\n");
  if (section == std::string::npos) return names;
  size_t at = doc.find("\n### " + heading + "\n", section);
  if (at == std::string::npos) return names;
  std::istringstream lines(doc.substr(at + 1));
  std::string line;
  std::getline(lines, line);  // the heading
  int row = 0;                // of the table: 0 is its header, 1 the rule under it
  while (std::getline(lines, line)) {
    if (line.starts_with("#")) break;
    if (!line.starts_with("| ")) {
      if (row > 0) break;
      continue;
    }
    if (row++ < 2 || !line.starts_with("| `")) continue;
    const size_t end = line.find('`', 3);
    if (end == std::string::npos) continue;
    names.push_back(line.substr(3, end - 3));
  }
  return names;
}

template <typename List>
std::vector<std::string> Names(const List& list) {
  return std::vector<std::string>(std::begin(list), std::end(list));
}

std::string Difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> sorted_a = a;
  std::vector<std::string> sorted_b = b;
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_b.begin(), sorted_b.end());
  std::vector<std::string> only;
  std::set_difference(sorted_a.begin(), sorted_a.end(), sorted_b.begin(), sorted_b.end(),
                      std::back_inserter(only));
  std::string text;
  for (const std::string& name : only) text += " " + name;
  return text.empty() ? " (none)" : text;
}

TEST(TraceNamesTest, HeaderListsAreSortedAndUnique) {
  for (const std::vector<std::string>& list : {Names(ev::kAll), Names(field::kAll)}) {
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end()));
    EXPECT_EQ(std::adjacent_find(list.begin(), list.end()), list.end());
  }
}

// The names of the Vocabulary table under `heading` equal `header`'s, in the same order.
void ExpectTableListsInOrder(const std::string& heading, const std::vector<std::string>& header) {
  const std::vector<std::string> documented = TableNames(ReadDoc(), heading);
  ASSERT_FALSE(documented.empty()) << "docs/trace-format.md has no Vocabulary/" << heading
                                   << " table";
  EXPECT_EQ(documented, header) << heading << " only in the header:"
                                << Difference(header, documented)
                                << "\nonly in the document:" << Difference(documented, header);
}

TEST(TraceNamesTest, EveryEventIsDocumentedInOrder) {
  ExpectTableListsInOrder("Events", Names(ev::kAll));
}

TEST(TraceNamesTest, EveryFieldIsDocumentedInOrder) {
  ExpectTableListsInOrder("Fields", Names(field::kAll));
}

TEST(TraceNamesTest, EveryFixedNodeIsDocumented) {
  const std::vector<std::string> documented = TableNames(ReadDoc(), "Nodes");
  for (std::string_view name : node::kAll) {
    EXPECT_NE(std::find(documented.begin(), documented.end(), name), documented.end()) << name;
  }
  const std::string broker = std::string(node::kBrokerPrefix) + "<id>";
  const std::string tool = std::string(node::kCliToolPrefix) + "<index>";
  EXPECT_NE(std::find(documented.begin(), documented.end(), broker), documented.end());
  EXPECT_NE(std::find(documented.begin(), documented.end(), tool), documented.end());
}

TEST(TraceNamesTest, NodeNamesAreBuiltFromTheirPrefixes) {
  EXPECT_EQ(node::Broker(BrokerId(3)), "broker-3");
  EXPECT_EQ(node::CliTool(12), "cli-12");
}

// The reader of the table finds what it should: a guard against a TableNames that finds nothing
// and so would make the comparisons above pass on two empty lists.
TEST(TraceNamesTest, TableReaderFindsRowsOfTheNamedTableOnly) {
  const std::string doc =
      "x\n## Vocabulary\n\n### Events\n\n| `ev` | meaning |\n| --- | --- |\n| `a` | one |\n"
      "| `b` | two |\n\n### Fields\n\n| field | meaning |\n| --- | --- |\n| `c` | three |\n";
  EXPECT_EQ(TableNames(doc, "Events"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(TableNames(doc, "Fields"), (std::vector<std::string>{"c"}));
  EXPECT_TRUE(TableNames(doc, "Nodes").empty());
}

}  // namespace
}  // namespace ksim
