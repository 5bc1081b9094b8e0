// Test helpers for bulk ingestion: an external table file written with SstFileWriter from
// a list of entries, and the table files a DB directory holds.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/sst_file_writer.h"
#include "shale/status.h"

namespace shale {

// One entry of an external file: Put (value), Merge (value) or Delete.
struct ExternalEntry {
  enum Op { kPut, kMerge, kDelete };
  std::string key;
  std::string value;
  Op op = kPut;
};

inline ExternalEntry PutEntry(std::string k, std::string v) {
  return {std::move(k), std::move(v), ExternalEntry::kPut};
}
inline ExternalEntry MergeEntry(std::string k, std::string v) {
  return {std::move(k), std::move(v), ExternalEntry::kMerge};
}
inline ExternalEntry DeleteEntry(std::string k) {
  return {std::move(k), "", ExternalEntry::kDelete};
}

// Writes entries (in the comparator's order) to path with SstFileWriter under options.
inline Status WriteExternalFile(const Options& options, const std::string& path,
                                const std::vector<ExternalEntry>& entries) {
  SstFileWriter writer(EnvOptions(), options);
  Status s = writer.Open(path);
  for (const ExternalEntry& e : entries) {
    if (!s.ok()) break;
    switch (e.op) {
      case ExternalEntry::kPut: s = writer.Put(e.key, e.value); break;
      case ExternalEntry::kMerge: s = writer.Merge(e.key, e.value); break;
      case ExternalEntry::kDelete: s = writer.Delete(e.key); break;
    }
  }
  if (!s.ok()) return s;
  return writer.Finish();
}

// The numbers of the table files in directory dir, ascending.
inline std::vector<uint64_t> TableFilesIn(Env* env, const std::string& dir) {
  std::vector<std::string> children;
  std::vector<uint64_t> numbers;
  if (!env->GetChildren(dir, &children).ok()) return numbers;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == kTableFile) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace shale
