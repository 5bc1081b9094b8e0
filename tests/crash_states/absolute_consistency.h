// When kAbsoluteConsistency must refuse a crash state (oracle.h R1): the states whose WALs
// show that writes recovery would replay were lost, as recovery can tell from the files
// alone. The mode may refuse more (any damage, any WAL that lost bytes); these it must.
//
// The WALs recovery replays are the DB's numbered at least the smallest log number of the
// live families in the MANIFEST that CURRENT names (every WAL when that cannot be read).
// Among them, the state must be refused when
//  A1. the newest one holding any bytes (zeros aside) ends inside a record: an
//      acknowledged write may be cut in two, and the mode takes no torn tail;
//  A2. one lost bytes pushed to it and the next one begins with the record naming it and
//      its size (log_format.h kPredecessorType), a size beyond what is left of it: the
//      writes after the loss would come back without those before.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "tests/crash_states/persistence_model.h"

namespace shale::crash_states {

// Why kAbsoluteConsistency must refuse state (A1, A2), or "" when it need not.
std::string AbsoluteConsistencyMustRefuse(const CrashState& state, const std::string& dbname);

}  // namespace shale::crash_states
