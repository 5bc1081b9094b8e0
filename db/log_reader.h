// log::Reader reads logical records back from a write-ahead log (format in log_format.h).
//
// It never trusts the bytes: every length is checked against the block and the data
// actually read, so arbitrary input ends in records, reported damage or the end; never a
// crash or an endless loop. Thread safety: none (one reader per file, one thread at a time).
// A record returned by ReadRecord stays valid until the next ReadRecord call on the same
// reader with the same scratch string.
//
// What the reader does with damage, by WALRecoveryMode (the `mode` of ReadRecord):
//
// * An incomplete record at the end of the file, the trace of a write cut off by a crash
//   (EOF inside a header or payload whose declared length would still fit in its block, or
//   EOF after a kFirstType/kMiddleType fragment without its kLastType):
//     - kAbsoluteConsistency: reported as Corruption("truncated record at end of file"),
//       then ReadRecord returns false.
//     - kTolerateCorruptedTailRecords, kPointInTimeRecovery, kSkipAnyCorruptedRecords:
//       the clean end of the log; nothing is reported.
//   A damaged record (checksum, length or type) followed by nothing but zeros to the end of
//   the file is that case too: the record a crash cut off while it was being copied into a
//   WAL written through a mapping, whose unwritten rest reads as zeros.
// * Zeros to the end of the file (preallocated or never-written space, which is how a
//   zero-type header reads) are the clean end in every mode, unless they cut a fragmented
//   record short, which is the incomplete-record case above. Zeros followed later by real
//   records are a hole: reported as Corruption like the damage below, when the first record
//   after them is reached.
// * Damage in the middle: a checksum mismatch, a length that cannot fit its block, an
//   unknown record type, fragments out of order (kMiddleType/kLastType without a start, a
//   start without an end followed by another record). Reported in EVERY mode through
//   Reporter::Corruption, with the file name and the byte offset of the damage and the
//   number of bytes dropped. Then:
//     - kSkipAnyCorruptedRecords: the reader drops the damaged record (for a checksum or
//       length error, the rest of its block, since its length cannot be trusted), resyncs
//       at the next record start and goes on.
//     - every other mode: ReadRecord returns false, now and on every later call, so the
//       caller holds exactly the records before the damage. Whether that is an error
//       (kAbsoluteConsistency, kTolerateCorruptedTailRecords) or a consistent prefix
//       (kPointInTimeRecovery) is the caller's decision, made from what it was told.
// * An I/O error from the file is passed to Reporter::Corruption as that error (not a
//   Corruption status) and ends the reading in every mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "db/log_format.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale::log {

// Told about dropped bytes. Calls come from ReadRecord on the reader's thread.
struct Reporter {
  virtual ~Reporter() = default;
  // `bytes` were dropped because of `status` (Corruption naming the file and offset, or
  // the I/O error that stopped the reading).
  virtual void Corruption(size_t bytes, const Status& status) = 0;
  // A record written by an earlier user of a recycled log file. This format never recycles
  // files, so the reader does not call it today.
  virtual void OldLogRecord(size_t /*bytes*/) {}
};

class Reader {
 public:
  using Reporter = log::Reporter;

  // reporter may be null (damage is then only visible as an early end) and must outlive
  // the reader. checksum=false skips crc verification. file_name names the file in
  // messages.
  Reader(std::unique_ptr<SequentialFile>&& src, Reporter* reporter, bool checksum,
         uint64_t log_number, std::string file_name);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the next logical record into *record (pointing into scratch or the reader's
  // buffer). Returns false at the end of the log, or when damage stops the reading (see
  // the header comment).
  bool ReadRecord(Slice* record, std::string* scratch,
                  WALRecoveryMode mode = WALRecoveryMode::kTolerateCorruptedTailRecords);

  // File offset of the first header of the last record ReadRecord returned.
  uint64_t LastRecordOffset() const { return last_record_offset_; }
  // File offset just past the last whole record read (one returned, or a predecessor
  // record).
  uint64_t LastRecordEnd() const { return last_record_end_; }
  // The WAL this one follows, from its kPredecessorType record (read, and not returned, by
  // ReadRecord), or nullptr if none was read.
  struct Predecessor {
    uint64_t log_number;
    uint64_t size;
  };
  const Predecessor* predecessor() const { return has_predecessor_ ? &predecessor_ : nullptr; }
  // Whether the whole file has been read (the last read came back short).
  bool IsEOF() const { return eof_; }
  // Whether the reading ended at an incomplete record that was not reported (the modes
  // other than kAbsoluteConsistency take it as the clean end). Recovery asks, because in
  // a log that is not the newest such an end is damage, not a crash's cut.
  bool EndedInTornRecord() const { return ended_torn_; }
  uint64_t log_number() const { return log_number_; }
  const std::string& file_name() const { return file_name_; }
  SequentialFile* file() { return file_.get(); }

 private:
  // ReadPhysicalRecord's results besides the RecordTypes.
  enum Outcome : unsigned {
    kEof = kMaxRecordType + 1,  // clean end of file (possibly after zeros)
    kTornTail,                  // incomplete record at end of file
    kBadRecord,                 // damage; bad_reason_ says what
    kReadError,                 // I/O error, already reported
  };

  // Next physical record: its type (a RecordType) with *fragment and *offset, or an
  // Outcome with *drop_size and *offset describing the bytes given up.
  unsigned ReadPhysicalRecord(Slice* fragment, size_t* drop_size, uint64_t* offset);
  // Refills buffer_ with the next block. False at EOF or on a read error.
  bool ReadBlock();
  void ReportCorruption(size_t bytes, uint64_t offset, const char* reason);
  // Reports any pending hole of zeros that real data follows. True if there was one.
  bool ReportZeroHole(size_t extra_bytes);

  const std::unique_ptr<SequentialFile> file_;
  Reporter* const reporter_;
  const bool checksum_;
  const uint64_t log_number_;
  const std::string file_name_;
  const std::unique_ptr<char[]> backing_store_;  // kBlockSize bytes

  Slice buffer_;  // unread part of the current block
  bool eof_ = false;
  bool stopped_ = false;               // damage or a read error ended the reading for good
  bool ended_torn_ = false;            // see EndedInTornRecord
  uint64_t end_of_buffer_offset_ = 0;  // file offset just past buffer_
  uint64_t last_record_offset_ = 0;
  uint64_t last_record_end_ = 0;
  bool has_predecessor_ = false;
  Predecessor predecessor_{0, 0};
  const char* bad_reason_ = "";

  // Set with kBadRecord: nothing but zeros follows the damaged record in its block.
  bool bad_then_zeros_ = false;
  // A damaged record followed by zeros, held back until the reading shows whether
  // anything but zeros follows (then it is damage) or not (then it is a torn tail).
  bool torn_candidate_ = false;
  uint64_t candidate_offset_ = 0;
  size_t candidate_bytes_ = 0;
  const char* candidate_reason_ = "";

  // Zeros seen (from zero_start_, zero_bytes_ long) that no real record has followed yet.
  bool in_zeros_ = false;
  uint64_t zero_start_ = 0;
  uint64_t zero_bytes_ = 0;
};

// Reads WAL `path` (log `number`) through and sets *end to the end of its last whole
// record: where a copy of a live WAL may be cut so that it reads as a clean log in every
// recovery mode (a checkpoint's or a backup's). The open's error, if any.
Status WholeRecordsEnd(Env* env, const std::string& path, uint64_t number, uint64_t* end);

}  // namespace shale::log
