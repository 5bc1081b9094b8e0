#include "db/filename.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "shale/slice.h"

namespace shale {
namespace {

std::string NumberedName(const std::string& dbname, uint64_t number, const char* suffix) {
  char buf[64];
  snprintf(buf, sizeof(buf), "/%06" PRIu64 ".%s", number, suffix);
  return dbname + buf;
}

// Consumes a run of decimal digits from *in into *value. False if there is none or it
// does not fit in 64 bits.
bool ConsumeDecimalNumber(Slice* in, uint64_t* value) {
  constexpr uint64_t kMax = UINT64_MAX;
  uint64_t v = 0;
  size_t digits = 0;
  while (digits < in->size()) {
    const char c = (*in)[digits];
    if (c < '0' || c > '9') break;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (kMax - d) / 10) return false;
    v = v * 10 + d;
    ++digits;
  }
  if (digits == 0) return false;
  in->remove_prefix(digits);
  *value = v;
  return true;
}

}  // namespace

std::string LogFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "log");
}

std::string TableFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "sst");
}

std::string DescriptorFileName(const std::string& dbname, uint64_t number) {
  char buf[64];
  snprintf(buf, sizeof(buf), "/MANIFEST-%06" PRIu64, number);
  return dbname + buf;
}

std::string CurrentFileName(const std::string& dbname) { return dbname + "/CURRENT"; }

std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }

std::string TempFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "dbtmp");
}

std::string InfoLogFileName(const std::string& dbname) { return dbname + "/LOG"; }

std::string OldInfoLogFileName(const std::string& dbname, uint64_t micros) {
  char buf[64];
  snprintf(buf, sizeof(buf), "/LOG.old.%" PRIu64, micros);
  return dbname + buf;
}

std::string OptionsFileName(const std::string& dbname, uint64_t number) {
  char buf[64];
  snprintf(buf, sizeof(buf), "/OPTIONS-%06" PRIu64, number);
  return dbname + buf;
}

bool ParseFileName(const std::string& fname, uint64_t* number, FileType* type) {
  Slice rest(fname);
  if (rest == "CURRENT") {
    *number = 0;
    *type = kCurrentFile;
  } else if (rest == "LOCK") {
    *number = 0;
    *type = kDBLockFile;
  } else if (rest == "LOG") {
    *number = 0;
    *type = kInfoLogFile;
  } else if (rest.starts_with("LOG.old.")) {
    rest.remove_prefix(strlen("LOG.old."));
    uint64_t ts;
    if (!ConsumeDecimalNumber(&rest, &ts) || !rest.empty()) return false;
    *number = 0;
    *type = kInfoLogFile;
  } else if (rest.starts_with("MANIFEST-")) {
    rest.remove_prefix(strlen("MANIFEST-"));
    uint64_t num;
    if (!ConsumeDecimalNumber(&rest, &num) || !rest.empty()) return false;
    *number = num;
    *type = kDescriptorFile;
  } else if (rest.starts_with("OPTIONS-")) {
    rest.remove_prefix(strlen("OPTIONS-"));
    uint64_t num;
    if (!ConsumeDecimalNumber(&rest, &num)) return false;
    if (rest.empty()) {
      *type = kOptionsFile;
    } else if (rest == ".dbtmp") {
      *type = kTempFile;  // an OPTIONS file being written
    } else {
      return false;
    }
    *number = num;
  } else {
    uint64_t num;
    if (!ConsumeDecimalNumber(&rest, &num)) return false;
    if (rest == ".log") {
      *type = kWalFile;
    } else if (rest == ".sst") {
      *type = kTableFile;
    } else if (rest == ".dbtmp") {
      *type = kTempFile;
    } else {
      return false;
    }
    *number = num;
  }
  return true;
}

Status SetCurrentFile(Env* env, const std::string& dbname, uint64_t descriptor_number,
                      Directory* dir) {
  // CURRENT holds the MANIFEST's name without the directory.
  std::string manifest = DescriptorFileName(dbname, descriptor_number);
  Slice contents(manifest);
  contents.remove_prefix(dbname.size() + 1);
  const std::string tmp = TempFileName(dbname, descriptor_number);
  // The MANIFEST's own directory entry first: a rename may reach the disk before an
  // earlier create in the same directory (a power loss then leaves CURRENT naming a
  // MANIFEST that is not there, and a DB no recovery mode opens).
  Status s = dir != nullptr ? dir->Fsync() : Status::OK();
  if (!s.ok()) return s;
  s = WriteStringToFile(env, contents.ToString() + "\n", tmp, /*should_sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (!s.ok()) {
    env->DeleteFile(tmp).PermitUncheckedError();
    return s;
  }
  if (dir != nullptr) s = dir->Fsync();
  return s;
}

bool CurrentMayName(Env* env, const std::string& dbname, uint64_t descriptor_number) {
  std::string contents;
  if (!ReadFileToString(env, CurrentFileName(dbname), &contents).ok()) return true;
  const std::string manifest = DescriptorFileName(dbname, descriptor_number);
  return contents == manifest.substr(dbname.size() + 1) + "\n";
}

}  // namespace shale
