// The write configurations a WRITE_PREPARED TransactionDB allows, for the suites that run
// each of them (write_prepared_txn_test, write_prepared_defects_test,
// write_prepared_crash_test): one write queue; two queues (commit markers take the second);
// two queues with unordered_write.
//
// UseWritePrepared sets what makes a DB WritePrepared in one of them; each suite sets the
// rest (its commit cache size, which says how often commits evict each other, and
// whatever else it needs) and says why.
//
// Thread safety: constants and a function of its arguments.
#pragma once

#include "shale/options.h"
#include "shale/utilities/transaction_db.h"

namespace shale {

struct WritePreparedConfig {
  const char* name;  // a test-name suffix
  bool two_queues;
  bool unordered;
};

inline constexpr WritePreparedConfig kWritePreparedConfigs[] = {
    {"OneQueue", false, false},
    {"TwoQueues", true, false},
    {"TwoQueuesUnordered", true, true},
};

// The WRITE_PREPARED policy with two snapshot-cache slots (so that a few snapshots spill
// past the cache), and c's queues and unordered_write.
inline void UseWritePrepared(const WritePreparedConfig& c, Options* options,
                             TransactionDBOptions* txn_db_options) {
  txn_db_options->write_policy = WRITE_PREPARED;
  txn_db_options->wp_snapshot_cache_bits = 1;
  options->two_write_queues = c.two_queues;
  options->unordered_write = c.unordered;
}

}  // namespace shale
