// DBImpl's files as callers outside it see them: the live files and their metadata, the
// WALs, the count that holds back the obsolete-file sweep (db_impl.cc), the consistent
// cut a checkpoint copies (db/live_files.h), and the files an ingestion brings in
// (db/external_file_ingestion.h).
//
// A MANIFEST's length only describes the current Versions when no MANIFEST write is under
// way, and the VersionSet does not say when that is. So a cut makes a MANIFEST write of
// its own (an edit that changes nothing): LogAndApply serves its callers one at a time and
// returns with the DB mutex held, and the next caller cannot start writing before it gets
// the mutex. Under that mutex the file's length is exactly the Versions read.
#include <algorithm>

#include "db/db_impl.h"
#include "db/external_file_ingestion.h"
#include "db/filename.h"
#include "db/write_batch_internal.h"
#include "util/logging.h"

namespace shale {

namespace {

class LiveWalFile final : public WalFile {
 public:
  LiveWalFile(uint64_t number, SequenceNumber start, uint64_t size)
      : number_(number), start_(start), size_(size) {}
  std::string PathName() const override { return LogFileName("", number_); }
  uint64_t LogNumber() const override { return number_; }
  WalFileType Type() const override { return kAliveLogFile; }
  SequenceNumber StartSequence() const override { return start_; }
  uint64_t SizeFileBytes() const override { return size_; }

