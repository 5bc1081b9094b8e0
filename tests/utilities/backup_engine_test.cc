// BackupEngine (utilities/backup/): backups restore to the DB as it was, in every column
// family; backups share their table files and deleting one keeps what the others need; a
// damaged or missing file is found by VerifyBackup, Open and restore, never restored; a
// crash in the middle of a backup leaves every earlier backup whole; writers going on
// during a backup lose nothing acknowledged before it.
#include "shale/utilities/backup_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/transaction_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "utilities/backup/backup_meta.h"

namespace shale {
namespace {

const std::vector<std::string> kFamilies = {kDefaultColumnFamilyName, "one", "two"};

// Every family's keys and values, as "<family>/<key>" -> value.
using Contents = std::map<std::string, std::string>;

// A DB with the families of kFamilies.
class FamiliesDB {
 public:
  Status Open(const Options& options, const std::string& path) {
    DBOptions db_options(options);
    db_options.create_missing_column_families = true;
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : kFamilies) descriptors.emplace_back(name, options);
    return DB::Open(db_options, path, descriptors, &handles_, &db_);
  }
  ~FamiliesDB() { Close(); }
  void Close() {
    for (ColumnFamilyHandle* h : handles_) EXPECT_OK(db_->DestroyColumnFamilyHandle(h));
    handles_.clear();
    if (db_ != nullptr) {
      EXPECT_OK(db_->Close());
    }
    db_.reset();
  }
  DB* db() { return db_.get(); }
  ColumnFamilyHandle* cf(size_t i) { return handles_[i]; }
  Status Put(size_t f, const std::string& k, const std::string& v) {
    return db_->Put(WriteOptions(), handles_[f], k, v);
  }
  Contents Read() {
    Contents all;
    for (size_t f = 0; f < handles_.size(); f++) {
      std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions(), handles_[f]));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        all[kFamilies[f] + "/" + it->key().ToString()] = it->value().ToString();
      }
      EXPECT_OK(it->status());
    }
    return all;
  }

 private:
  std::unique_ptr<DB> db_;
  std::vector<ColumnFamilyHandle*> handles_;
};

class BackupEngineTest : public ::testing::Test {
 protected:
  BackupEngineTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
    options_.level0_file_num_compaction_trigger = 3;
    options_.target_file_size_base = 64 << 10;
  }

  std::string DbDir() const { return dir_.File("db"); }
  std::string BackupDir() const { return dir_.File("backups"); }

  std::unique_ptr<BackupEngine> OpenEngine(BackupEngineOptions options) {
    BackupEngine* raw = nullptr;
    EXPECT_OK(BackupEngine::Open(options, Env::Default(), &raw));
    return std::unique_ptr<BackupEngine>(raw);
  }
  std::unique_ptr<BackupEngine> OpenEngine() {
    return OpenEngine(BackupEngineOptions(BackupDir()));
  }

  // Writes `n` keys from `from` into every family, values tagged with `tag`, flushing the
  // families the tag picks so that some of it is in table files and some in the WAL.
  void Fill(FamiliesDB* db, int from, int n, const std::string& tag) {
    for (int i = from; i < from + n; i++) {
      for (size_t f = 0; f < kFamilies.size(); f++) {
        ASSERT_OK(db->Put(f, Key(i), tag + std::string(100, static_cast<char>('a' + i % 26))));
      }
    }
    ASSERT_OK(db->db()->Flush(FlushOptions(), db->cf(tag.size() % kFamilies.size())));
  }

  // Restores backup id (0: the latest) into a new directory and reads it back.
  Contents RestoreAndRead(BackupEngineReadOnlyBase* engine, BackupID id, const std::string& name) {
    const std::string dir = dir_.File(name);
    Status s = id == 0 ? engine->RestoreDBFromLatestBackup(dir, dir)
                       : engine->RestoreDBFromBackup(id, dir, dir);
    EXPECT_OK(s);
    FamiliesDB restored;
    EXPECT_OK(restored.Open(options_, dir));
    return restored.Read();
  }

  std::set<std::string> FilesUnder(const std::string& relative) {
    std::vector<std::string> children;
    Env::Default()->GetChildren(BackupDir() + "/" + relative, &children).PermitUncheckedError();
    std::set<std::string> names;
    for (const std::string& c : children) names.insert(relative + "/" + c);
    return names;
  }

  // The shared files and those of every private directory.
  std::set<std::string> FilesOnDisk() {
    std::set<std::string> all = FilesUnder(kBackupSharedChecksumDir);
    const std::set<std::string> shared = FilesUnder(kBackupSharedDir);
    all.insert(shared.begin(), shared.end());
    for (const std::string& p : FilesUnder(kBackupPrivateDir)) {
      const std::set<std::string> inside = FilesUnder(p);
      all.insert(inside.begin(), inside.end());
    }
    return all;
  }

  // The files every backup the engine lists names.
  std::set<std::string> NamedFiles(BackupEngine* engine) {
    std::vector<BackupInfo> infos;
    engine->GetBackupInfo(&infos, /*include_file_details=*/true);
    std::set<std::string> names;
    for (const BackupInfo& info : infos) {
      for (const BackupFileInfo& f : info.file_details) names.insert(f.relative_filename);
    }
    return names;
  }

  TempDirectory dir_{"backup_engine"};
  Options options_;
};

