// DeleteFilesInRange(s) (db/delete_files_in_range.h): which files of a level lie within a
// range after the clean cut; on a DB, that exactly those files at levels >= 1 go, in every
// family asked and no other, include_end, L0 files staying, open iterators keeping what they
// read, older versions showing again as RocksDB documents, the refusals; a model test with
// snapshots over random writes, flushes, compactions and removals; and removals while
// writers and compactions run (run under ThreadSanitizer too).
#include "db/delete_files_in_range.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/convenience.h"
#include "shale/iterator.h"
#include "shale/metadata.h"
#include "shale/utilities/stackable_db.h"
#include "tests/testutil/db_test_base.h"

namespace shale {
namespace {

FileMetaPtr File(const std::string& smallest, const std::string& largest) {
  auto f = std::make_shared<FileMetaData>();
  f->smallest = InternalKey(smallest, 5, kTypeValue);
  f->largest = InternalKey(largest, 4, kTypeValue);
  return f;
}

// One level: [a c] [d f] [f h] [i k] [l n]; the second and third share user key f.
TEST(FilesWithinRangeTest, WhollyInsideAndCleanCut) {
  const std::vector<FileMetaPtr> files = {File("a", "c"), File("d", "f"), File("f", "h"),
                                          File("i", "k"), File("l", "n")};
  const Comparator* ucmp = BytewiseComparator();
  struct Case {
    const char* begin;  // null: unbounded
    const char* end;
    size_t first, last;
  } cases[] = {
      {"a", "n", 0, 5},
      {nullptr, nullptr, 0, 5},
      {"b", "n", 1, 5},
      {"a", "m", 0, 4},
      {"i", "k", 3, 4},
      {"0", "z", 0, 5},
      {"d", "g", 1, 1},  // [d f] alone would split
                         // f from [f h]
      {"e", "k", 3, 4},  // [f h] alone likewise
      {"c", "d", 1, 1},
      {"z", "a", 5, 5},
      {"j", "j", 4, 4},
      {nullptr, "c", 0, 1},
      {"l", nullptr, 4, 5},
  };
  for (const Case& c : cases) {
    const Slice b(c.begin != nullptr ? c.begin : ""), e(c.end != nullptr ? c.end : "");
    const auto [first, last] = FilesWithinRange(files, ucmp, c.begin != nullptr ? &b : nullptr,
                                                c.end != nullptr ? &e : nullptr);
    EXPECT_EQ(last - first, c.last - c.first)
        << (c.begin ? c.begin : "null") << " .. " << (c.end ? c.end : "null");
    if (c.last > c.first) {
      EXPECT_EQ(first, c.first) << (c.begin ? c.begin : "null") << " .. "
                                << (c.end ? c.end : "null");
    }
  }
  EXPECT_EQ(FilesWithinRange({}, ucmp, nullptr, nullptr), std::make_pair(size_t{0}, size_t{0}));
}

class DeleteFilesInRangeTest : public DBTestBase {
 protected:
  DeleteFilesInRangeTest() : DBTestBase("delete_files_in_range") {
    options_.disable_auto_compactions = true;
    options_.target_file_size_base = 4 << 10;  // a file per ~30 keys of 100 bytes
    options_.write_buffer_size = 1 << 20;
  }

