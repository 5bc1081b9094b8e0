// Reading through a Version: point lookups across levels (with snapshots and read
// callbacks and L0 key filters), unreadable files, the level iterator in both directions with
// seeks, and the TableCache's eviction. Over real SST files in a temporary directory; the MANIFEST
// side of VersionSet is in version_set_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/level_iterator.h"
#include "db/version_set.h"
#include "memtable/memtable_filter.h"
#include "tests/db/version_set_fixture.h"
#include "util/hash.h"

namespace shale {
namespace {

TEST_F(VersionSetTest, GetAcrossLevels) {
  NewDB();
  ASSERT_OK(Recover());
  // L1: two files with old values. L0: two newer overlapping files.
  FileMetaData l1a = BuildRange(vset_->NewFileNumber(), 0, 50, 1, 5);
  FileMetaData l1b = BuildRange(vset_->NewFileNumber(), 60, 100, 2, 6);
  FileMetaData l0old = BuildFile(vset_->NewFileNumber(), {{Key(10), 20, kTypeValue, "l0old10"},
                                                          {Key(11), 21, kTypeDeletion, ""},
                                                          {Key(12), 22, kTypeMerge, "operand"},
                                                          {Key(70), 23, kTypeValue, "l0old70"}});
  FileMetaData l0new = BuildFile(vset_->NewFileNumber(), {{Key(10), 30, kTypeValue, "l0new10"},
                                                          {Key(10), 31, kTypeSingleDeletion, ""},
                                                          {Key(40), 32, kTypeValue, "l0new40"},
                                                          {Key(61), 33, kTypeValue, "l0new61"}});
  VersionEdit edit;
  edit.AddFile(1, l1b);
  edit.AddFile(1, l1a);
  edit.AddFile(0, l0old);
  edit.AddFile(0, l0new);
  ASSERT_OK(Apply(&edit));
  // L0 is ordered newest first whatever the order of AddFile.
  EXPECT_EQ((std::vector<uint64_t>{l0new.number, l0old.number}), FileNumbers(0));
  EXPECT_EQ((std::vector<uint64_t>{l1a.number, l1b.number}), FileNumbers(1));

  SequenceNumber seq;
  EXPECT_EQ("DELETED", Get(Key(10), kMaxSequenceNumber, nullptr, &seq));
  EXPECT_EQ(31u, seq);
  EXPECT_EQ("l0new10", Get(Key(10), 30));
  EXPECT_EQ("l0old10", Get(Key(10), 29));
  EXPECT_EQ("l0old10", Get(Key(10), 20, nullptr, &seq));
  EXPECT_EQ(20u, seq);
  EXPECT_EQ("v5@" + Key(10), Get(Key(10), 19));
  EXPECT_EQ("ABSENT", Get(Key(10), 4));
  EXPECT_EQ("DELETED", Get(Key(11)));
  EXPECT_EQ("v5@" + Key(11), Get(Key(11), 20));
  EXPECT_EQ("MERGE", Get(Key(12)));
  EXPECT_EQ("l0new40", Get(Key(40)));
  EXPECT_EQ("v5@" + Key(41), Get(Key(41)));
  EXPECT_EQ("ABSENT", Get(Key(55)));      // between the L1 files
  EXPECT_EQ("ABSENT", Get(Key(61), 32));  // odd keys are not in l1b
  EXPECT_EQ("l0new61", Get(Key(61)));
  EXPECT_EQ("l0old70", Get(Key(70)));
  EXPECT_EQ("v6@" + Key(70), Get(Key(70), 22));
  EXPECT_EQ("v6@" + Key(98), Get(Key(98)));
  EXPECT_EQ("ABSENT", Get(Key(100)));
  EXPECT_EQ("ABSENT", Get("a"));
  EXPECT_EQ("ABSENT", Get("z"));

  // A callback hiding sequences 30..33 (say, uncommitted) exposes the older versions.
  struct Hide30s : public ReadCallback {
    bool IsVisibleFullCheck(SequenceNumber s) override { return s < 30 || s > 33; }
  } hide;
  EXPECT_EQ("l0old10", Get(Key(10), kMaxSequenceNumber, &hide));
  EXPECT_EQ("v5@" + Key(40), Get(Key(40), kMaxSequenceNumber, &hide));
  EXPECT_EQ("ABSENT", Get(Key(61), kMaxSequenceNumber, &hide));
}

// An L0 file's key filter decides whether a lookup searches the file: a file is skipped for a
// key its filter lacks (here on purpose, to show the filter is asked), and searched for one
// it holds. A file moved out of L0 drops its filter.
TEST_F(VersionSetTest, L0KeyFiltersDecideWhichFilesAreSearched) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData l1 = BuildRange(vset_->NewFileNumber(), 0, 100, 1, 5);
  FileMetaData a = BuildFile(vset_->NewFileNumber(),
                             {{Key(10), 30, kTypeValue, "a10"}, {Key(20), 31, kTypeValue, "a20"}});
  auto a_filter = std::make_shared<MemTableFilter>(64);
  a_filter->Add(Hash64(Key(10)), false);  // Key(20) left out
  a.key_filter = a_filter;
  FileMetaData b = BuildFile(vset_->NewFileNumber(),
                             {{Key(30), 20, kTypeValue, "b30"}, {Key(40), 21, kTypeDeletion, ""}});
  auto b_filter = std::make_shared<MemTableFilter>(64);
  b_filter->Add(Hash64(Key(30)), false);
  b_filter->Add(Hash64(Key(40)), false);
  b.key_filter = b_filter;
  VersionEdit edit;
  edit.AddFile(1, l1);
  edit.AddFile(0, a);
  edit.AddFile(0, b);
  ASSERT_OK(Apply(&edit));