TEST_F(BackupEngineTest, RoundTripWithFamiliesFromTablesAndWals) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  Fill(&db, 0, 300, "first");
  ASSERT_OK(db.db()->Delete(WriteOptions(), db.cf(2), Key(7)));
  const Contents at_backup = db.Read();
  auto engine = OpenEngine();
  BackupID id = 0;
  ASSERT_OK(engine->CreateNewBackupWithMetadata(CreateBackupOptions(), db.db(), "app data", &id));
  EXPECT_EQ(1u, id);
  Fill(&db, 0, 50, "later");  // after the backup: not in it

  BackupInfo info;
  ASSERT_OK(engine->GetBackupInfo(id, &info));
  EXPECT_EQ("app data", info.app_metadata);
  EXPECT_GT(info.number_files, 3u);
  EXPECT_GT(info.size, 0u);
  EXPECT_GT(info.timestamp, 0);
  ASSERT_OK(engine->VerifyBackup(id, /*verify_with_checksum=*/true));
  EXPECT_EQ(at_backup, RestoreAndRead(engine.get(), id, "restored"));

  // Flushed first, without WALs: the same data.
  CreateBackupOptions flushed;
  flushed.flush_before_backup = true;
  BackupEngineOptions no_wals(dir_.File("backups_no_wal"));
  no_wals.backup_log_files = false;
  auto engine2 = OpenEngine(no_wals);
  const Contents now = db.Read();
  ASSERT_OK(engine2->CreateNewBackup(flushed, db.db()));
  BackupInfo info2;
  ASSERT_OK(engine2->GetLatestBackupInfo(&info2, /*include_file_details=*/true));
  for (const BackupFileInfo& f : info2.file_details) {
    if (f.relative_filename.find(".log") != std::string::npos) {
      EXPECT_EQ(0u, f.size) << f.relative_filename;
    }
  }
  EXPECT_EQ(now, RestoreAndRead(engine2.get(), 0, "restored_no_wal"));
}

// Each kind of sharing (shared_checksum/, shared/, none) restores every backup it made.
TEST_F(BackupEngineTest, EverySharingModeRestoresEveryBackup) {
  struct Mode {
    bool share, with_checksum;
    const char* dir;
  };
  for (const Mode& mode : {Mode{true, true, kBackupSharedChecksumDir},
                           Mode{true, false, kBackupSharedDir}, Mode{false, false, ""}}) {
    SCOPED_TRACE(std::to_string(mode.share) + std::to_string(mode.with_checksum));
    ASSERT_OK(DestroyDir(DbDir()));
    ASSERT_OK(DestroyDir(BackupDir()));
    BackupEngineOptions options(BackupDir());
    options.share_table_files = mode.share;
    options.share_files_with_checksum = mode.with_checksum;
    options.max_background_operations = 3;
    auto engine = OpenEngine(options);
    FamiliesDB db;
    ASSERT_OK(db.Open(options_, DbDir()));
    std::vector<Contents> states;
    for (int round = 0; round < 3; round++) {
      Fill(&db, round * 100, 200, "round" + std::to_string(round));
      states.push_back(db.Read());
      ASSERT_OK(engine->CreateNewBackup(db.db()));
    }
    db.Close();
    if (mode.share) {
      EXPECT_FALSE(FilesUnder(mode.dir).empty());
    }
    EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
    for (BackupID id = 1; id <= 3; id++) {
      EXPECT_EQ(states[id - 1], RestoreAndRead(engine.get(), id, "r" + std::to_string(id)));
    }
  }
}

