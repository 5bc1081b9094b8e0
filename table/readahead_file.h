// ReadaheadFile: the data block reads of one table iterator, served from a window of the
// file read ahead of them once they run in file order. A compaction, or a scan, reads a
// table's blocks one after another; read one by one, each costs a system call (pread) of
// its own for a few KiB. Read ahead, one call brings many blocks.
//
// Two modes, as RocksDB's:
// - fixed (size > 0; a compaction's compaction_readahead_size, or
//   ReadOptions::readahead_size): a read outside the window reads `size` bytes from its
//   offset on (a read of `size` bytes or more is read alone);
// - automatic (size 0; an iterator's default): reads go one by one until
//   kAutoReadaheadAfter reads in a row each started where the one before ended; then the
//   window is kAutoInitial bytes, doubling at each window up to kAutoMax. A read elsewhere
//   (a seek) starts over.
// A window never reaches past the end of the file. Blocks are verified by the caller
// (ReadBlock) as any others; a window that cannot be read is the read's error.
//
// Thread safety: none; one iterator at a time. The file must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/env.h"

namespace shale {

class ReadaheadFile final : public RandomAccessFile {
 public:
  static constexpr size_t kAutoInitial = 8 << 10;
  static constexpr size_t kAutoMax = 256 << 10;
  static constexpr int kAutoReadaheadAfter = 4;

  ReadaheadFile(const RandomAccessFile* file, uint64_t file_size, size_t size)
      : file_(file), file_size_(file_size), fixed_(size), auto_size_(kAutoInitial) {}

  // *result points into the window or into scratch; either stays valid until the next
  // Read. scratch: n bytes, used when the read is not read ahead.
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override;
  bool use_direct_io() const override { return file_->use_direct_io(); }

 private:
  // The window's size for a read of n bytes at offset that the window does not hold, or 0
  // to read it alone.
  size_t WindowFor(uint64_t offset, size_t n) const;

  const RandomAccessFile* const file_;
  const uint64_t file_size_;
  const size_t fixed_;
  // The window: window_.data() may point into buf_ or into the file's own memory.
  mutable std::unique_ptr<char[]> buf_;
  mutable size_t buf_capacity_ = 0;
  mutable uint64_t window_offset_ = 0;
  mutable Slice window_;
  // Automatic mode: where a read in file order would start, how many in a row did, and
  // the next window's size.
  mutable uint64_t next_offset_ = UINT64_MAX;  // none yet: the first read is not in order
  mutable int in_order_ = 0;
  mutable size_t auto_size_;
};

}  // namespace shale
