#include "tests/crash_states/absolute_consistency.h"

#include <algorithm>
#include <map>
#include <memory>

#include "db/filename.h"
#include "db/log_reader.h"
#include "db/version_edit.h"

namespace shale::crash_states {

namespace {

// Reads data as a log, through an in-memory Env holding it (the reader takes a file).
class LogOf {
 public:
  LogOf(const std::string& data, uint64_t number, const std::string& name)
      : env_(NewMemEnv(Env::Default())) {
    std::unique_ptr<SequentialFile> file;
    if (WriteStringToFile(env_.get(), data, "/log").ok() &&
        env_->NewSequentialFile("/log", &file, EnvOptions()).ok()) {
      reader_ =
          std::make_unique<log::Reader>(std::move(file), nullptr, /*checksum=*/true, number, name);
    }
  }
  // The next record, as log::Reader::ReadRecord (false if the data could not be read).
  bool Next(Slice* record) { return reader_ != nullptr && reader_->ReadRecord(record, &scratch_); }
  const log::Reader* reader() const { return reader_.get(); }

 private:
  std::unique_ptr<Env> env_;
  std::unique_ptr<log::Reader> reader_;
  std::string scratch_;
};

// The smallest log number of the live families in the MANIFEST CURRENT names; 0 when it
// cannot be read.
uint64_t ManifestLogNumber(const CrashState& state, const std::string& dbname) {
  auto current = state.files.find(dbname + "/CURRENT");
  if (current == state.files.end() || current->second.empty() || current->second.back() != '\n') {
    return 0;
  }
  const std::string name = dbname + "/" + current->second.substr(0, current->second.size() - 1);
  auto manifest = state.files.find(name);
  if (manifest == state.files.end()) return 0;
  std::map<uint32_t, uint64_t> logs;  // live family -> log number
  logs[0] = 0;
  LogOf log(manifest->second, 0, name);
  Slice record;
  while (log.Next(&record)) {
    VersionEdit edit;
    if (!edit.DecodeFrom(record).ok()) break;
    if (edit.is_column_family_drop()) {
      logs.erase(edit.column_family());
    } else if (edit.has_log_number()) {
      logs[edit.column_family()] = edit.log_number();
    } else if (edit.is_column_family_add()) {
      logs[edit.column_family()] = 0;
    }
  }
  uint64_t lowest = UINT64_MAX;
  for (const auto& [family, log] : logs) lowest = std::min(lowest, log);
  return lowest == UINT64_MAX ? 0 : lowest;
}

bool Listed(const std::vector<std::string>& list, const std::string& path) {
  return std::find(list.begin(), list.end(), path) != list.end();
}

}  // namespace

std::string AbsoluteConsistencyMustRefuse(const CrashState& state, const std::string& dbname) {
  const uint64_t first = ManifestLogNumber(state, dbname);
  // The WALs recovery replays, by number.
  std::map<uint64_t, std::string> wals;
  for (const auto& [path, data] : state.files) {
    if (path.size() <= dbname.size() + 1 || path.compare(0, dbname.size() + 1, dbname + "/") != 0) {
      continue;
    }
    uint64_t number;
    FileType type;
    if (ParseFileName(path.substr(dbname.size() + 1), &number, &type) && type == kWalFile &&
        number >= first) {
      wals[number] = path;
    }
  }
  // A1.
  for (auto it = wals.rbegin(); it != wals.rend(); ++it) {
    const std::string& data = state.files.at(it->second);
    if (data.find_first_not_of('\0') == std::string::npos) continue;
    if (Listed(state.torn_wals, it->second)) return it->second + " ends inside a record";
    break;
  }
  // A2.
  for (auto it = wals.begin(); it != wals.end() && std::next(it) != wals.end(); ++it) {
    if (!Listed(state.unclean_wals, it->second)) continue;
    LogOf older(state.files.at(it->second), it->first, it->second);
    Slice record;
    while (older.Next(&record)) {
    }
    const std::string& next_path = std::next(it)->second;
    LogOf next(state.files.at(next_path), std::next(it)->first, next_path);
    const bool has_record = next.Next(&record);
    if (older.reader() == nullptr || next.reader() == nullptr) continue;
    const uint64_t end = older.reader()->LastRecordEnd();
    const log::Reader::Predecessor* p = next.reader()->predecessor();
    if (has_record && p != nullptr && p->log_number == it->first && p->size > end) {
      return it->second + " ends at " + std::to_string(end) + ", and " + next_path +
             ", which has records, says it held " + std::to_string(p->size) + " bytes";
    }
  }
  return "";
}

}  // namespace shale::crash_states
