// Options while the DB is open: SetOptions / SetDBOptions (parsed, checked and applied all
// or nothing by the option tables, options/options_check.h), what follows a change, and the
// OPTIONS file written at Open and after each change.
#include <cinttypes>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "options/option_table.h"
#include "options/options_check.h"
#include "options/options_file.h"
#include "util/logging.h"

namespace shale {
namespace {

std::string Describe(const std::unordered_map<std::string, std::string>& changes) {
  std::string text;
  for (const auto& [name, value] : changes) {
    if (!text.empty()) text += ", ";
    text += name + "=" + value;
  }
  return text;
}

}  // namespace

// RocksDB's split of max_background_jobs: a quarter (at least one) for flushes and the rest
// for compactions, unless either deprecated per-kind limit is given (then RocksDB takes
// both, an unset one as 1). Flushes run one at a time whatever their share (see
// BackgroundScheduler).
int CompactionThreads(const Options& o) {
  if (o.max_background_flushes != -1 || o.max_background_compactions != -1) {
    return std::max(1, o.max_background_compactions);
  }
  const int flushes = std::max(1, o.max_background_jobs / 4);
  return std::max(1, o.max_background_jobs - flushes);
}

Status DBImpl::SetOptions(ColumnFamilyHandle* cf,
                          const std::unordered_map<std::string, std::string>& new_options) {
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  return ChangeOptions(OptionStruct::kCF, CfdOf(cf), new_options);
}

Status DBImpl::SetDBOptions(const std::unordered_map<std::string, std::string>& new_options) {
  return ChangeOptions(OptionStruct::kDB, nullptr, new_options);
}

Status DBImpl::ChangeOptions(OptionStruct which, ColumnFamilyData* cfd,
                             const std::unordered_map<std::string, std::string>& changes) {
  const char* what = which == OptionStruct::kDB ? "SetDBOptions" : "SetOptions";
  MutexLock f(&options_file_mutex_);
  DbLock l(this);
  if (cfd == nullptr) cfd = default_cf_;
  HeldFor(cfd);
  if (cfd->dropped()) return Status::InvalidArgument("column family is dropped");
  Options next = *cfd->current_options();
  Status s = ApplyOptionChanges(which, changes, &next);
  if (!s.ok()) {
    SHALE_LOG_WARN(info_log_, "%s(%s) refused: %s", what, Describe(changes).c_str(),
                   s.ToString().c_str());
    return s;
  }
  SHALE_LOG_INFO(info_log_, "[%s] %s(%s)", cfd->name().c_str(), what, Describe(changes).c_str());
  // The new values of what changed, spelled as the options LOG at Open spells them.
  const void* target =
      which == OptionStruct::kDB
          ? static_cast<const void*>(static_cast<const DBOptions*>(&next))
          : static_cast<const void*>(static_cast<const ColumnFamilyOptions*>(&next));
  for (const auto& [name, value] : changes) {
    if (const OptionInfo* info = FindOption(which, name)) {
      SHALE_LOG_INFO(info_log_, "  %s: %s", name.c_str(), FormatOption(*info, target).c_str());
    }
  }
  if (which == OptionStruct::kDB) {
    // The DB's part is every family's.
    for (const auto& [id, family] : families_.live()) {
      if (family == cfd) continue;
      HeldFor(family);
      InstallOptions(family,
                     std::make_shared<const Options>(
                         static_cast<const DBOptions&>(next),
                         static_cast<const ColumnFamilyOptions&>(*family->current_options())));
    }
  }
  InstallOptions(cfd, std::make_shared<const Options>(std::move(next)));
  // As RocksDB without fail_if_options_file_error: the change stands, a failure to record it
  // is logged.
  WriteOptionsFile().PermitUncheckedError();
  return Status::OK();
}

void DBImpl::InstallOptions(ColumnFamilyData* cfd, std::shared_ptr<const Options> next) {
  HeldFor(cfd);
  cfd->SetCurrentOptions(next);
  // A pick that found nothing may find something under new targets or triggers.
  cfd->nothing_to_pick_at = UINT64_MAX;
  if (cfd == default_cf_) {
    current_options_ = std::move(next);
    const Options& o = *current_options_;
    write_controller_.SetOptions(o);
    scheduler_.SetMaxCompactions(CompactionThreads(o));
  }
  RecalculateWriteStallConditions();  // stalled writers re-check under the new limits
  bg_cv_.SignalAll();
  MaybeScheduleCompaction();
  stats_dump_cv_.SignalAll();
  StartStatsDump();
}

Status DBImpl::WriteOptionsFile() {
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);  // its temporary file is not swept meanwhile
  const std::shared_ptr<const Options> db_options = current_options_;
  // Every live family as in effect now, the default (id 0) first; copied, since the file
  // is written without the DB mutex.
  std::vector<std::string> names;
  std::vector<ColumnFamilyOptions> families;
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    names.push_back(cfd->name());
    families.push_back(*cfd->current_options());
  }
  UnlockDb();
  Status s =
      shale::WriteOptionsFile(env_, dbname_, number, *db_options, names, families, db_dir_.get());
  LockDb();
  pending_outputs_.erase(number);
  if (!s.ok()) {
    SHALE_LOG_WARN(info_log_, "Unable to write %s: %s", OptionsFileName(dbname_, number).c_str(),
                   s.ToString().c_str());
  }
  return s;
}

}  // namespace shale