TEST_F(BackupEngineTest, BackupsShareTableFilesAndAnUnchangedDbCopiesNoTable) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  Fill(&db, 0, 400, "a");
  ASSERT_OK(db.db()->Flush(FlushOptions(), db.cf(0)));
  ASSERT_OK(db.db()->Flush(FlushOptions(), db.cf(1)));
  ASSERT_OK(db.db()->Flush(FlushOptions(), db.cf(2)));
  BackupEngineOptions engine_options(BackupDir());
  engine_options.callback_trigger_interval_size = 1024;
  auto engine = OpenEngine(engine_options);
  int progress_calls = 0;
  CreateBackupOptions options;
  options.progress_callback = [&progress_calls] { progress_calls++; };
  ASSERT_OK(engine->CreateNewBackup(options, db.db()));
  const int first_calls = progress_calls;
  const std::set<std::string> shared = FilesUnder(kBackupSharedChecksumDir);
  ASSERT_FALSE(shared.empty());

  // Nothing new in the DB: the second backup names the same table files, copying none, so
  // the progress callback sees only the private files.
  progress_calls = 0;
  ASSERT_OK(engine->CreateNewBackup(options, db.db()));
  EXPECT_EQ(shared, FilesUnder(kBackupSharedChecksumDir));
  EXPECT_LT(progress_calls, first_calls);

  BackupInfo one, two;
  ASSERT_OK(engine->GetBackupInfo(1, &one, true));
  ASSERT_OK(engine->GetBackupInfo(2, &two, true));
  std::set<std::string> tables_one, tables_two;
  for (const BackupFileInfo& f : one.file_details) {
    if (f.relative_filename.rfind(kBackupSharedChecksumDir, 0) == 0)
      tables_one.insert(f.relative_filename);
  }
  for (const BackupFileInfo& f : two.file_details) {
    if (f.relative_filename.rfind(kBackupSharedChecksumDir, 0) == 0)
      tables_two.insert(f.relative_filename);
  }
  EXPECT_EQ(shared, tables_one);
  EXPECT_EQ(shared, tables_two);

  // A new table file is copied; the old ones stay shared.
  Fill(&db, 1000, 100, "b");
  ASSERT_OK(engine->CreateNewBackup(options, db.db()));
  EXPECT_GT(FilesUnder(kBackupSharedChecksumDir).size(), shared.size());
}

TEST_F(BackupEngineTest, DeleteAndPurgeKeepTheFilesOtherBackupsNeed) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  auto engine = OpenEngine();
  std::vector<Contents> states;
  for (int round = 0; round < 4; round++) {
    Fill(&db, round * 150, 200, std::string(round + 1, 'x'));
    if (round == 2) {
      ASSERT_OK(db.db()->CompactRange(CompactRangeOptions(), db.cf(0), nullptr, nullptr));
    }
    states.push_back(db.Read());
    ASSERT_OK(engine->CreateNewBackup(db.db()));
  }
  db.Close();
  EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());

  ASSERT_OK(engine->DeleteBackup(2));
  EXPECT_TRUE(engine->DeleteBackup(2).IsNotFound());
  BackupInfo info;
  EXPECT_TRUE(engine->GetBackupInfo(2, &info).IsNotFound());
  EXPECT_TRUE(engine->RestoreDBFromBackup(2, dir_.File("x"), dir_.File("x")).IsNotFound());
  EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
  for (BackupID id : {1u, 3u, 4u}) {
    ASSERT_OK(engine->VerifyBackup(id, true));
    EXPECT_EQ(states[id - 1],
              RestoreAndRead(engine.get(), id, "after_delete" + std::to_string(id)));
  }

  ASSERT_OK(engine->PurgeOldBackups(1));
  std::vector<BackupInfo> left;
  engine->GetBackupInfo(&left);
  ASSERT_EQ(1u, left.size());
  EXPECT_EQ(4u, left[0].backup_id);
  EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
  EXPECT_EQ(states[3], RestoreAndRead(engine.get(), 0, "after_purge"));

  // A new engine on the directory sees the same, and the next id follows the last.
  engine.reset();
  engine = OpenEngine();
  engine->GetBackupInfo(&left);
  ASSERT_EQ(1u, left.size());
  ASSERT_OK(engine->VerifyBackup(4, true));
  FamiliesDB again;
  ASSERT_OK(again.Open(options_, DbDir()));
  BackupID id = 0;
  ASSERT_OK(engine->CreateNewBackup(CreateBackupOptions(), again.db(), &id));
  EXPECT_EQ(5u, id);
}

