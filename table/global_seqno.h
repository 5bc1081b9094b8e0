// Reading an ingested file with the sequence number its ingestion gave it.
//
// A file SstFileWriter made holds every entry at sequence number 0 and each user key once
// (TableProperties::external_sst_file_version marks it). When a DB ingests it, the
// ingestion picks one sequence number G for the whole file (the global sequence number)
// and records it as the file's smallest and largest sequence in the MANIFEST; the file
// itself is never rewritten. The reader then shows each entry (k, 0, type) as (k, G, type),
// so that the rest of the DB (reads, snapshots, compaction) sees an ordinary file whose
// entries were all written at G. G = 0 needs nothing of this: the file reads as written.
//
// Thread safety: a GlobalSeqnoKey belongs to one thread; the iterator as any iterator.
#pragma once

#include <string>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace shale {

// The internal keys of one file seen with sequence number seq (> 0).
class GlobalSeqnoKey {
 public:
  explicit GlobalSeqnoKey(SequenceNumber seq) : seq_(seq) {}

  // file_key (an internal key of the file, sequence 0) as read at seq; valid until the next
  // call.
  Slice Rewrite(const Slice& file_key) {
    buf_.assign(file_key.data(), file_key.size() - 8);
    PutFixed64(&buf_, PackSequenceAndType(seq_, ExtractValueType(file_key)));
    return Slice(buf_);
  }

  // Where a lookup of target (any internal key) starts in the file: the file's entry of
  // target's user key sorts at or after it. Valid until the next call.
  Slice LookupKey(const Slice& target) {
    buf_.assign(target.data(), target.size() - 8);
    PutFixed64(&buf_, PackSequenceAndType(0, kValueTypeForSeek));
    return Slice(buf_);
  }

  // Whether a read at target's sequence sees the entries of this file.
  bool Visible(const Slice& target) const { return ExtractSequence(target) >= seq_; }

 private:
  const SequenceNumber seq_;
  std::string buf_;
};

// file_iter (owned) with every key read at seq (> 0). REQUIRES: file_iter's entries are at
// sequence 0 with each user key once, as an ingested file's are.
InternalIterator* NewGlobalSeqnoIterator(InternalIterator* file_iter, SequenceNumber seq,
                                         const Comparator* ucmp);

}  // namespace shale
