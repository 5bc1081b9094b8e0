// DB::IngestExternalFile(s) (db/external_file_ingestion.h): where files land and with which
// sequence number, what reads and snapshots see of them, each option, each refusal with
// RocksDB's status (the DB as before and no file of the call left behind), Merge and
// Delete entries, several families at once, and reopening.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/sst_file_writer.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/external_files.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

// Appends operands with ',' (a base value first).
class Append final : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice& /*key*/, const Slice* existing, const Slice& value,
             std::string* new_value, Logger* /*logger*/) const override {
    if (existing != nullptr) new_value->assign(existing->data(), existing->size()).append(",");
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "Append"; }
};

class ExternalFileIngestionTest : public DBTestBase {
 protected:
  ExternalFileIngestionTest() : DBTestBase("external_file_ingestion") {
    options_.merge_operator = std::make_shared<Append>();
    options_.disable_auto_compactions = true;
  }

  // A new external file (outside the DB directory) holding entries.
  std::string File(const std::vector<ExternalEntry>& entries) {
    const std::string path = dir_.File("ext" + std::to_string(next_file_++) + ".sst");
    EXPECT_OK(WriteExternalFile(options_, path, entries));
    return path;
  }

  Status Ingest(const std::vector<std::string>& files,
                const IngestExternalFileOptions& o = IngestExternalFileOptions()) {
    return db_->IngestExternalFile(files, o);
  }

  // The live files' metadata, ordered by file number.
  std::vector<LiveFileMetaData> Files() {
    std::vector<LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.file_number < b.file_number; });
    return files;
  }

  // The table files in the DB directory: those live, and no other.
  void ExpectNoStrayTables() {
    std::vector<uint64_t> live;
    for (const LiveFileMetaData& f : Files()) live.push_back(f.file_number);
    EXPECT_EQ(TableFilesIn(options_.env, dbname_), live);
  }

  int next_file_ = 0;
};

TEST_F(ExternalFileIngestionTest, IntoAnEmptyDbLandsInTheLastLevelAtSequenceZero) {
  Open();
  const std::string f = File({PutEntry("a", "1"), PutEntry("b", "2"), DeleteEntry("c")});
  ASSERT_OK(Ingest({f}));
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "a=1,b=2,");
  std::vector<LiveFileMetaData> files = Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].level, options_.num_levels - 1);
  EXPECT_EQ(files[0].largest_seqno, 0u);
  EXPECT_EQ(files[0].smallestkey, "a");
  EXPECT_EQ(files[0].largestkey, "c");
  EXPECT_EQ(files[0].num_entries, 3u);
  EXPECT_EQ(files[0].num_deletions, 1u);
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 0u) << "no sequence number taken";
  EXPECT_OK(options_.env->FileExists(f)) << "copied, not moved";
  ExpectNoStrayTables();
}

TEST_F(ExternalFileIngestionTest, OverlappingTheMemtableFlushesItFirstAndReadsNewer) {
  Open();
  ASSERT_OK(Put("k1", "old"));
  ASSERT_OK(Put("z", "other"));
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  ASSERT_OK(Ingest({File({PutEntry("k1", "new"), PutEntry("k2", "new2")})}));
  EXPECT_EQ(Get("k1"), "new");
  EXPECT_EQ(Get("k2"), "new2");
  EXPECT_EQ(Get("z"), "other");
  EXPECT_EQ(db_->GetLatestSequenceNumber(), before + 1) << "one global sequence number";
  // The memtable went to L0, and the file with it (it overlaps the flushed file's keys),
  // newer.
  std::vector<LiveFileMetaData> files = Files();
  ASSERT_EQ(files.size(), 2u);
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.largest_seqno < b.largest_seqno; });
  EXPECT_EQ(files[0].largest_seqno, before);
  EXPECT_EQ(files[1].level, 0);
  EXPECT_EQ(files[1].smallest_seqno, before + 1);
  EXPECT_EQ(files[1].largest_seqno, before + 1);
  // A write after the ingestion is newer still.
  ASSERT_OK(Put("k1", "newest"));
  EXPECT_EQ(Get("k1"), "newest");
  EXPECT_EQ(Contents(), "k1=newest,k2=new2,z=other,");
  EXPECT_EQ(Contents(ReadOptions(), /*reverse=*/true), "z=other,k2=new2,k1=newest,");
}