TEST_F(BackupEngineTest, DamagedFilesAreFoundAndNeverRestored) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  auto engine = OpenEngine();
  Fill(&db, 0, 300, "a");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  Fill(&db, 300, 300, "bb");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  Fill(&db, 600, 300, "ccc");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  db.Close();

  BackupInfo one, two;
  ASSERT_OK(engine->GetBackupInfo(1, &one, true));
  ASSERT_OK(engine->GetBackupInfo(2, &two, true));
  // A table file only backup 2 has, flipped in place: same size, wrong checksum.
  std::string only_two;
  for (const BackupFileInfo& f : two.file_details) {
    bool in_one = false;
    for (const BackupFileInfo& g : one.file_details)
      in_one |= g.relative_filename == f.relative_filename;
    if (!in_one && f.relative_filename.rfind(kBackupSharedChecksumDir, 0) == 0)
      only_two = f.relative_filename;
  }
  ASSERT_FALSE(only_two.empty());
  ASSERT_OK(CorruptFile(BackupDir() + "/" + only_two, 100, 3));
  ASSERT_OK(engine->VerifyBackup(2, /*verify_with_checksum=*/false));
  Status s = engine->VerifyBackup(2, /*verify_with_checksum=*/true);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  ASSERT_OK(engine->VerifyBackup(1, true));

  const std::string target = dir_.File("restore_two");
  s = engine->RestoreDBFromBackup(2, target, target);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(only_two)) << s.ToString();
  EXPECT_TRUE(Env::Default()->FileExists(target + "/CURRENT").IsNotFound());
  EXPECT_TRUE(Env::Default()->FileExists(target + "/CURRENT.tmp").IsNotFound());

  // A private file of backup 1 removed: VerifyBackup says so; a new engine finds backup 1
  // corrupted at Open and refuses it, and keeps the others.
  std::string manifest;
  for (const BackupFileInfo& f : one.file_details) {
    if (f.relative_filename.find("MANIFEST") != std::string::npos) manifest = f.relative_filename;
  }
  ASSERT_OK(Env::Default()->DeleteFile(BackupDir() + "/" + manifest));
  s = engine->VerifyBackup(1);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  // A truncated private file of backup 3 (its CURRENT).
  ASSERT_OK(TruncateFileTo(BackupDir() + "/private/3/CURRENT", 3));
  s = engine->VerifyBackup(3);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();

  engine.reset();
  engine = OpenEngine();
  std::vector<BackupID> corrupt;
  engine->GetCorruptedBackups(&corrupt);
  EXPECT_EQ((std::vector<BackupID>{1, 3}), corrupt);
  BackupInfo info;
  EXPECT_TRUE(engine->GetBackupInfo(1, &info).IsCorruption());
  EXPECT_TRUE(engine->RestoreDBFromBackup(3, target, target).IsCorruption());
  EXPECT_TRUE(engine->VerifyBackup(1).IsCorruption());
  // The latest good backup is 2, which restore refuses for its damaged table file.
  ASSERT_OK(engine->GetLatestBackupInfo(&info));
  EXPECT_EQ(2u, info.backup_id);
  EXPECT_TRUE(engine->RestoreDBFromLatestBackup(target, target).IsCorruption());

  // A corrupted backup can be deleted; its files go with the next garbage collection.
  ASSERT_OK(engine->DeleteBackup(1));
  ASSERT_OK(engine->DeleteBackup(3));
  engine->GetCorruptedBackups(&corrupt);
  EXPECT_TRUE(corrupt.empty());
  EXPECT_TRUE(FilesUnder("private/1").empty());
  EXPECT_TRUE(FilesUnder("private/3").empty());
}

TEST_F(BackupEngineTest, MetaFilesThatDoNotParseMarkTheirBackupCorrupted) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  auto engine = OpenEngine();
  Fill(&db, 0, 100, "a");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  const Contents now = db.Read();
  db.Close();
  engine.reset();
  std::string text;
  ASSERT_OK(ReadFileToString(Env::Default(), BackupDir() + "/meta/2", &text));
  // One file line fewer than the count says.
  ASSERT_OK(WriteStringToFile(Env::Default(), text.substr(0, text.rfind('\n', text.size() - 2) + 1),
                              BackupDir() + "/meta/2", false));
  ASSERT_OK(WriteStringToFile(Env::Default(), "schema_version 2\n1\n2\n1\nf ni::new 1\n",
                              BackupDir() + "/meta/3", false));
  engine = OpenEngine();
  std::vector<BackupID> corrupt;
  engine->GetCorruptedBackups(&corrupt);
  EXPECT_EQ((std::vector<BackupID>{2, 3}), corrupt);
  Status s = engine->VerifyBackup(2);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  s = engine->VerifyBackup(3);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_EQ(now, RestoreAndRead(engine.get(), 1, "one"));
}

// A TransactionDB (a StackableDB) backs up through its root DB; a transaction prepared
// but not committed at the backup comes back prepared after the restore and commits.
TEST_F(BackupEngineTest, OfATransactionDBWithAPreparedTransaction) {
  TransactionDB* raw = nullptr;
  ASSERT_OK(TransactionDB::Open(options_, TransactionDBOptions(), DbDir(), &raw));
  std::unique_ptr<TransactionDB> txn_db(raw);
  ASSERT_OK(txn_db->Put(WriteOptions(), "committed", "1"));
  std::unique_ptr<Transaction> txn(txn_db->BeginTransaction(WriteOptions()));
  ASSERT_OK(txn->SetName("xid1"));
  ASSERT_OK(txn->Put("prepared", "2"));
  ASSERT_OK(txn->Prepare());
  auto engine = OpenEngine();
  ASSERT_OK(engine->CreateNewBackup(txn_db.get()));
  ASSERT_OK(txn->Rollback());
  txn.reset();
  txn_db.reset();

  const std::string dir = dir_.File("restored");
  ASSERT_OK(engine->RestoreDBFromLatestBackup(dir, dir));
  ASSERT_OK(TransactionDB::Open(options_, TransactionDBOptions(), dir, &raw));
  txn_db.reset(raw);
  EXPECT_EQ("1", ReadValue(txn_db.get(), "committed"));
  std::vector<Transaction*> prepared;
  txn_db->GetAllPreparedTransactions(&prepared);
  ASSERT_EQ(1u, prepared.size());
  EXPECT_EQ("xid1", prepared[0]->GetName());
  ASSERT_OK(prepared[0]->Commit());
  delete prepared[0];
  EXPECT_EQ("2", ReadValue(txn_db.get(), "prepared"));
}

