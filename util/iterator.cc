#include "shale/iterator.h"
#include "util/internal_iterator.h"

namespace shale {
namespace {

template <class Base>
class EmptyIter final : public Base {
 public:
  explicit EmptyIter(const Status& s) : status_(s) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&) override {}
  void SeekForPrev(const Slice&) override {}
  void Next() override {}
  void Prev() override {}
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }
  Status status() const override { return status_; }

 private:
  Status status_;
};

}  // namespace

Iterator* NewEmptyIterator() { return new EmptyIter<Iterator>(Status::OK()); }
Iterator* NewErrorIterator(const Status& status) { return new EmptyIter<Iterator>(status); }
InternalIterator* NewEmptyInternalIterator(const Status& status) {
  return new EmptyIter<InternalIterator>(status);
}

}  // namespace shale
