// log::Writer appends logical records to a write-ahead log file (format in log_format.h).
//
// Thread safety: none; the DB's write path serializes every call (one writer at a time).
// AddRecord pushes each record to the OS (WritableFile::Flush) before returning, so a
// record survives a process crash once AddRecord is OK; it survives a machine crash only
// after Sync. (A caller adding several records at once may push only after the last:
// AddRecord(record, /*flush=*/false), then Flush.) After any I/O error the writer refuses further
// records with that same error: the file's tail is unknown, so block alignment can no longer be
// trusted. The writer owns the file; Close() closes it, after which file() is null.
#pragma once

#include <cstdint>
#include <memory>

#include "db/log_format.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale::log {

// How the DB opens a WAL file for a Writer: through a shared mapping where the Env can, so
// that AddRecord's push to the OS is a copy into the page cache, not a write() per record;
// with kAbsoluteConsistency through a buffer (see log_writer.cc).
EnvOptions WalFileOptions(const DBOptions& options);

class Writer {
 public:
  // Appends to dest. If dest already holds bytes (reopening a log), new records start at the
  // block position implied by its size, so the file stays readable as one log.
  Writer(std::unique_ptr<WritableFile>&& dest, uint64_t log_number);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends one logical record (may be empty), fragmenting it across blocks as needed;
  // without flush it may stay in the file's buffer until the next Flush or AddRecord.
  Status AddRecord(const Slice& record, bool flush = true);
  // Records the WAL this one follows (see kPredecessorType), and pushes it to the OS. Only
  // as the first record of an empty log.
  Status AddPredecessor(uint64_t log_number, uint64_t size);
  // Pushes the records added so far to the OS.
  Status Flush();
  // Makes every record added so far durable: fsync when use_fsync, else fdatasync.
  Status Sync(bool use_fsync);
  // Closes the file. Further calls other than log_number() and file() are errors.
  Status Close();

  WritableFile* file() { return dest_.get(); }
  uint64_t log_number() const { return log_number_; }
  // Whether records (a predecessor record too) were added since the last successful Sync.
  bool has_unsynced_records() const { return unsynced_; }

 private:
  Status EmitPhysicalRecord(RecordType type, const char* data, size_t length);

  std::unique_ptr<WritableFile> dest_;
  const uint64_t log_number_;
  size_t block_offset_;  // where the next header goes in the current block
  Status error_;         // sticky: first failed write
  bool unsynced_ = false;
  // crc32c of each one-byte type, the start of every record's checksum.
  uint32_t type_crc_[kMaxRecordType + 1];
};

}  // namespace shale::log