TEST(BackupMetaTest, EncodesAndDecodesBothSchemas) {
  BackupMeta meta;
  meta.timestamp = 1700000000;
  meta.sequence = 42;
  meta.app_metadata = std::string("a\0b\n", 4);
  meta.files.push_back({"shared_checksum/000012_7_9.sst", 9, 7});
  meta.files.push_back({"private/3/CURRENT", 16, 4294967295u});
  BackupMeta back;
  ASSERT_OK(DecodeBackupMeta(EncodeBackupMeta(meta), "m", &back));
  EXPECT_EQ(meta.timestamp, back.timestamp);
  EXPECT_EQ(meta.sequence, back.sequence);
  EXPECT_EQ(meta.app_metadata, back.app_metadata);
  ASSERT_EQ(2u, back.files.size());
  EXPECT_EQ("shared_checksum/000012_7_9.sst", back.files[0].name);
  EXPECT_EQ(9u, back.files[0].size);
  EXPECT_EQ(4294967295u, back.files[1].crc32c);
  EXPECT_EQ("000012.sst", DbFileNameOf(back.files[0].name));
  EXPECT_EQ("CURRENT", DbFileNameOf(back.files[1].name));

  // RocksDB's schema 1: no version line and no sizes.
  ASSERT_OK(DecodeBackupMeta("17\n5\n1\nprivate/1/CURRENT crc32 99\n", "m", &back));
  EXPECT_EQ(BackupFile::kUnknownSize, back.files[0].size);
  EXPECT_EQ(99u, back.files[0].crc32c);
  // Unknown ignorable fields pass; non-ignorable ones and bad text do not.
  ASSERT_OK(DecodeBackupMeta("schema_version 2.9\n1\n2\nfuture x\n1\nf crc32 1 size 2 new 3\n", "m",
                             &back));
  EXPECT_TRUE(DecodeBackupMeta("schema_version 3\n1\n2\n0\n", "m", &back).IsNotSupported());
  for (const char* bad : {"", "x\n1\n0\n", "1\n2\n2\nf crc32 1\n", "1\n2\n1\nf crc32 99999999999\n",
                          "1\n2\n1\nf\n", "1\n2\nmetadata 4\n0\n", "1\n2\n1\nf md5 1\n"}) {
    Status s = DecodeBackupMeta(bad, "m", &back);
    EXPECT_TRUE(s.IsCorruption()) << bad << " " << s.ToString();
  }
  BackupID id = 0;
  EXPECT_TRUE(ParseBackupId("17", &id));
  EXPECT_EQ(17u, id);
  for (const char* bad : {"", "0", "017", ".17.tmp", "4294967296", "1x"}) {
    EXPECT_FALSE(ParseBackupId(bad, &id)) << bad;
  }
}

TEST_F(BackupEngineTest, OptionsAndStatusesOfTheApi) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  Fill(&db, 0, 50, "a");
  {
    auto engine = OpenEngine();
    EXPECT_TRUE(engine->CreateNewBackupWithMetadata(db.db(), std::string((1 << 20) + 1, 'm'))
                    .IsInvalidArgument());
    EXPECT_TRUE(engine->CreateNewBackup(nullptr).IsInvalidArgument());
    BackupInfo info;
    EXPECT_TRUE(engine->GetLatestBackupInfo(&info).IsNotFound());
    EXPECT_TRUE(engine->RestoreDBFromLatestBackup(dir_.File("r"), dir_.File("r")).IsNotFound());
    EXPECT_TRUE(engine->VerifyBackup(1).IsNotFound());
    ASSERT_OK(engine->CreateNewBackup(db.db()));
    ASSERT_OK(engine->CreateNewBackup(db.db()));
  }
  BackupEngine* raw = nullptr;
  EXPECT_TRUE(
      BackupEngine::Open(BackupEngineOptions(""), Env::Default(), &raw).IsInvalidArgument());
  EXPECT_EQ(nullptr, raw);

  // Read-only engines: no directory is made, destroy_old_data is refused, and
  // max_valid_backups_to_open keeps the newest.
  BackupEngineReadOnly* ro = nullptr;
  EXPECT_TRUE(
      BackupEngineReadOnly::Open(BackupEngineOptions(dir_.File("none")), Env::Default(), &ro)
          .IsNotFound());
  EXPECT_TRUE(Env::Default()->FileExists(dir_.File("none")).IsNotFound());
  BackupEngineOptions ro_options(BackupDir());
  ro_options.destroy_old_data = true;
  EXPECT_TRUE(BackupEngineReadOnly::Open(ro_options, Env::Default(), &ro).IsInvalidArgument());
  ro_options.destroy_old_data = false;
  ro_options.max_valid_backups_to_open = 1;
  ASSERT_OK(BackupEngineReadOnly::Open(ro_options, Env::Default(), &ro));
  std::unique_ptr<BackupEngineReadOnly> read_only(ro);
  std::vector<BackupInfo> infos;
  read_only->GetBackupInfo(&infos);
  ASSERT_EQ(1u, infos.size());
  EXPECT_EQ(2u, infos[0].backup_id);
  EXPECT_EQ(db.Read(), RestoreAndRead(read_only.get(), 2, "from_read_only"));

  // destroy_old_data empties the directory.
  BackupEngineOptions destroy(BackupDir());
  destroy.destroy_old_data = true;
  auto engine = OpenEngine(destroy);
  engine->GetBackupInfo(&infos);
  EXPECT_TRUE(infos.empty());
  EXPECT_TRUE(FilesUnder(kBackupSharedChecksumDir).empty());
  EXPECT_TRUE(FilesUnder(kBackupPrivateDir).empty());
  EXPECT_TRUE(FilesUnder(kBackupMetaDir).empty());

  // StopBackup: this and every later backup of the engine end Incomplete, leaving none.
  engine->StopBackup();
  EXPECT_TRUE(engine->CreateNewBackup(db.db()).IsIncomplete());
  engine->GetBackupInfo(&infos);
  EXPECT_TRUE(infos.empty());
}

