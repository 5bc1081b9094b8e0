// WriteBatchInternal: the DB's access to a WriteBatch's serialized form (format in
// include/shale/write_batch.h): the sequence number and count in its 12-byte header, its raw
// contents for the WAL, and applying it to a memtable.
//
// All static; thread safety is the batch's own (reads may share it, writes need one owner).
#pragma once

#include <cstddef>
#include <cstdint>

#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"
#include "shale/write_batch.h"
#include "util/dbformat.h"

namespace shale {

class Comparator;
class MergeFolder;
class MemTable;

// The write policy whose transaction logged a prepared section. Their WALs differ (a
// WRITE_COMMITTED prepare holds records that reach the memtable at its commit; a
// WRITE_PREPARED prepare's records reached it at once, numbered per sub-batch), so the
// section's BeginPrepare tag says which policy wrote it, and recovery under the other
// policy refuses the WAL instead of misreading it.
enum class PreparePolicy : unsigned char { kWriteCommitted, kWritePrepared };

// BeginPrepare as a WRITE_PREPARED transaction logs it (kTypeBeginPrepareXID, in
// util/dbformat.h, is WRITE_COMMITTED's). Persisted in WALs, RocksDB's value: never
// renumber. It never appears in an internal key.
inline constexpr unsigned char kTypeBeginPersistedPrepareXID = 0x12;

// The memtables of the column families other than the default, as the DB's writers see
// them: MemFor(id) is family id's active memtable, or null when no live family has that id.
// Called by inserting threads without the DB mutex; the DB switches a family's memtable
// only while no insert is in progress (the WAL leader, after the inserts before it).
class ColumnFamilyMemTables {
 public:
  virtual ~ColumnFamilyMemTables() = default;
  virtual bool IsLive(uint32_t id) const = 0;
  virtual MemTable* MemFor(uint32_t id) = 0;
  // The user comparator of family id (0 included), or null when no live family has it.
  virtual const Comparator* UserComparatorFor(uint32_t id) const = 0;
};

class WriteBatchInternal {
 public:
  // 8-byte sequence number, then 4-byte count.
  static constexpr size_t kHeader = 12;

  // Records that update keys (not PutLogData blobs).
  static uint32_t Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, uint32_t n);

  // Sequence number of the batch's first record; the others follow consecutively.
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  // The serialized batch, as logged. Valid until the batch changes.
  static Slice Contents(const WriteBatch* batch) { return Slice(batch->rep_); }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }

  // Replaces the batch with contents (a WAL record). Corruption, leaving the batch as it
  // was, if contents is not a well-formed batch (too short, unknown tag, truncated field,
  // count not matching the records).
  static Status SetContents(WriteBatch* batch, const Slice& contents);

  // Appends one record of family cf: type is kTypeValue, kTypeDeletion, kTypeSingleDeletion,
  // kTypeMerge or kTypeRangeDeletion (value: the end key; ignored for the other deletions).
  // InvalidArgument for a key or value too large, the batch unchanged.
  static Status AddRecord(WriteBatch* batch, uint32_t cf, ValueType type, const Slice& key,
                          const Slice& value);

  // Appends src's records to dst (keeping dst's sequence number). REQUIRES: dst != src.
  static Status Append(WriteBatch* dst, const WriteBatch* src);

  // Two-phase commit markers (format in include/shale/write_batch.h), as transactions
  // write them. InsertNoop appends the placeholder a transaction's batch starts with;
  // MarkEndPrepare turns that placeholder into BeginPrepare and appends EndPrepare(xid)
  // (InvalidArgument, the batch unchanged, if the batch does not start with a Noop or is
  // already prepared); MarkCommit and MarkRollback append Commit(xid) / Rollback(xid).
  // policy: the write policy of the transaction, which picks BeginPrepare's tag.
  static void InsertNoop(WriteBatch* batch);
  static Status MarkEndPrepare(WriteBatch* batch, const Slice& xid,
                               PreparePolicy policy = PreparePolicy::kWriteCommitted);
  static void MarkCommit(WriteBatch* batch, const Slice& xid);
  static void MarkRollback(WriteBatch* batch, const Slice& xid);

  // Checks a batch before it joins a write group: well formed (Corruption otherwise),
  // naming only column family 0 or a family families says is live (InvalidArgument
  // "Invalid column family specified in write batch", RocksDB's, otherwise; families may
  // be null: no other family), with no reversed range deletion (InvalidArgument "end key
  // comes before start key", under the family's comparator; bytewise when families is
  // null) and, unless txn_markers (a
  // transaction's own write), holding no two-phase commit marker but Noop (NotSupported:
  // only a TransactionDB writes them). *has_merge: it holds a Merge. *sub_batches (may be
  // null): how many sequence numbers the batch takes when numbered per sub-batch
  // (db/sub_batch.h), at least 1. *begin_prepare (may be null): it holds a prepared
  // section (WriteBatch::HasBeginPrepare, without a second walk). *commit (may be null):
  // it holds a Commit marker.
  static Status ValidateForWrite(const WriteBatch* batch, const ColumnFamilyMemTables* families,
                                 bool txn_markers, bool* has_merge, uint64_t* sub_batches = nullptr,
                                 bool* begin_prepare = nullptr, bool* commit = nullptr);

  // WriteBatch::Iterate for recovery under a write policy: a prepared section that the
  // other policy logged fails with NotSupported (after handler's MarkBeginPrepare, whose
  // own error comes first), telling the user to empty the WAL before changing the policy.
  static Status IterateForRecovery(const WriteBatch* batch, WriteBatch::Handler* handler,
                                   PreparePolicy policy);

  // Applies a batch that ValidateForWrite accepted to mem (family 0's records) and to the
  // memtables families gives for the others (InvalidArgument, after the records before it,
  // for a family dropped since the check), numbering its records from
  // first_seq upward (the batch's own header is not read; markers are passed over):
  // sub_batches 0 gives each record a number; otherwise it is the batch's sub-batch count
  // from ValidateForWrite, and each sub-batch takes one number (with 1, every record takes
  // first_seq and no keys are compared). concurrent: other threads may be adding to mem at
  // the same time. folder (may be null) folds a Merge into a Put when
  // options.max_successive_merges asks for it. (Recovery applies logged batches through
  // WalReplayer, db/wal_replay.h.) prep_log (0: none): the WAL holding the prepared
  // section these records commit; every memtable the batch writes to keeps it
  // (MemTable::RefLogContainingPrepSection) until that memtable is flushed.
  static Status InsertInto(const WriteBatch* batch, SequenceNumber first_seq, MemTable* mem,
                           ColumnFamilyMemTables* families, bool concurrent, uint64_t sub_batches,
                           MergeFolder* folder, uint64_t prep_log = 0);
  // For a batch of one Put: starts loading what mem->Add will touch first (the memtable
  // filter's line), so that the load overlaps the WAL write. A hint; does nothing else.
  static void PrefetchForInsert(const WriteBatch* batch, const MemTable* mem);
};

}  // namespace shale
