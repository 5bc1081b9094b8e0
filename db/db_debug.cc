// Test-only views of the DB's internals.
#include <cinttypes>
#include <cstdio>

#include "db/db_impl.h"
#include "db/table_cache.h"

namespace shale {

namespace {

// Appends "(seq type)" for every entry of user_key in iter.
void AppendEntries(InternalIterator* iter, const InternalKeyComparator& icmp, const Slice& user_key,
                   std::string* out) {
  const InternalKey target(user_key, kMaxSequenceNumber, kValueTypeForSeek);
  for (iter->Seek(target.Encode()); iter->Valid(); iter->Next()) {
    ParsedInternalKey ik;
    if (!ParseInternalKey(iter->key(), &ik).ok()) break;
    if (icmp.user_comparator()->Compare(ik.user_key, user_key) != 0) break;
    char buf[64];
    snprintf(buf, sizeof(buf), " %" PRIu64 "%c", ik.sequence,
             ik.type == kTypeValue            ? 'P'
             : ik.type == kTypeDeletion       ? 'D'
             : ik.type == kTypeSingleDeletion ? 'S'
             : ik.type == kTypeMerge          ? 'M'
                                              : '?');
    *out += buf;
  }
  if (!iter->status().ok()) *out += " [" + iter->status().ToString() + "]";
}

}  // namespace

std::string DBImpl::TEST_KeyVersions(const Slice& user_key) {
  std::shared_ptr<SuperVersion> sv = default_cf_->GetSuperVersion();
  if (sv == nullptr) return "(closed)";
  const InternalKeyComparator& icmp = default_cf_->internal_comparator();
  std::string out = "mem:";
  std::unique_ptr<InternalIterator> it(sv->mem->NewIterator());
  AppendEntries(it.get(), icmp, user_key, &out);
  for (MemTable* m : sv->imm) {
    out += "; imm:";
    it.reset(m->NewIterator());
    AppendEntries(it.get(), icmp, user_key, &out);
  }
  for (int level = 0; level < sv->current->NumLevels(); level++) {
    for (const FileMetaPtr& f : sv->current->files(level)) {
      std::string entries;
      it.reset(default_cf_->table_cache()->NewIterator(ReadOptions(), *f));
      AppendEntries(it.get(), icmp, user_key, &entries);
      if (entries.empty()) continue;
      char buf[64];
      snprintf(buf, sizeof(buf), "; L%d #%" PRIu64 ":", level, f->number);
      out += buf + entries;
    }
  }
  return out;
}

}  // namespace shale
