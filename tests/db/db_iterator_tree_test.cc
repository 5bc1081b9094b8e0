// The tree of iterators DB::NewIterator builds (db_impl_read.cc): which sources it holds
// (memtables only when they have entries, L0 files, one iterator per deeper level) and how
// long it keeps them. Each case reads through DB iterators and compares with what was
// written; run under ASan as well, where a source freed before its iterator is reported.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "shale/db.h"
#include "tests/testutil/db_test_base.h"

namespace shale {
namespace {

class DBIteratorTreeTest : public DBTestBase {
 protected:
  DBIteratorTreeTest() : DBTestBase("db_iterator_tree") {}

  // Every entry of it from the first, as "k=v,".
  static std::string Scan(Iterator* it) {
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
    if (!it->status().ok()) out += "[" + it->status().ToString() + "]";
    return out;
  }
};

TEST_F(DBIteratorTreeTest, MemtableJoinsTheTreeOnceItHasEntries) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "1"));
  ASSERT_OK(Flush());
  // The memtable is empty: the files alone answer.
  EXPECT_EQ(Contents(), "a=1,b=1,");
  std::unique_ptr<Iterator> before(db_->NewIterator(ReadOptions()));

  // One entry in the memtable overrides a file's and another hides one.
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(Put("c", "2"));
  EXPECT_EQ(Contents(), "a=1,b=2,c=2,");
  ASSERT_OK(Delete("a"));
  EXPECT_EQ(Contents(), "b=2,c=2,");

  // An iterator made while the memtable was empty sees none of the later writes.
  EXPECT_EQ(Scan(before.get()), "a=1,b=1,");
  before->Seek("b");
  ASSERT_TRUE(before->Valid());
  EXPECT_EQ(before->value().ToString(), "1");
}

TEST_F(DBIteratorTreeTest, EmptyDatabaseAndEmptyMemtable) {
  Open();
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  EXPECT_EQ(Scan(it.get()), "");
  it->Seek("x");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("x");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());

  // Only deletions in files, nothing in the memtable.
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Flush());
  ASSERT_OK(Delete("a"));
  ASSERT_OK(Flush());
  it.reset(db_->NewIterator(ReadOptions()));
  EXPECT_EQ(Scan(it.get()), "");
}

TEST_F(DBIteratorTreeTest, KeysLongerThanTheIteratorsInlineBuffers) {
  Open();
  // Short and long keys interleaved, in the memtable and in a file, read both ways.
  auto key = [](int i) { return std::string(i % 2 == 0 ? 5 : 200, static_cast<char>('a' + i)); };
  std::string forward, backward;
  for (int i = 0; i < 8; i++) {
    ASSERT_OK(Put(key(i), std::to_string(i)));
    if (i == 3) ASSERT_OK(Flush());
    forward += key(i) + "=" + std::to_string(i) + ",";
  }
  for (int i = 7; i >= 0; i--) backward += key(i) + "=" + std::to_string(i) + ",";
  EXPECT_EQ(Contents(), forward);
  EXPECT_EQ(Contents(ReadOptions(), /*reverse=*/true), backward);
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  for (int i = 0; i < 8; i++) {
    it->Seek(key(i));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), key(i));
    it->SeekForPrev(key(i) + "~");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), key(i));
    if (i > 0) {
      it->Prev();
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(it->key().ToString(), key(i - 1));
    }
  }
}

}  // namespace
}  // namespace shale
