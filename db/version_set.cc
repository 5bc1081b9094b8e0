#include "db/version_set.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "db/filename.h"
#include "db/log_reader.h"
#include "db/table_cache.h"
#include "db/version_builder.h"
#include "shale/db.h"

namespace shale {

struct VersionSet::ManifestWriter {
  explicit ManifestWriter(Mutex* mu) : cv(mu) {}
  CondVar cv;
};

VersionSet::VersionSet(const std::string& dbname, const Options* options, TableCache* table_cache,
                       const InternalKeyComparator* icmp, Mutex* db_mutex)
    : env_(options->env),
      dbname_(dbname),
      options_(options),
      table_cache_(table_cache),
      icmp_(icmp),
      num_levels_(std::max(options->num_levels, 1)),
      db_mutex_(db_mutex) {
  FamilySetup setup{options, icmp, table_cache};
  Family f = MakeFamily(kDefaultColumnFamilyName, setup);
  f.current = NewVersion(f);
  f.current->Ref();
  families_.emplace(0, std::move(f));
}

VersionSet::~VersionSet() {
  for (auto& [id, f] : families_) f.current->Unref();
  if (descriptor_log_ != nullptr) descriptor_log_->Close().PermitUncheckedError();
  // Versions still referenced elsewhere outlive us: detach them.
  MutexLock l(&live_mu_);
  for (Version* v : live_) v->vset_ = nullptr;
  live_.clear();
}

VersionSet::Family VersionSet::MakeFamily(const std::string& name, const FamilySetup& setup) {
  Family f;
  f.name = name;
  f.setup = setup;
  f.num_levels = std::max(setup.options->num_levels, 1);
  return f;
}

Version* VersionSet::NewVersion(const Family& f) {
  return new Version(this, f.setup.table_cache, f.setup.icmp, f.num_levels);
}

void VersionSet::AppendVersion(Family* f, Version* v) {
  v->Ref();
  if (f->current != nullptr) f->current->Unref();
  f->current = v;
}

uint64_t VersionSet::LogNumber() const {
  uint64_t min = UINT64_MAX;
  for (const auto& [id, f] : families_) min = std::min(min, f.log_number);
  return min;
}

void VersionSet::MarkFileNumberUsed(uint64_t number) {
  uint64_t cur = next_file_number_.load();
  while (cur <= number && !next_file_number_.compare_exchange_weak(cur, number + 1)) {
  }
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) {
  MutexLock l(&live_mu_);
  for (const Version* v : live_) {
    for (const auto& level : v->files_) {
      for (const FileMetaPtr& f : level) live->insert(f->number);
    }
  }
}

Status VersionSet::BuildVersion(const Family& f, const VersionEdit& edit, Version** result) {
  VersionBuilder builder(f.setup.icmp, f.num_levels, f.current);
  Status s = builder.Apply(edit);
  if (!s.ok()) return s;
  Version* v = NewVersion(f);
  s = builder.SaveTo(v);
  if (!s.ok()) {
    delete v;
    return s;
  }
  *result = v;
  return s;
}

std::vector<std::string> VersionSet::EncodeSnapshot() const {
  std::vector<std::string> records;
  for (const auto& [id, f] : families_) {
    VersionEdit edit;
    edit.SetColumnFamily(id);
    if (id != 0) edit.AddColumnFamily(f.name);
    edit.SetComparatorName(f.setup.icmp->user_comparator()->Name());
    edit.SetLogNumber(f.log_number);
    if (id == 0) edit.SetMaxColumnFamily(max_column_family_);
    for (int level = 0; level < f.current->NumLevels(); level++) {
      for (const FileMetaPtr& file : f.current->files(level)) edit.AddFile(level, *file);
    }
    records.emplace_back();
    edit.EncodeTo(&records.back());
  }
  return records;
}

Status VersionSet::WriteManifest(const std::vector<std::string>& snapshot,
                                 const std::vector<std::string>& records, uint64_t new_manifest) {
  Status s;
  if (new_manifest == 0) {
    for (const std::string& r : records) {
      if (s.ok()) s = descriptor_log_->AddRecord(r);
    }
    if (s.ok()) s = descriptor_log_->Sync(options_->use_fsync);
    if (s.ok()) {
      manifest_size_ = descriptor_log_->file()->GetFileSize();
    } else {
      // The MANIFEST's tail is unknown now: the next edit starts a new one.
      descriptor_log_->Close().PermitUncheckedError();
      descriptor_log_.reset();
    }
    return s;
  }

  if (db_dir_ == nullptr) {
    s = env_->NewDirectory(dbname_, &db_dir_);
    if (!s.ok()) return s;
  }
  const std::string fname = DescriptorFileName(dbname_, new_manifest);
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(fname, &file, EnvOptions());
  if (!s.ok()) return s;
  auto log = std::make_unique<log::Writer>(std::move(file), new_manifest);
  for (const std::string& r : snapshot) {
    if (s.ok()) s = log->AddRecord(r);
  }
  for (const std::string& r : records) {
    if (s.ok()) s = log->AddRecord(r);
  }
  if (s.ok()) s = log->Sync(options_->use_fsync);
  // SetCurrentFile makes the new MANIFEST's directory entry durable before CURRENT names it.
  if (s.ok()) s = SetCurrentFile(env_, dbname_, new_manifest, db_dir_.get());
  // A rollover's old MANIFEST takes no more edits, whatever happened: CURRENT names the new
  // one now, or may.
  if (descriptor_log_ != nullptr) {
    descriptor_log_->Close().PermitUncheckedError();
    descriptor_log_.reset();
  }
  if (s.ok()) {
    manifest_size_ = log->file()->GetFileSize();
    descriptor_log_ = std::move(log);
  } else {
    log->Close().PermitUncheckedError();
    if (!CurrentMayName(env_, dbname_, new_manifest)) {
      env_->DeleteFile(fname).PermitUncheckedError();
    }
  }
  return s;
}

Status VersionSet::LogAndApply(VersionEdit* edit, const FamilySetup* setup) {
  return LogAndApply(std::vector<VersionEdit*>{edit}, setup);
}

Status VersionSet::LogAndApply(const std::vector<VersionEdit*>& edits, const FamilySetup* setup) {
  ManifestWriter w(db_mutex_);
  writers_.push_back(&w);
  while (writers_.front() != &w) w.cv.Wait(db_mutex_);

  Status s;
  if (edits.empty()) s = Status::InvalidArgument("no edit to apply");
  // Each edit checked and its Version built; a group names each family once, and neither
  // creates nor drops one.
  std::vector<Version*> versions(edits.size(), nullptr);
  std::set<uint32_t> seen;
  // A family being created: not live yet, with an id NewColumnFamilyId gave.
  std::optional<Family> created;
  for (size_t i = 0; i < edits.size() && s.ok(); i++) {
    VersionEdit* edit = edits[i];
    const uint32_t id = edit->column_family();
    auto it = families_.find(id);
    if (edits.size() > 1 && (edit->is_column_family_add() || edit->is_column_family_drop() ||
                             !seen.insert(id).second)) {
      s = Status::InvalidArgument(
          "an atomic group edits each family once, and creates or "
          "drops none");
    } else if (edit->is_column_family_add()) {
      if (it != families_.end() || setup == nullptr || id == 0 || id > max_column_family_) {
        s = Status::InvalidArgument("cannot create column family " + std::to_string(id));
      } else {
        created = MakeFamily(edit->column_family_name(), *setup);
        created->current = NewVersion(*created);
        created->current->Ref();
        edit->SetMaxColumnFamily(max_column_family_);
        if (!edit->has_comparator()) {
          edit->SetComparatorName(setup->icmp->user_comparator()->Name());
        }
      }
    } else if (it == families_.end()) {
      s = Status::InvalidArgument("no column family with id " + std::to_string(id));
    } else if (edit->is_column_family_drop() && id == 0) {
      s = Status::InvalidArgument("Can't drop default column family");
    }
    if (!s.ok()) break;
    const Family& f = created ? *created : it->second;
    if (!edit->has_log_number()) edit->SetLogNumber(f.log_number);
    if (!edit->has_prev_log_number()) edit->SetPrevLogNumber(prev_log_number_);
    // Every edit repeats it, so the one after a new MANIFEST's snapshot carries it too.
    if (!edit->has_min_log_number_to_keep() && min_log_number_to_keep_ != 0) {
      edit->SetMinLogNumberToKeep(min_log_number_to_keep_);
    }
    if (!edit->has_last_sequence()) edit->SetLastSequence(LastSequence());
    if (!edit->is_column_family_drop()) s = BuildVersion(f, *edit, &versions[i]);
  }
  if (s.ok()) {
    std::vector<std::string> snapshot;
    uint64_t new_manifest = 0;
    // The limit is checked before the edit, as RocksDB's: a MANIFEST ends with the edit
    // that takes it past the limit.
    if (descriptor_log_ == nullptr || manifest_size_ >= options_->max_manifest_file_size) {
      new_manifest = NewFileNumber();
      snapshot = EncodeSnapshot();
    }
    std::vector<std::string> records(edits.size());
    for (size_t i = 0; i < edits.size(); i++) {
      if (edits.size() > 1) edits[i]->SetAtomicGroup(static_cast<uint32_t>(edits.size() - 1 - i));
      edits[i]->SetNextFile(next_file_number_.load());
      edits[i]->EncodeTo(&records[i]);
    }

    db_mutex_->Unlock();  // MANIFEST I/O without the DB mutex; we are the only writer
    s = WriteManifest(snapshot, records, new_manifest);
    db_mutex_->Lock();

    if (s.ok()) {
      for (size_t i = 0; i < edits.size(); i++) {
        const VersionEdit* edit = edits[i];
        const uint32_t id = edit->column_family();
        auto it = created ? families_.emplace(id, std::move(*created)).first : families_.find(id);
        created.reset();
        if (edit->is_column_family_drop()) {
          it->second.current->Unref();
          families_.erase(it);
        } else {
          AppendVersion(&it->second, versions[i]);
          versions[i] = nullptr;
          it->second.log_number = edit->log_number();
        }
        prev_log_number_ = edit->prev_log_number();
        if (edit->has_min_log_number_to_keep()) {
          min_log_number_to_keep_ = edit->min_log_number_to_keep();
        }
        if (edit->last_sequence() > LastSequence()) SetLastSequence(edit->last_sequence());
      }
      if (new_manifest != 0) manifest_file_number_.store(new_manifest);
    }
  }
  for (Version* v : versions) delete v;
  if (created) created->current->Unref();

  writers_.pop_front();
  if (!writers_.empty()) writers_.front()->cv.Signal();
  return s;
}

namespace {

struct ManifestReporter : public log::Reporter {
  Status status;
  void Corruption(size_t /*bytes*/, const Status& s) override {
    if (status.ok()) status = s;
  }
};

// Records with a good checksum anywhere in the log file (damage skipped); 0 if unreadable.
size_t CountIntactRecords(Env* env, const std::string& fname, uint64_t number) {
  std::unique_ptr<SequentialFile> file;
  if (!env->NewSequentialFile(fname, &file, EnvOptions()).ok()) return 0;
  ManifestReporter ignore;
  log::Reader reader(std::move(file), &ignore, /*checksum=*/true, number, fname);
  Slice record;
  std::string scratch;
  size_t n = 0;
  while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kSkipAnyCorruptedRecords)) n++;
  return n;
}