TEST_F(ExternalFileIngestionTest, WithoutBlockingFlushAnOverlappedMemtableIsRefused) {
  Open();
  ASSERT_OK(Put("k", "mem"));
  const std::string f = File({PutEntry("k", "file")});
  IngestExternalFileOptions o;
  o.allow_blocking_flush = false;
  Status s = Ingest({f}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("External file requires flush"), std::string::npos);
  EXPECT_EQ(Get("k"), "mem");
  EXPECT_TRUE(Files().empty());
  ExpectNoStrayTables();
  // A file beside the memtable's keys needs no flush.
  ASSERT_OK(Ingest({File({PutEntry("m", "file")})}, o));
  EXPECT_EQ(Get("m"), "file");
  EXPECT_EQ(Get("k"), "mem");
  EXPECT_EQ(Files().size(), 1u) << "the memtable was not flushed";
}

TEST_F(ExternalFileIngestionTest, OverlappingFilesGetASequenceNumberAndLandAboveThem) {
  Open();
  ASSERT_OK(Put("b", "v1"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  ASSERT_OK(Put("x", "v1"));
  ASSERT_OK(Flush());
  ASSERT_EQ(FilesPerLevel(), "1,1");  // x in L0, b in L1
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  ASSERT_OK(Ingest({File({PutEntry("a", "f"), PutEntry("b", "f")})}));
  EXPECT_EQ(Get("b"), "f");
  std::vector<LiveFileMetaData> files = Files();
  ASSERT_EQ(files.size(), 3u);
  // Beside x's L0 file, but over b's keys: the level above b's.
  EXPECT_EQ(files[2].level, 0);
  EXPECT_EQ(files[2].largest_seqno, before + 1);
  // A file overlapping nothing goes to the bottom with sequence 0, snapshots or not
  // (snapshot_consistency false).
  IngestExternalFileOptions o;
  o.snapshot_consistency = false;
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(Ingest({File({PutEntry("c", "f")})}, o));
  EXPECT_EQ(Files().back().level, options_.num_levels - 1);
  // Inside a file's range but sharing none of its keys: below it, still at sequence 0.
  ASSERT_EQ(FilesPerLevel(), "2,1,0,0,0,0,1");
  ASSERT_OK(Ingest({File({PutEntry("aa", "f")})}, o));
  EXPECT_EQ(Files().back().level, options_.num_levels - 1) << "the L0 file [a, b] lacks aa";
  EXPECT_EQ(Files().back().largest_seqno, 0u);
  EXPECT_EQ(Files().back().largest_seqno, 0u);
  EXPECT_EQ(Get("c", snap), "f") << "sequence 0: older snapshots see it";
  db_->ReleaseSnapshot(snap);
  // Compaction keeps what reads saw.
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Contents(), "a=f,aa=f,b=f,c=f,x=v1,");
}

TEST_F(ExternalFileIngestionTest, SnapshotsBeforeDoNotSeeTheFilesAndAfterDo) {
  Open();
  ASSERT_OK(Put("a", "1"));
  const Snapshot* before = db_->GetSnapshot();
  ASSERT_OK(Ingest({File({PutEntry("a", "2"), PutEntry("q", "2")})}));
  const Snapshot* after = db_->GetSnapshot();
  EXPECT_EQ(Get("a", before), "1");
  EXPECT_EQ(Get("q", before), "NOT_FOUND") << "snapshot_consistency: a sequence of its own";
  EXPECT_EQ(Get("a", after), "2");
  EXPECT_EQ(Get("q", after), "2");
  ReadOptions ro;
  ro.snapshot = before;
  EXPECT_EQ(Contents(ro), "a=1,");
  ro.snapshot = after;
  EXPECT_EQ(Contents(ro), "a=2,q=2,");
  ASSERT_OK(Put("q", "3"));
  EXPECT_EQ(Get("q", after), "2");
  EXPECT_EQ(Get("q"), "3");
  // The snapshots keep their views through a compaction.
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Get("a", before), "1");
  EXPECT_EQ(Get("q", before), "NOT_FOUND");
  EXPECT_EQ(Get("q", after), "2");
  db_->ReleaseSnapshot(before);
  db_->ReleaseSnapshot(after);
}

