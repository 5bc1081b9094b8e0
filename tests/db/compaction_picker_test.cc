// CompactionPicker and the Version's compaction support (scores, level targets, overlap
// queries), over Versions built through VersionSet::LogAndApply. The picker only reads file
// metadata, so the files named here are never written.
#include "db/compaction_picker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/table_cache.h"
#include "db/version_set.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class CompactionPickerTest : public ::testing::Test {
 protected:
  CompactionPickerTest() : dir_("compaction_picker_test"), icmp_(BytewiseComparator()) {
    options_.num_levels = 5;
    options_.level0_file_num_compaction_trigger = 4;
    options_.max_bytes_for_level_base = 1000;
    options_.max_bytes_for_level_multiplier = 10;
    options_.target_file_size_base = 100;
    options_.max_compaction_bytes = 100000;
  }

  ~CompactionPickerTest() override {
    if (vset_ != nullptr) {
      MutexLock l(&mu_);
      vset_.reset();
    }
  }

  // (Re)creates the VersionSet; call after setting options_.
  void Open() {
    table_cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
    vset_ = std::make_unique<VersionSet>(dir_.path(), &options_, table_cache_.get(), &icmp_, &mu_);
    picker_ = std::make_unique<CompactionPicker>(options_, &icmp_);
  }

  static FileMetaData Meta(uint64_t number, const std::string& smallest, const std::string& largest,
                           uint64_t size, SequenceNumber smallest_seq = 1,
                           SequenceNumber largest_seq = 1) {
    FileMetaData f;
    f.number = number;
    f.file_size = size;
    f.smallest = InternalKey(smallest, largest_seq, kTypeValue);
    f.largest = InternalKey(largest, smallest_seq, kTypeValue);
    f.smallest_seqno = smallest_seq;
    f.largest_seqno = largest_seq;
    return f;
  }

  void Add(int level, uint64_t number, const std::string& smallest, const std::string& largest,
           uint64_t size, SequenceNumber seq = 1) {
    VersionEdit edit;
    edit.AddFile(level, Meta(number, smallest, largest, size, seq, seq));
    Apply(&edit);
  }

  void Apply(VersionEdit* edit) {
    MutexLock l(vset_->db_mutex());
    ASSERT_OK(vset_->LogAndApply(edit));
  }

  // The current Version, read under the mutex (the test is single-threaded: it stays).
  Version* current() EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->current();
  }

  static std::vector<uint64_t> Numbers(const std::vector<FileMetaPtr>& files) {
    std::vector<uint64_t> r;
    for (const FileMetaPtr& f : files) r.push_back(f->number);
    return r;
  }

  // The picker's scores of the current Version (a copy; the test is single-threaded).
  LevelScores Scores() {
    MutexLock l(vset_->db_mutex());
    return picker_->ScoresOf(vset_->current());
  }

  // Everything below runs with mu_ held, as the DB would.
  std::unique_ptr<Compaction> Pick() {
    MutexLock l(vset_->db_mutex());
    return picker_->PickCompaction(vset_->current());
  }
  void Release(std::unique_ptr<Compaction> c) {
    MutexLock l(vset_->db_mutex());
    picker_->ReleaseCompaction(c.get());
    c.reset();
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  Options options_;
  Mutex mu_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> vset_;
  std::unique_ptr<CompactionPicker> picker_;
};

