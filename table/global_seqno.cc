#include "table/global_seqno.h"

#include <memory>

namespace shale {
namespace {

// Positions the file's iterator by user key (each is there once, at sequence 0) and then
// steps over the one entry the target's sequence puts on the other side.
class GlobalSeqnoIterator final : public InternalIterator {
 public:
  GlobalSeqnoIterator(InternalIterator* file_iter, SequenceNumber seq, const Comparator* ucmp)
      : iter_(file_iter), seq_(seq), keys_(seq), ucmp_(ucmp) {}

  bool Valid() const override { return iter_->Valid(); }
  void SeekToFirst() override {
    iter_->SeekToFirst();
    Update();
  }
  void SeekToLast() override {
    iter_->SeekToLast();
    Update();
  }
  void Seek(const Slice& target) override {
    // (k, seq) sorts at or after target (k, s) when seq <= s.
    iter_->Seek(keys_.LookupKey(target));
    if (iter_->Valid() && !keys_.Visible(target) && SameUserKey(target)) iter_->Next();
    Update();
  }
  void SeekForPrev(const Slice& target) override {
    // The last place of target's user key in the file: sequence 0 and the lowest type.
    std::string last(target.data(), target.size() - 8);
    PutFixed64(&last, PackSequenceAndType(0, static_cast<ValueType>(0)));
    iter_->SeekForPrev(last);
    // (k, seq) sorts at or before target (k, s) when seq >= s.
    if (iter_->Valid() && ExtractSequence(target) > seq_ && SameUserKey(target)) iter_->Prev();
    Update();
  }
  void Next() override {
    iter_->Next();
    Update();
  }
  void Prev() override {
    iter_->Prev();
    Update();
  }
  Slice key() const override { return key_; }
  Slice value() const override { return iter_->value(); }
  Status status() const override { return iter_->status(); }
  bool IsValuePinned() const override { return iter_->IsValuePinned(); }

 private:
  bool SameUserKey(const Slice& target) const {
    return ucmp_->Compare(ExtractUserKey(iter_->key()), ExtractUserKey(target)) == 0;
  }
  void Update() {
    if (iter_->Valid()) key_ = rewriter_.Rewrite(iter_->key());
  }

  const std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber seq_;
  GlobalSeqnoKey keys_;            // seek targets
  GlobalSeqnoKey rewriter_{seq_};  // the current key (a buffer of its own)
  const Comparator* const ucmp_;
  Slice key_;
};

}  // namespace

InternalIterator* NewGlobalSeqnoIterator(InternalIterator* file_iter, SequenceNumber seq,
                                         const Comparator* ucmp) {
  return new GlobalSeqnoIterator(file_iter, seq, ucmp);
}

}  // namespace shale