Status AtOffset(const std::string& fname, uint64_t offset, const Status& s) {
  char buf[80];
  snprintf(buf, sizeof(buf), " at offset %" PRIu64 ": ", offset);
  const char* state = s.getState();
  const std::string msg = fname + buf + (state != nullptr ? state : "");
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::Corruption(msg);
}

}  // namespace

namespace {

// CURRENT's MANIFEST: its name and number, or NotFound / Corruption naming CURRENT.
Status ReadCurrent(Env* env, const std::string& dbname, std::string* manifest,
                   uint64_t* manifest_number) {
  const std::string current_name = CurrentFileName(dbname);
  Status s = env->FileExists(current_name);
  if (s.IsNotFound()) return Status::NotFound(current_name, "does not exist");
  if (!s.ok()) return s;
  std::string current;
  s = ReadFileToString(env, current_name, &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(current_name, "CURRENT file does not end with a newline");
  }
  current.pop_back();
  FileType type;
  if (!ParseFileName(current, manifest_number, &type) || type != kDescriptorFile) {
    return Status::Corruption(current_name, "CURRENT does not name a MANIFEST file");
  }
  *manifest = dbname + "/" + current;
  return Status::OK();
}

// Reads the MANIFEST's edits in order, handing each to apply(edit, offset), which may stop
// the reading with an error. Damage with no intact record after it is the unsynced tail of
// an edit that was never acknowledged (every edit is synced before it takes effect), torn
// or garbled by a power loss: the edits before it are the MANIFEST, and *tail_damage says
// what was dropped. If the damage hit a durable edit instead, what that edit allowed to be
// deleted is missing and Open fails on it (the MANIFEST's WAL, or an input file of a
// compaction). Damage followed by intact records is Corruption; the reader's message names
// the MANIFEST and the offset.
Status ReadEdits(Env* env, const std::string& manifest, uint64_t manifest_number,
                 const std::function<Status(const VersionEdit&, uint64_t)>& apply,
                 Status* tail_damage) {
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(manifest, &file, EnvOptions());
  if (!s.ok()) {
    if (env->FileExists(manifest).IsNotFound()) {
      return Status::Corruption(CurrentFileName(manifest.substr(0, manifest.rfind('/'))),
                                "names a missing MANIFEST: " + manifest);
    }
    return s;
  }
  ManifestReporter reporter;
  log::Reader reader(std::move(file), &reporter, /*checksum=*/true, manifest_number, manifest);
  Slice record;
  std::string scratch;
  size_t applied = 0;
  // The edits of an atomic group read so far, with their offsets: they are applied together
  // when its last one is read. A group the MANIFEST ends inside was never acknowledged
  // (its writer crashed before the sync) and is dropped.
  std::vector<std::pair<VersionEdit, uint64_t>> group;
  while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kTolerateCorruptedTailRecords) &&
         reporter.status.ok()) {
    applied++;
    const uint64_t offset = reader.LastRecordOffset();
    VersionEdit edit;
    s = edit.DecodeFrom(record);
    if (!s.ok()) return AtOffset(manifest, offset, s);
    if (!edit.is_in_atomic_group()) {
      if (!group.empty()) {
        return AtOffset(manifest, offset,
                        Status::Corruption("an atomic group of edits is cut by another edit"));
      }
      s = apply(edit, offset);
      if (!s.ok()) return s;
      continue;
    }
    const uint32_t remaining = edit.remaining_entries();
    if (!group.empty() && group.back().first.remaining_entries() != remaining + 1) {
      return AtOffset(manifest, offset,
                      Status::Corruption("an atomic group's edits are not in order"));
    }
    group.emplace_back(std::move(edit), offset);
    if (remaining > 0) continue;
    for (const auto& [e, at] : group) {
      s = apply(e, at);
      if (!s.ok()) return s;
    }
    group.clear();
  }
  if (!reporter.status.ok() && CountIntactRecords(env, manifest, manifest_number) > applied) {
    return reporter.status;
  }
  *tail_damage = reporter.status;
  return Status::OK();
}

}  // namespace