TEST_F(CompactionPickerTest, Level0FileCountTrigger) {
  Open();
  Add(1, 10, "a", "c", 100);
  Add(1, 11, "x", "z", 100);
  for (uint64_t i = 0; i < 3; i++) Add(0, 20 + i, "b", "d", 10, 100 + i);
  EXPECT_DOUBLE_EQ(Scores().score[0], 0.75);
  EXPECT_FALSE(picker_->NeedsCompaction(current()));
  EXPECT_EQ(Pick(), nullptr);

  Add(0, 23, "e", "f", 10, 200);  // does not overlap the others
  EXPECT_DOUBLE_EQ(Scores().score[0], 1.0);
  EXPECT_EQ(Scores().sorted[0].second, 0);
  ASSERT_TRUE(picker_->NeedsCompaction(current()));
  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->start_level(), 0);
  EXPECT_EQ(c->output_level(), 1);
  // The oldest file and every L0 file overlapping it; file 23 stays out.
  EXPECT_EQ(Numbers(c->inputs(0)), (std::vector<uint64_t>{22, 21, 20}));
  ASSERT_EQ(c->num_input_levels(), 2u);
  EXPECT_EQ(Numbers(c->inputs(1)), (std::vector<uint64_t>{10}));
  EXPECT_FALSE(c->IsTrivialMove());
  EXPECT_TRUE(c->bottommost_level());  // nothing below L1 in [a, d]
  EXPECT_EQ(c->TotalInputBytes(), 130u);
  EXPECT_EQ(c->max_output_file_size(), 100u);
  for (const FileMetaPtr& f : c->inputs(0)) EXPECT_TRUE(picker_->IsBeingCompacted(*f));

  // Marked files no longer count, and only one L0 compaction runs at a time.
  EXPECT_DOUBLE_EQ(Scores().score[0], 0.25);
  EXPECT_EQ(picker_->NumRunningCompactions(), 1);
  EXPECT_EQ(Pick(), nullptr);

  Release(std::move(c));
  EXPECT_EQ(picker_->NumRunningCompactions(), 0);
  EXPECT_DOUBLE_EQ(Scores().score[0], 1.0);
  for (const FileMetaPtr& f : current()->files(0)) EXPECT_FALSE(picker_->IsBeingCompacted(*f));
}

TEST_F(CompactionPickerTest, Level0SizeTrigger) {
  Open();
  Add(0, 20, "a", "b", 1500, 10);
  EXPECT_DOUBLE_EQ(Scores().score[0], 1.5);
  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->start_level(), 0);
  EXPECT_TRUE(c->IsTrivialMove());  // one file, nothing in L1 or L2 under it
}

TEST_F(CompactionPickerTest, LevelSizeTriggerPicksLeastOverlap) {
  Open();
  // L1 target 1000: 1500 bytes give score 1.5. L2 target 10000.
  Add(1, 10, "a", "c", 500);
  Add(1, 11, "d", "f", 500);
  Add(1, 12, "g", "i", 500);
  Add(2, 20, "a", "b", 2000);
  Add(2, 21, "h", "h", 100);
  EXPECT_EQ(Scores().level_max_bytes[1], 1000u);
  EXPECT_EQ(Scores().level_max_bytes[2], 10000u);
  EXPECT_EQ(Scores().level_max_bytes[3], 100000u);
  EXPECT_DOUBLE_EQ(Scores().score[1], 1.5);
  EXPECT_DOUBLE_EQ(Scores().score[2], 0.21);
  EXPECT_DOUBLE_EQ(Scores().score[4], 0.0);  // the last level has no score
  EXPECT_EQ(Scores().sorted[0].second, 1);
  // L1 is 500 over its target, and L2 holds 2100 bytes under 1500 of L1.
  EXPECT_EQ(Scores().estimated_compaction_needed_bytes,
            static_cast<uint64_t>(500 * (2100.0 / 1500 + 1)));

  // File 11 overlaps nothing in L2: the cheapest, and a trivial move.
  std::unique_ptr<Compaction> c1 = Pick();
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->start_level(), 1);
  EXPECT_EQ(c1->output_level(), 2);
  EXPECT_EQ(Numbers(c1->inputs(0)), std::vector<uint64_t>{11});
  EXPECT_TRUE(c1->IsTrivialMove());
  // Still 1000 bytes not being compacted in L1: score 1.0, so another pick: file 12
  // (overlap ratio 0.2) before file 10 (ratio 4).
  EXPECT_DOUBLE_EQ(Scores().score[1], 1.0);
  std::unique_ptr<Compaction> c2 = Pick();
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(Numbers(c2->inputs(0)), std::vector<uint64_t>{12});
  EXPECT_EQ(Numbers(c2->output_level_inputs()), std::vector<uint64_t>{21});
  EXPECT_FALSE(c2->IsTrivialMove());
  // 500 bytes left: below the target.
  EXPECT_EQ(Pick(), nullptr);

  // Applying the trivial move gives a Version where L1 is within its target.
  VersionEdit edit;
  c1->AddTrivialMoveEdit(&edit);
  Apply(&edit);
  EXPECT_EQ(current()->NumFiles(1), 2);
  EXPECT_EQ(current()->NumFiles(2), 3);
  Release(std::move(c1));
  Release(std::move(c2));
  EXPECT_DOUBLE_EQ(Scores().score[1], 1.0);
}