 private:
  const uint64_t number_;
  const SequenceNumber start_;
  const uint64_t size_;
};

// The sequence number of the first write batch in WAL `number`; 0 if it holds none that
// can be read.
SequenceNumber FirstSequence(Env* env, const std::string& dbname, uint64_t number) {
  const std::string fname = LogFileName(dbname, number);
  std::unique_ptr<SequentialFile> file;
  if (!env->NewSequentialFile(fname, &file, EnvOptions()).ok()) return 0;
  log::Reader reader(std::move(file), nullptr, /*checksum=*/true, number, fname);
  Slice record;
  std::string scratch;
  if (!reader.ReadRecord(&record, &scratch) || record.size() < WriteBatchInternal::kHeader) {
    return 0;
  }
  WriteBatch batch;
  if (!WriteBatchInternal::SetContents(&batch, record).ok()) return 0;
  return WriteBatchInternal::Sequence(&batch);
}

// The files in dbname of `type`, by number (ascending).
Status FilesOfType(Env* env, const std::string& dbname, FileType type,
                   std::vector<uint64_t>* numbers) {
  std::vector<std::string> children;
  Status s = env->GetChildren(dbname, &children);
  if (!s.ok()) return s;
  numbers->clear();
  for (const std::string& name : children) {
    uint64_t number;
    FileType t;
    if (ParseFileName(name, &number, &t) && t == type) numbers->push_back(number);
  }
  std::sort(numbers->begin(), numbers->end());
  return Status::OK();
}

SstFileMetaData DescribeTable(const std::string& dbname, const FileMetaData& f,
                              bool being_compacted) {
  SstFileMetaData m;
  m.name = TableFileName("", f.number);
  m.relative_filename = m.name.substr(1);
  m.directory = dbname;
  m.db_path = dbname;
  m.file_number = f.number;
  m.size = f.file_size;
  m.smallest_seqno = f.smallest_seqno;
  m.largest_seqno = f.largest_seqno;
  m.smallestkey = f.smallest.user_key().ToString();
  m.largestkey = f.largest.user_key().ToString();
  m.smallest = f.smallest.Encode().ToString();
  m.largest = f.largest.Encode().ToString();
  m.being_compacted = being_compacted;
  m.num_entries = f.num_entries;
  m.num_deletions = f.num_deletions;
  return m;
}

}  // namespace

// ---- File deletions.

Status DBImpl::DisableFileDeletions() {
  DbLock l(this);
  const int count = ++file_deletions_disabled_;
  // A sweep that decided before the count rose may still be deleting: wait it out, so
  // that whatever the caller lists next stays.
  while (sweeps_deleting_ > 0) bg_cv_.Wait(&mutex_);
  SHALE_LOG_INFO(info_log_, "File Deletions Disabled (count %d)", count);
  return Status::OK();
}

Status DBImpl::EnableFileDeletions() {
  DbLock l(this);
  if (file_deletions_disabled_ > 0) file_deletions_disabled_--;
  SHALE_LOG_INFO(info_log_, "File Deletions %s (count %d)",
                 file_deletions_disabled_ == 0 ? "Enabled" : "still disabled",
                 file_deletions_disabled_);
  if (file_deletions_disabled_ == 0) DeleteObsoleteFiles();
  return Status::OK();
}

// ---- The live files.

Status DBImpl::CutTablesAndManifest(LiveFilesCut* cut, uint64_t* min_wal) {
  DbLock l(this);
  Status s;
  // A read-only instance writes no MANIFEST, nor does anything else of its process.
  if (!read_only_) {
    VersionEdit fence;  // the default family's, changing nothing (see the top of the file)
    s = versions_->LogAndApply(&fence);
    if (!s.ok()) return s;
    InstallNewSuperVersion(default_cf_);
  }
  cut->table_files.clear();
  for (const auto& [id, cfd] : families_.live()) {
    const Version* v = versions_->current(id);
    for (int level = 0; level < v->NumLevels(); level++) {
      for (const FileMetaPtr& f : v->files(level)) {
        cut->table_files.push_back({f->number, f->file_size});
      }
    }
  }
  cut->manifest.number = versions_->ManifestFileNumber();
  // A stat under the DB mutex: released, the next MANIFEST write could start.
  s = env_->GetFileSize(DescriptorFileName(dbname_, cut->manifest.number), &cut->manifest.size);
  *min_wal = versions_->MinLogNumberToKeep() != 0 ? versions_->MinLogNumberToKeep()
                                                  : versions_->LogNumber();
  cut->sequence = pipeline_->LastPublished();
  return s;
}

Status DBImpl::CutLiveFiles(uint64_t wal_size_for_flush, LiveFilesCut* cut) {
  Status s;
  // A read-only instance flushes nothing (RocksDB's): its WALs are copied instead.
  bool flush = !read_only_ && (wal_size_for_flush == 0 || options_.allow_2pc);
  if (!flush && !read_only_) {
    VectorWalPtr wals;
    s = GetSortedWalFiles(wals);
    if (!s.ok()) return s;
    uint64_t total = 0;
    for (const auto& w : wals) total += w->SizeFileBytes();
    flush = total >= wal_size_for_flush;
  }
  if (flush) {
    s = FlushLiveFamilies(/*only_with_writes=*/false);
    // A family dropped meanwhile has no files to copy.
    if (!s.ok() && !s.IsColumnFamilyDropped()) return s;
  }
  // With the main write queue held no WAL grows or switches: the WALs' lengths are whole
  // records, and together with the MANIFEST they describe one moment.
  s = pipeline_->WithQueueAlone([this, cut] {
    uint64_t min_wal = 0;
    Status cs = CutTablesAndManifest(cut, &min_wal);
    std::vector<uint64_t> numbers;
    if (cs.ok()) cs = FilesOfType(env_, dbname_, kWalFile, &numbers);
    cut->wals.clear();
    for (uint64_t n : numbers) {
      if (!cs.ok()) break;
      if (n < min_wal) continue;
      LiveFilesCut::Sized w{n, 0};
      cs = env_->GetFileSize(LogFileName(dbname_, n), &w.size);
      cut->wals.push_back(w);
    }
    return cs;
  });
  if (!s.ok()) return s;
  std::vector<uint64_t> options_files;
  s = FilesOfType(env_, dbname_, kOptionsFile, &options_files);
  cut->options_number = options_files.empty() ? 0 : options_files.back();
  return s;
}

Status DBImpl::GetLiveFiles(std::vector<std::string>& live_files, uint64_t* manifest_file_size,
                            bool flush_memtable) {
  *manifest_file_size = 0;
  Status s;
  if (flush_memtable) {
    s = FlushLiveFamilies(/*only_with_writes=*/false);
    if (!s.ok() && !s.IsColumnFamilyDropped()) {
      SHALE_LOG_ERROR(info_log_, "Cannot Flush data %s", s.ToString().c_str());
      return s;
    }
  }
  LiveFilesCut cut;
  s = pipeline_->WithQueueAlone([this, &cut] {
    uint64_t min_wal = 0;
    return CutTablesAndManifest(&cut, &min_wal);
  });
  std::vector<uint64_t> options_files;
  if (s.ok()) s = FilesOfType(env_, dbname_, kOptionsFile, &options_files);
  if (!s.ok()) return s;
  live_files.clear();
  for (const LiveFilesCut::Sized& t : cut.table_files) {
    live_files.push_back(TableFileName("", t.number));
  }
  live_files.push_back(CurrentFileName(""));
  live_files.push_back(DescriptorFileName("", cut.manifest.number));
  if (!options_files.empty()) live_files.push_back(OptionsFileName("", options_files.back()));
  *manifest_file_size = cut.manifest.size;
  return Status::OK();
}

Status DBImpl::GetSortedWalFiles(VectorWalPtr& files) {
  files.clear();
  // Nothing is deleted while the directory is read (a sweep would make a listed file
  // vanish before its size is taken).
  DisableFileDeletions().PermitUncheckedError();
  uint64_t current;
  {
    DbLock l(this);
    current = logfile_number_;
  }
  std::vector<uint64_t> numbers;
  Status s = FilesOfType(env_, dbname_, kWalFile, &numbers);
  for (size_t i = 0; s.ok() && i < numbers.size(); i++) {
    uint64_t size = 0;
    s = env_->GetFileSize(LogFileName(dbname_, numbers[i]), &size);
    if (s.ok()) {
      files.push_back(std::make_unique<LiveWalFile>(
          numbers[i], FirstSequence(env_, dbname_, numbers[i]), size));
    }
  }
  EnableFileDeletions().PermitUncheckedError();
  // A read-only instance has no WAL of its own (current is 0).
  if (s.ok() && !read_only_ && !std::binary_search(numbers.begin(), numbers.end(), current)) {
    s = Status::Corruption("WAL file " + std::to_string(current) +
                           " required by the DB but not in directory list");
  }
  if (!s.ok()) files.clear();
  return s;
}

Status DBImpl::GetCurrentWalFile(std::unique_ptr<WalFile>* current_wal_file) {
  uint64_t number;
  {
    DbLock l(this);
    number = logfile_number_;
  }
  uint64_t size = 0;
  Status s = env_->GetFileSize(LogFileName(dbname_, number), &size);
  if (s.ok()) *current_wal_file = std::make_unique<LiveWalFile>(number, 0, size);
  return s;
}

// ---- Metadata.

void DBImpl::GetLiveFilesMetaData(std::vector<LiveFileMetaData>* metadata) {
  metadata->clear();
  DbLock l(this);
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    const Version* v = versions_->current(id);
    for (int level = 0; level < v->NumLevels(); level++) {
      for (const FileMetaPtr& f : v->files(level)) {
        LiveFileMetaData m;
        static_cast<SstFileMetaData&>(m) =
            DescribeTable(dbname_, *f, cfd->picker()->IsBeingCompacted(*f));
        m.column_family_name = cfd->name();
        m.level = level;
        metadata->push_back(std::move(m));
      }
    }
  }
}