  // 100 bytes that do not compress (files are cut by their size), then the round.
  static std::string Value(int i, int round = 0) {
    std::mt19937 rnd(static_cast<uint32_t>(i * 131 + round));
    std::string v(100, ' ');
    for (char& c : v) c = static_cast<char>('!' + rnd() % 90);
    return v + std::to_string(round);
  }
  // Keys [from, to) with Value(i, round), compacted into files of about 4 KiB at levels
  // >= 1: written twice, into two L0 files, so that the compaction rewrites them (a lone
  // file would move down whole).
  void Fill(int from, int to, int round = 0, ColumnFamilyHandle* cf = nullptr) {
    if (cf == nullptr) cf = db_->DefaultColumnFamily();
    for (int pass = 0; pass < 2; pass++) {
      for (int i = from; i < to; i++) {
        ASSERT_OK(db_->Put(WriteOptions(), cf, Key(i), Value(i, round)));
      }
      ASSERT_OK(db_->Flush(FlushOptions(), cf));
    }
    ASSERT_OK(db_->CompactRange(CompactRangeOptions(), cf, nullptr, nullptr));
  }
  // Files per level: (smallest, largest, number).
  struct FileInfo {
    std::string smallest, largest;
    uint64_t number;
  };
  std::vector<std::vector<FileInfo>> Levels(ColumnFamilyHandle* cf = nullptr) {
    ColumnFamilyMetaData meta;
    db_->GetColumnFamilyMetaData(cf != nullptr ? cf : db_->DefaultColumnFamily(), &meta);
    std::vector<std::vector<FileInfo>> out;
    for (const LevelMetaData& level : meta.levels) {
      out.emplace_back();
      for (const SstFileMetaData& f : level.files) {
        out.back().push_back({f.smallestkey, f.largestkey, f.file_number});
      }
    }
    return out;
  }
  Status DeleteRange(const std::string& begin, const std::string& end, bool include_end = true,
                     ColumnFamilyHandle* cf = nullptr) {
    const Slice b(begin), e(end);
    return DeleteFilesInRange(db_.get(), cf != nullptr ? cf : db_->DefaultColumnFamily(), &b, &e,
                              include_end);
  }
  std::string GetCf(ColumnFamilyHandle* cf, const std::string& k) {
    std::string v;
    Status s = db_->Get(ReadOptions(), cf, k, &v);
    return s.ok() ? v : s.IsNotFound() ? "NOT_FOUND" : s.ToString();
  }
};

TEST_F(DeleteFilesInRangeTest, RemovesExactlyTheFilesWhollyInside) {
  Open();
  Fill(0, 1000);
  const auto before = Levels();
  size_t deep_files = 0;
  for (size_t l = 1; l < before.size(); l++) deep_files += before[l].size();
  ASSERT_GT(deep_files, 10u) << FilesPerLevel();
  ASSERT_OK(DeleteRange(Key(200), Key(600)));
  // Each file at levels >= 1 went if and only if its keys all lie in [200, 600].
  std::set<uint64_t> left;
  for (const auto& level : Levels()) {
    for (const FileInfo& f : level) left.insert(f.number);
  }
  size_t removed = 0;
  for (size_t l = 1; l < before.size(); l++) {
    for (const FileInfo& f : before[l]) {
      const bool inside = f.smallest >= Key(200) && f.largest <= Key(600);
      EXPECT_EQ(left.count(f.number), inside ? 0u : 1u) << f.smallest << " .. " << f.largest;
      if (inside) {
        removed++;
        char name[32];
        snprintf(name, sizeof(name), "/%06llu.sst", static_cast<unsigned long long>(f.number));
        EXPECT_TRUE(options_.env->FileExists(dbname_ + name).IsNotFound()) << name;
      }
    }
  }
  EXPECT_GE(removed, 3u);
  int missing = 0;
  for (int i = 0; i < 1000; i++) {
    const std::string v = Get(Key(i));
    if (v == "NOT_FOUND") {
      missing++;
      EXPECT_TRUE(i >= 200 && i <= 600) << i;
    } else {
      EXPECT_EQ(v, Value(i)) << i;
    }
  }
  EXPECT_GT(missing, 100);
  // Recorded in the MANIFEST: the same after a reopen.
  Reopen();
  for (int i = 0; i < 1000; i++) {
    if (i < 200 || i > 600) ASSERT_EQ(Get(Key(i)), Value(i)) << i;
  }
  int missing_after = 0;
  for (int i = 200; i <= 600; i++) missing_after += Get(Key(i)) == "NOT_FOUND";
  EXPECT_EQ(missing_after, missing);
}

TEST_F(DeleteFilesInRangeTest, IncludeEndKeepsAFileEndingAtEnd) {
  Open();
  Fill(0, 500);
  const auto levels = Levels();
  size_t level = 1;
  while (level < levels.size() && levels[level].size() < 3) level++;
  ASSERT_LT(level, levels.size()) << FilesPerLevel();
  const FileInfo f = levels[level][1];
  ASSERT_OK(DeleteRange(f.smallest, f.largest, /*include_end=*/false));
  EXPECT_EQ(Levels()[level].size(), levels[level].size());
  EXPECT_EQ(Get(f.smallest).size(), 101u);
  ASSERT_OK(DeleteRange(f.smallest, f.largest, /*include_end=*/true));
  EXPECT_EQ(Levels()[level].size(), levels[level].size() - 1);
  EXPECT_EQ(Get(f.smallest), "NOT_FOUND");
  EXPECT_EQ(Get(f.largest), "NOT_FOUND");
}

TEST_F(DeleteFilesInRangeTest, Level0FilesStay) {
  Open();
  Fill(0, 1000);
  for (int i = 300; i < 310; i++) ASSERT_OK(Put(Key(i), Value(i, 1)));
  ASSERT_OK(Flush());
  ASSERT_EQ(Levels()[0].size(), 1u);
  // Every file lies within the whole key space; only the L0 one stays.
  ASSERT_OK(DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), nullptr, nullptr));
  EXPECT_EQ(FilesPerLevel(), "1");
  for (int i = 0; i < 1000; i++) {
    EXPECT_EQ(Get(Key(i)), i >= 300 && i < 310 ? Value(i, 1) : "NOT_FOUND") << i;
  }
}