TEST_F(CompactionPickerTest, BusyOutputFilesBlockAPick) {
  Open();
  Add(1, 10, "a", "c", 1500);
  Add(2, 20, "a", "z", 20000);
  // L2's score (20000 / 10000) beats L1's (1.5): L2 -> L3 takes file 20.
  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->start_level(), 2);
  EXPECT_EQ(Numbers(c->inputs(0)), std::vector<uint64_t>{20});
  EXPECT_TRUE(c->IsTrivialMove());
  // L1 still scores 1.5, but compacting file 10 needs file 20, which is busy.
  EXPECT_DOUBLE_EQ(Scores().score[1], 1.5);
  EXPECT_TRUE(picker_->NeedsCompaction(current()));
  EXPECT_EQ(Pick(), nullptr);
  Release(std::move(c));
  c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->start_level(), 2);
}

TEST_F(CompactionPickerTest, DynamicLevelBytes) {
  options_.level_compaction_dynamic_level_bytes = true;
  Open();
  // Empty: L0 goes straight to the last level.
  EXPECT_EQ(Scores().base_level, 4);
  Add(0, 30, "a", "b", 10, 100);
  EXPECT_EQ(Scores().base_level, 4);

  // 50000 bytes at the last level: targets 50000, 5000, 1000 (max(500, base)) at L4, L3,
  // L2, so L2 is the base level and L1 is skipped.
  Add(4, 10, "a", "z", 50000);
  EXPECT_EQ(Scores().base_level, 2);
  EXPECT_EQ(Scores().level_max_bytes[1], UINT64_MAX);
  EXPECT_EQ(Scores().level_max_bytes[2], 1000u);
  EXPECT_EQ(Scores().level_max_bytes[3], 5000u);
  EXPECT_EQ(Scores().level_max_bytes[4], 50000u);

  for (uint64_t i = 1; i < 4; i++) Add(0, 30 + i, "c", "d", 10, 100 + i);
  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->start_level(), 0);
  EXPECT_EQ(c->output_level(), 2);
  EXPECT_FALSE(c->bottommost_level());  // L4 holds [a, z]
  EXPECT_FALSE(c->KeyNotExistsBeyondOutputLevel("c"));
  // Output file size grows from the base level down (multiplier 1 here).
  EXPECT_EQ(c->max_output_file_size(), 100u);
  options_.target_file_size_multiplier = 2;
  EXPECT_EQ(MaxFileSizeForLevel(options_, 2, 2), 100u);
  EXPECT_EQ(MaxFileSizeForLevel(options_, 4, 2), 400u);

  // A much bigger last level pulls the base level up to L1.
  Add(4, 11, "zz", "zzz", 2000000);
  EXPECT_EQ(Scores().base_level, 1);
}

TEST_F(CompactionPickerTest, CleanCutExpansion) {
  Open();
  // Files 10 and 11 share user key "c" (different sequence numbers), as do 11 and 12.
  VersionEdit edit;
  FileMetaData f10 = Meta(10, "a", "c", 600);
  f10.largest = InternalKey("c", 9, kTypeValue);
  FileMetaData f11 = Meta(11, "c", "c", 600);
  f11.smallest = InternalKey("c", 8, kTypeValue);
  f11.largest = InternalKey("c", 5, kTypeValue);
  FileMetaData f12 = Meta(12, "c", "e", 600);
  f12.smallest = InternalKey("c", 4, kTypeValue);
  FileMetaData f13 = Meta(13, "f", "g", 600);
  for (auto* f : {&f10, &f11, &f12, &f13}) edit.AddFile(1, *f);
  Apply(&edit);

  std::vector<FileMetaPtr> inputs{current()->files(1)[1]};
  current()->ExpandInputsToCleanCut(1, &inputs);
  EXPECT_EQ(Numbers(inputs), (std::vector<uint64_t>{10, 11, 12}));
  inputs = {current()->files(1)[3]};
  current()->ExpandInputsToCleanCut(1, &inputs);
  EXPECT_EQ(Numbers(inputs), std::vector<uint64_t>{13});

  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  // Whichever file is picked, the user key "c" is never split.
  const std::vector<uint64_t> picked = Numbers(c->inputs(0));
  if (picked != std::vector<uint64_t>{13}) {
    EXPECT_EQ(picked, (std::vector<uint64_t>{10, 11, 12}));
  }
}

