// Checkpoint (include/shale/utilities/checkpoint.h): a copy of an open DB made from one
// consistent cut of its files (db/live_files.h), in a staging directory renamed into place.
//
// Order of the work, and why:
//   1. File deletions are disabled for the whole copy, so that nothing the cut names is
//      swept before it is linked or copied (a compaction may make it obsolete meanwhile).
//   2. The cut: table files, the MANIFEST's length, the WALs recovery reads and their
//      lengths, taken by the DB at one moment (after the flush log_size_for_flush asks for).
//   3. Table files are immutable: a hard link is as good as a copy, and costs nothing.
//      The MANIFEST and the WALs grow, so they are copied up to their lengths at the cut;
//      the newest WAL's copy is cut back to its last whole record, since a write may have
//      been landing at that length. CURRENT is written, not copied: the DB's CURRENT may
//      already name a newer MANIFEST than the cut's.
//   4. Every copied file is synced, then the staging directory; then it is renamed to its
//      name and the parent directory synced. Before the rename a crash leaves only the
//      ".tmp" directory, which the next CreateCheckpoint removes.
#include <algorithm>
#include <memory>
#include <vector>

#include "db/filename.h"
#include "db/live_files.h"
#include "db/log_reader.h"
#include "shale/db.h"
#include "shale/env.h"
#include "shale/utilities/checkpoint.h"
#include "shale/utilities/stackable_db.h"

