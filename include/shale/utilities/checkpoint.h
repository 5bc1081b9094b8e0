// Checkpoint: an openable copy of an open DB in another directory, made while the DB goes
// on serving reads and writes, as RocksDB's.
//
// Thread safety: a Checkpoint may be used from one thread at a time; several Checkpoints
// of one DB may run at once. The DB must outlive the Checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "shale/status.h"

namespace shale {

class DB;

class Checkpoint {
 public:
  // Makes a Checkpoint of db (a DB from DB::Open, or a StackableDB over one such as a
  // TransactionDB) in *checkpoint_ptr, owned by the caller.
  static Status Create(DB* db, Checkpoint** checkpoint_ptr);

  virtual ~Checkpoint() = default;

  // Makes the copy in checkpoint_dir, which must not exist (InvalidArgument "Directory
  // exists" if it does): every column family's table files hard-linked where the file
  // system allows (copied otherwise), the MANIFEST copied up to its length at the cut,
  // CURRENT written to name it, the OPTIONS file and the live WALs copied. The copy is
  // built in checkpoint_dir + ".tmp" (removed first if a failed attempt left it) and
  // renamed into place once every file is durable, so a crash leaves a whole checkpoint
  // or none.
  //
  // log_size_for_flush: every family is flushed first when the live WALs total at least
  // that many bytes (0, the default: always; always with allow_2pc); otherwise the WALs
  // carry the writes the memtables hold. sequence_number_ptr, if not null, receives a
  // sequence number whose writes, and all before it, are in the checkpoint.
  virtual Status CreateCheckpoint(const std::string& checkpoint_dir,
                                  uint64_t log_size_for_flush = 0,
                                  uint64_t* sequence_number_ptr = nullptr) = 0;
};

}  // namespace shale
