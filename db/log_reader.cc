#include "db/log_reader.h"

#include <algorithm>
#include <utility>

#include "util/coding.h"
#include "util/crc32c.h"

namespace shale::log {

namespace {

bool AllZero(const Slice& s) {
  return std::all_of(s.data(), s.data() + s.size(), [](char c) { return c == 0; });
}

}  // namespace

Reader::Reader(std::unique_ptr<SequentialFile>&& src, Reporter* reporter, bool checksum,
               uint64_t log_number, std::string file_name)
    : file_(std::move(src)),
      reporter_(reporter),
      checksum_(checksum),
      log_number_(log_number),
      file_name_(std::move(file_name)),
      backing_store_(new char[kBlockSize]) {}

Reader::~Reader() = default;

void Reader::ReportCorruption(size_t bytes, uint64_t offset, const char* reason) {
  if (reporter_ == nullptr) return;
  reporter_->Corruption(bytes, Status::Corruption(file_name_ + ": " + reason + " at offset " +
                                                  std::to_string(offset)));
}

bool Reader::ReportZeroHole(size_t extra_bytes) {
  if (!in_zeros_) return false;
  in_zeros_ = false;
  ReportCorruption(zero_bytes_ + extra_bytes, zero_start_,
                   "zeroed bytes followed by more records (a hole in the log)");
  return true;
}

bool Reader::ReadBlock() {
  buffer_.clear();
  Status s = file_->Read(kBlockSize, &buffer_, backing_store_.get());
  if (!s.ok()) {
    buffer_.clear();
    eof_ = true;
    stopped_ = true;
    if (reporter_ != nullptr) reporter_->Corruption(kBlockSize, s);
    return false;
  }
  if (buffer_.size() > kBlockSize) buffer_ = Slice(buffer_.data(), kBlockSize);  // defensive
  end_of_buffer_offset_ += buffer_.size();
  if (buffer_.size() < kBlockSize) eof_ = true;
  return true;
}

unsigned Reader::ReadPhysicalRecord(Slice* fragment, size_t* drop_size, uint64_t* offset) {
  while (true) {
    if (buffer_.size() < kHeaderSize) {
      if (!eof_) {
        // The writer's zero padding at a block end carries nothing.
        if (in_zeros_) zero_bytes_ += buffer_.size();
        if (!ReadBlock()) return kReadError;
        continue;
      }
      if (buffer_.empty()) return kEof;
      // A few bytes before EOF, too few for a header.
      *offset = end_of_buffer_offset_ - buffer_.size();
      *drop_size = buffer_.size();
      const bool zeros = AllZero(buffer_);
      const bool padding = kBlockSize - *offset % kBlockSize < kHeaderSize;
      buffer_.clear();
      return zeros || padding ? kEof : kTornTail;
    }

    const char* header = buffer_.data();
    const uint32_t length = DecodeFixed16(header + 4);
    const unsigned type = static_cast<unsigned char>(header[6]);
    *offset = end_of_buffer_offset_ - buffer_.size();

    if (type == kZeroType && length == 0) {
      // Never written by the writer: this is preallocated or never-written space, which is
      // only a clean end if nothing but zeros follows in this block.
      if (AllZero(buffer_)) {
        if (!in_zeros_) {
          in_zeros_ = true;
          zero_start_ = *offset;
          zero_bytes_ = 0;
        }
        zero_bytes_ += buffer_.size();
        buffer_.clear();
        continue;
      }
      bad_then_zeros_ = AllZero(Slice(header + kHeaderSize, buffer_.size() - kHeaderSize));
      *drop_size = buffer_.size();
      buffer_.clear();
      bad_reason_ = "zero header followed by non-zero bytes";
      return kBadRecord;
    }

    if (kHeaderSize + length > buffer_.size()) {
      *drop_size = buffer_.size();
      buffer_.clear();
      // A record cut off by EOF is a torn write only if it could have fit its block at all.
      if (eof_ && *offset % kBlockSize + kHeaderSize + length <= kBlockSize) return kTornTail;
      bad_then_zeros_ = AllZero(Slice(header + kHeaderSize, *drop_size - kHeaderSize));
      bad_reason_ = "bad record length";
      return kBadRecord;
    }

    if (checksum_) {
      const uint32_t expected = crc32c::Unmask(DecodeFixed32(header));
      const uint32_t actual = crc32c::Value(header + 6, 1 + length);
      if (actual != expected) {
        // The length may be what is damaged, so nothing else in this block is trusted.
        bad_then_zeros_ =
            AllZero(Slice(header + kHeaderSize + length, buffer_.size() - kHeaderSize - length));
        *drop_size = buffer_.size();
        buffer_.clear();
        bad_reason_ = "checksum mismatch";
        return kBadRecord;
      }
    }

    buffer_.remove_prefix(kHeaderSize + length);
    if (type == kZeroType || type > kMaxRecordType) {
      bad_then_zeros_ = AllZero(buffer_);
      *drop_size = kHeaderSize + length;
      bad_reason_ = "unknown record type";
      return kBadRecord;
    }
    *fragment = Slice(header + kHeaderSize, length);
    return type;
  }
}

bool Reader::ReadRecord(Slice* record, std::string* scratch, WALRecoveryMode mode) {
  scratch->clear();
  *record = Slice();
  if (stopped_) return false;

  const bool skip_damage = (mode == WALRecoveryMode::kSkipAnyCorruptedRecords);
  bool in_fragmented_record = false;
  uint64_t record_offset = 0;  // of the first fragment of the record being assembled
  size_t record_bytes = 0;     // file bytes (headers included) of the fragments so far
  // Ends the reading for good after reported damage, unless damaged records are skipped.
  auto damaged = [&]() {
    in_fragmented_record = false;
    scratch->clear();
    if (skip_damage) return false;
    stopped_ = true;
    return true;
  };

  while (true) {
    Slice fragment;
    size_t drop_size = 0;
    uint64_t offset = 0;
    unsigned type = ReadPhysicalRecord(&fragment, &drop_size, &offset);

    if (type == kFullType || type == kFirstType || type == kMiddleType || type == kLastType ||
        type == kPredecessorType || type == kBadRecord) {
      if (torn_candidate_) {
        // More log after it: the damaged record was not the cut-off end after all.
        torn_candidate_ = false;
        ReportCorruption(candidate_bytes_, candidate_offset_, candidate_reason_);
        if (damaged()) return false;
      }
      if (ReportZeroHole(in_fragmented_record ? record_bytes : 0) && damaged()) return false;
    }

    switch (type) {
      case kFullType:
      case kFirstType:
        if (in_fragmented_record) {
          ReportCorruption(record_bytes, record_offset, "partial record without end");
          if (damaged()) return false;
        }
        if (type == kFullType) {
          *record = fragment;
          last_record_offset_ = offset;
          last_record_end_ = offset + kHeaderSize + fragment.size();
          return true;
        }
        record_offset = offset;
        scratch->assign(fragment.data(), fragment.size());
        record_bytes = kHeaderSize + fragment.size();
        in_fragmented_record = true;
        break;

      case kMiddleType:
      case kLastType:
        if (!in_fragmented_record) {
          ReportCorruption(kHeaderSize + fragment.size(), offset,
                           "missing start of fragmented record");
          if (damaged()) return false;
          break;
        }
        scratch->append(fragment.data(), fragment.size());
        record_bytes += kHeaderSize + fragment.size();
        if (type == kLastType) {
          *record = Slice(*scratch);
          last_record_offset_ = record_offset;
          last_record_end_ = offset + kHeaderSize + fragment.size();
          return true;
        }
        break;

      case kPredecessorType:
        if (in_fragmented_record) {
          ReportCorruption(record_bytes, record_offset, "partial record without end");
          if (damaged()) return false;
        }
        if (fragment.size() != kPredecessorSize) {
          ReportCorruption(kHeaderSize + fragment.size(), offset, "bad predecessor record");
          if (damaged()) return false;
          break;
        }
        has_predecessor_ = true;
        predecessor_.log_number = DecodeFixed64(fragment.data());
        predecessor_.size = DecodeFixed64(fragment.data() + 8);
        last_record_end_ = offset + kHeaderSize + fragment.size();
        break;

      case kEof:
      case kTornTail:
        if (torn_candidate_) {
          // Nothing but zeros after the damaged record: the write a crash cut off.
          torn_candidate_ = false;
          type = kTornTail;
          drop_size = candidate_bytes_;
          offset = candidate_offset_;
          in_fragmented_record = false;
        }
        if (type == kTornTail || in_fragmented_record) {
          in_zeros_ = false;
          ended_torn_ = true;
          if (mode == WALRecoveryMode::kAbsoluteConsistency) {
            ReportCorruption(drop_size + (in_fragmented_record ? record_bytes : 0),
                             in_fragmented_record ? record_offset : offset,
                             "truncated record at end of file");
          }
        }
        scratch->clear();
        return false;

      case kBadRecord:
        if (bad_then_zeros_) {
          // Only zeros follow it in its block: perhaps a record whose write a crash cut off
          // in a file written through a mapping (whose tail is zeros). What follows decides.
          torn_candidate_ = true;
          candidate_offset_ = offset;
          candidate_bytes_ = drop_size + (in_fragmented_record ? record_bytes : 0);
          candidate_reason_ = bad_reason_;
          in_fragmented_record = false;
          scratch->clear();
          break;
        }
        ReportCorruption(drop_size + (in_fragmented_record ? record_bytes : 0), offset,
                         bad_reason_);
        if (damaged()) return false;
        break;

      case kReadError:
      default:
        stopped_ = true;
        scratch->clear();
        return false;
    }
  }
}

Status WholeRecordsEnd(Env* env, const std::string& path, uint64_t number, uint64_t* end) {
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(path, &file, EnvOptions());
  if (!s.ok()) return s;
  Reader reader(std::move(file), /*reporter=*/nullptr, /*checksum=*/true, number, path);
  Slice record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) {
  }
  *end = reader.LastRecordEnd();
  return Status::OK();
}

}  // namespace shale::log
