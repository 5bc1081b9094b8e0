// Status: the outcome of an operation, OK or an error code with a message. Every library
// call that can fail returns one; no exception crosses the API.
//
// Codes, subcodes and ToString() texts follow RocksDB's, so that code and scripts written
// against RocksDB read them the same way. Thread safety: a const Status may be read from
// many threads; copying is cheap when OK (no allocation).
#pragma once

#include <memory>
#include <string>

#include "shale/slice.h"

namespace shale {

class [[nodiscard]] Status {
 public:
  enum Code : unsigned char {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kNotSupported = 3,
    kInvalidArgument = 4,
    kIOError = 5,
    kMergeInProgress = 6,
    kIncomplete = 7,
    kShutdownInProgress = 8,
    kTimedOut = 9,
    kAborted = 10,
    kBusy = 11,
    kExpired = 12,
    kTryAgain = 13,
    kCompactionTooLarge = 14,
    kColumnFamilyDropped = 15,
    kMaxCode
  };

  enum SubCode : unsigned char {
    kNone = 0,
    kMutexTimeout = 1,
    kLockTimeout = 2,
    kLockLimit = 3,
    kNoSpace = 4,
    kDeadlock = 5,
    kStaleFile = 6,
    kMemoryLimit = 7,
    kSpaceLimit = 8,
    kPathNotFound = 9,
    KMergeOperandsInsufficientCapacity = 10,
    kManualCompactionPaused = 11,
    kOverwritten = 12,
    kTxnNotPrepared = 13,
    kIOFenced = 14,
    kMaxSubCode
  };

  enum Severity : unsigned char {
    kNoError = 0,
    kSoftError = 1,
    kHardError = 2,
    kFatalError = 3,
    kUnrecoverableError = 4,
    kMaxSeverity
  };

  Status() = default;
  Status(const Status& s);
  Status& operator=(const Status& s);
  Status(Status&& s) noexcept = default;
  Status& operator=(Status&& s) noexcept = default;
  Status(const Status& s, Severity sev);

  Code code() const { return code_; }
  SubCode subcode() const { return subcode_; }
  Severity severity() const { return sev_; }
  // The message without the code's prefix, or nullptr when there is none.
  const char* getState() const { return state_ ? state_->c_str() : nullptr; }

  static Status OK() { return Status(); }
  static Status NotFound(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kNotFound, kNone, msg, msg2);
  }
  static Status NotFound(SubCode sc, const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kNotFound, sc, msg, msg2);
  }
  static Status Corruption(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kCorruption, kNone, msg, msg2);
  }
  static Status NotSupported(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kNotSupported, kNone, msg, msg2);
  }
  static Status InvalidArgument(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kInvalidArgument, kNone, msg, msg2);
  }
  static Status IOError(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIOError, kNone, msg, msg2);
  }
  static Status IOError(SubCode sc, const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIOError, sc, msg, msg2);
  }
  static Status NoSpace(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIOError, kNoSpace, msg, msg2);
  }
  static Status PathNotFound(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIOError, kPathNotFound, msg, msg2);
  }
  static Status MergeInProgress(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kMergeInProgress, kNone, msg, msg2);
  }
  static Status Incomplete(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIncomplete, kNone, msg, msg2);
  }
  static Status Incomplete(SubCode sc, const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kIncomplete, sc, msg, msg2);
  }
  static Status ShutdownInProgress(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kShutdownInProgress, kNone, msg, msg2);
  }
  // The SubCode forms carry no message; the transaction lock manager answers with them
  // (TimedOut(kLockTimeout), Busy(kDeadlock)), as RocksDB's does.
  static Status TimedOut(SubCode sc = kNone) { return Status(kTimedOut, sc, Slice(), Slice()); }
  static Status TimedOut(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(kTimedOut, kNone, msg, msg2);
  }
  static Status Aborted(SubCode sc = kNone) { return Status(kAborted, sc, Slice(), Slice()); }
  static Status Aborted(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(kAborted, kNone, msg, msg2);
  }
  static Status Busy(SubCode sc = kNone) { return Status(kBusy, sc, Slice(), Slice()); }
  static Status Busy(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(kBusy, kNone, msg, msg2);
  }
  // Too many keys locked at once (TransactionDBOptions::max_num_locks).
  static Status LockLimit() { return Status(kAborted, kLockLimit, Slice(), Slice()); }
  // Commit or Rollback asked of a transaction that has to be prepared first.
  static Status TxnNotPrepared(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kInvalidArgument, kTxnNotPrepared, msg, msg2);
  }
  static Status Expired(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kExpired, kNone, msg, msg2);
  }
  static Status ColumnFamilyDropped(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kColumnFamilyDropped, kNone, msg, msg2);
  }
  static Status TryAgain(const Slice& msg = Slice(), const Slice& msg2 = Slice()) {
    return Status(kTryAgain, kNone, msg, msg2);
  }

  bool ok() const { return code_ == kOk; }
  bool IsNotFound() const { return code_ == kNotFound; }
  bool IsCorruption() const { return code_ == kCorruption; }
  bool IsNotSupported() const { return code_ == kNotSupported; }
  bool IsInvalidArgument() const { return code_ == kInvalidArgument; }
  bool IsIOError() const { return code_ == kIOError; }
  bool IsMergeInProgress() const { return code_ == kMergeInProgress; }
  bool IsIncomplete() const { return code_ == kIncomplete; }
  bool IsShutdownInProgress() const { return code_ == kShutdownInProgress; }
  bool IsTimedOut() const { return code_ == kTimedOut; }
  bool IsAborted() const { return code_ == kAborted; }
  bool IsLockLimit() const { return code_ == kAborted && subcode_ == kLockLimit; }
  bool IsBusy() const { return code_ == kBusy; }
  bool IsDeadlock() const { return code_ == kBusy && subcode_ == kDeadlock; }
  bool IsExpired() const { return code_ == kExpired; }
  bool IsTryAgain() const { return code_ == kTryAgain; }
  bool IsColumnFamilyDropped() const { return code_ == kColumnFamilyDropped; }
  bool IsNoSpace() const { return code_ == kIOError && subcode_ == kNoSpace; }
  bool IsPathNotFound() const {
    return (code_ == kIOError || code_ == kNotFound) && subcode_ == kPathNotFound;
  }
  bool IsTxnNotPrepared() const { return code_ == kInvalidArgument && subcode_ == kTxnNotPrepared; }

  // "OK", or the code's RocksDB text followed by ": " and the message.
  std::string ToString() const;

  // Marks the status as looked at; kept for source compatibility with RocksDB.
  void PermitUncheckedError() const {}

  bool operator==(const Status& rhs) const {
    return code_ == rhs.code_ && subcode_ == rhs.subcode_;
  }
  bool operator!=(const Status& rhs) const { return !(*this == rhs); }

 private:
  Status(Code code, SubCode subcode, const Slice& msg, const Slice& msg2);

  Code code_ = kOk;
  SubCode subcode_ = kNone;
  Severity sev_ = kNoError;
  std::unique_ptr<std::string> state_;  // null when there is no message
};

}  // namespace shale
