// The list of options SetOptions / SetDBOptions can change, written in include/shale/db.h's
// comments, against the option tables' mutable flag (options/option_tables.cc), both ways.
// The list is for readers of the public header; the table is what SetOptions obeys. A name
// in one and not the other fails here with that name.
//
// How the list is read: the comment block right above `virtual Status SetOptions(
// ColumnFamilyHandle*` holds the column-family options and the one right above
// `virtual Status SetDBOptions(` the DB options, each name in backquotes. The header is
// found through SHALE_SOURCE_DIR, the source tree (tests/CMakeLists.txt sets it).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "options/option_table.h"

namespace shale {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b);
}

// The names in backquotes in the `//` block directly above the first line that starts
// with `declaration` (after indentation). Fails the test when the declaration is absent.
std::set<std::string> ListAbove(const std::vector<std::string>& lines,
                                const std::string& declaration) {
  std::set<std::string> names;
  size_t at = 0;
  while (at < lines.size() && Trimmed(lines[at]).rfind(declaration, 0) != 0) ++at;
  if (at == lines.size()) {
    ADD_FAILURE() << "db.h has no line starting with " << declaration;
    return names;
  }
  std::string comment;
  for (size_t i = at; i-- > 0;) {
    std::string line = Trimmed(lines[i]);
    if (line.rfind("//", 0) != 0) break;
    comment = line + "\n" + comment;
  }
  for (size_t open = comment.find('`'); open != std::string::npos;) {
    size_t close = comment.find('`', open + 1);
    if (close == std::string::npos) break;
    names.insert(comment.substr(open + 1, close - open - 1));
    open = comment.find('`', close + 1);
  }
  return names;
}

std::set<std::string> MutableIn(OptionStruct which) {
  std::set<std::string> names;
  for (const OptionInfo& info : OptionsTable(which)) {
    if (info.is_mutable()) names.insert(info.name);
  }
  return names;
}

std::string Missing(const std::set<std::string>& from, const std::set<std::string>& in) {
  std::ostringstream out;
  for (const std::string& name : from) {
    if (in.count(name) == 0) out << " " << name;
  }
  return out.str();
}

void ExpectSame(const std::set<std::string>& listed, const std::set<std::string>& table,
                const std::string& method) {
  EXPECT_EQ(Missing(table, listed), "")
      << "mutable in the option table but missing from db.h's " << method << " list";
  EXPECT_EQ(Missing(listed, table), "")
      << "in db.h's " << method << " list but not a mutable option of the table";
}

class SetOptionsListTest : public testing::Test {
 protected:
  void SetUp() override {
    lines_ = ReadLines(std::string(SHALE_SOURCE_DIR) + "/include/shale/db.h");
    ASSERT_FALSE(lines_.empty()) << "cannot read include/shale/db.h under " << SHALE_SOURCE_DIR;
  }
  std::vector<std::string> lines_;
};

TEST_F(SetOptionsListTest, SetOptionsListsTheMutableColumnFamilyOptions) {
  std::set<std::string> table = MutableIn(OptionStruct::kCF);
  // A table option SetOptions could change would be listed with the column family's.
  for (const std::string& name : MutableIn(OptionStruct::kBlockBasedTable)) table.insert(name);
  ExpectSame(ListAbove(lines_, "virtual Status SetOptions(ColumnFamilyHandle*"), table,
             "SetOptions");
}

TEST_F(SetOptionsListTest, SetDBOptionsListsTheMutableDBOptions) {
  ExpectSame(ListAbove(lines_, "virtual Status SetDBOptions("), MutableIn(OptionStruct::kDB),
             "SetDBOptions");
}

// The reader above finds something to compare: both lists are non-empty.
TEST_F(SetOptionsListTest, BothListsAreFound) {
  EXPECT_FALSE(ListAbove(lines_, "virtual Status SetOptions(ColumnFamilyHandle*").empty());
  EXPECT_FALSE(ListAbove(lines_, "virtual Status SetDBOptions(").empty());
}

}  // namespace
}  // namespace shale
