#include "utilities/backup/backup_job.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "db/filename.h"
#include "db/live_files.h"
#include "db/log_reader.h"
#include "shale/db.h"
#include "shale/utilities/stackable_db.h"
#include "util/crc32c.h"

namespace shale {

namespace {

// The DB under db that can cut its files, or null.
LiveFilesSource* SourceOf(DB* db) {
  DB* root = db;
  if (auto* stacked = dynamic_cast<StackableDB*>(db)) root = stacked->GetRootDB();
  return dynamic_cast<LiveFilesSource*>(root);
}

// A DB file's name without its directory ("000012.sst").
std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

// The copies of one backup: one job per file that needs work, each filling its file's
// entry (a deque, so that the entries stay where the jobs point).
struct BackupJob::Plan {
  std::deque<BackupFile> files;
  std::vector<std::function<Status()>> jobs;
};

BackupJob::BackupJob(const BackupJobContext& context, BackupID id, const SharedFileIndex* existing)
    : context_(context), id_(id), existing_(existing) {}

Status BackupJob::Run(DB* db, const CreateBackupOptions& options, BackupMeta* meta) {
  if (SourceOf(db) == nullptr) {
    return Status::NotSupported("BackupEngine needs a DB opened by shale's DB::Open");
  }
  Status s = db->DisableFileDeletions();
  if (!s.ok()) return s;
  s = CopyCut(db, options, meta);
  Status enabled = db->EnableFileDeletions();
  if (s.ok()) s = enabled;
  if (s.ok() && context_.options->sync) s = SyncDirectories();
  return s;
}

Status BackupJob::CopyCut(DB* db, const CreateBackupOptions& options, BackupMeta* meta) {
  LiveFilesCut cut;
  Status s = SourceOf(db)->CutLiveFiles(options.flush_before_backup ? 0 : UINT64_MAX, &cut);
  if (!s.ok()) return s;

  const BackupEngineOptions& opts = *context_.options;
  Env* const db_env = context_.db_env;
  Env* const backup_env = context_.backup_env;
  const std::string& dbname = db->GetName();
  const std::string& backup_dir = opts.backup_dir;
  const std::string private_dir = BackupPrivateDirName(id_);
  const std::string tmp_suffix = "." + std::to_string(id_) + ".tmp";
  const bool sync = opts.sync;
  CopyProgress copied(options.progress_callback, opts.callback_trigger_interval_size,
                      context_.stop);
  CopyProgress checked(nullptr, 1, context_.stop);
  Plan plan;

  // A file copied whole or up to `limit` into private/<id>/; a WAL (wal_number != 0) is cut
  // back to its last whole record.
  auto add_private = [&](const std::string& src, uint64_t limit, uint64_t wal_number) {
    BackupFile* file = &plan.files.emplace_back();
    file->name = private_dir + "/" + BaseName(src);
    const std::string dst = backup_dir + "/" + file->name;
    plan.jobs.push_back([=, &copied] {
      FileDigest digest;
      Status st = CopyFileWithChecksum(db_env, src, backup_env, dst, limit, sync, &copied, &digest);
      uint64_t end = digest.size;
      if (st.ok() && wal_number != 0) st = log::WholeRecordsEnd(backup_env, dst, wal_number, &end);
      // The source's first `end` bytes are as they were: a WAL only grows.
      if (st.ok() && end < digest.size) {
        st = CopyFileWithChecksum(db_env, src, backup_env, dst, end, sync, &copied, &digest);
      }
      file->size = digest.size;
      file->crc32c = digest.crc32c;
      return st;
    });
  };

  // The shared_checksum/ names earlier backups hold, by the number and size they carry.
  std::map<std::pair<uint64_t, uint64_t>, std::set<std::string>> by_number_and_size;
  for (const auto& [name, digest] : *existing_) {
    uint64_t number = 0;
    FileType type;
    if (name.rfind(kBackupSharedChecksumDir, 0) == 0 &&
        ParseFileName(DbFileNameOf(name), &number, &type) && type == kTableFile) {
      by_number_and_size[{number, digest.size}].insert(name);
    }
  }

  // A table file under a shared name: reused when an earlier backup holds that name,
  // otherwise copied to a temporary name and renamed.
  auto add_shared = [&](uint64_t number, uint64_t size) -> Status {
    const std::string src = TableFileName(dbname, number);
    const std::string base = BaseName(src);
    BackupFile* file = &plan.files.emplace_back();
    file->size = size;
    if (!opts.share_files_with_checksum) {
      file->name = std::string(kBackupSharedDir) + "/" + base;
      auto it = existing_->find(file->name);
      if (it != existing_->end()) {
        if (it->second.size != size) {
          return Status::Corruption("Size mismatch for existing backup file: " + file->name +
                                    " Size in backup is " + std::to_string(it->second.size) +
                                    " while size in DB is " + std::to_string(size));
        }
        file->crc32c = it->second.crc32c;
        return Status::OK();
      }
    }
    // The names earlier backups hold for a file of this number and size.
    std::set<std::string> candidates;
    if (opts.share_files_with_checksum) {
      auto it = by_number_and_size.find({number, size});
      if (it != by_number_and_size.end()) candidates = it->second;
    }
    const std::string dir =
        opts.share_files_with_checksum ? kBackupSharedChecksumDir : kBackupSharedDir;
    const std::string temp = backup_dir + "/" + dir + "/." + base + tmp_suffix;
    const bool with_checksum = opts.share_files_with_checksum;
    plan.jobs.push_back([=, &copied, &checked] {
      FileDigest known;
      if (!candidates.empty()) {
        Status st = ChecksumFile(db_env, src, size, &checked, &known);
        if (!st.ok()) return st;
        file->name = dir + "/" + SharedChecksumFileName(number, known.crc32c, size);
        file->crc32c = known.crc32c;
        if (known.size == size && candidates.count(file->name) > 0) return Status::OK();
      }
      FileDigest digest;
      Status st = CopyFileWithChecksum(db_env, src, backup_env, temp, size, sync, &copied, &digest);
      if (!st.ok()) return st;
      if (digest.size != size) {
        return Status::Corruption("Table file " + src + " is shorter than its recorded size " +
                                  std::to_string(size));
      }
      if (!candidates.empty() && digest.crc32c != known.crc32c) {
        return Status::Corruption("Table file " + src + " changed while it was backed up");
      }
      file->crc32c = digest.crc32c;
      if (with_checksum) {
        file->name = dir + "/" + SharedChecksumFileName(number, digest.crc32c, size);
      }
      return backup_env->RenameFile(temp, backup_dir + "/" + file->name);
    });
    return Status::OK();
  };

  for (const LiveFilesCut::Sized& table : cut.table_files) {
    if (opts.share_table_files) {
      s = add_shared(table.number, table.size);
      if (!s.ok()) return s;
    } else {
      add_private(TableFileName(dbname, table.number), table.size, 0);
    }
  }
  add_private(DescriptorFileName(dbname, cut.manifest.number), cut.manifest.size, 0);
  // A file written from `contents`.
  auto add_contents = [&](const std::string& db_path, const std::string& contents) {
    BackupFile* file = &plan.files.emplace_back();
    file->name = private_dir + "/" + BaseName(db_path);
    file->size = contents.size();
    file->crc32c = crc32c::Value(contents.data(), contents.size());
    const std::string dst = backup_dir + "/" + file->name;
    plan.jobs.push_back([=] { return WriteStringToFile(backup_env, contents, dst, sync); });
  };
  // CURRENT as SetCurrentFile writes it, naming the cut's MANIFEST.
  add_contents(CurrentFileName(dbname),
               BaseName(DescriptorFileName(dbname, cut.manifest.number)) + "\n");
  if (cut.options_number != 0) {
    add_private(OptionsFileName(dbname, cut.options_number), kWholeFile, 0);
  }
  for (size_t i = 0; i < cut.wals.size(); i++) {
    const std::string wal = LogFileName(dbname, cut.wals[i].number);
    if (!opts.backup_log_files) {
      // The WAL's records stay out, as RocksDB leaves them out, but its name goes in as an
      // empty file: shale's recovery (paranoid_checks) refuses a DB whose MANIFEST names a
      // WAL that is missing.
      add_contents(wal, "");
      continue;
    }
    const bool newest = i + 1 == cut.wals.size();
    add_private(wal, cut.wals[i].size, newest ? cut.wals[i].number : 0);
  }

  s = JobRunner(context_.pool).RunAll(std::move(plan.jobs));
  if (!s.ok()) return s;
  meta->sequence = cut.sequence;
  meta->files.assign(plan.files.begin(), plan.files.end());
  return Status::OK();
}

Status BackupJob::SyncDirectories() {
  const BackupEngineOptions& opts = *context_.options;
  Status s = SyncDirectory(context_.backup_env, opts.backup_dir + "/" + BackupPrivateDirName(id_));
  if (s.ok() && opts.share_table_files) {
    const char* shared =
        opts.share_files_with_checksum ? kBackupSharedChecksumDir : kBackupSharedDir;
    s = SyncDirectory(context_.backup_env, opts.backup_dir + "/" + shared);
  }
  return s;
}

}  // namespace shale