TEST_F(ExternalFileIngestionTest, GlobalSeqnoDisabledRefusesWhatNeedsOne) {
  Open();
  ASSERT_OK(Put("k", "v"));
  ASSERT_OK(Flush());
  IngestExternalFileOptions o;
  o.allow_global_seqno = false;
  Status s = Ingest({File({PutEntry("k", "f")})}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("Global seqno is required, but disabled"), std::string::npos);
  // Files that overlap each other need one each.
  s = Ingest({File({PutEntry("m", "1")}), File({PutEntry("m", "2")})}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // A live snapshot needs one too, with snapshot_consistency.
  const Snapshot* snap = db_->GetSnapshot();
  s = Ingest({File({PutEntry("p", "1")})}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  db_->ReleaseSnapshot(snap);
  EXPECT_EQ(Contents(), "k=v,");
  ExpectNoStrayTables();
  // Nothing overlapping and no snapshot: it goes in at sequence 0.
  ASSERT_OK(Ingest({File({PutEntry("p", "1")})}, o));
  EXPECT_EQ(Contents(), "k=v,p=1,");
}

TEST_F(ExternalFileIngestionTest, FilesOverlappingEachOtherReadAsTheLastGiven) {
  Open();
  ASSERT_OK(Ingest({File({PutEntry("a", "1"), PutEntry("b", "1")}),
                    File({PutEntry("b", "2"), PutEntry("c", "2")}),
                    File({PutEntry("c", "3"), PutEntry("d", "3")})}));
  EXPECT_EQ(Contents(), "a=1,b=2,c=3,d=3,");
  EXPECT_EQ(Contents(ReadOptions(), true), "d=3,c=3,b=2,a=1,");
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 3u);
  for (const LiveFileMetaData& f : Files()) EXPECT_EQ(f.level, 0);
  Reopen();
  EXPECT_EQ(Contents(), "a=1,b=2,c=3,d=3,");
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Contents(), "a=1,b=2,c=3,d=3,");
}

TEST_F(ExternalFileIngestionTest, MergeAndDeleteEntriesApplyOverTheDbsKeys) {
  Open();
  ASSERT_OK(Put("m", "base"));
  ASSERT_OK(Put("d", "gone"));
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("m", "mem"));
  ASSERT_OK(Ingest({File({DeleteEntry("d"), MergeEntry("m", "file"), MergeEntry("n", "alone")})}));
  EXPECT_EQ(Get("d"), "NOT_FOUND");
  EXPECT_EQ(Get("m"), "base,mem,file");
  EXPECT_EQ(Get("n"), "alone");
  ASSERT_OK(Merge("m", "after"));
  EXPECT_EQ(Contents(), "m=base,mem,file,after,n=alone,");
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  Reopen();
  EXPECT_EQ(Contents(), "m=base,mem,file,after,n=alone,");
}

TEST_F(ExternalFileIngestionTest, ReopenKeepsTheFilesAndTheirSequenceNumbers) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Ingest({File({PutEntry("a", "2"), PutEntry("b", "2")})}));
  const SequenceNumber seq = db_->GetLatestSequenceNumber();
  Reopen();
  EXPECT_EQ(Contents(), "a=2,b=2,");
  EXPECT_GE(db_->GetLatestSequenceNumber(), seq);
  ASSERT_OK(Put("b", "3"));
  Reopen();
  EXPECT_EQ(Contents(), "a=2,b=3,");
  ExpectNoStrayTables();
}

