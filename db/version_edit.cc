#include "db/version_edit.h"

#include <cinttypes>
#include <cstdio>

#include "util/coding.h"

namespace shale {
namespace {

// Persisted: never renumber. Numbers follow LevelDB where the meaning is the same.
enum Tag : uint32_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kDeletedFile = 6,
  kNewFile = 7,  // shale's layout, see EncodeNewFile
  kPrevLogNumber = 9,
  kMinLogNumberToKeep = 10,  // as RocksDB's; not ignorable: skipping it would lose prepares
  // Column families, RocksDB's numbers: the family an edit applies to, its creation (with
  // its name), its drop, and the largest id ever given (ids are never reused).
  kColumnFamily = 200,
  kColumnFamilyAdd = 201,
  kColumnFamilyDrop = 202,
  kMaxColumnFamily = 203,
  // RocksDB's number: the edit belongs to a group written together, so many follow it.
  kInAtomicGroup = 300,
};

// Per-file optional fields after the fixed ones of kNewFile; a 0 ends the list. Fields with
// VersionEdit::kTagSafeToIgnore set may be skipped by readers that do not know them.
constexpr uint32_t kNewFileFieldsEnd = 0;
// The file's range-tombstone count, when not 0. Not safe to ignore: a reader that did not
// know the file held tombstones would answer reads wrongly.
constexpr uint32_t kNewFileNumRangeDeletions = 1;

void EncodeNewFile(std::string* dst, int level, const FileMetaData& f) {
  PutVarint32(dst, kNewFile);
  PutVarint32(dst, static_cast<uint32_t>(level));
  PutVarint64(dst, f.number);
  PutVarint64(dst, f.file_size);
  PutLengthPrefixedSlice(dst, f.smallest.Encode());
  PutLengthPrefixedSlice(dst, f.largest.Encode());
  PutVarint64(dst, f.smallest_seqno);
  PutVarint64(dst, f.largest_seqno);
  PutVarint64(dst, f.num_entries);
  PutVarint64(dst, f.num_deletions);
  if (f.num_range_deletions != 0) {
    PutVarint32(dst, kNewFileNumRangeDeletions);
    PutVarint64(dst, f.num_range_deletions);
  }
  PutVarint32(dst, kNewFileFieldsEnd);
}

bool GetLevel(Slice* input, int* level) {
  uint32_t v;
  // Far above any supported num_levels; the VersionSet checks the real bound.
  if (!GetVarint32(input, &v) || v >= 1024) return false;
  *level = static_cast<int>(v);
  return true;
}

bool GetInternalKey(Slice* input, InternalKey* dst) {
  Slice s;
  if (!GetLengthPrefixedSlice(input, &s)) return false;
  ParsedInternalKey parsed;
  if (!ParseInternalKey(s, &parsed).ok()) return false;
  return dst->DecodeFrom(s);
}

// Skips a safe-to-ignore field's length-prefixed payload; false for any other tag.
bool SkipIgnorableField(uint32_t tag, Slice* input) {
  if ((tag & VersionEdit::kTagSafeToIgnore) == 0) return false;
  Slice payload;
  return GetLengthPrefixedSlice(input, &payload);
}

const char* DecodeNewFile(Slice* input, int* level, FileMetaData* f) {
  if (!GetLevel(input, level)) return "new-file level";
  if (!GetVarint64(input, &f->number) || !GetVarint64(input, &f->file_size)) {
    return "new-file number or size";
  }
  if (!GetInternalKey(input, &f->smallest) || !GetInternalKey(input, &f->largest)) {
    return "new-file key range";
  }
  if (!GetVarint64(input, &f->smallest_seqno) || !GetVarint64(input, &f->largest_seqno) ||
      f->smallest_seqno > f->largest_seqno) {
    return "new-file sequence range";
  }
  if (!GetVarint64(input, &f->num_entries) || !GetVarint64(input, &f->num_deletions)) {
    return "new-file entry counts";
  }
  for (;;) {
    uint32_t field;
    if (!GetVarint32(input, &field)) return "new-file field list";
    if (field == kNewFileFieldsEnd) break;
    if (field == kNewFileNumRangeDeletions) {
      if (!GetVarint64(input, &f->num_range_deletions)) return "new-file range deletions";
      continue;
    }
    if (!SkipIgnorableField(field, input)) return "new-file unknown field";
  }
  return nullptr;
}

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  if (has_comparator_) {
    PutVarint32(dst, kComparator);
    PutLengthPrefixedSlice(dst, comparator_);
  }
  if (has_log_number_) {
    PutVarint32(dst, kLogNumber);
    PutVarint64(dst, log_number_);
  }
  if (has_prev_log_number_) {
    PutVarint32(dst, kPrevLogNumber);
    PutVarint64(dst, prev_log_number_);
  }
  if (has_min_log_number_to_keep_) {
    PutVarint32(dst, kMinLogNumberToKeep);
    PutVarint64(dst, min_log_number_to_keep_);
  }
  if (has_next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, next_file_number_);
  }
  if (has_last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, last_sequence_);
  }
  if (column_family_ != 0) {
    PutVarint32(dst, kColumnFamily);
    PutVarint32(dst, column_family_);
  }
  if (is_column_family_add_) {
    PutVarint32(dst, kColumnFamilyAdd);
    PutLengthPrefixedSlice(dst, column_family_name_);
  }
  if (is_column_family_drop_) PutVarint32(dst, kColumnFamilyDrop);
  if (has_max_column_family_) {
    PutVarint32(dst, kMaxColumnFamily);
    PutVarint32(dst, max_column_family_);
  }
  if (is_in_atomic_group_) {
    PutVarint32(dst, kInAtomicGroup);
    PutVarint32(dst, remaining_entries_);
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) EncodeNewFile(dst, level, f);
}

