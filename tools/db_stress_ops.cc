// db_stress's operations and their checks against the oracle (see db_stress.h).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shale/iterator.h"
#include "shale/write_batch.h"
#include "tools/db_stress.h"
#include "tools/db_stress_filter.h"
#include "tools/db_stress_prefix.h"
#include "tools/db_stress_txn.h"
#include "util/coding.h"

DEFINE_int32(put_weight, 30, "Weight of single-key Puts");
DEFINE_int32(delete_weight, 8, "Weight of single-key Deletes");
DEFINE_int32(single_delete_weight, 4, "Weight of SingleDeletes (on single-delete keys only)");
DEFINE_int32(merge_weight, 8, "Weight of uint64add Merges");
DEFINE_int32(batch_weight, 10, "Weight of multi-key WriteBatches");
DEFINE_int32(get_weight, 20, "Weight of Gets");
DEFINE_int32(multiget_weight, 6, "Weight of MultiGets");
DEFINE_int32(iterate_weight, 8, "Weight of iterator checks over a key range");
DEFINE_int32(snapshot_weight, 3, "Weight of snapshots held and read later");
DEFINE_int32(flush_weight, 1, "Weight of Flushes");
DEFINE_int32(compact_range_weight, 1, "Weight of CompactRange over a random range");
// RocksDB's names. The weights above add up to about 100, so this one is about RocksDB's
// percentage.
DEFINE_int32(delrangepercent, 0,
             "Weight of DeleteRanges of --range_deletion_width keys of one column family");
DEFINE_int32(range_deletion_width, 10, "The width of the range deletion intervals.");

namespace shale::stress {

namespace {

uint64_t RandomKey(Context* ctx, ThreadState* t) { return t->rnd.Next64() % ctx->max_key; }

uint32_t NewPutWord(ThreadState* t) { return kExists | (1 + t->rnd.Uniform(1u << 24)); }

}  // namespace

Planned Plan(Context* ctx, ThreadState* t, uint64_t key, WriteKind wanted) {
  const uint32_t current = ctx->state->committed(key);
  Planned p;
  p.key = key;
  p.before = current;
  if (IsSingleDeleteKey(key)) {
    // Put while absent, SingleDelete while present: nothing else ever touches these keys.
    p.kind = current != 0 ? WriteKind::kSingleDelete : WriteKind::kPut;
    p.word = current != 0 ? 0 : NewPutWord(t);
    return p;
  }
  p.kind = wanted == WriteKind::kSingleDelete ? WriteKind::kDelete : wanted;
  switch (p.kind) {
    case WriteKind::kPut: p.word = NewPutWord(t); break;
    case WriteKind::kDelete: p.word = 0; break;
    case WriteKind::kMerge:
      p.operand = 1 + t->rnd.Uniform(16);
      p.word = MergeResult(current, p.operand);
      if (p.word == 0) {  // the sum would leave the oracle's range: overwrite instead
        p.kind = WriteKind::kPut;
        p.word = NewPutWord(t);
      }
      break;
    case WriteKind::kSingleDelete: break;
  }
  return p;
}

namespace {

// Adds the write to batch, or issues it alone when batch is null.
Status Apply(Context* ctx, const Planned& p, WriteBatch* batch) {
  const std::string key = DbKey(ctx, p.key);
  ColumnFamilyHandle* cf = FamilyHandle(ctx, p.key);
  const WriteOptions& wo = ctx->write_options;
  switch (p.kind) {
    case WriteKind::kPut: {
      const std::string value = ValueString(p.key, p.word, ctx->max_value_size);
      return batch != nullptr ? batch->Put(cf, key, value) : ctx->db->Put(wo, cf, key, value);
    }
    case WriteKind::kDelete:
      return batch != nullptr ? batch->Delete(cf, key) : ctx->db->Delete(wo, cf, key);
    case WriteKind::kSingleDelete:
      return batch != nullptr ? batch->SingleDelete(cf, key) : ctx->db->SingleDelete(wo, cf, key);
    case WriteKind::kMerge: {
      std::string operand;
      PutFixed64(&operand, p.operand);
      return batch != nullptr ? batch->Merge(cf, key, operand)
                              : ctx->db->Merge(wo, cf, key, operand);
    }
  }
  return Status::InvalidArgument("unknown write kind");
}

}  // namespace

bool Check(Context* ctx, const char* op, uint64_t key, const Status& s, const std::string& value,
           uint32_t expected) {
  if (s.IsNotFound() && expected == 0) return true;
  if (s.ok() && expected != 0 && value == ValueString(key, expected, ctx->max_value_size)) {
    return true;
  }
  bool parsed;
  const uint32_t got = s.ok() ? ParseValue(key, value, ctx->max_value_size, &parsed) : 0;
  return Fail(ctx, std::string(op) + " " + KeyName(ctx, key) + ": expected " + Describe(expected) +
                       ", got " + (s.ok() ? Describe(got) : s.ToString()) +
                       (s.ok() && !parsed ? " (a value this tool never wrote)" : ""));
}

namespace {

// Empties a nearly full write log: every logged write is made durable by a Flush and
// folded into base. Takes the log lock exclusively, so no write is between its DB call and
// its log entry.
bool EmptyLog(Context* ctx) {
  WriterMutexLock l(&ctx->log_mu);
  ExpectedState* state = ctx->state;
  if (state->log_count() < ctx->log_limit) {
    return true;  // another thread emptied it
  }
  const SequenceNumber published = ctx->db->GetLatestSequenceNumber();
  Status s = FlushEveryFamily(ctx);
  if (!s.ok()) return Fail(ctx, "Flush to empty the write log: " + s.ToString());
  state->AdvanceDurable(published);
  const uint32_t count = state->log_count();
  for (uint32_t pos = 0; pos < count; pos++) {
    uint64_t key, seq;
    uint32_t word;
    if (state->ReadLog(pos, &key, &word, &seq)) state->SetBase(key, word);
  }
  state->ResetLog();
  fprintf(stdout, "db_stress: write log emptied after a Flush (%u entries)\n", count);
  return true;
}

// disable_wal runs: the log lock, held shared for one write or Flush; the log is emptied
// first when it holds ctx->log_limit entries (at most three quarters of it, which leaves
// far more room than the writers in flight need).
// Held only when the run logs its writes, which the analysis cannot follow: unchecked.
class LogLock {
 public:
  LogLock() = default;
  LogLock(const LogLock&) = delete;
  LogLock& operator=(const LogLock&) = delete;
  ~LogLock() NO_THREAD_SAFETY_ANALYSIS {
    if (mu_ != nullptr) mu_->UnlockShared();
  }
  void Take(SharedMutex* mu) NO_THREAD_SAFETY_ANALYSIS {
    mu->LockShared();
    mu_ = mu;
  }