Status VersionSet::ListColumnFamilies(Env* env, const std::string& dbname,
                                      std::vector<std::string>* names) {
  names->clear();
  std::string manifest;
  uint64_t manifest_number;
  Status s = ReadCurrent(env, dbname, &manifest, &manifest_number);
  if (!s.ok()) return s;
  std::map<uint32_t, std::string> live{{0, kDefaultColumnFamilyName}};
  Status tail_damage;
  s = ReadEdits(
      env, manifest, manifest_number,
      [&](const VersionEdit& edit, uint64_t offset) {
        const uint32_t id = edit.column_family();
        if (edit.is_column_family_add()) {
          if (live.count(id) > 0) {
            return AtOffset(
                manifest, offset,
                Status::Corruption("column family " + std::to_string(id) + " created twice"));
          }
          live[id] = edit.column_family_name();
        } else if (edit.is_column_family_drop()) {
          live.erase(id);
        }
        return Status::OK();
      },
      &tail_damage);
  if (!s.ok()) return s;
  for (const auto& [id, name] : live) names->push_back(name);
  return Status::OK();
}

Status VersionSet::Recover(const FamilyLookup& lookup, bool all_families) {
  std::string manifest;
  uint64_t manifest_number;
  Status s = ReadCurrent(env_, dbname_, &manifest, &manifest_number);
  if (!s.ok()) return s;

  // What the replay gathers per family: the families lookup set up get a builder; edits
  // of the others only say whether they are live at the end.
  struct Replay {
    std::string name;
    std::optional<FamilySetup> setup;
    std::unique_ptr<VersionBuilder> builder;
    int num_levels = 0;
    uint64_t log_number = 0;
  };
  std::map<uint32_t, Replay> replay;
  replay[0].name = kDefaultColumnFamilyName;
  replay[0].setup = FamilySetup{options_, icmp_, table_cache_};
  replay[0].num_levels = num_levels_;
  replay[0].builder = std::make_unique<VersionBuilder>(icmp_, num_levels_, nullptr);
  bool have_log_number = false, have_prev_log_number = false;
  bool have_next_file = false, have_last_sequence = false;
  uint64_t prev_log_number = 0, next_file = 0, min_log_to_keep = 0;
  uint32_t max_column_family = 0;
  SequenceNumber last_sequence = 0;
  uint64_t max_file_number = 0;
  Status tail_damage;  // damage dropped as an unsynced tail, reported if nothing usable came before
  s = ReadEdits(
      env_, manifest, manifest_number,
      [&](const VersionEdit& edit, uint64_t offset) -> Status {
        const uint32_t id = edit.column_family();
        if (edit.is_column_family_add()) {
          if (replay.count(id) > 0 || id == 0) {
            return AtOffset(
                manifest, offset,
                Status::Corruption("column family " + std::to_string(id) + " created twice"));
          }
          Replay& r = replay[id];
          r.name = edit.column_family_name();
          if (lookup != nullptr) r.setup = lookup(id, r.name);
          if (r.setup) {
            r.num_levels = std::max(r.setup->options->num_levels, 1);
            r.builder = std::make_unique<VersionBuilder>(r.setup->icmp, r.num_levels, nullptr);
          }
          max_column_family = std::max(max_column_family, id);
        }
        auto it = replay.find(id);
        if (it == replay.end()) {
          return AtOffset(manifest, offset,
                          Status::Corruption("edit of column family " + std::to_string(id) +
                                             ", which does not exist"));
        }
        Replay& r = it->second;
        if (edit.is_column_family_drop()) {
          if (id == 0) {
            return AtOffset(manifest, offset, Status::Corruption("the default family dropped"));
          }
          replay.erase(it);
          return Status::OK();
        }
        if (r.builder != nullptr) {
          const std::string ucmp_name = r.setup->icmp->user_comparator()->Name();
          if (edit.has_comparator() && edit.comparator() != ucmp_name) {
            return Status::InvalidArgument(
                manifest, "column family " + r.name + ": the DB was created with comparator " +
                              edit.comparator() + " and is being opened with comparator " +
                              ucmp_name);
          }
          Status a = r.builder->Apply(edit);
          if (!a.ok()) return AtOffset(manifest, offset, a);
        }
        for (const auto& nf : edit.new_files()) {
          max_file_number = std::max(max_file_number, nf.second.number);
        }
        if (edit.has_log_number()) {
          if (id == 0) have_log_number = true;
          r.log_number = edit.log_number();
        }
        if (edit.has_max_column_family()) {
          max_column_family = std::max(max_column_family, edit.max_column_family());
        }
        if (edit.has_prev_log_number()) {
          have_prev_log_number = true;
          prev_log_number = edit.prev_log_number();
        }
        if (edit.has_min_log_number_to_keep()) min_log_to_keep = edit.min_log_number_to_keep();
        if (edit.has_next_file_number()) {
          have_next_file = true;
          next_file = edit.next_file_number();
        }
        if (edit.has_last_sequence()) {
          // A flush records what it made durable of its own family: the largest any edit
          // recorded bounds every family's files.
          have_last_sequence = true;
          last_sequence = std::max(last_sequence, edit.last_sequence());
        }
        return Status::OK();
      },
      &tail_damage);
  if (!s.ok()) return s;
  if (!tail_damage.ok() && (!have_next_file || !have_log_number || !have_last_sequence)) {
    return tail_damage;
  }
  if (!have_next_file) return Status::Corruption(manifest, "no next-file-number entry");
  if (!have_log_number) return Status::Corruption(manifest, "no log-number entry");
  if (!have_last_sequence) return Status::Corruption(manifest, "no last-sequence entry");
  if (!have_prev_log_number) prev_log_number = 0;

  std::string not_opened;
  for (const auto& [id, r] : replay) {
    if (r.builder == nullptr) not_opened += (not_opened.empty() ? "" : ", ") + r.name;
  }
  if (!not_opened.empty() && all_families) {
    return Status::InvalidArgument("Column families not opened: " + not_opened);
  }
  std::map<uint32_t, Family> families;
  for (auto& [id, r] : replay) {
    if (r.builder == nullptr) continue;  // not opened (all_families is false)
    Family f = MakeFamily(r.name, *r.setup);
    f.log_number = r.log_number;
    Version* v = NewVersion(f);
    s = r.builder->SaveTo(v);
    if (!s.ok()) {
      delete v;
      for (auto& [fid, done] : families) done.current->Unref();
      return Status::Corruption(manifest, s.getState() != nullptr ? s.getState() : "");
    }
    v->Ref();
    f.current = v;
    families.emplace(id, std::move(f));
    MarkFileNumberUsed(r.log_number);
  }
  for (auto& [id, f] : families_) f.current->Unref();
  families_ = std::move(families);
  max_column_family_ = max_column_family;
  manifest_file_number_.store(manifest_number);
  next_file_number_.store(next_file);
  MarkFileNumberUsed(manifest_number);
  MarkFileNumberUsed(max_file_number);
  MarkFileNumberUsed(prev_log_number);
  prev_log_number_ = prev_log_number;
  min_log_number_to_keep_ = min_log_to_keep;
  SetLastSequence(last_sequence);
  return Status::OK();
}

