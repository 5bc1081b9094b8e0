// TtlIterator: a base DB iterator over values written by DBWithTTL, which steps over
// expired values and shows the others without their time suffix. A value whose suffix is
// bad stops it there: not Valid(), status() Corruption, until the next Seek*.
// Thread safety and lifetime: those of the base iterator, which it owns.
#pragma once

#include <memory>
#include <utility>

#include "shale/env.h"
#include "shale/iterator.h"
#include "utilities/ttl/ttl_compaction_filter.h"

namespace shale {
namespace ttl {

class TtlIterator final : public Iterator {
 public:
  // setting may be null (values never expire).
  TtlIterator(Iterator* base, std::shared_ptr<const TtlSetting> setting, Env* clock)
      : base_(base), setting_(std::move(setting)), clock_(clock) {}

  bool Valid() const override { return status_.ok() && base_->Valid(); }
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void Next() override;
  void Prev() override;
  Slice key() const override { return base_->key(); }
  Slice value() const override;
  Status status() const override { return status_.ok() ? base_->status() : status_; }

 private:
  // Moves the base past expired values, forward or backward; stops at a bad one.
  void Skip(bool forward);

  const std::unique_ptr<Iterator> base_;
  const std::shared_ptr<const TtlSetting> setting_;
  Env* const clock_;
  Status status_;
};

}  // namespace ttl
}  // namespace shale