void DBImpl::GetColumnFamilyMetaData(ColumnFamilyHandle* cf, ColumnFamilyMetaData* metadata) {
  *metadata = ColumnFamilyMetaData();
  if (!IsOwnFamily(cf)) return;
  ColumnFamilyData* cfd = CfdOf(cf);
  DbLock l(this);
  HeldFor(cfd);
  metadata->name = cfd->name();
  const Version* v = versions_->current(cfd->id());
  if (v == nullptr) return;  // dropped: no files of its own any more
  for (int level = 0; level < v->NumLevels(); level++) {
    std::vector<SstFileMetaData> files;
    uint64_t size = 0;
    for (const FileMetaPtr& f : v->files(level)) {
      files.push_back(DescribeTable(dbname_, *f, cfd->picker()->IsBeingCompacted(*f)));
      size += f->file_size;
    }
    metadata->size += size;
    metadata->file_count += files.size();
    metadata->levels.emplace_back(level, size, std::move(files));
  }
}

// ---- Ingestion.

Status DBImpl::IngestExternalFile(ColumnFamilyHandle* cf, const std::vector<std::string>& files,
                                  const IngestExternalFileOptions& o) {
  IngestExternalFileArg arg;
  arg.column_family = cf;
  arg.external_files = files;
  arg.options = o;
  return IngestExternalFiles({arg});
}