Status VersionSet::VerifyFilesExist(bool open_tables) {
  for (const auto& [id, family] : families_) {
    Status s = VerifyFamilyFilesExist(family, open_tables);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status VersionSet::VerifyFamilyFilesExist(const Family& family, bool open_tables) {
  for (int level = 0; level < family.num_levels; level++) {
    for (const FileMetaPtr& f : family.current->files(level)) {
      const std::string fname = TableFileName(dbname_, f->number);
      uint64_t size = 0;
      Status s = env_->GetFileSize(fname, &size);
      if (!s.ok()) {
        if (s.IsNotFound() || s.IsPathNotFound() || env_->FileExists(fname).IsNotFound()) {
          return Status::Corruption(fname, "SST file named in the MANIFEST is missing");
        }
        return s;
      }
      if (size != f->file_size) {
        char buf[120];
        snprintf(buf, sizeof(buf), "size %" PRIu64 " differs from %" PRIu64 " in the MANIFEST",
                 size, f->file_size);
        return Status::Corruption(fname, buf);
      }
      if (open_tables) {
        std::shared_ptr<TableReader> reader;
        s = family.setup.table_cache->FindTable(*f, &reader);
        if (!s.ok()) return s;
      }
    }
  }
  return Status::OK();
}

}  // namespace shale
