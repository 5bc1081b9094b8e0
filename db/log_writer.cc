#include "db/log_writer.h"

#include <algorithm>

#include "util/coding.h"
#include "util/crc32c.h"

namespace shale::log {

EnvOptions WalFileOptions(const DBOptions& options) {
  EnvOptions env_options;
  env_options.writable_file_max_buffer_size = options.writable_file_max_buffer_size;
  // A record is copied into a mapping piece by piece, and a process killed meanwhile
  // leaves its first pieces in the file: a torn last record, which kAbsoluteConsistency
  // refuses at recovery. Through the buffer, a record reaches the file in one write(), whole.
  env_options.use_mmap_writes = options.wal_recovery_mode != WALRecoveryMode::kAbsoluteConsistency;
  return env_options;
}

Writer::Writer(std::unique_ptr<WritableFile>&& dest, uint64_t log_number)
    : dest_(std::move(dest)),
      log_number_(log_number),
      block_offset_(dest_ == nullptr ? 0 : dest_->GetFileSize() % kBlockSize) {
  for (int t = 0; t <= kMaxRecordType; t++) {
    const char type = static_cast<char>(t);
    type_crc_[t] = crc32c::Value(&type, 1);
  }
}

Writer::~Writer() = default;

Status Writer::Flush() {
  if (!error_.ok()) return error_;
  if (dest_ == nullptr) return Status::InvalidArgument("log writer is closed");
  Status s = dest_->Flush();
  if (!s.ok()) error_ = s;
  return s;
}

Status Writer::AddPredecessor(uint64_t log_number, uint64_t size) {
  if (!error_.ok()) return error_;
  if (dest_ == nullptr) return Status::InvalidArgument("log writer is closed");
  if (dest_->GetFileSize() != 0) {
    return Status::InvalidArgument("a predecessor record must come first in its log");
  }
  // A WAL may be left holding nothing but this record (with column families, a switch for
  // one family's flush right after another's): it must still be synced before the WAL
  // after it relies on its size.
  unsynced_ = true;
  char payload[kPredecessorSize];
  EncodeFixed64(payload, log_number);
  EncodeFixed64(payload + 8, size);
  Status s = EmitPhysicalRecord(kPredecessorType, payload, sizeof(payload));
  if (s.ok()) s = dest_->Flush();
  if (!s.ok()) error_ = s;
  return s;
}

Status Writer::AddRecord(const Slice& record, bool flush) {
  if (!error_.ok()) return error_;
  if (dest_ == nullptr) return Status::InvalidArgument("log writer is closed");
  unsynced_ = true;

  const char* ptr = record.data();
  size_t left = record.size();
  bool begin = true;
  Status s;
  // Runs at least once so an empty record still produces a (zero-length) kFullType record.
  do {
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      if (leftover > 0) {
        static constexpr char kZeros[kHeaderSize] = {};
        s = dest_->Append(Slice(kZeros, leftover));
        if (!s.ok()) break;
      }
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t fragment = std::min(left, avail);
    const bool end = (fragment == left);
    RecordType type;
    if (begin && end) {
      type = kFullType;
    } else if (begin) {
      type = kFirstType;
    } else if (end) {
      type = kLastType;
    } else {
      type = kMiddleType;
    }
    s = EmitPhysicalRecord(type, ptr, fragment);
    ptr += fragment;
    left -= fragment;
    begin = false;
  } while (s.ok() && left > 0);

  if (s.ok() && flush) s = dest_->Flush();
  if (!s.ok()) error_ = s;
  return s;
}

Status Writer::EmitPhysicalRecord(RecordType type, const char* data, size_t length) {
  // The caller keeps every fragment inside one block, which also bounds it to 16 bits.
  char header[kHeaderSize];
  const uint32_t crc = crc32c::Extend(type_crc_[type], data, length);
  EncodeFixed32(header, crc32c::Mask(crc));
  EncodeFixed16(header + 4, static_cast<uint16_t>(length));
  header[6] = static_cast<char>(type);

  Status s = dest_->Append(Slice(header, kHeaderSize));
  if (s.ok() && length > 0) s = dest_->Append(Slice(data, length));
  block_offset_ += kHeaderSize + length;
  return s;
}

Status Writer::Sync(bool use_fsync) {
  if (!error_.ok()) return error_;
  if (dest_ == nullptr) return Status::InvalidArgument("log writer is closed");
  Status s = use_fsync ? dest_->Fsync() : dest_->Sync();
  if (!s.ok()) {
    error_ = s;
  } else {
    unsynced_ = false;
  }
  return s;
}

Status Writer::Close() {
  if (dest_ == nullptr) return Status::OK();
  Status s = dest_->Close();
  dest_.reset();
  return s;
}

}  // namespace shale::log
