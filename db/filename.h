// The names of the files in a DB directory, and the atomic switch of CURRENT.
//
// Every file the DB writes is named here, so that ParseFileName can tell, from a directory
// listing alone, what each entry is and which number it carries (obsolete-file deletion and
// recovery depend on that). Names are RocksDB's: 000123.log, 000123.sst, MANIFEST-000123,
// CURRENT, LOCK, LOG, LOG.old.<n>, OPTIONS-000123, 000123.dbtmp.
//
// Thread safety: pure functions; SetCurrentFile is as thread-safe as the Env, but callers
// must not switch CURRENT from two threads at once.
#pragma once

#include <cstdint>
#include <string>

#include "shale/env.h"
#include "shale/status.h"

namespace shale {

enum FileType {
  kWalFile,
  kDBLockFile,
  kTableFile,
  kDescriptorFile,
  kCurrentFile,
  kTempFile,
  kInfoLogFile,  // LOG and LOG.old.<n>
  kOptionsFile,
};

// dbname/000123.log
std::string LogFileName(const std::string& dbname, uint64_t number);
// dbname/000123.sst
std::string TableFileName(const std::string& dbname, uint64_t number);
// dbname/MANIFEST-000123
std::string DescriptorFileName(const std::string& dbname, uint64_t number);
// dbname/CURRENT: holds "MANIFEST-<number>\n", naming the live descriptor.
std::string CurrentFileName(const std::string& dbname);
// dbname/LOCK
std::string LockFileName(const std::string& dbname);
// dbname/000123.dbtmp: a file written whole and then renamed into place.
std::string TempFileName(const std::string& dbname, uint64_t number);
// dbname/LOG: the info log.
std::string InfoLogFileName(const std::string& dbname);
// dbname/LOG.old.<micros>: an info log moved aside at open.
std::string OldInfoLogFileName(const std::string& dbname, uint64_t micros);
// dbname/OPTIONS-000123
std::string OptionsFileName(const std::string& dbname, uint64_t number);

// Parses a file name (without its directory) made by one of the functions above. Sets
// *number (0 for files without one: CURRENT, LOCK, LOG, LOG.old.*) and *type. Returns false
// for any name the DB does not make, leaving the outputs unspecified.
bool ParseFileName(const std::string& fname, uint64_t* number, FileType* type);

// Makes CURRENT name MANIFEST-<descriptor_number> atomically: when dir (the DB directory) is
// not null, fsyncs it first (the MANIFEST's own entry must be durable before CURRENT can
// name it); writes a temp file, syncs it, renames it over CURRENT and fsyncs the directory
// again so the rename survives a crash. On failure the temp file is removed and CURRENT is left as
// it was (or, if only the directory sync failed, possibly already switched).
Status SetCurrentFile(Env* env, const std::string& dbname, uint64_t descriptor_number,
                      Directory* dir);

// Whether CURRENT may name MANIFEST-<descriptor_number>: true when it does, or when CURRENT
// cannot be read to tell. A MANIFEST for which this holds must never be deleted, even
// after SetCurrentFile failed (its rename may have happened before the directory sync).
bool CurrentMayName(Env* env, const std::string& dbname, uint64_t descriptor_number);

}  // namespace shale
