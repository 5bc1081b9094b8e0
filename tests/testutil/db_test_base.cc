#include "tests/testutil/db_test_base.h"

#include <utility>

namespace shale {

DBTestBase::DBTestBase(const std::string& name) : dir_(name), dbname_(dir_.path() + "/db") {
  options_.create_if_missing = true;
}

DBTestBase::~DBTestBase() {
  // EXPECT, not ASSERT: a failed close is reported, and the directory is still removed.
  EXPECT_OK(TryClose());
}

Status DBTestBase::TryReopen() {
  db_.reset();  // before the open: the old DB holds the directory's LOCK
  return DB::Open(options_, dbname_, &db_);
}

void DBTestBase::Open() { ASSERT_OK(TryReopen()); }

void DBTestBase::Reopen() {
  ASSERT_OK(TryClose());
  Open();
}

Status DBTestBase::TryClose() {
  if (db_ == nullptr) return Status::OK();
  Status s = db_->Close();
  db_.reset();
  return s;
}

void DBTestBase::Close() { ASSERT_OK(TryClose()); }

void DBTestBase::Destroy() {
  db_.reset();
  ASSERT_OK(DestroyDB(dbname_, options_));
}

FaultInjectionTestEnv* DBTestBase::UseFaultInjectionEnv() {
  if (fault_env_ == nullptr) fault_env_ = std::make_unique<FaultInjectionTestEnv>(Env::Default());
  options_.env = fault_env_.get();
  return fault_env_.get();
}

Status DBTestBase::Put(const std::string& k, const std::string& v, const WriteOptions& wo) {
  return db_->Put(wo, k, v);
}

Status DBTestBase::Delete(const std::string& k) { return db_->Delete(WriteOptions(), k); }

Status DBTestBase::SingleDelete(const std::string& k) {
  return db_->SingleDelete(WriteOptions(), k);
}

Status DBTestBase::Merge(const std::string& k, const std::string& v) {
  return db_->Merge(WriteOptions(), k, v);
}

std::string ReadValue(DB* db, const std::string& k, const ReadOptions& ro) {
  std::string v;
  Status s = db->Get(ro, k, &v);
  if (s.IsNotFound()) return "NOT_FOUND";
  if (!s.ok()) return s.ToString();
  return v;
}

std::string DBTestBase::Get(const std::string& k, const Snapshot* snapshot) {
  ReadOptions ro;
  ro.snapshot = snapshot;
  return ReadValue(db_.get(), k, ro);
}

Status DBTestBase::Flush() { return db_->Flush(FlushOptions()); }

Status DBTestBase::CompactAll() {
  return db_->CompactRange(CompactRangeOptions(), nullptr, nullptr);
}

Status DBTestBase::WaitForCompact() { return db_->WaitForCompact(WaitForCompactOptions()); }

std::string DBTestBase::Contents(const ReadOptions& ro, bool reverse) {
  std::unique_ptr<Iterator> it(db_->NewIterator(ro));
  std::string out;
  auto add = [&]() { out += it->key().ToString() + "=" + it->value().ToString() + ","; };
  if (reverse) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) add();
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) add();
  }
  if (!it->status().ok()) out += "[" + it->status().ToString() + "]";
  return out;
}

std::string DBTestBase::FilesPerLevel() {
  std::string out;
  size_t nonempty_end = 0;  // out's length after the last level holding files
  for (int level = 0;; level++) {
    std::string n;
    if (!db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &n)) break;
    if (level > 0) out += ",";
    out += n;
    if (n != "0") nonempty_end = out.size();
  }
  out.resize(nonempty_end);
  return out;
}

uint64_t DBTestBase::IntProperty(const std::string& name) {
  uint64_t v = 0;
  EXPECT_TRUE(db_->GetIntProperty(name, &v)) << name;
  return v;
}

}  // namespace shale