TEST_F(DeleteFilesInRangeTest, OpenIteratorKeepsReadingWhatItHad) {
  Open();
  Fill(0, 1000);
  const Snapshot* snapshot = db_->GetSnapshot();
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  ASSERT_OK(DeleteRange(Key(100), Key(900)));
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    ASSERT_EQ(it->key().ToString(), Key(n));
    ASSERT_EQ(it->value().ToString(), Value(n));
  }
  ASSERT_OK(it->status());
  EXPECT_EQ(n, 1000);
  it.reset();
  // A snapshot does not keep the files (RocksDB: "Snapshots before the delete might not see
  // the data in the given range").
  EXPECT_EQ(Get(Key(500), snapshot), "NOT_FOUND");
  EXPECT_EQ(Get(Key(50), snapshot), Value(50));
  db_->ReleaseSnapshot(snapshot);
  ASSERT_OK(WaitForCompact());  // sweeps the files the iterator held
  std::vector<std::string> children;
  ASSERT_OK(options_.env->GetChildren(dbname_, &children));
  size_t tables = 0;
  for (const std::string& c : children) tables += c.size() > 4 && c.substr(c.size() - 4) == ".sst";
  size_t listed = 0;
  for (const auto& level : Levels()) listed += level.size();
  EXPECT_EQ(tables, listed);
}

TEST_F(DeleteFilesInRangeTest, OlderVersionsInFilesThatStayShowAgain) {
  Open();
  // Key 500's old value in a file at L2 that also holds keys 0 and 999.
  ASSERT_OK(Put(Key(0), "x"));
  ASSERT_OK(Put(Key(500), "old"));
  ASSERT_OK(Put(Key(999), "x"));
  ASSERT_OK(Flush());
  CompactRangeOptions cro;
  cro.change_level = true;
  cro.target_level = 2;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  ASSERT_EQ(FilesPerLevel(), "0,0,1");
  // Its deletion in a file of keys 490..510 that an automatic compaction puts at L1.
  ASSERT_OK(db_->SetOptions(
      {{"disable_auto_compactions", "false"}, {"level0_file_num_compaction_trigger", "1"}}));
  for (int i = 490; i <= 510; i++) {
    ASSERT_OK(i == 500 ? Delete(Key(i)) : Put(Key(i), Value(i)));
  }
  ASSERT_OK(Flush());
  ASSERT_OK(WaitForCompact());
  ASSERT_EQ(FilesPerLevel(), "0,1,1");
  ASSERT_EQ(Get(Key(500)), "NOT_FOUND");
  ASSERT_OK(DeleteRange(Key(480), Key(520)));
  EXPECT_EQ(FilesPerLevel(), "0,0,1");
  // The deletion went with its file; the old value shows again, as RocksDB documents.
  EXPECT_EQ(Get(Key(500)), "old");
  EXPECT_EQ(Get(Key(495)), "NOT_FOUND");
  EXPECT_EQ(Get(Key(0)), "x");
}

