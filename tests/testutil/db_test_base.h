// DBTestBase: the fixture every DB-level suite derives from (RocksDB's DBTestBase is the
// idea). Each test gets a fresh temporary directory on the real file system, Options with
// the test defaults, and one open DB at a time in db_, reached through small helpers that
// return a Status, or the value / "NOT_FOUND" / the error text for a read.
//
// Usage:
//   class DBFooTest : public DBTestBase {
//    protected:
//     DBFooTest() : DBTestBase("db_foo") { options_.write_buffer_size = 64 << 10; }
//   };
//   TEST_F(DBFooTest, X) { Open(); ASSERT_OK(Put("k", "v")); ASSERT_OK(Flush()); ... }
// A parameterized suite derives from DBTestBase and testing::WithParamInterface<T>.
//
// Contract:
// - options_ is what the next Open uses; a test may change it between opens. It differs
//   from Options() only in create_if_missing = true, so a suite states every option its
//   cases depend on.
// - dbname_ is <temporary directory>/db. The directory and everything in it are removed
//   when the fixture dies, after the DB is closed.
// - The fault-injecting env exists only for a test that asks for it (UseFaultInjectionEnv);
//   it wraps Env::Default() and outlives db_.
// - A fixture that owns an Env of its own (a member the derived class declares) and passes
//   it in options_ must close the DB in its own destructor (Close or TryClose): the base
//   destructor runs after the derived members are gone.
// - Single-threaded: the helpers are called from the test's thread; the DB itself may be
//   shared with threads the test starts.
#pragma once

#include <memory>
#include <string>

#include "shale/db.h"
#include "shale/options.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"

namespace shale {

// db's value of k as ro reads it, "NOT_FOUND", or the Status text of any other error: the
// read helper of DBTestBase::Get, for suites with a DB of their own (transaction DBs).
std::string ReadValue(DB* db, const std::string& k, const ReadOptions& ro = ReadOptions());

class DBTestBase : public ::testing::Test {
 protected:
  // name: a prefix for the temporary directory, usually the suite's.
  explicit DBTestBase(const std::string& name);
  ~DBTestBase() override;

  // ---- Lifetime. Open/Reopen/Close/Destroy fail the test on a bad Status; the Try forms
  // return it.
  // Drops the open DB (if any) without looking at Close's Status, as a crashed or failing
  // DB would be, then opens with options_; for tests that expect the open to fail.
  Status TryReopen();
  void Open();  // ASSERT_OK(TryReopen()); meant for when no DB is open
  // Closes the open DB (if any), its Status checked, then opens again.
  void Reopen();
  Status TryClose();  // DB::Close's Status; OK when no DB is open
  void Close();
  // Closes the DB and removes its files (DestroyDB with options_).
  void Destroy();

  // Makes options_.env the fault-injecting env (created on the first call) and returns it.
  FaultInjectionTestEnv* UseFaultInjectionEnv();

  // ---- Writes and reads on db_ with default WriteOptions / ReadOptions.
  Status Put(const std::string& k, const std::string& v, const WriteOptions& wo = WriteOptions());
  Status Delete(const std::string& k);
  Status SingleDelete(const std::string& k);
  Status Merge(const std::string& k, const std::string& v);
  // The value, "NOT_FOUND", or the Status text of any other error.
  std::string Get(const std::string& k, const Snapshot* snapshot = nullptr);
  Status Flush();
  Status CompactAll();  // CompactRange over the whole key space
  Status WaitForCompact();

  // ---- What the DB holds.
  // Every entry as "k=v," in order (reverse: newest key first); an iterator error is
  // appended as "[<status>]", so it cannot match an expected listing.
  std::string Contents(const ReadOptions& ro = ReadOptions(), bool reverse = false);
  // Files per level from rocksdb.num-files-at-level<N>, as "L0,L1,..." with the trailing
  // empty levels left off ("" for an empty tree).
  std::string FilesPerLevel();
  // An integer property; fails the test (and returns 0) if the DB does not know it.
  uint64_t IntProperty(const std::string& name);

  TempDirectory dir_;
  std::unique_ptr<FaultInjectionTestEnv> fault_env_;  // declared before db_: outlives it
  const std::string dbname_;
  Options options_;
  std::unique_ptr<DB> db_;
};

}  // namespace shale
