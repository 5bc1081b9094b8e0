// What DBWithTTL (shale/utilities/db_ttl.h) puts in each family's options: a compaction
// filter that drops expired values, layered over the user's filter or factory, and a merge
// operator that strips the time suffix before the user's operator and stamps its result.
//
// The TTL is shared (TtlSetting) between the DB, which reads it for Get and iterators and
// changes it in SetTtl, and the filters, which read it at each value; an atomic, so any
// thread may read it while another sets it.
//
// The user's filter sees values without their suffix and is asked through FilterV3, so
// every decision it makes counts (RocksDB's layered filter asks only Filter); a value it
// changes keeps the old write time. An expired value is dropped without asking it. A
// value too short for a suffix, or with a time before the feature, is kept as it is and
// not offered. Merge operands are not judged by age (their merge result is stamped anew),
// as in RocksDB; the user's filter still sees them.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/compaction_filter.h"
#include "shale/env.h"
#include "shale/merge_operator.h"

namespace shale {
namespace ttl {

struct TtlSetting {
  explicit TtlSetting(int32_t t) : ttl(t) {}
  std::atomic<int32_t> ttl;
};

class TtlCompactionFilter : public CompactionFilter {
 public:
  // user may be null; owned_user, if set, is user and is owned by this filter.
  TtlCompactionFilter(std::shared_ptr<const TtlSetting> setting, Env* clock,
                      const CompactionFilter* user,
                      std::unique_ptr<CompactionFilter> owned_user = nullptr)
      : setting_(std::move(setting)),
        clock_(clock),
        user_(user),
        owned_user_(std::move(owned_user)) {}

  Decision FilterV3(int level, const Slice& key, ValueType value_type, const Slice* existing_value,
                    const WideColumns* existing_columns, std::string* new_value,
                    std::vector<std::pair<std::string, std::string>>* new_columns,
                    std::string* skip_until) const override;
  // The user's answer: false fails the compaction, as for the user's filter alone.
  bool IgnoreSnapshots() const override { return user_ == nullptr || user_->IgnoreSnapshots(); }
  const char* Name() const override { return "TtlCompactionFilter"; }

 private:
  const std::shared_ptr<const TtlSetting> setting_;
  Env* const clock_;
  const CompactionFilter* const user_;
  const std::unique_ptr<CompactionFilter> owned_user_;
};

// Makes a TtlCompactionFilter per job, over the user's factory's filter (if any).
class TtlCompactionFilterFactory : public CompactionFilterFactory {
 public:
  TtlCompactionFilterFactory(std::shared_ptr<const TtlSetting> setting, Env* clock,
                             std::shared_ptr<CompactionFilterFactory> user)
      : setting_(std::move(setting)), clock_(clock), user_(std::move(user)) {}

  // Compactions, and whatever else the user's factory asks for.
  bool ShouldFilterTableFileCreation(TableFileCreationReason reason) const override;
  std::unique_ptr<CompactionFilter> CreateCompactionFilter(
      const CompactionFilter::Context& context) override;
  const char* Name() const override { return "TtlCompactionFilterFactory"; }

 private:
  const std::shared_ptr<const TtlSetting> setting_;
  Env* const clock_;
  const std::shared_ptr<CompactionFilterFactory> user_;
};

// The user's operator over values and operands without their suffixes; every result is
// stamped with the time of the merge. An input too short for a suffix fails the merge
// (Corruption for the read), as RocksDB's.
class TtlMergeOperator : public MergeOperator {
 public:
  TtlMergeOperator(std::shared_ptr<MergeOperator> user, Env* clock)
      : user_(std::move(user)), clock_(clock) {}

  bool FullMergeV2(const MergeOperationInput& merge_in,
                   MergeOperationOutput* merge_out) const override;
  bool PartialMerge(const Slice& key, const Slice& left_operand, const Slice& right_operand,
                    std::string* new_value, Logger* logger) const override;
  bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operand_list,
                         std::string* new_value, Logger* logger) const override;
  bool AllowSingleOperand() const override { return user_->AllowSingleOperand(); }
  bool ShouldMerge(const std::vector<Slice>& operands) const override;
  const char* Name() const override { return "TtlMergeOperator"; }

 private:
  const std::shared_ptr<MergeOperator> user_;
  Env* const clock_;
};

}  // namespace ttl
}  // namespace shale
