#include "db/version_set.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "db/filename.h"
#include "db/log_reader.h"
#include "db/table_cache.h"
#include "db/version_builder.h"

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
  AppendVersion(new Version(this, table_cache_, icmp_, num_levels_));
}

VersionSet::~VersionSet() {
  current_->Unref();
  if (descriptor_log_ != nullptr) descriptor_log_->Close().PermitUncheckedError();
  // Versions still referenced elsewhere outlive us: detach them.
  MutexLock l(&live_mu_);
  for (Version* v : live_) v->vset_ = nullptr;
  live_.clear();
}

void VersionSet::AppendVersion(Version* v) {
  v->Ref();
  if (current_ != nullptr) current_->Unref();
  current_ = v;
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

Status VersionSet::BuildVersion(const VersionEdit& edit, Version** result) {
  VersionBuilder builder(icmp_, num_levels_, current_);
  Status s = builder.Apply(edit);
  if (!s.ok()) return s;
  auto* v = new Version(this, table_cache_, icmp_, num_levels_);
  s = builder.SaveTo(v);
  if (!s.ok()) {
    delete v;
    return s;
  }
  *result = v;
  return s;
}

void VersionSet::EncodeSnapshot(const Version* v, std::string* dst) const {
  VersionEdit edit;
  edit.SetComparatorName(icmp_->user_comparator()->Name());
  for (int level = 0; level < v->NumLevels(); level++) {
    for (const FileMetaPtr& f : v->files(level)) edit.AddFile(level, *f);
  }
  edit.EncodeTo(dst);
}

Status VersionSet::WriteManifest(const std::string& snapshot, const std::string& record,
                                 uint64_t new_manifest) {
  Status s;
  if (new_manifest == 0) {
    s = descriptor_log_->AddRecord(record);
    if (s.ok()) s = descriptor_log_->Sync(options_->use_fsync);
    if (!s.ok()) {
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
  s = log->AddRecord(snapshot);
  if (s.ok()) s = log->AddRecord(record);
  if (s.ok()) s = log->Sync(options_->use_fsync);
  // SetCurrentFile makes the new MANIFEST's directory entry durable before CURRENT names it.
  if (s.ok()) s = SetCurrentFile(env_, dbname_, new_manifest, db_dir_.get());
  if (s.ok()) {
    descriptor_log_ = std::move(log);
  } else {
    log->Close().PermitUncheckedError();
    if (!CurrentMayName(env_, dbname_, new_manifest)) {
      env_->DeleteFile(fname).PermitUncheckedError();
    }
  }
  return s;
}

Status VersionSet::LogAndApply(VersionEdit* edit) {
  ManifestWriter w(db_mutex_);
  writers_.push_back(&w);
  while (writers_.front() != &w) w.cv.Wait(db_mutex_);

  Status s;
  uint64_t new_manifest = 0;
  Version* v = nullptr;
  if (edit->column_family() != 0) {
    s = Status::InvalidArgument("no column family with id " +
                                std::to_string(edit->column_family()));
  } else {
    if (!edit->has_log_number()) edit->SetLogNumber(log_number_);
    if (!edit->has_prev_log_number()) edit->SetPrevLogNumber(prev_log_number_);
    // Every edit repeats it, so the one after a new MANIFEST's snapshot carries it too.
    if (!edit->has_min_log_number_to_keep() && min_log_number_to_keep_ != 0) {
      edit->SetMinLogNumberToKeep(min_log_number_to_keep_);
    }
    if (!edit->has_last_sequence()) edit->SetLastSequence(LastSequence());
    s = BuildVersion(*edit, &v);
  }
  if (s.ok()) {
    std::string snapshot;
    if (descriptor_log_ == nullptr) {
      new_manifest = NewFileNumber();
      EncodeSnapshot(current_, &snapshot);
    }
    edit->SetNextFile(next_file_number_.load());
    std::string record;
    edit->EncodeTo(&record);

    db_mutex_->Unlock();  // MANIFEST I/O without the DB mutex; we are the only writer
    s = WriteManifest(snapshot, record, new_manifest);
    db_mutex_->Lock();

    if (s.ok()) {
      AppendVersion(v);
      log_number_ = edit->log_number();
      prev_log_number_ = edit->prev_log_number();
      if (edit->has_min_log_number_to_keep()) {
        min_log_number_to_keep_ = edit->min_log_number_to_keep();
      }
      if (edit->last_sequence() > LastSequence()) SetLastSequence(edit->last_sequence());
      if (new_manifest != 0) manifest_file_number_.store(new_manifest);
    } else {
      delete v;
    }
  }

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

Status VersionSet::Recover() {
  const std::string current_name = CurrentFileName(dbname_);
  Status s = env_->FileExists(current_name);
  if (s.IsNotFound()) return Status::NotFound(current_name, "does not exist");
  if (!s.ok()) return s;
  std::string current;
  s = ReadFileToString(env_, current_name, &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(current_name, "CURRENT file does not end with a newline");
  }
  current.pop_back();
  uint64_t manifest_number;
  FileType type;
  if (!ParseFileName(current, &manifest_number, &type) || type != kDescriptorFile) {
    return Status::Corruption(current_name, "CURRENT does not name a MANIFEST file");
  }
  const std::string manifest = dbname_ + "/" + current;
  std::unique_ptr<SequentialFile> file;
  s = env_->NewSequentialFile(manifest, &file, EnvOptions());
  if (!s.ok()) {
    if (env_->FileExists(manifest).IsNotFound()) {
      return Status::Corruption(current_name, "names a missing MANIFEST: " + manifest);
    }
    return s;
  }

  const std::string ucmp_name = icmp_->user_comparator()->Name();
  VersionBuilder builder(icmp_, num_levels_, nullptr);
  bool have_log_number = false, have_prev_log_number = false;
  bool have_next_file = false, have_last_sequence = false;
  uint64_t log_number = 0, prev_log_number = 0, next_file = 0, min_log_to_keep = 0;
  SequenceNumber last_sequence = 0;
  uint64_t max_file_number = 0;
  Status tail_damage;  // damage dropped as an unsynced tail, reported if nothing usable came before
  {
    ManifestReporter reporter;
    log::Reader reader(std::move(file), &reporter, /*checksum=*/true, manifest_number, manifest);
    Slice record;
    std::string scratch;
    size_t applied = 0;
    while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kTolerateCorruptedTailRecords) &&
           reporter.status.ok()) {
      applied++;
      const uint64_t offset = reader.LastRecordOffset();
      VersionEdit edit;
      s = edit.DecodeFrom(record);
      if (!s.ok()) return AtOffset(manifest, offset, s);
      if (edit.column_family() != 0) {
        return AtOffset(
            manifest, offset,
            Status::NotSupported("column family " + std::to_string(edit.column_family()) +
                                 " (only the default family is supported)"));
      }
      if (edit.has_comparator() && edit.comparator() != ucmp_name) {
        return Status::InvalidArgument(manifest,
                                       "the DB was created with comparator " + edit.comparator() +
                                           " and is being opened with comparator " + ucmp_name);
      }
      s = builder.Apply(edit);
      if (!s.ok()) return AtOffset(manifest, offset, s);
      for (const auto& nf : edit.new_files()) {
        max_file_number = std::max(max_file_number, nf.second.number);
      }
      if (edit.has_log_number()) {
        have_log_number = true;
        log_number = edit.log_number();
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
        have_last_sequence = true;
        last_sequence = edit.last_sequence();
      }
    }
    // Damage with no intact record after it is the unsynced tail of an edit that was never
    // acknowledged (every edit is synced before it takes effect), torn or garbled by a
    // power loss: the edits before it are the MANIFEST. If the damage hit a durable edit
    // instead, what that edit allowed to be deleted is missing and Open fails on it (the
    // MANIFEST's WAL, or an input file of a compaction). Damage followed by intact
    // records is Corruption; the reader's message names the MANIFEST and the offset.
    if (!reporter.status.ok() && CountIntactRecords(env_, manifest, manifest_number) > applied) {
      return reporter.status;
    }
    tail_damage = reporter.status;
  }
  if (!tail_damage.ok() && (!have_next_file || !have_log_number || !have_last_sequence)) {
    return tail_damage;
  }
  if (!have_next_file) return Status::Corruption(manifest, "no next-file-number entry");
  if (!have_log_number) return Status::Corruption(manifest, "no log-number entry");
  if (!have_last_sequence) return Status::Corruption(manifest, "no last-sequence entry");
  if (!have_prev_log_number) prev_log_number = 0;

  auto* v = new Version(this, table_cache_, icmp_, num_levels_);
  s = builder.SaveTo(v);
  if (!s.ok()) {
    delete v;
    return Status::Corruption(manifest, s.getState() != nullptr ? s.getState() : "");
  }
  AppendVersion(v);
  manifest_file_number_.store(manifest_number);
  next_file_number_.store(next_file);
  MarkFileNumberUsed(manifest_number);
  MarkFileNumberUsed(max_file_number);
  MarkFileNumberUsed(log_number);
  MarkFileNumberUsed(prev_log_number);
  log_number_ = log_number;
  prev_log_number_ = prev_log_number;
  min_log_number_to_keep_ = min_log_to_keep;
  SetLastSequence(last_sequence);
  return Status::OK();
}

Status VersionSet::VerifyFilesExist(bool open_tables) {
  for (int level = 0; level < num_levels_; level++) {
    for (const FileMetaPtr& f : current_->files(level)) {
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
        s = table_cache_->FindTable(*f, &reader);
        if (!s.ok()) return s;
      }
    }
  }
  return Status::OK();
}

}  // namespace shale