  EXPECT_EQ("a10", Get(Key(10)));
  EXPECT_EQ("v5@" + Key(20), Get(Key(20)));  // a's filter says no: a is not searched
  EXPECT_EQ("b30", Get(Key(30)));
  EXPECT_EQ("DELETED", Get(Key(40)));
  EXPECT_EQ("v5@" + Key(50), Get(Key(50)));

  // MultiGet asks the same filters.
  const std::vector<int> ids = {10, 20, 30, 40, 50};
  std::vector<std::unique_ptr<LookupKey>> lkeys;
  for (int id : ids) lkeys.push_back(std::make_unique<LookupKey>(Key(id), kMaxSequenceNumber));
  std::vector<std::string> values(ids.size());
  std::vector<VersionGetItem> items(ids.size());
  std::vector<VersionGetItem*> ptrs;
  for (size_t i = 0; i < ids.size(); i++) {
    items[i].key = lkeys[i].get();
    items[i].value = &values[i];
    ptrs.push_back(&items[i]);
  }
  Version* v = Current();
  v->MultiGet(ReadOptions(), ptrs.data(), ptrs.size(), nullptr);
  v->Unref();
  for (const VersionGetItem& item : items) ASSERT_TRUE(item.found);
  EXPECT_EQ("a10", values[0]);
  EXPECT_EQ("v5@" + Key(20), values[1]);
  EXPECT_EQ(1, items[1].hit_level);
  EXPECT_EQ("b30", values[2]);
  EXPECT_TRUE(items[3].status.IsNotFound());
  EXPECT_EQ(0, items[3].hit_level);
  EXPECT_EQ("v5@" + Key(50), values[4]);

  // a moves to L2 (nothing there overlaps it) and gives its filter back; b keeps its own.
  VersionEdit move;
  move.DeleteFile(0, a.number);
  move.AddFile(2, a);
  ASSERT_OK(Apply(&move));
  v = Current();
  ASSERT_EQ(1u, v->files(2).size());
  EXPECT_EQ(nullptr, v->files(2)[0]->key_filter);
  ASSERT_EQ(1u, v->files(0).size());
  EXPECT_EQ(b_filter, v->files(0)[0]->key_filter);
  v->Unref();
}

TEST_F(VersionSetTest, GetReportsUnreadableFile) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData f = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  VersionEdit edit;
  edit.AddFile(1, f);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(Env::Default()->DeleteFile(TableFileName(dbname_, f.number)));
  const std::string r = Get(Key(3));
  EXPECT_EQ(0u, r.find("ERROR")) << r;
  EXPECT_EQ("ABSENT", Get(Key(30)));  // no file covers it: nothing is opened
}