TEST_F(DeleteFilesInRangeTest, OnlyTheFamilyAskedAndSeveralRanges) {
  Open();
  ColumnFamilyHandle* other = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(options_), "other", &other));
  Fill(0, 1000);
  Fill(0, 1000, 0, other);
  const std::string k[] = {Key(100), Key(300), Key(600), Key(800)};
  const Slice s[] = {k[0], k[1], k[2], k[3]};
  const RangePtr ranges[] = {{&s[0], &s[1]}, {&s[2], &s[3]}, {&s[0], &s[1]}};
  ASSERT_OK(DeleteFilesInRanges(db_.get(), other, ranges, 3));
  int missing = 0;
  for (int i = 0; i < 1000; i++) {
    EXPECT_EQ(Get(Key(i)), Value(i)) << i;
    const std::string v = GetCf(other, Key(i));
    if (v == "NOT_FOUND") {
      missing++;
      EXPECT_TRUE((i >= 100 && i <= 300) || (i >= 600 && i <= 800)) << i;
    } else {
      EXPECT_EQ(v, Value(i)) << i;
    }
  }
  EXPECT_GT(missing, 200);
  ASSERT_OK(db_->DestroyColumnFamilyHandle(other));
}

TEST_F(DeleteFilesInRangeTest, Refusals) {
  Open();
  Fill(0, 200);
  const std::string bk = Key(0), ek = Key(199);
  const Slice b(bk), e(ek);
  EXPECT_TRUE(DeleteFilesInRange(nullptr, db_->DefaultColumnFamily(), &b, &e).IsInvalidArgument());
  EXPECT_TRUE(DeleteFilesInRange(db_.get(), nullptr, &b, &e).IsInvalidArgument());
  EXPECT_TRUE(
      DeleteFilesInRanges(db_.get(), db_->DefaultColumnFamily(), nullptr, 1).IsInvalidArgument());
  ASSERT_OK(DeleteFilesInRanges(db_.get(), db_->DefaultColumnFamily(), nullptr, 0));
  // begin after end selects nothing, as in RocksDB.
  ASSERT_OK(DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), &e, &b));
  // A handle of another DB.
  Options other_options = options_;
  std::unique_ptr<DB> other;
  {
    DB* raw = nullptr;
    ASSERT_OK(DB::Open(other_options, dbname_ + "_other", &raw));
    other.reset(raw);
  }
  EXPECT_TRUE(
      DeleteFilesInRange(db_.get(), other->DefaultColumnFamily(), &b, &e).IsInvalidArgument());
  other.reset();
  ASSERT_OK(DestroyDB(dbname_ + "_other", other_options));
  // A dropped family.
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(options_), "gone", &cf));
  ASSERT_OK(db_->DropColumnFamily(cf));
  EXPECT_TRUE(DeleteFilesInRange(db_.get(), cf, &b, &e).IsColumnFamilyDropped());
  ASSERT_OK(db_->DestroyColumnFamilyHandle(cf));
  // A read-only instance writes no MANIFEST.
  Close();
  {
    DB* raw = nullptr;
    ASSERT_OK(DB::OpenForReadOnly(options_, dbname_, &raw));
    std::unique_ptr<DB> read_only(raw);
    EXPECT_TRUE(DeleteFilesInRange(raw, raw->DefaultColumnFamily(), &b, &e).IsNotSupported());
  }
  Open();
  // Nothing was removed by any of these.
  for (int i = 0; i < 200; i++) ASSERT_EQ(Get(Key(i)), Value(i)) << i;
  // Through a StackableDB, the DB beneath does it.
  db_.reset(new StackableDB(db_.release()));
  ASSERT_OK(DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), &b, &e));
  EXPECT_EQ(Get(Key(100)), "NOT_FOUND");
}

