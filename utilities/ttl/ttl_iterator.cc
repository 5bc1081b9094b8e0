#include "utilities/ttl/ttl_iterator.h"

#include "utilities/ttl/ttl_value.h"

namespace shale {
namespace ttl {

void TtlIterator::SeekToFirst() {
  status_ = Status::OK();
  base_->SeekToFirst();
  Skip(/*forward=*/true);
}

void TtlIterator::SeekToLast() {
  status_ = Status::OK();
  base_->SeekToLast();
  Skip(/*forward=*/false);
}

void TtlIterator::Seek(const Slice& target) {
  status_ = Status::OK();
  base_->Seek(target);
  Skip(/*forward=*/true);
}

void TtlIterator::SeekForPrev(const Slice& target) {
  status_ = Status::OK();
  base_->SeekForPrev(target);
  Skip(/*forward=*/false);
}

void TtlIterator::Next() {
  base_->Next();
  Skip(/*forward=*/true);
}

void TtlIterator::Prev() {
  base_->Prev();
  Skip(/*forward=*/false);
}

Slice TtlIterator::value() const { return Strip(base_->value()); }

void TtlIterator::Skip(bool forward) {
  const int32_t ttl = setting_ != nullptr ? setting_->ttl.load(std::memory_order_relaxed) : 0;
  const int64_t now = Now(clock_);
  while (base_->Valid()) {
    const Slice v = base_->value();
    status_ = Check(v);
    if (!status_.ok() || !Expired(v, ttl, now)) return;
    if (forward) {
      base_->Next();
    } else {
      base_->Prev();
    }
  }
}

}  // namespace ttl
}  // namespace shale
