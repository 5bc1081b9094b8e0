#include "utilities/backup/backup_meta.h"

#include <cinttypes>
#include <cstdio>
#include <memory>

namespace shale {

namespace {

constexpr char kSchemaPrefix[] = "schema_version ";
constexpr char kSchemaWritten[] = "2.1";
constexpr char kMetadataField[] = "metadata";
constexpr char kCrcField[] = "crc32";  // crc32c, under RocksDB's older name
constexpr char kSizeField[] = "size";
constexpr char kFooterMarker[] = "// FOOTER";
constexpr char kNonIgnorablePrefix[] = "ni::";

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Parses a decimal without sign into *value; false unless all of s is one that fits.
bool ParseDecimal(const std::string& s, uint64_t max, uint64_t* value) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

std::string ToHex(const std::string& bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool FromHex(const std::string& hex, std::string* bytes) {
  if (hex.size() % 2 != 0) return false;
  bytes->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexValue(hex[i]), lo = HexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

std::vector<std::string> SplitOnSpaces(const std::string& line) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t space = line.find(' ', start);
    const size_t end = space == std::string::npos ? line.size() : space;
    parts.push_back(line.substr(start, end - start));
    if (space == std::string::npos) break;
    start = space + 1;
  }
  return parts;
}

// Reads the next line of text from *pos (without its newline); false at the end.
bool NextLine(const std::string& text, size_t* pos, std::string* line) {
  if (*pos >= text.size()) return false;
  const size_t newline = text.find('\n', *pos);
  const size_t end = newline == std::string::npos ? text.size() : newline;
  *line = text.substr(*pos, end - *pos);
  *pos = newline == std::string::npos ? text.size() : newline + 1;
  return true;
}

// One file line: "<name>( <field> <value>)*".
Status DecodeFileLine(const std::string& line, bool schema2, const std::string& where,
                      BackupFile* file) {
  const std::vector<std::string> parts = SplitOnSpaces(line);
  if (parts.size() % 2 != 1 || parts[0].empty()) {
    return Status::Corruption("Bad number of line components for file entry in ", where);
  }
  file->name = parts[0];
  file->size = BackupFile::kUnknownSize;
  bool have_crc = false;
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    const std::string& field = parts[i];
    const std::string& value = parts[i + 1];
    uint64_t number = 0;
    if (field == kCrcField) {
      if (!ParseDecimal(value, UINT32_MAX, &number)) {
        return Status::Corruption("Invalid checksum value for " + file->name + " in ", where);
      }
      file->crc32c = static_cast<uint32_t>(number);
      have_crc = true;
    } else if (field == kSizeField && schema2) {
      if (!ParseDecimal(value, UINT64_MAX - 1, &number)) {
        return Status::Corruption("Invalid size for " + file->name + " in ", where);
      }
      file->size = number;
    } else if (StartsWith(field, kNonIgnorablePrefix)) {
      return Status::NotSupported("Unrecognized non-ignorable file field " + field +
                                  " (from future version?)");
    } else if (!schema2) {
      return Status::Corruption("Unknown checksum type for " + file->name + " in ", where);
    }
  }
  // Every backup this engine and RocksDB's write carries a checksum; restoring a file
  // without one could not tell a damaged copy.
  if (!have_crc) {
    return Status::Corruption("File checksum is missing for " + file->name + " in ", where);
  }
  return Status::OK();
}

}  // namespace

uint64_t BackupMeta::TotalSize() const {
  uint64_t total = 0;
  for (const BackupFile& f : files) total += f.size;
  return total;
}

std::string BackupMetaName(BackupID id) {
  return std::string(kBackupMetaDir) + "/" + std::to_string(id);
}

std::string BackupMetaTempName(BackupID id) {
  return std::string(kBackupMetaDir) + "/." + std::to_string(id) + ".tmp";
}

std::string BackupPrivateDirName(BackupID id) {
  return std::string(kBackupPrivateDir) + "/" + std::to_string(id);
}

std::string SharedChecksumFileName(uint64_t number, uint32_t crc32c, uint64_t size) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%06" PRIu64 "_%" PRIu32 "_%" PRIu64 ".sst", number, crc32c,
                size);
  return buf;
}

std::string DbFileNameOf(const std::string& backup_file) {
  const size_t slash = backup_file.rfind('/');
  std::string base = slash == std::string::npos ? backup_file : backup_file.substr(slash + 1);
  if (StartsWith(backup_file, kBackupSharedChecksumDir)) {
    // "<number>_<crc32c>_<size>.sst": the number and the extension.
    const size_t underscore = base.find('_');
    const size_t dot = base.rfind('.');
    if (underscore != std::string::npos && dot != std::string::npos && dot > underscore) {
      base = base.substr(0, underscore) + base.substr(dot);
    }
  }
  return base;
}