TEST_F(BackupEngineTest, RestoreReplacesWhatTheTargetHeldAndKeepLogFilesKeepsWals) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  Fill(&db, 0, 100, "old");
  auto engine = OpenEngine();
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  const Contents first = db.Read();
  Fill(&db, 0, 100, "newer");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  const Contents second = db.Read();

  // Restoring the older backup over another DB's directory: only the backup's files remain.
  const std::string target = dir_.File("target");
  EXPECT_EQ(second, RestoreAndRead(engine.get(), 2, "target"));
  ASSERT_OK(WriteStringToFile(Env::Default(), "stray", target + "/000999.sst", false));
  ASSERT_OK(engine->RestoreDBFromBackup(1, target, target));
  EXPECT_TRUE(Env::Default()->FileExists(target + "/000999.sst").IsNotFound());
  {
    FamiliesDB restored;
    ASSERT_OK(restored.Open(options_, target));
    EXPECT_EQ(first, restored.Read());
  }
  ASSERT_OK(WriteStringToFile(Env::Default(), "wal", target + "/000998.log", false));
  ASSERT_OK(WriteStringToFile(Env::Default(), "sst", target + "/000997.sst", false));
  ASSERT_OK(
      engine->RestoreDBFromBackup(RestoreOptions(/*keep_log_files=*/true), 1, target, target));
  EXPECT_OK(Env::Default()->FileExists(target + "/000998.log"));
  EXPECT_TRUE(Env::Default()->FileExists(target + "/000997.sst").IsNotFound());
}

// A backup cut off by a power loss after every n-th file-system call of the backup
// directory: afterwards the earlier backups are all listed, whole and restorable, the
// cut one is absent (or whole, when the loss came after its meta file was durable), and
// the next backup's garbage collection leaves no file no backup names.
TEST_F(BackupEngineTest, PowerLossDuringABackupLeavesEveryEarlierBackupWhole) {
  FaultInjectionTestEnv fault(Env::Default());
  BackupEngineOptions options(BackupDir(), &fault);
  options.max_background_operations = 2;
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  std::vector<Contents> states;
  {
    auto engine = OpenEngine(options);
    for (int round = 0; round < 2; round++) {
      Fill(&db, round * 200, 250, "r" + std::to_string(round));
      states.push_back(db.Read());
      ASSERT_OK(engine->CreateNewBackup(db.db()));
    }
  }
  Fill(&db, 1000, 250, "cut");
  const Contents cut_state = db.Read();
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  bool completed = false;
  for (int n = 0; !completed && n < 400; n += 1 + static_cast<int>(rng() % 6)) {
    SCOPED_TRACE("power loss after " + std::to_string(n) + " calls");
    {
      auto engine = OpenEngine(options);
      fault.DeactivateAfter(n);
      Status s = engine->CreateNewBackup(db.db());
      completed = s.ok() && fault.IsFilesystemActive();
      fault.DeactivateAfter(-1);
      fault.SetFilesystemActive(false);
    }
    ASSERT_OK(fault.SimulatePowerLoss());
    fault.ResetState();

    auto engine = OpenEngine(options);
    std::vector<BackupID> corrupt;
    engine->GetCorruptedBackups(&corrupt);
    EXPECT_TRUE(corrupt.empty());
    std::vector<BackupInfo> infos;
    engine->GetBackupInfo(&infos);
    ASSERT_GE(infos.size(), 2u);
    ASSERT_LE(infos.size(), 3u);
    for (BackupID id = 1; id <= 2; id++) {
      ASSERT_OK(engine->VerifyBackup(id, true));
    }
    if (infos.size() == 3) {
      ASSERT_OK(engine->VerifyBackup(3, true));
      EXPECT_EQ(cut_state, RestoreAndRead(engine.get(), 3, "cut" + std::to_string(n)));
      ASSERT_OK(engine->DeleteBackup(3));
    }
    EXPECT_EQ(states[0], RestoreAndRead(engine.get(), 1, "one" + std::to_string(n)));
    ASSERT_OK(engine->GarbageCollect());
    EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
    EXPECT_EQ((std::set<std::string>{"meta/1", "meta/2"}), FilesUnder(kBackupMetaDir));
  }
  EXPECT_TRUE(completed) << "no power loss came late enough for the backup to complete";
  auto engine = OpenEngine(options);
  EXPECT_EQ(states[1], RestoreAndRead(engine.get(), 2, "two"));
}