// Scans an iterator both ways and checks every seek against the sorted list of keys.
void CheckIterator(InternalIterator* iter, const std::vector<std::string>& keys,
                   const InternalKeyComparator& icmp, const std::vector<std::string>& probes) {
  std::vector<std::string> forward;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) forward.push_back(iter->key().ToString());
  ASSERT_OK(iter->status());
  EXPECT_EQ(keys, forward);
  std::vector<std::string> backward;
  for (iter->SeekToLast(); iter->Valid(); iter->Prev()) backward.push_back(iter->key().ToString());
  ASSERT_OK(iter->status());
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(keys, backward);

  auto lower = [&](const std::string& t) {
    return std::lower_bound(
        keys.begin(), keys.end(), t,
        [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
  };
  for (const std::string& t : probes) {
    auto it = lower(t);
    iter->Seek(t);
    if (it == keys.end()) {
      EXPECT_FALSE(iter->Valid());
    } else {
      ASSERT_TRUE(iter->Valid());
      EXPECT_EQ(*it, iter->key().ToString());
      // Direction changes after a seek.
      iter->Prev();
      if (it == keys.begin()) {
        EXPECT_FALSE(iter->Valid());
      } else {
        ASSERT_TRUE(iter->Valid());
        EXPECT_EQ(*(it - 1), iter->key().ToString());
      }
    }
    // Last key <= t.
    auto up = std::upper_bound(
        keys.begin(), keys.end(), t,
        [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
    iter->SeekForPrev(t);
    if (up == keys.begin()) {
      EXPECT_FALSE(iter->Valid());
    } else {
      ASSERT_TRUE(iter->Valid());
      EXPECT_EQ(*(up - 1), iter->key().ToString());
      iter->Next();
      if (up == keys.end()) {
        EXPECT_FALSE(iter->Valid());
      } else {
        ASSERT_TRUE(iter->Valid());
        EXPECT_EQ(*up, iter->key().ToString());
      }
    }
  }
}

TEST_F(VersionSetTest, LevelIterator) {
  NewDB();
  ASSERT_OK(Recover());
  std::vector<FileMetaData> files = {
      BuildRange(vset_->NewFileNumber(), 0, 20, 2, 5),
      BuildFile(vset_->NewFileNumber(), {{Key(30), 9, kTypeValue, "a"},
                                         {Key(30), 7, kTypeDeletion, ""},
                                         {Key(35), 8, kTypeValue, "b"}}),
      BuildRange(vset_->NewFileNumber(), 41, 60, 3, 6),
      BuildRange(vset_->NewFileNumber(), 100, 102, 1, 7),
  };
  VersionEdit edit;
  std::vector<std::string> keys;
  for (const FileMetaData& f : files) edit.AddFile(2, f);
  ASSERT_OK(Apply(&edit));
  for (const FileMetaData& f : files) {
    std::unique_ptr<InternalIterator> it(table_cache_->NewIterator(ReadOptions(), f));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
    ASSERT_OK(it->status());
  }
  ASSERT_EQ(10u + 3 + 7 + 2, keys.size());

  std::vector<std::string> probes = {InternalKey("a", 1, kTypeValue).Encode().ToString(),
                                     InternalKey("z", 1, kTypeValue).Encode().ToString()};
  for (int i = -1; i < 105; i++) {
    for (SequenceNumber seq : {SequenceNumber{0}, SequenceNumber{8}, kMaxSequenceNumber}) {
      probes.push_back(InternalKey(Key(i), seq, kValueTypeForSeek).Encode().ToString());
    }
  }
  Version* v = Current();
  {
    std::unique_ptr<InternalIterator> iter(
        NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &v->files(2)));
    CheckIterator(iter.get(), keys, icmp_, probes);
  }
  // The same through AddIterators, which keeps the Version alive by itself.
  std::vector<InternalIterator*> iters;
  v->AddIterators(ReadOptions(), &iters);
  v->Unref();
  ASSERT_EQ(1u, iters.size());
  {
    VersionEdit drop;
    for (const FileMetaData& f : files) drop.DeleteFile(2, f.number);
    ASSERT_OK(Apply(&drop));
  }
  std::set<uint64_t> live;
  vset_->AddLiveFiles(&live);
  EXPECT_EQ(files.size(), live.size());  // still pinned by the iterator's Version
  CheckIterator(iters[0], keys, icmp_, probes);
  delete iters[0];
  live.clear();
  vset_->AddLiveFiles(&live);
  EXPECT_TRUE(live.empty());

  // Empty level list.
  std::vector<FileMetaPtr> none;
  std::unique_ptr<InternalIterator> empty(
      NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &none));
  CheckIterator(empty.get(), {}, icmp_, probes);
}

TEST_F(VersionSetTest, LevelIteratorStopsAtUnreadableFile) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 10, 20, 1, 5);
  FileMetaData c = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 5);
  VersionEdit edit;
  edit.AddFile(1, a);
  edit.AddFile(1, b);
  edit.AddFile(1, c);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(CorruptFile(TableFileName(dbname_, b.number), -10, 4));  // breaks the footer
  Version* v = Current();
  std::unique_ptr<InternalIterator> iter(
      NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &v->files(1)));
  int n = 0;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) n++;
  EXPECT_EQ(10, n);  // a's entries, then the error; c is not reached silently
  EXPECT_TRUE(iter->status().IsCorruption()) << iter->status().ToString();
  iter->SeekToLast();
  n = 0;
  for (; iter->Valid(); iter->Prev()) n++;
  EXPECT_EQ(10, n);
  EXPECT_FALSE(iter->status().ok());
  // Seeking into a healthy file works again.
  iter->Seek(InternalKey(Key(25), kMaxSequenceNumber, kValueTypeForSeek).Encode());
  ASSERT_TRUE(iter->Valid());
  EXPECT_OK(iter->status());
  EXPECT_EQ(Key(25), ExtractUserKey(iter->key()).ToString());
  iter.reset();
  v->Unref();
}