TEST_F(ExternalFileIngestionTest, MoveAndLinkFiles) {
  Open();
  const std::string moved = File({PutEntry("a", "1")});
  IngestExternalFileOptions o;
  o.move_files = true;
  ASSERT_OK(Ingest({moved}, o));
  EXPECT_TRUE(options_.env->FileExists(moved).IsNotFound());
  const std::string linked = File({PutEntry("b", "1")});
  o.move_files = false;
  o.link_files = true;
  ASSERT_OK(Ingest({linked}, o));
  EXPECT_OK(options_.env->FileExists(linked));
  EXPECT_EQ(Contents(), "a=1,b=1,");
  // Both at once is refused before anything happens.
  o.move_files = true;
  const std::string f = File({PutEntry("c", "1")});
  Status s = Ingest({f}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_OK(options_.env->FileExists(f));
  // A failed move keeps the original.
  ASSERT_OK(Put("c", "mem"));
  o.link_files = false;
  o.allow_blocking_flush = false;
  s = Ingest({f}, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_OK(options_.env->FileExists(f));
  ExpectNoStrayTables();
}

TEST_F(ExternalFileIngestionTest, BadFilesAreRefusedAndLeaveNothing) {
  Open();
  ASSERT_OK(Put("k", "v"));
  ASSERT_OK(Flush());
  const std::string good = File({PutEntry("a", "1")});
  // Missing.
  Status s = Ingest({good, dir_.File("missing.sst")});
  EXPECT_FALSE(s.ok());
  // Not a table.
  const std::string junk = dir_.File("junk.sst");
  ASSERT_OK(WriteStringToFile(options_.env, std::string(4096, 'x'), junk));
  s = Ingest({good, junk});
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // A file the DB wrote itself: no external file version.
  const std::string own = dir_.File("own.sst");
  ASSERT_OK(options_.env->LinkFile(dbname_ + "/" + Files()[0].relative_filename, own));
  s = Ingest({own});
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("External file version not found"), std::string::npos);
  // Another comparator.
  Options reverse = options_;
  reverse.comparator = ReverseBytewiseComparator();
  const std::string other = dir_.File("reverse.sst");
  ASSERT_OK(WriteExternalFile(reverse, other, {PutEntry("b", "1"), PutEntry("a", "1")}));
  s = Ingest({other});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // A damaged block, found with verify_checksums_before_ingest.
  const std::string damaged = File({PutEntry("d", std::string(100, 'd'))});
  std::string contents;
  ASSERT_OK(ReadFileToString(options_.env, damaged, &contents));
  contents[10] ^= 1;
  ASSERT_OK(WriteStringToFile(options_.env, contents, damaged));
  IngestExternalFileOptions verify;
  verify.verify_checksums_before_ingest = true;
  s = Ingest({damaged}, verify);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // Nothing to ingest.
  s = Ingest({});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Contents(), "k=v,");
  ExpectNoStrayTables();
  ASSERT_OK(Ingest({good}));
  EXPECT_EQ(Contents(), "a=1,k=v,");
}

TEST_F(ExternalFileIngestionTest, RangeTombstonesCountAsOverlap) {
  Open();
  ASSERT_OK(Put("a", "1"));
  WriteBatch batch;
  ASSERT_OK(batch.DeleteRange("b", "f"));
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  // The memtable's tombstone covers c, though it holds no key near it: flushed first, and
  // the file newer than it.
  ASSERT_OK(Ingest({File({PutEntry("c", "file")})}));
  EXPECT_EQ(Get("c"), "file");
  // A table file's tombstone the same: g..k in L0 holds no point key near h.
  batch.Clear();
  ASSERT_OK(batch.DeleteRange("g", "k"));
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  ASSERT_OK(Flush());
  ASSERT_OK(Ingest({File({PutEntry("h", "file")})}));
  EXPECT_EQ(Get("h"), "file");
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Contents(), "a=1,c=file,h=file,");
}

TEST_F(ExternalFileIngestionTest, TwoWriteQueuesAreNotSupportedYet) {
  options_.two_write_queues = true;
  Open();
  Status s = Ingest({File({PutEntry("a", "1")})});
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_EQ(Contents(), "");
  ExpectNoStrayTables();
}