TEST_F(CompactionPickerTest, OverlapQueries) {
  Open();
  Add(0, 30, "a", "c", 10, 100);
  Add(0, 31, "b", "f", 10, 101);
  Add(0, 32, "e", "g", 10, 102);
  Add(0, 33, "x", "y", 10, 103);
  Add(2, 10, "c", "e", 100);
  Add(2, 11, "h", "k", 100);
  std::vector<FileMetaPtr> inputs;
  // L0: "a".."a" reaches 30, which widens to 31 (b..f), which widens to 32 (e..g).
  InternalKey a("a", kMaxSequenceNumber, kValueTypeForSeek);
  current()->GetOverlappingInputs(0, &a, &a, &inputs);
  EXPECT_EQ(Numbers(inputs), (std::vector<uint64_t>{32, 31, 30}));
  current()->GetOverlappingInputs(0, nullptr, nullptr, &inputs);
  EXPECT_EQ(inputs.size(), 4u);
  const Slice f("f"), g("g"), i("i"), l("l"), z("z");
  current()->GetOverlappingInputsUser(2, &f, &i, &inputs);
  EXPECT_EQ(Numbers(inputs), std::vector<uint64_t>{11});
  current()->GetOverlappingInputsUser(2, &f, &g, &inputs);
  EXPECT_TRUE(inputs.empty());
  current()->GetOverlappingInputsUser(2, nullptr, &z, &inputs);
  EXPECT_EQ(inputs.size(), 2u);
  EXPECT_TRUE(current()->OverlapInLevel(2, &i, &l));
  EXPECT_FALSE(current()->OverlapInLevel(2, &f, &g));
  EXPECT_FALSE(current()->KeyNotInLevelsBelow(1, "d"));
  EXPECT_TRUE(current()->KeyNotInLevelsBelow(1, "f"));
  EXPECT_TRUE(current()->KeyNotInLevelsBelow(2, "d"));
  EXPECT_FALSE(current()->RangeNotInLevelsBelow(0, "f", "i"));
  EXPECT_TRUE(current()->RangeNotInLevelsBelow(0, "l", "z"));
  EXPECT_NE(current()->LevelSummary(Scores().base_level).find("files[4 0 2 0 0]"),
            std::string::npos);
}

TEST_F(CompactionPickerTest, TrivialMoveNeedsSmallGrandparentOverlap) {
  options_.max_compaction_bytes = 1000;
  Open();
  Add(0, 30, "a", "m", 5000, 100);  // L0 size score 5
  Add(2, 10, "a", "f", 600);
  Add(2, 11, "g", "m", 600);
  std::unique_ptr<Compaction> c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->grandparents().size(), 2u);
  EXPECT_FALSE(c->IsTrivialMove());  // 1200 grandparent bytes > 1000
  Release(std::move(c));

  Add(0, 31, "x", "y", 10, 101);  // L0 now has an overlapping-free file too
  Add(1, 12, "b", "c", 10);       // but file 30 overlaps L1 now
  c = Pick();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(c->inputs(0)), std::vector<uint64_t>{30});
  EXPECT_EQ(Numbers(c->output_level_inputs()), std::vector<uint64_t>{12});
  EXPECT_FALSE(c->IsTrivialMove());
}