 private:
  SharedMutex* mu_ = nullptr;
};

bool LogScope(Context* ctx, LogLock* l) {
  if (!ctx->log_writes) return true;
  if (ctx->state->log_count() >= ctx->log_limit && !EmptyLog(ctx)) {
    return false;
  }
  l->Take(&ctx->log_mu);
  return true;
}

// A read view at any sequence number: the read path asks a snapshot only for its number,
// so a Get through it sees exactly the writes at or below seq. Versions no live snapshot
// protects may be compacted away meanwhile; FindSequence holds a real snapshot for that.
class SequenceView : public Snapshot {
 public:
  explicit SequenceView(SequenceNumber seq) : seq_(seq) {}
  SequenceNumber GetSequenceNumber() const override { return seq_; }

 private:
  const SequenceNumber seq_;
};

// What key holds at sequence seq, as a word; false (after Fail) on an error or a value
// this tool never wrote.
bool ReadAt(Context* ctx, uint64_t key, SequenceNumber seq, uint32_t* word) {
  ctx->seq_reads.fetch_add(1, std::memory_order_relaxed);
  const SequenceView view(seq);
  ReadOptions ro;
  ro.snapshot = &view;
  std::string value;
  Status s = ctx->db->Get(ro, FamilyHandle(ctx, key), DbKey(ctx, key), &value);
  *word = 0;
  if (s.IsNotFound()) return true;
  bool parsed = false;
  if (s.ok()) *word = ParseValue(key, value, ctx->max_value_size, &parsed);
  if (parsed) return true;
  return Fail(ctx, "reading " + KeyName(ctx, key) + " at sequence " + std::to_string(seq) + ": " +
                       (s.ok() ? "a value this tool never wrote" : s.ToString()));
}

// The first sequence of a write just acknowledged: its records (plans, in batch order)
// took consecutive sequences after `lo`, the sequence of a snapshot taken before it, and
// at or below the latest sequence now. shale's API does not return it, so when other
// writes interleaved this binary-searches for the first sequence at which one of the keys
// the write changed reads as written. The snapshot at lo keeps what each key held before,
// which reads below the write must see. A write that changes no key's value could sit at
// any candidate sequence with the same replay: it gets the lowest.
bool FindSequence(Context* ctx, const std::vector<Planned>& plans, SequenceNumber lo,
                  SequenceNumber* first) {
  const uint64_t n = plans.size();
  const SequenceNumber hi = ctx->db->GetLatestSequenceNumber();
  ctx->seq_writes.fetch_add(1, std::memory_order_relaxed);
  if (hi < lo + n) {
    return Fail(ctx, "a write of " + std::to_string(n) +
                         " records acknowledged with the "
                         "latest sequence at " +
                         std::to_string(hi) + ", yet " + std::to_string(lo) + " before it");
  }
  SequenceNumber low = lo + 1, high = hi - n + 1;  // candidates for *first
  size_t probe = 0;
  while (probe < n && plans[probe].word == plans[probe].before) probe++;
  if (low == high || probe == n) {
    *first = low;
    return true;
  }
  ctx->seq_searches.fetch_add(1, std::memory_order_relaxed);
  const Planned& p = plans[probe];
  uint32_t got;
  if (!ReadAt(ctx, p.key, high + probe, &got)) return false;
  if (got != p.word) {
    return Fail(ctx, KeyName(ctx, p.key) + " reads as " + Describe(got) +
                         ", not its acknowledged " + Describe(p.word) +
                         ", at the latest sequence " + std::to_string(hi));
  }
  while (low < high) {
    const SequenceNumber mid = low + (high - low) / 2;
    if (!ReadAt(ctx, p.key, mid + probe, &got)) return false;
    if (got == p.word) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  *first = low;
  return true;
}

// Issues a write (one planned record alone, or `batch` holding plans in order) with the
// keys' locks held and their pending words set; in runs that log, logs each record with
// its sequence (the log lock is held shared); then commits the words. With one_record,
// `batch` is a single record (a DeleteRange) that writes every plan at one sequence.
// In transaction modes the write is one transaction instead (db_stress_txn.h).
bool IssueWrite(Context* ctx, ThreadState* t, const std::vector<Planned>& plans, WriteBatch* batch,
                const char* what, bool one_record = false) {
  if (ctx->txn_db != nullptr || ctx->occ_db != nullptr)
    return IssueTxn(ctx, t, plans, nullptr, what);
  const Snapshot* before = ctx->log_writes ? ctx->db->GetSnapshot() : nullptr;
  Status s =
      batch != nullptr ? ctx->db->Write(ctx->write_options, batch) : Apply(ctx, plans[0], nullptr);
  bool ok = s.ok() || Fail(ctx, std::string(what) + " of " + KeyName(ctx, plans[0].key) + ": " +
                                    s.ToString());
  SequenceNumber first = 0;
  if (ok && before != nullptr) {
    std::vector<Planned> records = plans;
    if (one_record) {
      // The search probes one key the record changed (any key, when it changed none).
      auto changed = std::find_if(plans.begin(), plans.end(),
                                  [](const Planned& p) { return p.word != p.before; });
      records = {changed != plans.end() ? *changed : plans[0]};
    }
    ok = FindSequence(ctx, records, before->GetSequenceNumber(), &first);
  }
  if (before != nullptr) ctx->db->ReleaseSnapshot(before);
  if (!ok) return false;
  for (size_t i = 0; i < plans.size() && ctx->log_writes; i++) {
    if (!ctx->state->AppendLog(plans[i].key, plans[i].word, first + (one_record ? 0 : i))) {
      return Fail(ctx, "the write log is full");
    }
  }
  for (const Planned& p : plans) ctx->state->Commit(p.key, p.word);
  return true;
}

bool WriteOne(Context* ctx, ThreadState* t, WriteKind kind) {
  const uint64_t key = RandomKey(ctx, t);
  LogLock log_lock;
  if (!LogScope(ctx, &log_lock)) return false;
  FamilyLocks family(ctx, key);
  MutexLock l(ctx->locks->For(key));
  const Planned p = Plan(ctx, t, key, kind);
  ctx->state->SetPending(key, p.word);
  return IssueWrite(ctx, t, {p}, nullptr, "write");
}

bool OpPut(Context* ctx, ThreadState* t) { return WriteOne(ctx, t, WriteKind::kPut); }
bool OpDelete(Context* ctx, ThreadState* t) { return WriteOne(ctx, t, WriteKind::kDelete); }
bool OpMerge(Context* ctx, ThreadState* t) { return WriteOne(ctx, t, WriteKind::kMerge); }

bool OpSingleDelete(Context* ctx, ThreadState* t) {
  // Only single-delete keys may take one; pick one of them.
  const uint64_t slots = std::max<uint64_t>(1, ctx->max_key / kSingleDeleteStride);
  const uint64_t key = (t->rnd.Next64() % slots) * kSingleDeleteStride;
  LogLock log_lock;
  if (!LogScope(ctx, &log_lock)) return false;
  FamilyLocks family(ctx, key);
  MutexLock l(ctx->locks->For(key));
  const Planned p = Plan(ctx, t, key, WriteKind::kSingleDelete);
  ctx->state->SetPending(key, p.word);
  return IssueWrite(ctx, t, {p}, nullptr, "SingleDelete/Put");
}

}  // namespace

std::vector<uint64_t> PickKeys(Context* ctx, ThreadState* t, uint32_t max_n) {
  const uint32_t n = 2 + t->rnd.Uniform(max_n - 1);
  std::vector<uint64_t> keys;
  if (t->rnd.OneIn(2)) {
    const uint64_t first = RandomKey(ctx, t);
    for (uint64_t k = first; k < ctx->max_key && keys.size() < n; k++) keys.push_back(k);
  } else {
    for (uint32_t i = 0; i < n; i++) keys.push_back(RandomKey(ctx, t));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  return keys;
}

namespace {

bool OpBatch(Context* ctx, ThreadState* t) {
  const std::vector<uint64_t> keys = PickKeys(ctx, t, 8);
  LogLock log_lock;
  if (!LogScope(ctx, &log_lock)) return false;
  // Scattered keys may lie in several families: one atomic batch across them.
  FamilyLocks families(ctx, keys);
  auto held = ctx->locks->LockKeys(keys);
  WriteBatch batch;
  std::vector<Planned> plans;
  for (uint64_t key : keys) {
    const auto kind = static_cast<WriteKind>(t->rnd.Uniform(4));
    plans.push_back(Plan(ctx, t, key, kind));
    Status s = Apply(ctx, plans.back(), &batch);
    if (!s.ok()) return Fail(ctx, "building a batch: " + s.ToString());
  }
  for (const Planned& p : plans) ctx->state->SetPending(p.key, p.word);
  return IssueWrite(ctx, t, plans, &batch, "batch write");
}

// A DeleteRange of --range_deletion_width consecutive keys of one family, drawn as RocksDB's
// TestDeleteRange draws it (a start too close to the end is drawn again below it). Every key
// of the range becomes absent in the oracle, pending first, so that after a crash each
// holds its old value or none, and all of them the one or all the other (the prefix rule,
// where the run logs). Single-delete keys are covered too, as in RocksDB: a later Put then
// lands over the range tombstone rather than over a point deletion.
bool OpDeleteRange(Context* ctx, ThreadState* t) {
  const uint64_t per_family = ctx->keys_per_family;
  const uint64_t width = std::min<uint64_t>(FLAGS_range_deletion_width, per_family);
  uint64_t first = RandomKey(ctx, t);
  const uint64_t family_first = first - first % per_family;
  if (first - family_first > per_family - width) {
    first = family_first + t->rnd.Next64() % (per_family - width + 1);
  }
  LogLock log_lock;
  if (!LogScope(ctx, &log_lock)) return false;
  FamilyLocks family(ctx, first);
  auto held = ctx->locks->LockRange(first, first + width - 1);
  std::vector<Planned> plans;
  for (uint64_t key = first; key < first + width; key++) {
    Planned p;
    p.key = key;
    p.kind = WriteKind::kDelete;
    p.before = ctx->state->committed(key);
    p.word = 0;
    plans.push_back(p);
  }
  WriteBatch batch;
  Status s = batch.DeleteRange(FamilyHandle(ctx, first), DbKey(ctx, first),
                               KeyString(first - family_first + width));
  if (!s.ok()) return Fail(ctx, "building a DeleteRange: " + s.ToString());
  for (const Planned& p : plans) ctx->state->SetPending(p.key, 0);
  return IssueWrite(ctx, t, plans, &batch, "DeleteRange", /*one_record=*/true);
}

bool OpGet(Context* ctx, ThreadState* t) {
  const uint64_t key = RandomKey(ctx, t);
  FamilyLocks family(ctx, key);
  MutexLock l(ctx->locks->For(key));
  std::string value;
  Status s = ctx->db->Get(ReadOptions(), FamilyHandle(ctx, key), DbKey(ctx, key), &value);
  return Check(ctx, "Get", key, s, value, ctx->state->committed(key));
}

bool OpMultiGet(Context* ctx, ThreadState* t) {
  const std::vector<uint64_t> keys = PickKeys(ctx, t, 16);
  FamilyLocks families(ctx, keys);
  auto held = ctx->locks->LockKeys(keys);
  std::vector<std::string> key_strings;
  std::vector<ColumnFamilyHandle*> handles;
  for (uint64_t k : keys) {
    key_strings.push_back(DbKey(ctx, k));
    handles.push_back(FamilyHandle(ctx, k));
  }
  std::vector<Slice> slices(key_strings.begin(), key_strings.end());
  std::vector<std::string> values;
  std::vector<Status> statuses = ctx->db->MultiGet(ReadOptions(), handles, slices, &values);
  if (statuses.size() != keys.size() || values.size() != keys.size()) {
    return Fail(ctx, "MultiGet returned the wrong number of results");
  }
  for (size_t i = 0; i < keys.size(); i++) {
    if (!Check(ctx, "MultiGet", keys[i], statuses[i], values[i], ctx->state->committed(keys[i]))) {
      return false;
    }
  }
  return true;
}

// Checks that `it` is at expected key `key` with its expected value.
bool AtKey(Context* ctx, Iterator* it, uint64_t key, uint32_t word, const char* where) {
  if (!it->Valid()) {
    return Fail(ctx, std::string(where) + ": iterator ended before " + KeyName(ctx, key) + " (" +
                         it->status().ToString() + ")");
  }
  if (it->key().ToString() != DbKey(ctx, key)) {
    return Fail(ctx, std::string(where) + ": at " + it->key().ToString() + ", expected " +
                         KeyName(ctx, key) + " (" + Describe(word) + ")");
  }
  return Check(ctx, where, key, Status::OK(), it->value().ToString(), word);
}

// The iterator must be past the range: invalid with bounds, else outside [lo, hi).
bool PastRange(Context* ctx, Iterator* it, bool bounded, const std::string& lo,
               const std::string& hi, const char* where) {
  if (!it->status().ok()) return Fail(ctx, std::string(where) + ": " + it->status().ToString());
  if (!it->Valid()) return true;
  const std::string k = it->key().ToString();
  if (!bounded && (k >= hi || k < lo)) return true;
  return Fail(ctx, std::string(where) + ": unexpected key " + k + " in [" + lo + ", " + hi + ")");
}

bool OpIterate(Context* ctx, ThreadState* t) {
  // A range within one family: the oracle keys [lo, hi) are its DB keys [lo_key, hi_key).
  const uint64_t lo = RandomKey(ctx, t);
  const uint64_t family_end = (FamilyIndex(ctx, lo) + 1) * ctx->keys_per_family;
  const uint64_t hi = std::min<uint64_t>(family_end, lo + 1 + t->rnd.Uniform(64));
  FamilyLocks family(ctx, lo);
  auto held = ctx->locks->LockRange(lo, hi - 1);
  std::vector<std::pair<uint64_t, uint32_t>> expected;
  for (uint64_t k = lo; k < hi; k++) {
    const uint32_t w = ctx->state->committed(k);
    if (w != 0) expected.emplace_back(k, w);
  }
  const std::string lo_key = DbKey(ctx, lo);
  const std::string hi_key = KeyString(hi - (lo - lo % ctx->keys_per_family));
  const Slice lo_slice(lo_key), hi_slice(hi_key);
  ReadOptions ro;
  const bool bounded = t->rnd.OneIn(2);
  if (bounded) {
    ro.iterate_lower_bound = &lo_slice;
    ro.iterate_upper_bound = &hi_slice;
  }
  std::unique_ptr<Iterator> it(ctx->db->NewIterator(ro, FamilyHandle(ctx, lo)));
  it->Seek(lo_key);
  for (const auto& [k, w] : expected) {
    if (!AtKey(ctx, it.get(), k, w, "iterator Next")) return false;
    it->Next();
  }
  if (!PastRange(ctx, it.get(), bounded, lo_key, hi_key, "iterator Next")) return false;
  it->SeekForPrev(DbKey(ctx, hi - 1));
  for (auto e = expected.rbegin(); e != expected.rend(); ++e) {
    if (!AtKey(ctx, it.get(), e->first, e->second, "iterator Prev")) return false;
    it->Prev();
  }
  if (!PastRange(ctx, it.get(), bounded, lo_key, hi_key, "iterator Prev")) return false;
  // A Seek into the middle, then a change of direction.
  const uint64_t mid = lo + t->rnd.Uniform(static_cast<uint32_t>(hi - lo));
  auto first = std::lower_bound(expected.begin(), expected.end(), std::make_pair(mid, 0u));
  it->Seek(DbKey(ctx, mid));
  if (first == expected.end()) return PastRange(ctx, it.get(), bounded, lo_key, hi_key, "Seek");
  if (!AtKey(ctx, it.get(), first->first, first->second, "Seek")) return false;
  it->Prev();
  if (first == expected.begin()) return PastRange(ctx, it.get(), bounded, lo_key, hi_key, "Prev");
  --first;
  return AtKey(ctx, it.get(), first->first, first->second, "Seek then Prev");
}

bool OpSnapshot(Context* ctx, ThreadState* t) {
  const uint64_t key = RandomKey(ctx, t);
  HeldSnapshot h;
  h.key = key;
  {
    FamilyLocks family(ctx, key);
    MutexLock l(ctx->locks->For(key));
    h.snapshot = ctx->db->GetSnapshot();
    h.word = ctx->state->committed(key);
    if (ctx->cf_generation != nullptr) h.generation = ctx->cf_generation[FamilyIndex(ctx, key)];
  }
  h.release_after_op = t->ops_done + 1 + t->rnd.Uniform(100);
  t->snapshots.push_back(h);
  return true;
}

bool OpFlush(Context* ctx, ThreadState* t) {
  LogLock log_lock;
  if (!LogScope(ctx, &log_lock)) return false;
  // One family, drawn only when there are several; in runs that log, every family at once
  // (atomic_flush is on): a write is durable only once every family is flushed past it.
  const uint64_t key = ctx->cfs.size() > 1 ? RandomKey(ctx, t) : 0;
  FamilyLocks family(ctx, key);
  // Every write published before the Flush starts is in a memtable the Flush persists.
  const SequenceNumber published = ctx->db->GetLatestSequenceNumber();
  Status s = ctx->log_writes ? FlushEveryFamily(ctx)
                             : ctx->db->Flush(FlushOptions(), FamilyHandle(ctx, key));
  if (!s.ok()) return Fail(ctx, "Flush: " + s.ToString());
  if (ctx->log_writes) ctx->state->AdvanceDurable(published);
  return true;
}

bool OpCompactRange(Context* ctx, ThreadState* t) {
  // Both ends drawn within one family's keys; the family is the first key's.
  const uint64_t first_key = RandomKey(ctx, t);
  uint64_t a = first_key % ctx->keys_per_family, b = RandomKey(ctx, t) % ctx->keys_per_family;
  if (a > b) std::swap(a, b);
  const std::string begin = KeyString(a), end = KeyString(b);
  const Slice bs(begin), es(end);
  FamilyLocks family(ctx, first_key);
  Status s = ctx->db->CompactRange(CompactRangeOptions(), FamilyHandle(ctx, first_key), &bs, &es);
  return s.ok() || Fail(ctx, "CompactRange: " + s.ToString());
}

const OpKind kOps[] = {
    {"put", &FLAGS_put_weight, OpPut},
    {"delete", &FLAGS_delete_weight, OpDelete},
    {"single_delete", &FLAGS_single_delete_weight, OpSingleDelete},
    {"merge", &FLAGS_merge_weight, OpMerge},
    {"batch", &FLAGS_batch_weight, OpBatch},
    {"get", &FLAGS_get_weight, OpGet},
    {"multiget", &FLAGS_multiget_weight, OpMultiGet},
    {"iterate", &FLAGS_iterate_weight, OpIterate},
    {"snapshot", &FLAGS_snapshot_weight, OpSnapshot},
    {"flush", &FLAGS_flush_weight, OpFlush},
    {"compact_range", &FLAGS_compact_range_weight, OpCompactRange},
    {"delete_range", &FLAGS_delrangepercent, OpDeleteRange},
    {"txn_rmw", &FLAGS_txn_rmw_weight, OpTxnReadModifyWrite},
    {nullptr, nullptr, nullptr},
};

}  // namespace

const OpKind* OpTable() { return kOps; }

FamilyLocks::FamilyLocks(Context* ctx, const std::vector<uint64_t>& keys) : ctx_(ctx) {
  if (ctx->cf_mu == nullptr) return;
  for (uint64_t key : keys) held_.push_back(FamilyIndex(ctx, key));
  std::sort(held_.begin(), held_.end());
  held_.erase(std::unique(held_.begin(), held_.end()), held_.end());
  for (size_t f : held_) ctx->cf_mu[f].LockShared();
}

FamilyLocks::~FamilyLocks() {
  for (size_t f : held_) ctx_->cf_mu[f].UnlockShared();
}

bool ClearColumnFamily(Context* ctx, ThreadState* t) {
  const size_t f = 1 + t->rnd.Uniform(static_cast<uint32_t>(ctx->cfs.size() - 1));
  WriterMutexLock l(&ctx->cf_mu[f]);
  ExpectedState* state = ctx->state;
  const uint64_t first = f * ctx->keys_per_family, end = first + ctx->keys_per_family;
  // Until the oracle says absent below, a crash may leave each key as it was or gone.
  for (uint64_t key = first; key < end; key++) {
    if (state->committed(key) != 0) state->SetPending(key, 0);
  }
  ColumnFamilyDescriptor desc;
  Status s = ctx->cfs[f]->GetDescriptor(&desc);
  if (s.ok()) s = ctx->db->DropColumnFamily(ctx->cfs[f]);
  if (!s.ok()) return Fail(ctx, "DropColumnFamily " + desc.name + ": " + s.ToString());
  s = ctx->db->DestroyColumnFamilyHandle(ctx->cfs[f]);
  ctx->cfs[f] = nullptr;
  if (s.ok()) s = ctx->db->CreateColumnFamily(ctx->cf_options, desc.name, &ctx->cfs[f]);
  if (!s.ok()) return Fail(ctx, "re-creating column family " + desc.name + ": " + s.ToString());
  if (ctx->filter_factory != nullptr) ctx->filter_factory->SetFamily(ctx->cfs[f]->GetID(), f);
  for (uint64_t key = first; key < end; key++) state->Commit(key, 0);
  ctx->cf_generation[f].fetch_add(1);
  ctx->cf_clears.fetch_add(1, std::memory_order_relaxed);
  // Flushed, so that a driver counting these lines sees those of a run it kills.
  fprintf(stdout, "db_stress: column family %zu dropped and re-created\n", f);
  fflush(stdout);
  return true;
}

bool Fail(Context* ctx, const std::string& what) {
  fprintf(stderr, "db_stress: FAILED: %s\n", what.c_str());
  ctx->failed.store(true);
  ctx->stop.store(true);
  return false;
}

bool DrainSnapshots(Context* ctx, ThreadState* t, bool all) {
  bool ok = true;
  while (!t->snapshots.empty() && (all || t->snapshots.front().release_after_op <= t->ops_done)) {
    HeldSnapshot h = t->snapshots.front();
    t->snapshots.pop_front();
    ReadOptions ro;
    ro.snapshot = h.snapshot;
    std::string value;
    FamilyLocks family(ctx, h.key);
    // A family re-created since holds none of what the snapshot saw: nothing to check.
    const bool same_family = ctx->cf_generation == nullptr ||
                             ctx->cf_generation[FamilyIndex(ctx, h.key)] == h.generation;
    if (same_family) {
      Status s = ctx->db->Get(ro, FamilyHandle(ctx, h.key), DbKey(ctx, h.key), &value);
      if (ok && !ctx->failed.load()) ok = Check(ctx, "Get at a snapshot", h.key, s, value, h.word);
    }
    ctx->db->ReleaseSnapshot(h.snapshot);
  }
  return ok;
}

namespace {

// What every key holds in the DB, as a word.
bool ReadAll(Context* ctx, std::vector<uint32_t>* held) {
  held->assign(ctx->max_key, 0);
  for (uint64_t key = 0; key < ctx->max_key; key++) {
    std::string value;
    Status s = ctx->db->Get(ReadOptions(), FamilyHandle(ctx, key), DbKey(ctx, key), &value);
    if (s.ok()) {
      bool parsed;
      (*held)[key] = ParseValue(key, value, ctx->max_value_size, &parsed);
      if (!parsed) return Check(ctx, "verify", key, s, value, ctx->state->committed(key));
    } else if (!s.IsNotFound()) {
      return Fail(ctx, "verify " + KeyName(ctx, key) + ": " + s.ToString());
    }
  }
  return true;
}

// Every family scanned by an iterator forward and backward: it must show exactly the keys
// the Gets of ReadAll found, with the same values.
bool CheckIterators(Context* ctx, const std::vector<uint32_t>& held) {
  for (size_t f = 0; f < ctx->cfs.size(); f++) {
    const uint64_t first = f * ctx->keys_per_family, end = first + ctx->keys_per_family;
    std::vector<uint64_t> present;
    for (uint64_t key = first; key < end; key++) {
      if (held[key] != 0) present.push_back(key);
    }
    std::unique_ptr<Iterator> it(ctx->db->NewIterator(ReadOptions(), ctx->cfs[f]));
    size_t i = 0;
    for (it->SeekToFirst(); i < present.size(); it->Next(), i++) {
      if (!AtKey(ctx, it.get(), present[i], held[present[i]], "verify by iterator Next")) {
        return false;
      }
    }
    if (it->Valid() || !it->status().ok()) {
      return Fail(ctx, "verify by iterator Next: " +
                           (it->Valid() ? "unexpected key " + it->key().ToString() + " after " +
                                              std::to_string(i) + " keys"
                                        : it->status().ToString()));
    }
    i = present.size();
    for (it->SeekToLast(); i > 0; it->Prev(), i--) {
      if (!AtKey(ctx, it.get(), present[i - 1], held[present[i - 1]], "verify by iterator Prev")) {
        return false;
      }
    }
    if (it->Valid() || !it->status().ok()) {
      return Fail(ctx, "verify by iterator Prev: " +
                           (it->Valid() ? "unexpected key " + it->key().ToString() + " before " +
                                              std::to_string(present.size()) + " keys"
                                        : it->status().ToString()));
    }
  }
  return true;
}

}  // namespace

bool VerifyAll(Context* ctx, bool prefix) {
  ExpectedState* state = ctx->state;
  // Read before the keys: a write of the verification's own would count otherwise.
  const SequenceNumber recovered = ctx->db->GetLatestSequenceNumber();
  std::vector<uint32_t> held;
  if (!ReadAll(ctx, &held) || !CheckIterators(ctx, held)) return false;
  uint64_t resolved = 0, older = 0;
  for (uint64_t key = 0; key < ctx->max_key; key++) {
    const uint32_t committed = state->committed(key);
    const uint32_t pending = state->pending(key);
    const bool in_flight = pending != 0 && held[key] == ExpectedState::PendingWord(pending);
    if (pending != 0) resolved++;
    if (held[key] != committed && !in_flight) {
      if (prefix) {
        older++;  // allowed if a cut gives it (below)
        continue;
      }
      return Fail(ctx, "verify " + KeyName(ctx, key) + ": expected " + Describe(committed) +
                           (pending != 0 ? " or " + Describe(ExpectedState::PendingWord(pending))
                                         : std::string()) +
                           ", got " + Describe(held[key]));
    }
  }
  if (!CheckTxnRecords(ctx, held)) return false;
  std::string summary;
  if (prefix) {
    PrefixCheck check(*state);
    std::string why;
    if (!check.Check(held, recovered, ctx->strict_recovered_seq, &why)) {
      return Fail(ctx, "verify by the prefix rule: " + why);
    }
    summary = " by the prefix rule (" + std::to_string(check.writes()) +
              " logged writes, the DB holds them up to sequence " +
              std::to_string(check.cut_seq()) + ", recovered sequence " +
              std::to_string(recovered) + " (" +
              std::to_string(check.lost_at_or_below_recovered()) +
              " logged writes at or below it lost), durable sequence " +
              std::to_string(state->durable_seq()) + ", " + std::to_string(check.torn()) +
              " torn log entries; " + std::to_string(older) +
              " keys behind their last acknowledged write)";
  }
  // What the DB holds becomes the oracle's state. Base first, then the log is emptied, then
  // the pending words cleared: a kill anywhere in between leaves an oracle that accepts
  // this same DB state.
  for (uint64_t key = 0; key < ctx->max_key; key++) state->SetBase(key, held[key]);
  state->ResetLog();
  for (uint64_t key = 0; key < ctx->max_key; key++) state->Commit(key, held[key]);
  ClearTxnRecords(ctx);  // last: until here the records accept this same DB state
  fprintf(stdout, "db_stress: verified %llu keys%s (%llu writes in flight resolved)\n",
          static_cast<unsigned long long>(ctx->max_key), summary.c_str(),
          static_cast<unsigned long long>(resolved));
  fflush(stdout);  // a run killed later must not take the line with it
  return true;
}

}  // namespace shale::stress