TEST_F(ExternalFileIngestionTest, FailIfNotBottommostLevel) {
  Open();
  ASSERT_OK(Put("k", "v"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  IngestExternalFileOptions o;
  o.fail_if_not_bottommost_level = true;
  Status s = Ingest({File({PutEntry("k", "f")})}, o);
  EXPECT_TRUE(s.IsTryAgain()) << s.ToString();
  EXPECT_EQ(Contents(), "k=v,");
  ASSERT_OK(Ingest({File({PutEntry("z", "f")})}, o));
  EXPECT_EQ(Files().back().level, options_.num_levels - 1);
}

TEST_F(ExternalFileIngestionTest, IngestBehindPutsOlderDataBeneath) {
  IngestExternalFileOptions behind;
  behind.ingest_behind = true;
  Open();
  Status s = Ingest({File({PutEntry("a", "old")})}, behind);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  Destroy();
  options_.allow_ingest_behind = true;
  Open();
  const int last = options_.num_levels - 1;
  ASSERT_OK(Put("k", "new"));
  ASSERT_OK(Put("d", "x"));
  ASSERT_OK(Flush());
  ASSERT_OK(Delete("d"));
  ASSERT_OK(Merge("m", "x"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  for (const LiveFileMetaData& f : Files()) EXPECT_LT(f.level, last) << "the last level is kept";
  // The compaction kept d's tombstone and m's operand: older data may come beneath.
  ASSERT_OK(Put("mem", "new"));
  ASSERT_OK(Ingest({File({PutEntry("d", "old"), PutEntry("j", "old"), PutEntry("k", "old"),
                          PutEntry("m", "base"), PutEntry("mem", "old")})},
                   behind));
  EXPECT_EQ(Files().back().level, last);
  EXPECT_EQ(Files().back().largest_seqno, 0u);
  EXPECT_EQ(Contents(), "j=old,k=new,m=base,x,mem=new,");
  // Compactions leave the last level alone, and the answers stay.
  ASSERT_OK(Put("j", "newer"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Contents(), "j=newer,k=new,m=base,x,mem=new,");
  EXPECT_EQ(FilesPerLevel().back(), '1');
  Reopen();
  EXPECT_EQ(Contents(), "j=newer,k=new,m=base,x,mem=new,");
  // Refusals: files overlapping each other, or the last level's files.
  s = Ingest({File({PutEntry("p", "1"), PutEntry("r", "1")}), File({PutEntry("q", "1")})}, behind);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  s = Ingest({File({PutEntry("e", "1")})}, behind);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ExpectNoStrayTables();
}

TEST_F(ExternalFileIngestionTest, SeveralFamiliesAtOnceAllOrNone) {
  Open();
  ColumnFamilyHandle* raw = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(options_, "two", &raw));
  std::unique_ptr<ColumnFamilyHandle> two(raw);
  ASSERT_OK(db_->Put(WriteOptions(), two.get(), "k", "mem"));
  std::vector<IngestExternalFileArg> args(2);
  args[0].column_family = db_->DefaultColumnFamily();
  args[0].external_files = {File({PutEntry("a", "default")})};
  args[1].column_family = two.get();
  args[1].external_files = {File({PutEntry("k", "two")}), dir_.File("missing.sst")};
  EXPECT_FALSE(db_->IngestExternalFiles(args).ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND") << "the other family's failure undoes both";
  ExpectNoStrayTables();
  args[1].external_files.pop_back();
  ASSERT_OK(db_->IngestExternalFiles(args));
  std::string value;
  ASSERT_OK(db_->Get(ReadOptions(), two.get(), "k", &value));
  EXPECT_EQ(value, "two");
  EXPECT_EQ(Get("a"), "default");
  // A family named twice is refused.
  args[1].column_family = db_->DefaultColumnFamily();
  EXPECT_TRUE(db_->IngestExternalFiles(args).IsInvalidArgument());
  EXPECT_TRUE(db_->IngestExternalFiles({}).IsInvalidArgument());
  two.reset();
  Close();
  std::vector<ColumnFamilyDescriptor> families = {{kDefaultColumnFamilyName, options_},
                                                  {"two", options_}};
  std::vector<ColumnFamilyHandle*> handles;
  DB* db = nullptr;
  ASSERT_OK(DB::Open(options_, dbname_, families, &handles, &db));
  db_.reset(db);
  ASSERT_OK(db_->Get(ReadOptions(), handles[1], "k", &value));
  EXPECT_EQ(value, "two");
  EXPECT_EQ(Get("a"), "default");
  for (ColumnFamilyHandle* h : handles) ASSERT_OK(db_->DestroyColumnFamilyHandle(h));
}

}  // namespace
}  // namespace shale