TEST_F(CompactionPickerTest, ManualRangeInChunks) {
  options_.max_compaction_bytes = 350;
  Open();
  VersionEdit edit;
  for (int i = 0; i < 10; i++) {
    const std::string k(1, static_cast<char>('a' + i));
    edit.AddFile(1, Meta(10 + i, k + "1", k + "9", 100));
  }
  edit.AddFile(2, Meta(50, "c5", "d5", 100));
  Apply(&edit);

  // Whole key space, in chunks of >= 350 bytes: 4 files, then 4, then 2.
  std::vector<std::vector<uint64_t>> chunks;
  InternalKey begin_storage;
  const InternalKey* begin = nullptr;
  for (int round = 0; round < 10; round++) {
    InternalKey end_storage;
    InternalKey* end = &end_storage;
    bool conflict = true;
    std::unique_ptr<Compaction> c;
    {
      MutexLock l(vset_->db_mutex());
      c = picker_->CompactRange(vset_->current(), 1, 2, begin, nullptr, &end, &conflict);
    }
    EXPECT_FALSE(conflict);
    if (c == nullptr) break;
    EXPECT_TRUE(c->is_manual());
    chunks.push_back(Numbers(c->inputs(0)));
    // Apply it as if compacted (moved down), then continue after the chunk's end.
    VersionEdit e;
    c->AddInputDeletions(&e);
    for (const FileMetaPtr& f : c->inputs(0)) {
      FileMetaData m = *f;
      m.number += 100;
      e.AddFile(2, m);
    }
    Apply(&e);
    Release(std::move(c));
    if (end == nullptr) break;
    begin_storage = end_storage;
    begin = &begin_storage;
  }
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], (std::vector<uint64_t>{10, 11, 12, 13}));
  EXPECT_EQ(chunks[1], (std::vector<uint64_t>{14, 15, 16, 17}));
  EXPECT_EQ(chunks[2], (std::vector<uint64_t>{18, 19}));
  EXPECT_EQ(current()->NumFiles(1), 0);
}

TEST_F(CompactionPickerTest, ManualConflictsAndEmptyRanges) {
  Open();
  Add(1, 10, "a", "c", 100);
  Add(1, 11, "d", "f", 100);
  Add(2, 20, "b", "e", 100);
  InternalKey b("b", kMaxSequenceNumber, kValueTypeForSeek);
  InternalKey x("x", kMaxSequenceNumber, kValueTypeForSeek);
  InternalKey y("y", 0, kTypeDeletion);
  MutexLock l(vset_->db_mutex());
  bool conflict = true;
  InternalKey end_storage;
  InternalKey* end = &end_storage;
  // Nothing in [x, y].
  EXPECT_EQ(picker_->CompactRange(vset_->current(), 1, 2, &x, &y, &end, &conflict), nullptr);
  EXPECT_FALSE(conflict);

  end = &end_storage;
  std::unique_ptr<Compaction> c =
      picker_->CompactRange(vset_->current(), 1, 2, &b, &b, &end, &conflict);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(end, nullptr);  // covered the whole range
  EXPECT_EQ(Numbers(c->inputs(0)), std::vector<uint64_t>{10});
  EXPECT_EQ(Numbers(c->output_level_inputs()), std::vector<uint64_t>{20});
  EXPECT_TRUE(c->bottommost_level());

  // The whole of L1 includes the busy file 10.
  end = &end_storage;
  EXPECT_EQ(picker_->CompactRange(vset_->current(), 1, 2, nullptr, nullptr, &end, &conflict),
            nullptr);
  EXPECT_TRUE(conflict);
  // Bottommost rewrite of L2 into itself: busy too.
  EXPECT_EQ(picker_->CompactRange(vset_->current(), 2, 2, nullptr, nullptr, &end, &conflict),
            nullptr);
  EXPECT_TRUE(conflict);

  picker_->ReleaseCompaction(c.get());
  end = &end_storage;
  c = picker_->CompactRange(vset_->current(), 2, 2, nullptr, nullptr, &end, &conflict);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(conflict);
  EXPECT_EQ(c->start_level(), 2);
  EXPECT_EQ(c->output_level(), 2);
  EXPECT_EQ(c->num_input_levels(), 1u);
  EXPECT_FALSE(c->IsTrivialMove());
  EXPECT_TRUE(c->bottommost_level());
}

}  // namespace
}  // namespace shale