namespace shale {

namespace {

constexpr size_t kCopyBufferSize = 1 << 20;

// Copies the first `limit` bytes of src (fewer if it is shorter) into a new file target,
// synced.
Status CopyFilePrefix(Env* env, const std::string& src, const std::string& target, uint64_t limit) {
  std::unique_ptr<SequentialFile> in;
  Status s = env->NewSequentialFile(src, &in, EnvOptions());
  if (!s.ok()) return s;
  std::unique_ptr<WritableFile> out;
  s = env->NewWritableFile(target, &out, EnvOptions());
  if (!s.ok()) return s;
  std::vector<char> buffer(kCopyBufferSize);
  uint64_t left = limit;
  while (left > 0 && s.ok()) {
    Slice chunk;
    s = in->Read(static_cast<size_t>(std::min<uint64_t>(left, buffer.size())), &chunk,
                 buffer.data());
    if (!s.ok() || chunk.empty()) break;
    s = out->Append(chunk);
    left -= chunk.size();
  }
  if (s.ok()) s = out->Sync();
  Status closed = out->Close();
  return s.ok() ? closed : s;
}

// Copies the newest WAL src up to `limit` into target, then, if the copy ends inside a
// record (or in the zeros the WAL is allocated ahead with), copies it again up to the end
// of its last whole record, so that it reads as a clean log in every recovery mode.
Status CopyNewestWal(Env* env, const std::string& src, const std::string& target, uint64_t number,
                     uint64_t limit) {
  Status s = CopyFilePrefix(env, src, target, limit);
  uint64_t size = 0, end = 0;
  if (s.ok()) s = env->GetFileSize(target, &size);
  if (s.ok()) s = log::WholeRecordsEnd(env, target, number, &end);
  // The source's first `end` bytes are as they were: a WAL only grows.
  if (s.ok() && end < size) s = CopyFilePrefix(env, src, target, end);
  return s;
}

Status SyncDirectory(Env* env, const std::string& dir) {
  std::unique_ptr<Directory> d;
  Status s = env->NewDirectory(dir, &d);
  return s.ok() ? d->Fsync() : s;
}

// Removes dir and the files in it, if it exists.
Status RemoveStagingDirectory(Env* env, const std::string& dir) {
  if (env->FileExists(dir).IsNotFound()) return Status::OK();
  std::vector<std::string> children;
  Status s = env->GetChildren(dir, &children);
  for (size_t i = 0; s.ok() && i < children.size(); i++) {
    s = env->DeleteFile(dir + "/" + children[i]);
  }
  return s.ok() ? env->DeleteDir(dir) : s;
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class CheckpointImpl final : public Checkpoint {
 public:
  CheckpointImpl(DB* db, LiveFilesSource* source) : db_(db), source_(source) {}

  Status CreateCheckpoint(const std::string& checkpoint_dir, uint64_t log_size_for_flush,
                          uint64_t* sequence_number_ptr) override;

 private:
  // Steps 2 and 3 of the top of the file, into staging. REQUIRES: file deletions disabled.
  Status CopyCut(const std::string& staging, uint64_t log_size_for_flush, SequenceNumber* seq);
  // Links the table file src to target, or copies it where links are not to be had.
  Status LinkOrCopy(const std::string& src, const std::string& target, uint64_t size);

  DB* const db_;
  LiveFilesSource* const source_;
  Env* const env_ = db_->GetEnv();
  bool links_work_ = true;  // false once the file system refused a link
};

Status CheckpointImpl::CreateCheckpoint(const std::string& checkpoint_dir,
                                        uint64_t log_size_for_flush,
                                        uint64_t* sequence_number_ptr) {
  Status s = env_->FileExists(checkpoint_dir);
  if (s.ok()) return Status::InvalidArgument("Directory exists");
  if (!s.IsNotFound()) return s;
  const size_t last = checkpoint_dir.find_last_not_of('/');
  if (last == std::string::npos) {
    return Status::InvalidArgument("invalid checkpoint directory name");
  }
  const std::string dir = checkpoint_dir.substr(0, last + 1);
  const std::string staging = dir + ".tmp";
  s = RemoveStagingDirectory(env_, staging);
  if (!s.ok()) {
    return Status::Aborted("Failed to clean the temporary directory " + staging +
                           " needed before checkpoint creation : " + s.ToString());
  }
  s = env_->CreateDir(staging);
  if (!s.ok()) return s;

  SequenceNumber seq = 0;
  s = db_->DisableFileDeletions();
  // A read-only or secondary instance deletes nothing and answers NotSupported: its files
  // are copied all the same, as RocksDB's.
  const bool disabled = s.ok();
  if (s.ok() || s.IsNotSupported()) {
    s = CopyCut(staging, log_size_for_flush, &seq);
    if (disabled) {
      Status enabled = db_->EnableFileDeletions();
      if (s.ok()) s = enabled;
    }
  }
  if (s.ok()) s = SyncDirectory(env_, staging);
  if (s.ok()) s = env_->RenameFile(staging, dir);
  if (s.ok()) s = SyncDirectory(env_, ParentOf(dir));
  if (!s.ok()) {
    RemoveStagingDirectory(env_, staging).PermitUncheckedError();
    return s;
  }
  if (sequence_number_ptr != nullptr) *sequence_number_ptr = seq;
  return Status::OK();
}

Status CheckpointImpl::CopyCut(const std::string& staging, uint64_t log_size_for_flush,
                               SequenceNumber* seq) {
  LiveFilesCut cut;
  Status s = source_->CutLiveFiles(log_size_for_flush, &cut);
  if (!s.ok()) return s;
  const std::string& dbname = db_->GetName();
  for (size_t i = 0; s.ok() && i < cut.table_files.size(); i++) {
    const uint64_t number = cut.table_files[i].number;
    s = LinkOrCopy(TableFileName(dbname, number), TableFileName(staging, number),
                   cut.table_files[i].size);
  }
  if (s.ok()) {
    s = CopyFilePrefix(env_, DescriptorFileName(dbname, cut.manifest.number),
                       DescriptorFileName(staging, cut.manifest.number), cut.manifest.size);
  }
  if (s.ok()) {
    // CURRENT's contents as SetCurrentFile writes them: the MANIFEST's name and a newline.
    const std::string manifest = DescriptorFileName("", cut.manifest.number).substr(1);
    s = WriteStringToFile(env_, manifest + "\n", CurrentFileName(staging), /*should_sync=*/true);
  }
  if (s.ok() && cut.options_number != 0) {
    uint64_t size = 0;
    s = env_->GetFileSize(OptionsFileName(dbname, cut.options_number), &size);
    if (s.ok()) {
      s = CopyFilePrefix(env_, OptionsFileName(dbname, cut.options_number),
                         OptionsFileName(staging, cut.options_number), size);
    }
  }
  for (size_t i = 0; s.ok() && i < cut.wals.size(); i++) {
    const uint64_t number = cut.wals[i].number;
    const std::string target = LogFileName(staging, number);
    if (i + 1 < cut.wals.size()) {
      s = CopyFilePrefix(env_, LogFileName(dbname, number), target, cut.wals[i].size);
    } else {
      s = CopyNewestWal(env_, LogFileName(dbname, number), target, number, cut.wals[i].size);
    }
  }
  *seq = cut.sequence;
  return s;
}

Status CheckpointImpl::LinkOrCopy(const std::string& src, const std::string& target,
                                  uint64_t size) {
  if (links_work_) {
    Status s = env_->LinkFile(src, target);
    if (!s.IsNotSupported()) return s;
    links_work_ = false;
  }
  return CopyFilePrefix(env_, src, target, size);
}

}  // namespace

Status Checkpoint::Create(DB* db, Checkpoint** checkpoint_ptr) {
  *checkpoint_ptr = nullptr;
  if (db == nullptr) return Status::InvalidArgument("no DB to checkpoint");
  DB* root = db;
  if (auto* stacked = dynamic_cast<StackableDB*>(db)) root = stacked->GetRootDB();
  auto* source = dynamic_cast<LiveFilesSource*>(root);
  if (source == nullptr) {
    return Status::NotSupported("Checkpoint needs a DB opened by shale's DB::Open");
  }
  *checkpoint_ptr = new CheckpointImpl(db, source);
  return Status::OK();
}

}  // namespace shale
