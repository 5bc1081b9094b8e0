// The fixture of the TransactionDB suites (transaction_*_test.cc): a TransactionDB on real
// files in a fresh temporary directory, reopened at will, and small read helpers.
//
// Transactions a test begins must be deleted before Reopen, Close or the end of the
// fixture (declare them in the test body: they die before the fixture does).
// Single-threaded helpers; the DB itself may be shared with threads the test starts.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "shale/utilities/transaction.h"
#include "shale/utilities/transaction_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"

namespace shale {

class TransactionTestBase : public testing::Test {
 protected:
  TransactionTestBase() : dir_("txn") {
    options_.create_if_missing = true;
    // Short waits keep the lock tests quick; a test that wants another sets its own.
    txn_db_options_.transaction_lock_timeout = 100;
    txn_db_options_.default_lock_timeout = 100;
  }
  ~TransactionTestBase() override { db_.reset(); }

  std::string dbname() const { return dir_.path() + "/db"; }

  Status TryOpen() {
    db_.reset();
    TransactionDB* db = nullptr;
    Status s = TransactionDB::Open(options_, txn_db_options_, dbname(), &db);
    db_.reset(db);
    return s;
  }
  void Open() { ASSERT_OK(TryOpen()); }
  void Close() {
    if (db_ != nullptr) {
      ASSERT_OK(db_->Close());
    }
    db_.reset();
  }
  void Reopen() {
    Close();
    Open();
  }

  // Makes the fault-injecting env (over the real files) the DB's from the next open on.
  FaultInjectionTestEnv* UseFaultInjectionEnv() {
    if (fault_env_ == nullptr) fault_env_ = std::make_unique<FaultInjectionTestEnv>(Env::Default());
    options_.env = fault_env_.get();
    return fault_env_.get();
  }

  std::unique_ptr<Transaction> Begin(const TransactionOptions& o = TransactionOptions()) {
    return std::unique_ptr<Transaction>(db_->BeginTransaction(WriteOptions(), o));
  }

  // The DB's committed value of key, "NOT_FOUND", or the error's text.
  std::string Get(const std::string& key) { return ReadValue(db_.get(), key); }
  // The same through a transaction: its own writes over the DB.
  static std::string TxnGet(Transaction* txn, const std::string& key,
                            const ReadOptions& ro = ReadOptions()) {
    std::string value;
    Status s = txn->Get(ro, key, &value);
    if (s.IsNotFound()) return "NOT_FOUND";
    return s.ok() ? value : s.ToString();
  }

  TempDirectory dir_;
  Options options_;
  TransactionDBOptions txn_db_options_;
  std::unique_ptr<FaultInjectionTestEnv> fault_env_;  // declared first: outlives db_
  std::unique_ptr<TransactionDB> db_;
};

}  // namespace shale