// Random Puts, Deletes and DeleteRanges over 300 keys, flushes, compactions of random
// ranges, reopens,
// snapshots, and removals of random ranges (include_end either way). After each removal a
// key outside the range reads as the model says, a key inside as one of the values it ever
// had or absent (the model then takes what it reads), a scan agrees with the Gets, and
// every file left at levels >= 1 within the range shares a boundary key with a neighbour
// (the clean cut; no compaction runs here). A snapshot sees every key outside the ranges
// removed since it was taken as it saw it then.
TEST_F(DeleteFilesInRangeTest, ModelWithSnapshots) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rnd(seed);
  options_.target_file_size_base = 2 << 10;
  Open();
  constexpr int kKeys = 300;
  std::map<int, std::string> model;
  std::vector<std::set<std::string>> history(kKeys, std::set<std::string>{"NOT_FOUND"});
  struct Held {
    const Snapshot* snapshot;
    std::map<int, std::string> model;
    std::vector<std::pair<int, int>> removed;
  };
  std::vector<Held> held;
  auto release_all = [&] {
    for (Held& h : held) db_->ReleaseSnapshot(h.snapshot);
    held.clear();
  };
  auto expected = [](const std::map<int, std::string>& m, int k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("NOT_FOUND") : it->second;
  };
  int serial = 0, removals = 0, files_removed = 0;
  for (int step = 0; step < 600 && !HasFatalFailure(); step++) {
    const int op = static_cast<int>(rnd() % 100);
    const int k = static_cast<int>(rnd() % kKeys);
    if (op < 5) {
      // A range tombstone over [k, k + 1 .. 30): files then carry it, and their bounds
      // grow to cover it.
      const int end = std::min(kKeys, k + 1 + static_cast<int>(rnd() % 30));
      ASSERT_OK(db_->DeleteRange(WriteOptions(), Key(k), Key(end)));
      model.erase(model.lower_bound(k), model.lower_bound(end));
    } else if (op < 60) {
      if (rnd() % 4 == 0) {
        ASSERT_OK(Delete(Key(k)));
        model.erase(k);
      } else {
        const std::string v = Value(k, ++serial);
        ASSERT_OK(Put(Key(k), v));
        model[k] = v;
        history[k].insert(v);
      }
    } else if (op < 70) {
      ASSERT_OK(Flush());
    } else if (op < 76) {
      const int j = static_cast<int>(rnd() % kKeys);
      const std::string b = Key(std::min(k, j)), e = Key(std::max(k, j));
      const Slice bs(b), es(e);
      ASSERT_OK(db_->CompactRange(CompactRangeOptions(), &bs, &es));
    } else if (op < 82) {
      if (held.size() < 3) {
        held.push_back({db_->GetSnapshot(), model, {}});
      } else {
        db_->ReleaseSnapshot(held.front().snapshot);
        held.erase(held.begin());
      }
    } else if (op < 84) {
      release_all();
      Reopen();
    } else {
      const int j = static_cast<int>(rnd() % kKeys);
      const int a = std::min(k, j), b = std::max(k, j);
      const bool include_end = rnd() % 2 == 0;
      size_t files_before = 0;
      for (const auto& level : Levels()) files_before += level.size();
      ASSERT_OK(DeleteRange(Key(a), Key(b), include_end)) << "seed " << seed;
      removals++;
      const auto levels = Levels();
      size_t files_after = 0;
      for (size_t l = 0; l < levels.size(); l++) {
        files_after += levels[l].size();
        for (size_t i = 0; l > 0 && i < levels[l].size(); i++) {
          const FileInfo& f = levels[l][i];
          if (f.smallest < Key(a) || f.largest > Key(b) || (!include_end && f.largest == Key(b))) {
            continue;
          }
          const bool shares = (i > 0 && levels[l][i - 1].largest == f.smallest) ||
                              (i + 1 < levels[l].size() && levels[l][i + 1].smallest == f.largest);
          EXPECT_TRUE(shares) << "L" << l << " " << f.smallest << " .. " << f.largest
                              << " left in [" << a << ", " << b << "], seed " << seed;
        }
      }
      files_removed += static_cast<int>(files_before - files_after);
      for (Held& h : held) h.removed.emplace_back(a, b);
      for (int key = 0; key < kKeys; key++) {
        const std::string v = Get(Key(key));
        if (key < a || key > b) {
          ASSERT_EQ(v, expected(model, key)) << key << ", seed " << seed;
          continue;
        }
        ASSERT_EQ(history[key].count(v), 1u) << key << ": " << v << ", seed " << seed;
        if (v == "NOT_FOUND") {
          model.erase(key);
        } else {
          model[key] = v;
        }
      }
      std::string listing;
      for (const auto& [key, v] : model) listing += Key(key) + "=" + v + ",";
      ASSERT_EQ(Contents(), listing) << "seed " << seed;
      for (const Held& h : held) {
        for (int key = 0; key < kKeys; key++) {
          bool removed = false;
          for (const auto& [ra, rb] : h.removed) removed = removed || (key >= ra && key <= rb);
          const std::string v = Get(Key(key), h.snapshot);
          if (removed) {
            ASSERT_EQ(history[key].count(v), 1u) << key << " at a snapshot, seed " << seed;
          } else {
            ASSERT_EQ(v, expected(h.model, key)) << key << " at a snapshot, seed " << seed;
          }
        }
      }
    }
  }
  release_all();
  EXPECT_GT(removals, 20);
  EXPECT_GT(files_removed, 0) << "seed " << seed;
}

