// Reading a DB's options back from its OPTIONS file (RocksDB's options_util.h).
//
// A DB writes OPTIONS-NNNNNN in its directory at every Open, SetOptions, SetDBOptions,
// CreateColumnFamily and DropColumnFamily, in RocksDB's ini format, with a section per live
// column family; these functions turn the newest one (or a named one) into DBOptions and
// one ColumnFamilyDescriptor per column family (the default first, then the others in the
// file's order, each with its own options), so a program can reopen a DB with the families
// and options it last ran with: DB::Open(db_options, dbpath, cf_descs, ...). The files are also
// readable by RocksDB 7.8's own LoadOptionsFromFile, and these functions read files RocksDB wrote
// when config_options.ignore_unknown_options is set.
//
// Differences from RocksDB: ConfigOptions has only ignore_unknown_options and env (see
// shale/convenience.h). Objects are rebuilt by name: the comparators
// leveldb.BytewiseComparator and rocksdb.ReverseBytewiseComparator, the built-in merge
// operators (shale/utilities/merge_operators.h; another name gives InvalidArgument), and
// the Bloom and Ribbon filter policies; env, info_log and statistics are not stored and
// keep their defaults. Each table gets `cache` as its block cache when one is given, else
// a new 8 MiB LRU cache as NewBlockBasedTableFactory gives.
//
// Thread safety: may be called from any thread; the DB may be open meanwhile (the files
// are replaced by rename, never rewritten in place).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/convenience.h"
#include "shale/db.h"
#include "shale/options.h"
#include "shale/status.h"

namespace shale {

// The newest OPTIONS file of the DB in dbpath: NotFound if it has none.
Status LoadLatestOptions(const ConfigOptions& config_options, const std::string& dbpath,
                         DBOptions* db_options, std::vector<ColumnFamilyDescriptor>* cf_descs,
                         std::shared_ptr<Cache>* cache = nullptr);

// The OPTIONS file options_file_name (a path).
Status LoadOptionsFromFile(const ConfigOptions& config_options,
                           const std::string& options_file_name, DBOptions* db_options,
                           std::vector<ColumnFamilyDescriptor>* cf_descs,
                           std::shared_ptr<Cache>* cache = nullptr);

// The name (inside dbpath) of the newest OPTIONS file there; NotFound if there is none.
Status GetLatestOptionsFileName(const std::string& dbpath, Env* env,
                                std::string* options_file_name);

}  // namespace shale
