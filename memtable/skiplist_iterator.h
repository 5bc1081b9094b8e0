// SkipList::Iterator (part of skiplist.h, which includes this file): a cursor over the list
// whose forward scan from the first key walks several level-0 segments side by side (see
// the comment at the class's declaration in skiplist.h).
#pragma once

#include <cstddef>
#include <memory>

#include "memtable/skiplist.h"

namespace shale {

template <typename Comparator, typename Allocator>
class SkipList<Comparator, Allocator>::Iterator {
 public:
  explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}

  bool Valid() const { return node_ != nullptr; }
  // REQUIRES: Valid()
  const char* key() const { return node_->Key(); }
  // REQUIRES: Valid()
  void Next() {
    if (scanning_) {
      if (++scan_->pos < scan_->count) {
        node_ = scan_->out[scan_->pos];
      } else {
        Refill();
      }
      return;
    }
    if (from_first_) {
      // anchor_: the first level-1 node at or after node_ (see StartBatches).
      if (anchor_ == node_) anchor_ = node_->Next(1);
      if (++steps_ == kScanWarmup) {
        StartBatches();
        return;
      }
    }
    node_ = node_->Next(0);
  }
  // The key `ahead` places after the current one when a batch already holds it (a hint
  // for prefetching what the key points to), else nullptr.
  const char* KeyAhead(size_t ahead) const {
    if (!scanning_ || scan_->pos + ahead >= scan_->count) return nullptr;
    return scan_->out[scan_->pos + ahead]->Key();
  }
  // REQUIRES: Valid()
  void Prev() {
    Plain();
    node_ = Real(list_->FindLessThan(node_->Key()));
  }
  // First key >= target.
  void Seek(const char* target) {
    Plain();
    node_ = list_->FindGreaterOrEqual(target);
  }
  // Last key <= target.
  void SeekForPrev(const char* target) {
    Plain();
    node_ = Real(list_->FindLessOrEqual(target));
  }
  void SeekToFirst() {
    Plain();
    // The anchor first: a node linked at level 1 is at level 0 already, so the first
    // node read afterwards is at or before it, whatever was inserted meanwhile.
    anchor_ = list_->head_->Next(1);
    node_ = list_->head_->Next(0);
    from_first_ = true;
  }
  void SeekToLast() {
    Plain();
    node_ = Real(list_->FindLast());
  }
  // For tests: segments longer than cap (1 .. kSegmentCap) are cut and resumed.
  void TEST_SetSegmentCap(size_t cap) { segment_cap_ = cap; }

 private:
  static constexpr int kScanWarmup = 16;  // plain steps before batches start
  static constexpr size_t kScanSegments = 16;
  static constexpr size_t kSegmentCap = 32;  // a longer segment is cut and resumed

  struct Scan {
    Node* seg[kScanSegments][kSegmentCap];
    Node* out[kScanSegments * kSegmentCap];
    size_t count = 0;
    size_t pos = 0;
    // Where the next batch starts, and the level-1 node that ends the segment it is in
    // (equal to it when the batch ends at a segment's start).
    Node* cont = nullptr;
    Node* cont_end = nullptr;
  };

  Node* Real(Node* n) const { return n == list_->head_ ? nullptr : n; }
  void Plain() {
    scanning_ = false;
    from_first_ = false;
    steps_ = 0;
  }
  void StartBatches() {
    if (scan_ == nullptr) scan_.reset(new Scan);
    scanning_ = true;
    // anchor_ is at or after node_; a level-1 node at or after node_'s successor is what
    // ends the first segment.
    // The level-1 successor is read before the level-0 one, as in SeekToFirst.
    scan_->cont_end = anchor_ == node_ ? node_->Next(1) : anchor_;
    scan_->cont = node_->Next(0);
    Refill();
  }
  // The next batch into scan_->out; node_ its first node (nullptr at the end).
  void Refill() {
    Scan& sc = *scan_;
    Node* start[kScanSegments];
    Node* end[kScanSegments];
    size_t n = 0;
    if (sc.cont != sc.cont_end) {
      start[n] = sc.cont;
      end[n++] = sc.cont_end;
    }
    for (Node* a = sc.cont_end; a != nullptr && n < kScanSegments; n++) {
      start[n] = a;
      a = a->Next(1);  // a is a level-1 node
      end[n] = a;
    }
    size_t len[kScanSegments];
    Node* cur[kScanSegments];
    for (size_t i = 0; i < n; i++) {
      len[i] = 0;
      cur[i] = start[i];
    }
    for (bool stepped = true; stepped;) {
      stepped = false;
      for (size_t i = 0; i < n; i++) {
        // (A null cur cannot happen, end being reachable from start; it only guards.)
        if (cur[i] == end[i] || cur[i] == nullptr || len[i] == segment_cap_) continue;
        sc.seg[i][len[i]++] = cur[i];
        cur[i] = cur[i]->Next(0);
        stepped = true;
      }
    }
    sc.count = 0;
    sc.pos = 0;
    sc.cont = n == 0 ? nullptr : end[n - 1];
    sc.cont_end = sc.cont;
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < len[i]; j++) sc.out[sc.count++] = sc.seg[i][j];
      if (cur[i] != end[i] && cur[i] != nullptr) {
        // Cut at its cap: the segments after it are walked again by the next batch.
        sc.cont = cur[i];
        sc.cont_end = end[i];
        break;
      }
    }
    node_ = sc.count > 0 ? sc.out[0] : nullptr;
  }

  const SkipList* list_;
  Node* node_;
  // A forward walk from SeekToFirst: steps taken, and the first level-1 node at or
  // after node_.
  bool from_first_ = false;
  int steps_ = 0;
  Node* anchor_ = nullptr;
  bool scanning_ = false;
  std::unique_ptr<Scan> scan_;
  size_t segment_cap_ = kSegmentCap;
};

}  // namespace shale