// Two writers (with flushes) and automatic compactions run while a third thread removes
// files over random ranges of the "b" keys and a fourth reads the "a" keys, written before
// and never touched: every removal answers OK, every "a" key always reads back, and after
// the threads the DB reopens with the "a" keys whole.
TEST_F(DeleteFilesInRangeTest, WhileWritersAndCompactionsRun) {
  const uint64_t seed = TestSeed();
  options_.disable_auto_compactions = false;
  options_.write_buffer_size = 64 << 10;
  options_.level0_file_num_compaction_trigger = 2;
  options_.target_file_size_base = 8 << 10;
  options_.max_bytes_for_level_base = 64 << 10;
  options_.max_background_jobs = 4;
  Open();
  constexpr int kStable = 400, kVolatile = 2000;
  for (int i = 0; i < kStable; i++) ASSERT_OK(Put("a" + Key(i), Value(i)));
  ASSERT_OK(Flush());
  std::atomic<bool> failed{false};
  std::atomic<int> removals{0}, written{0}, writers_done{0};
  auto check = [&](bool ok) {
    if (!ok) failed = true;
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; w++) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rnd(seed + w);
      for (int n = 0; n < 6000 && !failed; n++) {
        const int k = static_cast<int>(rnd() % kVolatile);
        check(db_->Put(WriteOptions(), "b" + Key(k), Value(k, n)).ok());
        if (n % 1000 == 999) check(db_->Flush(FlushOptions()).ok());
        written++;
      }
      writers_done++;
    });
  }
  threads.emplace_back([&] {
    std::mt19937_64 rnd(seed + 2);
    for (int n = 0; n < 300 && !failed; n++) {
      // Spread over the writes (40 between calls), so that files exist to be removed.
      while (written < n * 40 && writers_done < 2 && !failed) std::this_thread::yield();
      const int x = static_cast<int>(rnd() % kVolatile), y = static_cast<int>(rnd() % kVolatile);
      const std::string b = "b" + Key(std::min(x, y)), e = "b" + Key(std::max(x, y));
      const Slice bs(b), es(e);
      Status s = DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), &bs, &es, rnd() % 2);
      if (!s.ok()) ADD_FAILURE() << s.ToString();
      check(s.ok());
      removals++;
    }
  });
  threads.emplace_back([&] {
    std::mt19937_64 rnd(seed + 3);
    for (int n = 0; n < 4000 && !failed; n++) {
      const int k = static_cast<int>(rnd() % kStable);
      std::string v;
      Status s = db_->Get(ReadOptions(), "a" + Key(k), &v);
      if (!s.ok() || v != Value(k)) ADD_FAILURE() << "a" << Key(k) << ": " << s.ToString();
      check(s.ok() && v == Value(k));
      if (n % 500 == 0) {
        std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
        int count = 0;
        for (it->SeekToFirst(); it->Valid() && it->key().starts_with("a"); it->Next()) count++;
        check(it->status().ok() && count == kStable);
      }
    }
  });
  for (std::thread& t : threads) t.join();
  ASSERT_FALSE(failed) << "seed " << seed;
  EXPECT_EQ(removals.load(), 300);
  ASSERT_OK(WaitForCompact());
  // Some calls removed files (the LOG has a line for each such call, complete once closed).
  Close();
  std::ifstream log(dbname_ + "/LOG");
  std::string line;
  int calls_removing = 0;
  while (std::getline(log, line)) calls_removing += line.find("DeleteFilesInRanges: ") != line.npos;
  EXPECT_GT(calls_removing, 0) << "seed " << seed;
  Open();
  for (int i = 0; i < kStable; i++) ASSERT_EQ(Get("a" + Key(i)), Value(i)) << i;
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  ASSERT_OK(it->status());
}

}  // namespace
}  // namespace shale