TEST_F(VersionSetTest, TableCacheEvictsButKeepsReadersInUse) {
  NewDB();
  ASSERT_OK(Reopen(/*max_open_files=*/2));
  std::vector<FileMetaData> files;
  for (int i = 0; i < 4; i++) {
    files.push_back(BuildRange(vset_->NewFileNumber(), i * 10, i * 10 + 10, 1, 5));
  }
  std::vector<std::unique_ptr<InternalIterator>> iters;
  for (const FileMetaData& f : files) {
    iters.emplace_back(table_cache_->NewIterator(ReadOptions(), f));
    EXPECT_LE(table_cache_->TEST_NumCached(), 2u);
  }
  EXPECT_EQ(2u, table_cache_->TEST_NumCached());
  // Every iterator still reads its (possibly evicted) reader.
  for (size_t i = 0; i < iters.size(); i++) {
    iters[i]->SeekToFirst();
    ASSERT_TRUE(iters[i]->Valid());
    EXPECT_EQ(Key(static_cast<int>(i) * 10), ExtractUserKey(iters[i]->key()).ToString());
  }
  table_cache_->Evict(files[3].number);
  table_cache_->Evict(files[3].number);  // twice is harmless
  EXPECT_EQ(1u, table_cache_->TEST_NumCached());
  iters[3]->Next();
  ASSERT_TRUE(iters[3]->Valid());
  iters.clear();

  // A failed open is not cached: once the file is back, it opens.
  const std::string fname = TableFileName(dbname_, files[0].number);
  ASSERT_OK(Env::Default()->RenameFile(fname, fname + ".away"));
  table_cache_->Evict(files[0].number);
  std::unique_ptr<InternalIterator> bad(table_cache_->NewIterator(ReadOptions(), files[0]));
  EXPECT_FALSE(bad->Valid());
  EXPECT_FALSE(bad->status().ok());
  ASSERT_OK(Env::Default()->RenameFile(fname + ".away", fname));
  std::shared_ptr<TableReader> reader;
  EXPECT_OK(table_cache_->FindTable(files[0], &reader));
}

}  // namespace
}  // namespace shale
