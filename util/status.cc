#include "shale/status.h"

namespace shale {

Status::Status(Code code, SubCode subcode, const Slice& msg, const Slice& msg2)
    : code_(code), subcode_(subcode) {
  if (msg.empty() && msg2.empty()) return;
  auto s = std::make_unique<std::string>(msg.data(), msg.size());
  if (!msg2.empty()) {
    s->append(": ");
    s->append(msg2.data(), msg2.size());
  }
  state_ = std::move(s);
}

Status::Status(const Status& s)
    : code_(s.code_),
      subcode_(s.subcode_),
      sev_(s.sev_),
      state_(s.state_ ? std::make_unique<std::string>(*s.state_) : nullptr) {}

Status::Status(const Status& s, Severity sev) : Status(s) { sev_ = sev; }

Status& Status::operator=(const Status& s) {
  if (this != &s) {
    code_ = s.code_;
    subcode_ = s.subcode_;
    sev_ = s.sev_;
    state_ = s.state_ ? std::make_unique<std::string>(*s.state_) : nullptr;
  }
  return *this;
}

namespace {

const char* CodeText(Status::Code code) {
  switch (code) {
    case Status::kOk: return "OK";
    case Status::kNotFound: return "NotFound: ";
    case Status::kCorruption: return "Corruption: ";
    case Status::kNotSupported: return "Not implemented: ";
    case Status::kInvalidArgument: return "Invalid argument: ";
    case Status::kIOError: return "IO error: ";
    case Status::kMergeInProgress: return "Merge in progress: ";
    case Status::kIncomplete: return "Result incomplete: ";
    case Status::kShutdownInProgress: return "Shutdown in progress: ";
    case Status::kTimedOut: return "Operation timed out: ";
    case Status::kAborted: return "Operation aborted: ";
    case Status::kBusy: return "Resource busy: ";
    case Status::kExpired: return "Operation expired: ";
    case Status::kTryAgain: return "Operation failed. Try again.: ";
    case Status::kCompactionTooLarge: return "Compaction too large: ";
    case Status::kColumnFamilyDropped: return "Column family dropped: ";
    default: return "Unknown code: ";
  }
}

const char* SubCodeText(Status::SubCode sc) {
  switch (sc) {
    case Status::kNone: return "";
    case Status::kMutexTimeout: return "Timeout Acquiring Mutex";
    case Status::kLockTimeout: return "Timeout waiting to lock key";
    case Status::kLockLimit: return "Failed to acquire lock due to max_num_locks limit";
    case Status::kNoSpace: return "No space left on device";
    case Status::kDeadlock: return "Deadlock";
    case Status::kStaleFile: return "Stale file handle";
    case Status::kMemoryLimit: return "Memory limit reached";
    case Status::kSpaceLimit: return "Space limit reached";
    case Status::kPathNotFound: return "No such file or directory";
    case Status::KMergeOperandsInsufficientCapacity:
      return "Insufficient capacity for merge operands";
    case Status::kManualCompactionPaused: return "Manual compaction paused";
    case Status::kOverwritten: return " (overwritten)";
    case Status::kTxnNotPrepared: return "Txn not prepared";
    case Status::kIOFenced: return "IO fenced off";
    default: return "";
  }
}

}  // namespace

std::string Status::ToString() const {
  std::string result(CodeText(code_));
  if (code_ == kOk) return result;
  result.append(SubCodeText(subcode_));
  if (state_) {
    if (subcode_ != kNone) result.append(": ");
    result.append(*state_);
  }
  return result;
}

}  // namespace shale