Status DBImpl::IngestExternalFiles(const std::vector<IngestExternalFileArg>& args) {
  if (args.empty()) return Status::InvalidArgument("ingestion arg list is empty");
  if (options_.two_write_queues) {
    return Status::NotSupported("IngestExternalFile with two_write_queues");
  }
  std::vector<ColumnFamilyData*> cfds;
  std::vector<std::unique_ptr<ExternalFileIngestion>> owned;
  std::vector<ExternalFileIngestion*> jobs;
  for (const IngestExternalFileArg& arg : args) {
    if (arg.column_family == nullptr)
      return Status::InvalidArgument("column family handle is null");
    if (!IsOwnFamily(arg.column_family)) {
      return Status::InvalidArgument("column family is not this DB's");
    }
    ColumnFamilyData* cfd = CfdOf(arg.column_family);
    if (cfd->dropped()) return Status::ColumnFamilyDropped(cfd->name());
    if (std::find(cfds.begin(), cfds.end(), cfd) != cfds.end()) {
      return Status::InvalidArgument("column family " + cfd->name() +
                                     " appears more than once in the ingestion");
    }
    cfds.push_back(cfd);
    owned.push_back(std::make_unique<ExternalFileIngestion>(env_, dbname_, &cfd->options(),
                                                            &cfd->internal_comparator(),
                                                            arg.external_files, arg.options));
    jobs.push_back(owned.back().get());
    Status s = jobs.back()->CheckOptions();
    if (!s.ok()) return s;
  }

  // Numbers for the files, kept from the sweep until the ingestion is recorded or undone.
  std::vector<std::vector<uint64_t>> numbers(jobs.size());
  {
    DbLock l(this);
    for (size_t i = 0; i < jobs.size(); i++) {
      for (size_t f = 0; f < jobs[i]->NumFiles(); f++) {
        numbers[i].push_back(versions_->NewFileNumber());
        pending_outputs_.insert(numbers[i].back());
      }
    }
  }
  Status s;
  for (size_t i = 0; s.ok() && i < jobs.size(); i++) s = jobs[i]->Prepare(numbers[i]);
  // The files' names must be durable before a MANIFEST names them.
  if (s.ok()) s = db_dir_->Fsync();

  // Flush the memtables the files overlap now, while writes go on; what is written into
  // their ranges meanwhile is flushed again with the writes held.
  if (s.ok()) {
    std::vector<ColumnFamilyHandle*> to_flush;
    {
      DbLock l(this);
      for (size_t i = 0; s.ok() && i < jobs.size(); i++) {
        HeldFor(cfds[i]);
        std::vector<MemTable*> mems = cfds[i]->imm();
        mems.push_back(cfds[i]->mem());
        if (!jobs[i]->OverlapsMemtables(mems)) continue;
        if (!jobs[i]->allow_blocking_flush()) {
          s = Status::InvalidArgument("External file requires flush");
        }
        to_flush.push_back(args[i].column_family);
      }
    }
    if (s.ok() && !to_flush.empty()) s = Flush(FlushOptions(), to_flush);
  }

  bool recording = false;
  if (s.ok()) {
    s = pipeline_->WithQueueAlone(
        [this, &cfds, &jobs, &recording] { return RecordIngestion(cfds, jobs, &recording); });
  }
  // After a MANIFEST write that failed the files stay: the write may have reached the
  // disk, and the background error it left stops the sweep.
  if (!(recording && !s.ok())) {
    for (ExternalFileIngestion* job : jobs) job->Finish(s.ok());
  }
  DbLock l(this);
  for (const auto& list : numbers) {
    for (uint64_t n : list) pending_outputs_.erase(n);
  }
  size_t files = 0;
  for (const ExternalFileIngestion* job : jobs) files += job->NumFiles();
  SHALE_LOG_INFO(info_log_, "Ingesting %zu external file(s) into %zu column family(ies): %s", files,
                 jobs.size(), s.ToString().c_str());
  return s;
}