Status VersionEdit::DecodeFrom(const Slice& src) {
  Clear();
  Slice input = src;
  const char* msg = nullptr;
  uint32_t tag;
  while (msg == nullptr && !input.empty()) {
    if (!GetVarint32(&input, &tag)) {
      msg = "tag";
      break;
    }
    switch (tag) {
      case kComparator: {
        Slice name;
        if (GetLengthPrefixedSlice(&input, &name)) {
          SetComparatorName(name);
        } else {
          msg = "comparator name";
        }
        break;
      }
      case kLogNumber:
        if (GetVarint64(&input, &log_number_)) {
          has_log_number_ = true;
        } else {
          msg = "log number";
        }
        break;
      case kPrevLogNumber:
        if (GetVarint64(&input, &prev_log_number_)) {
          has_prev_log_number_ = true;
        } else {
          msg = "previous log number";
        }
        break;
      case kMinLogNumberToKeep:
        if (GetVarint64(&input, &min_log_number_to_keep_)) {
          has_min_log_number_to_keep_ = true;
        } else {
          msg = "min log number to keep";
        }
        break;
      case kNextFileNumber:
        if (GetVarint64(&input, &next_file_number_)) {
          has_next_file_number_ = true;
        } else {
          msg = "next file number";
        }
        break;
      case kLastSequence:
        if (GetVarint64(&input, &last_sequence_)) {
          has_last_sequence_ = true;
        } else {
          msg = "last sequence number";
        }
        break;
      case kColumnFamily:
        if (!GetVarint32(&input, &column_family_)) msg = "column family";
        break;
      case kColumnFamilyAdd: {
        Slice name;
        if (GetLengthPrefixedSlice(&input, &name)) {
          AddColumnFamily(name.ToString());
        } else {
          msg = "column family name";
        }
        break;
      }
      case kColumnFamilyDrop: is_column_family_drop_ = true; break;
      case kMaxColumnFamily:
        if (GetVarint32(&input, &max_column_family_)) {
          has_max_column_family_ = true;
        } else {
          msg = "max column family";
        }
        break;
      case kInAtomicGroup:
        if (GetVarint32(&input, &remaining_entries_)) {
          is_in_atomic_group_ = true;
        } else {
          msg = "atomic group";
        }
        break;
      case kDeletedFile: {
        int level;
        uint64_t number;
        if (GetLevel(&input, &level) && GetVarint64(&input, &number)) {
          deleted_files_.emplace_back(level, number);
        } else {
          msg = "deleted file";
        }
        break;
      }
      case kNewFile: {
        int level;
        FileMetaData f;
        msg = DecodeNewFile(&input, &level, &f);
        if (msg == nullptr) new_files_.emplace_back(level, std::move(f));
        break;
      }
      default:
        if (!SkipIgnorableField(tag, &input)) msg = "unknown tag";
        break;
    }
  }
  if (msg == nullptr && is_column_family_add_ && is_column_family_drop_) {
    msg = "column family both added and dropped";
  }
  if (msg != nullptr) return Status::Corruption("VersionEdit", msg);
  return Status::OK();
}

std::string VersionEdit::DebugString() const {
  std::string r = "VersionEdit {";
  char buf[128];
  if (has_comparator_) r += "\n  Comparator: " + comparator_;
  if (has_log_number_) {
    snprintf(buf, sizeof(buf), "\n  LogNumber: %" PRIu64, log_number_);
    r += buf;
  }
  if (has_prev_log_number_) {
    snprintf(buf, sizeof(buf), "\n  PrevLogNumber: %" PRIu64, prev_log_number_);
    r += buf;
  }
  if (has_min_log_number_to_keep_) {
    snprintf(buf, sizeof(buf), "\n  MinLogNumberToKeep: %" PRIu64, min_log_number_to_keep_);
    r += buf;
  }
  if (has_next_file_number_) {
    snprintf(buf, sizeof(buf), "\n  NextFileNumber: %" PRIu64, next_file_number_);
    r += buf;
  }
  if (has_last_sequence_) {
    snprintf(buf, sizeof(buf), "\n  LastSeq: %" PRIu64, last_sequence_);
    r += buf;
  }
  if (column_family_ != 0) {
    snprintf(buf, sizeof(buf), "\n  ColumnFamily: %" PRIu32, column_family_);
    r += buf;
  }
  if (is_column_family_add_) r += "\n  ColumnFamilyAdd: " + column_family_name_;
  if (is_column_family_drop_) r += "\n  ColumnFamilyDrop";
  if (is_in_atomic_group_) {
    snprintf(buf, sizeof(buf), "\n  AtomicGroup: %" PRIu32 " more", remaining_entries_);
    r += buf;
  }
  if (has_max_column_family_) {
    snprintf(buf, sizeof(buf), "\n  MaxColumnFamily: %" PRIu32, max_column_family_);
    r += buf;
  }
  for (const auto& [level, number] : deleted_files_) {
    snprintf(buf, sizeof(buf), "\n  DeleteFile: %d %" PRIu64, level, number);
    r += buf;
  }
  for (const auto& [level, f] : new_files_) {
    snprintf(buf, sizeof(buf),
             "\n  AddFile: %d %" PRIu64 " %" PRIu64 " seq [%" PRIu64 ", %" PRIu64 "] ", level,
             f.number, f.file_size, f.smallest_seqno, f.largest_seqno);
    r += buf;
    r += f.smallest.DebugString() + " .. " + f.largest.DebugString();
  }
  r += "\n}\n";
  return r;
}

}  // namespace shale
