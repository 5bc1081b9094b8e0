// Applying a MergeOperator where the engine resolves operands: point lookups, iterators,
// the write path's max_successive_merges folding, and flush and compaction (whose rules for
// which operands may be folded live in the compaction iterator).
//
// Thread safety: stateless functions; the operator must be callable from many threads.
#pragma once

#include <string>
#include <vector>

#include "shale/env.h"
#include "shale/merge_operator.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

// Folds operands (oldest first, not empty) onto *existing (null: no value) with op into
// *result (replaced). Corruption naming the operator when it fails; the failure is also
// logged to logger (may be null).
Status FullMergeOperands(const MergeOperator* op, const Slice& key, const Slice* existing,
                         const std::vector<Slice>& operands, std::string* result, Logger* logger);

// Combines operands (oldest first) into one operand with op's PartialMergeMulti, into
// *result (replaced). Tries only when there are two or more operands, or one and the
// operator AllowSingleOperand(). Returns false, leaving *result alone, when it did not try
// or the operator declined: the operands must then be kept apart (not an error).
bool PartialMergeOperands(const MergeOperator* op, const Slice& key,
                          const std::vector<Slice>& operands, std::string* result, Logger* logger);

// The Status a read returns when it meets an operand and no operator is configured.
Status MergeOperatorMissing();

}  // namespace shale