Status DBImpl::RecordIngestion(const std::vector<ColumnFamilyData*>& cfds,
                               const std::vector<ExternalFileIngestion*>& jobs, bool* recording) {
  *recording = false;
  // Every write acknowledged so far is in its memtable and published.
  pipeline_->WaitForMemtableWriters();
  DbLock l(this);
  std::vector<ColumnFamilyData*> full;
  for (size_t i = 0; i < jobs.size(); i++) {
    HeldFor(cfds[i]);
    std::vector<MemTable*> mems = cfds[i]->imm();
    mems.push_back(cfds[i]->mem());
    if (!jobs[i]->OverlapsMemtables(mems)) continue;
    if (!jobs[i]->allow_blocking_flush()) {
      return Status::InvalidArgument("External file requires flush");
    }
    full.push_back(cfds[i]);
  }
  if (!full.empty()) {
    Status s = MakeRoomForWrite(&full, 0, /*no_slowdown=*/false);
    for (size_t i = 0; s.ok() && i < full.size(); i++) s = WaitForFlushOf(full[i]);
    if (!s.ok()) return s;
  }
  if (!bg_error_.ok()) return bg_error_;
  bool snapshots_exist;
  {
    MutexLock sl(&snapshots_mu_);
    snapshots_exist = !snapshots_.empty();
  }
  std::vector<uint64_t> seqnos(jobs.size());
  uint64_t total = 0;
  for (size_t i = 0; i < jobs.size(); i++) {
    ColumnFamilyData* cfd = cfds[i];
    HeldFor(cfd);
    if (cfd->dropped()) return Status::ColumnFamilyDropped(cfd->name());
    Version* v = versions_->current(cfd->id());
    const int base_level = cfd->picker()->ScoresOf(v).base_level;
    Status s = jobs[i]->Assign(v, cfd->table_cache(), *cfd->picker(), base_level, snapshots_exist,
                               &seqnos[i]);
    if (!s.ok()) return s;
    total += seqnos[i];
  }
  // The numbers come after every write acknowledged before; they are published once the
  // files are in place, so that a read or snapshot at one of them sees the files.
  const SequenceNumber first = pipeline_->NextSequenceAlone();
  const SequenceNumber last = first + total - 1;  // first - 1 when none is needed
  SequenceNumber next = first;
  std::vector<VersionEdit*> group;
  for (size_t i = 0; i < jobs.size(); i++) {
    HeldFor(cfds[i]);
    jobs[i]->BuildEdit(next, cfds[i]->id(), cfds[i]->picker());
    next += seqnos[i];
    jobs[i]->edit()->SetLastSequence(last);
    group.push_back(jobs[i]->edit());
  }
  *recording = true;
  Status s = versions_->LogAndApply(group);
  for (ColumnFamilyData* cfd : cfds) {
    HeldFor(cfd);
    cfd->picker()->ClearReservations();
  }
  bg_cv_.SignalAll();  // manual compactions waiting on a reserved range
  if (!s.ok()) {
    // An edit that does not apply is refused before any I/O.
    if (s.IsInvalidArgument()) {
      *recording = false;
    } else {
      RecordBackgroundError(s);
    }
    return s;
  }
  for (ColumnFamilyData* cfd : cfds) InstallNewSuperVersion(cfd);
  if (total > 0) pipeline_->PublishAlone(last);
  tree_version_++;
  RecalculateWriteStallConditions();
  MaybeScheduleCompaction();
  return Status::OK();
}

}  // namespace shale