bool ParseBackupId(const std::string& name, BackupID* id) {
  uint64_t value = 0;
  if (!ParseDecimal(name, UINT32_MAX, &value) || value == 0 || name[0] == '0') return false;
  *id = static_cast<BackupID>(value);
  return true;
}

std::string EncodeBackupMeta(const BackupMeta& meta) {
  std::string out;
  out += std::string(kSchemaPrefix) + kSchemaWritten + "\n";
  out += std::to_string(meta.timestamp) + "\n";
  out += std::to_string(meta.sequence) + "\n";
  if (!meta.app_metadata.empty()) {
    out += std::string(kMetadataField) + " " + ToHex(meta.app_metadata) + "\n";
  }
  out += std::to_string(meta.files.size()) + "\n";
  for (const BackupFile& f : meta.files) {
    out += f.name + " " + kCrcField + " " + std::to_string(f.crc32c) + " " + kSizeField + " " +
           std::to_string(f.size) + "\n";
  }
  return out;
}

Status DecodeBackupMeta(const std::string& text, const std::string& where, BackupMeta* meta) {
  *meta = BackupMeta();
  size_t pos = 0;
  std::string line;
  bool schema2 = false;
  if (!NextLine(text, &pos, &line)) {
    return Status::Corruption("Empty backup meta file ", where);
  }
  if (StartsWith(line, kSchemaPrefix)) {
    const std::string version = line.substr(sizeof(kSchemaPrefix) - 1);
    if (version != "2" && !StartsWith(version, "2.")) {
      return Status::NotSupported("Unsupported/unrecognized schema version: " + version);
    }
    schema2 = true;
    if (!NextLine(text, &pos, &line)) line.clear();
  }
  uint64_t timestamp = 0;
  if (!ParseDecimal(line, INT64_MAX, &timestamp)) {
    return Status::Corruption("Bad timestamp in ", where);
  }
  meta->timestamp = static_cast<int64_t>(timestamp);
  if (!NextLine(text, &pos, &line) || !ParseDecimal(line, UINT64_MAX, &meta->sequence)) {
    return Status::Corruption("Bad sequence number in ", where);
  }
  uint64_t num_files = 0;
  bool have_count = false;
  while (NextLine(text, &pos, &line)) {
    if (line.empty()) return Status::Corruption("Unexpected empty line in ", where);
    if (line[0] >= '0' && line[0] <= '9') {
      if (!ParseDecimal(line, UINT32_MAX, &num_files)) {
        return Status::Corruption("Bad number of files in ", where);
      }
      have_count = true;
      break;
    }
    const size_t space = line.find(' ');
    if (space == std::string::npos) {
      return Status::Corruption("Expected number of files or meta field in ", where);
    }
    const std::string field = line.substr(0, space);
    if (field == kMetadataField) {
      if (!FromHex(line.substr(space + 1), &meta->app_metadata)) {
        return Status::Corruption("Failed to decode stored hex encoded app metadata in ", where);
      }
    } else if (!schema2) {
      return Status::Corruption("Expected number of files or \"metadata\" field in ", where);
    } else if (StartsWith(field, kNonIgnorablePrefix)) {
      return Status::NotSupported("Unrecognized non-ignorable meta field " + field +
                                  " (from future version?)");
    }
  }
  if (!have_count) return Status::Corruption("Missing number of files in ", where);
  while (NextLine(text, &pos, &line)) {
    if (schema2 && line == kFooterMarker) {
      // Footer fields: none is known yet; only a non-ignorable one matters.
      while (NextLine(text, &pos, &line)) {
        if (StartsWith(line, kNonIgnorablePrefix)) {
          return Status::NotSupported("Unrecognized non-ignorable field " + line +
                                      " (from future version?)");
        }
      }
      break;
    }
    BackupFile file;
    Status s = DecodeFileLine(line, schema2, where, &file);
    if (!s.ok()) return s;
    meta->files.push_back(std::move(file));
  }
  if (meta->files.size() != num_files) {
    return Status::Corruption("Inconsistent number of files or missing/incomplete header in ",
                              where);
  }
  return Status::OK();
}

Status WriteBackupMeta(Env* env, const std::string& backup_dir, BackupID id, const BackupMeta& meta,
                       bool sync) {
  const std::string temp = backup_dir + "/" + BackupMetaTempName(id);
  Status s = WriteStringToFile(env, EncodeBackupMeta(meta), temp, sync);
  if (s.ok()) s = env->RenameFile(temp, backup_dir + "/" + BackupMetaName(id));
  if (!s.ok()) env->DeleteFile(temp).PermitUncheckedError();
  return s;
}

}  // namespace shale