// A process making backups (and purging old ones) is SIGKILLed at a random moment, again
// and again: each time every backup a new engine lists verifies and the newest restores,
// none reads as corrupted, the last one the child reported done is there, and garbage
// collection leaves only files some backup names.
TEST_F(BackupEngineTest, KilledWhileBackingUpLeavesEveryBackupWhole) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  const int cycles = TestKnob("SHALE_BACKUP_KILL_CYCLES", 6);
  int reported = 0;  // backups the children said were done
  // A slow machine (or a sanitizer) may kill every child before its first backup: the
  // kill then comes later, up to 64 times, and a few more cycles run until one finishes.
  uint64_t scale = 1;
  for (int cycle = 0; cycle < cycles || (reported == 0 && cycle < cycles + 8); cycle++) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    std::string output;
    const std::string error = RunChildUntilKilled(
        [&](int fd) {
          FamiliesDB db;
          BackupEngine* raw = nullptr;
          if (!db.Open(options_, DbDir()).ok() ||
              !BackupEngine::Open(BackupEngineOptions(BackupDir()), Env::Default(), &raw).ok()) {
            _exit(2);
          }
          for (int round = 0;; round++) {
            for (int i = 0; i < 300; i++) {
              if (!db.Put(i % 3, Key(cycle * 100000 + round * 300 + i), std::string(200, 'v'))
                       .ok()) {
                _exit(3);
              }
            }
            BackupID id = 0;
            if (!raw->CreateNewBackup(CreateBackupOptions(), db.db(), &id).ok()) _exit(4);
            if (write(fd, &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(5);
            if (round % 3 == 2 && !raw->PurgeOldBackups(3).ok()) _exit(6);
          }
        },
        (20000 + rng() % 200000) * scale, &output);
    ASSERT_EQ("", error);
    BackupID last_done = 0;
    if (output.size() >= sizeof(BackupID)) {
      memcpy(&last_done, output.data() + output.size() - sizeof(BackupID), sizeof(BackupID));
    }
    auto engine = OpenEngine();
    std::vector<BackupID> corrupt;
    engine->GetCorruptedBackups(&corrupt);
    EXPECT_TRUE(corrupt.empty());
    std::vector<BackupInfo> infos;
    engine->GetBackupInfo(&infos);
    std::set<BackupID> ids;
    for (const BackupInfo& info : infos) {
      ids.insert(info.backup_id);
      ASSERT_OK(engine->VerifyBackup(info.backup_id, true));
    }
    if (last_done != 0) EXPECT_EQ(1u, ids.count(last_done));
    reported += static_cast<int>(output.size() / sizeof(BackupID));
    if (output.empty() && scale < 64) scale *= 2;
    if (!infos.empty()) {
      const std::string dir = dir_.File("killed" + std::to_string(cycle));
      ASSERT_OK(engine->RestoreDBFromLatestBackup(dir, dir));
      FamiliesDB restored;
      ASSERT_OK(restored.Open(options_, dir));
    }
    ASSERT_OK(engine->GarbageCollect());
    EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
  }
  EXPECT_GT(reported, 0) << "no child lived long enough to finish a backup";
}

