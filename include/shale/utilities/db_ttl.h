// DBWithTTL: a DB whose values expire, as RocksDB's. Every value written through it (Put,
// Merge, and the Puts and Merges of a WriteBatch) carries the time it was written, in
// seconds since the epoch, as a 4-byte little-endian suffix (RocksDB's layout, so a DB
// moves between the two unchanged). A value older than its family's TTL has expired:
//  - Get, MultiGet and iterators do not return it (NotFound; iterators step over it);
//    RocksDB's may still return one until compaction drops it, which its contract allows;
//  - compaction drops it, through a compaction filter DBWithTTL installs in each family
//    (a user's compaction_filter or compaction_filter_factory still runs, on the value
//    without its suffix, after the TTL check; a changed value keeps the old time);
//  - a merge operator set in the options runs on operands and values without their
//    suffixes, and its result is stamped with the time of the merge.
// Values reach the caller without the suffix. One that is too short to carry a time, or
// whose time is before the TTL feature existed (May 2013), is Corruption for Get and
// iterators; compaction keeps it as it is.
//
// TTL: seconds, per column family; zero or negative means forever. Expiry is not exact: a
// value lives at least its TTL and is dropped at a compaction after that. The TTL may differ
// between opens and can be changed while open (SetTtl), for reads and later compactions.
// The time comes from DBOptions::env's NowMicros (inject an Env to control it in tests).
//
// Opening a DB written by DBWithTTL with plain DB::Open gives values with their suffixes and
// no expiry: open it through DBWithTTL every time.
//
// Not supported: read_only = true answers NotSupported (shale has no read-only opening);
// GetMergeOperands returns the operands with their suffixes, as RocksDB's does.
//
// Thread safety: as DB. Ownership: the caller deletes *dbptr (which closes the base DB);
// handles from Open are the caller's, destroyed before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/stackable_db.h"

namespace shale {

class DBWithTTL : public StackableDB {
 public:
  // A new column family whose values expire after ttl seconds (<= 0: never).
  // CreateColumnFamily is the same with ttl 0.
  virtual Status CreateColumnFamilyWithTtl(const ColumnFamilyOptions& options,
                                           const std::string& column_family_name,
                                           ColumnFamilyHandle** handle, int ttl) = 0;

  // Opens the default family with the given TTL (<= 0: values never expire).
  static Status Open(const Options& options, const std::string& dbname, DBWithTTL** dbptr,
                     int32_t ttl = 0, bool read_only = false);

  // Opens with column families, ttls[i] the TTL of column_families[i]; InvalidArgument
  // when the two differ in length.
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, DBWithTTL** dbptr,
                     const std::vector<int32_t>& ttls, bool read_only = false);

  // Changes the TTL of the default family, or of h's, for reads and compactions from now.
  virtual void SetTtl(int32_t ttl) = 0;
  virtual void SetTtl(ColumnFamilyHandle* h, int32_t ttl) = 0;

  // The current TTL of h's family; InvalidArgument for a null argument or a family this
  // DB does not know.
  virtual Status GetTtl(ColumnFamilyHandle* h, int32_t* ttl) = 0;

 protected:
  // Takes ownership of db, as StackableDB.
  explicit DBWithTTL(DB* db) : StackableDB(db) {}
};

}  // namespace shale