// Readers of the engine (GetBackupInfo, VerifyBackup, restores) run beside backups,
// deletions and a StopBackup from another thread; every answer is one the engine could
// give at some moment, and what StopBackup cut short leaves nothing behind.
TEST_F(BackupEngineTest, ReadsRunBesideWritesAndStopBackup) {
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  BackupEngineOptions options(BackupDir());
  options.max_background_operations = 3;
  auto engine = OpenEngine(options);
  Fill(&db, 0, 200, "a");
  ASSERT_OK(engine->CreateNewBackup(db.db()));
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; r++) {
    readers.emplace_back([&, r] {
      int restores = 0;
      int verifies = 0;
      while (!done.load()) {
        std::vector<BackupInfo> infos;
        engine->GetBackupInfo(&infos);
        for (size_t i = 1; i < infos.size(); i++) {
          EXPECT_LT(infos[i - 1].backup_id, infos[i].backup_id);
        }
        // Paced, so that the writer is not kept waiting behind an unbroken run of shared
        // holders (the lock prefers readers, as RocksDB's does).
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        if (infos.empty()) continue;
        // The backup may be deleted between the two calls.
        Status s = engine->VerifyBackup(infos.back().backup_id, ++verifies % 8 == 0);
        EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
        if (r == 0 && restores < 3) {
          const std::string dir = dir_.File("reader" + std::to_string(restores++));
          s = engine->RestoreDBFromLatestBackup(dir, dir);
          EXPECT_OK(s);
        }
      }
    });
  }
  for (int round = 1; round <= 4; round++) {
    Fill(&db, round * 100, 200, std::string(round, 'b'));
    ASSERT_OK(engine->CreateNewBackup(db.db()));
    if (round % 2 == 0) {
      ASSERT_OK(engine->PurgeOldBackups(2));
    }
  }
  std::thread stopper([&] { engine->StopBackup(); });
  Fill(&db, 1000, 300, "stopped");
  Status s = engine->CreateNewBackup(db.db());
  EXPECT_TRUE(s.ok() || s.IsIncomplete()) << s.ToString();
  stopper.join();
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_TRUE(engine->CreateNewBackup(db.db()).IsIncomplete());

  engine = OpenEngine(options);
  std::vector<BackupID> corrupt;
  engine->GetCorruptedBackups(&corrupt);
  EXPECT_TRUE(corrupt.empty());
  ASSERT_OK(engine->GarbageCollect());
  EXPECT_EQ(NamedFiles(engine.get()), FilesOnDisk());
  std::vector<BackupInfo> infos;
  engine->GetBackupInfo(&infos);
  for (const BackupInfo& info : infos) ASSERT_OK(engine->VerifyBackup(info.backup_id, true));
}

// Writers keep writing numbered keys (each write one batch over every family) while
// flushes and compactions run and backups are taken. Each restored backup holds, per
// writer, a prefix of its writes, in every family alike, with at least every write
// acknowledged before CreateNewBackup was called.
TEST_F(BackupEngineTest, WritersGoingOnDuringBackupsLoseNothingAcknowledged) {
  const uint64_t seed = TestSeed();
  // Memtables large enough that the newest WAL holds many acknowledged writes at each
  // backup; every second backup flushes first, and compactions follow those flushes.
  options_.write_buffer_size = 512 << 10;
  FamiliesDB db;
  ASSERT_OK(db.Open(options_, DbDir()));
  BackupEngineOptions options(BackupDir());
  options.max_background_operations = 2;
  auto engine = OpenEngine(options);
  constexpr int kWriters = 4;
  const int kBackups = TestKnob("SHALE_BACKUP_ROUNDS", 4);
  std::atomic<bool> stop{false};
  std::vector<std::atomic<int>> acknowledged(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; w++) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(seed + w);
      for (int i = 0; !stop.load(); i++) {
        WriteBatch batch;
        const std::string key = "w" + std::to_string(w) + "_" + Key(i);
        const std::string value(50 + rng() % 300, static_cast<char>('a' + i % 26));
        for (size_t f = 0; f < kFamilies.size(); f++) ASSERT_OK(batch.Put(db.cf(f), key, value));
        ASSERT_OK(db.db()->Write(WriteOptions(), &batch));
        acknowledged[w].store(i + 1);
      }
    });
  }
  std::vector<std::vector<int>> floor(kBackups, std::vector<int>(kWriters));
  for (int b = 0; b < kBackups; b++) {
    while (acknowledged[0].load() < (b + 1) * 300) std::this_thread::yield();
    for (int w = 0; w < kWriters; w++) floor[b][w] = acknowledged[w].load();
    CreateBackupOptions backup_options;
    backup_options.flush_before_backup = b % 2 == 1;
    ASSERT_OK(engine->CreateNewBackup(backup_options, db.db()));
  }
  stop = true;
  for (std::thread& t : writers) t.join();
  db.Close();

  for (int b = 0; b < kBackups; b++) {
    SCOPED_TRACE("backup " + std::to_string(b + 1));
    ASSERT_OK(engine->VerifyBackup(b + 1, true));
    const Contents restored = RestoreAndRead(engine.get(), b + 1, "r" + std::to_string(b));
    for (int w = 0; w < kWriters; w++) {
      std::vector<int> count(kFamilies.size());
      for (size_t f = 0; f < kFamilies.size(); f++) {
        const std::string prefix = kFamilies[f] + "/w" + std::to_string(w) + "_";
        int n = 0;
        while (restored.count(prefix + Key(n)) > 0) n++;
        count[f] = n;
        // Nothing beyond the prefix.
        int present = 0;
        for (auto it = restored.lower_bound(prefix);
             it != restored.end() && it->first.rfind(prefix, 0) == 0; ++it) {
          present++;
        }
        EXPECT_EQ(n, present) << kFamilies[f] << " writer " << w;
      }
      EXPECT_GE(count[0], floor[b][w]) << "writer " << w;
      for (size_t f = 1; f < kFamilies.size(); f++) EXPECT_EQ(count[0], count[f]);
    }
  }
}

}  // namespace
}  // namespace shale
