// SkipList: the sorted index of the memtable. Keys are byte strings stored inline right
// after their node, in memory from an arena; nothing is ever removed, and everything is
// freed together with the arena.
//
// Use: `char* buf = list.AllocateKey(n);` fill the n bytes, then `list.Insert(buf)` or
// `list.InsertConcurrently(buf)`. The key must not change after insertion.
//
// Thread safety:
// - Readers (Iterator, Contains) take no lock and may run during any inserts; they see
//   each node either fully linked at level 0 or not at all.
// - Insert() callers must be serialized among themselves (the memtable's writer).
// - InsertConcurrently() may run from many threads at once (CAS on the next pointers);
//   its allocator must then be thread-safe (ConcurrentArena). The two kinds of insert must
//   not overlap in time.
//
// Invariants: keys are distinct (an insert of a key already present is refused);
// level i lists are sorted and each is a sub-list of level i-1; a node is linked bottom-up,
// so one reachable at level i is reachable at every level below.
//
// Comparator: `int operator()(const char* a, const char* b) const` over stored keys,
// <0, 0, >0 like memcmp; it must be safe to call from many threads at once. It may also
// give `uint64_t Prefix(const char* key) const`, a number that orders keys coarsely:
// Prefix(a) < Prefix(b) must imply a < b (equal prefixes say nothing). Inserts then keep
// each successor's prefix beside the pointer to it, and searches above level 0 compare by
// those instead of loading the nodes (see "Prefixes" below).
// Allocator: `char* AllocateAligned(size_t)` returning pointer-aligned memory that lives as
// long as the list.
#pragma once

#include <atomic>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "util/random.h"

namespace shale {

namespace skiplist_internal {
template <typename C>
concept HasPrefix = requires(const C& c, const char* key) {
  { c.Prefix(key) } -> std::convertible_to<uint64_t>;
};

// Heights are drawn per thread so that concurrent inserters need no shared generator.
inline Random& ThreadRandom() {
  static std::atomic<uint64_t> seed{0x5ca1ab1e};
  thread_local Random rnd(seed.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed));
  return rnd;
}
}  // namespace skiplist_internal

template <typename Comparator, typename Allocator>
class SkipList {
 private:
  struct Node;

 public:
  // One node in two goes up a level. With prefixes a search loads only the nodes it steps
  // onto, about one a level: at a million keys, 20 levels of one step beat 10 of three
  // (mergerandom +17% over one in four, for 16% more memory per 8-byte value).
  static constexpr int kMaxHeight = 20;
  static constexpr uint32_t kBranching = 2;

  // `allocator` must outlive the list.
  SkipList(Comparator cmp, Allocator* allocator)
      : compare_(cmp), allocator_(allocator), head_(NewNode(kMaxHeight, 0)), max_height_(1) {
    for (int i = 0; i < kMaxHeight; i++) head_->NoBarrierSetNext(i, nullptr);
  }
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // Space for a key of key_size bytes, to be filled and then passed to one Insert call.
  // Thread-safe if the allocator is.
  char* AllocateKey(size_t key_size) {
    Node* n = NewNode(RandomHeight(), key_size);
    return const_cast<char*>(n->Key());
  }

  // Links the key allocated by AllocateKey. Returns false (and wastes the space) if an
  // equal key is already present. REQUIRES: no other insert runs concurrently.
  // A key that lands where the previous Insert's did (just after it, as in an ascending
  // run) costs a comparison or two instead of a search from the head: see hint_prev_.
  bool Insert(const char* key);

  // Like Insert, but may run concurrently with other InsertConcurrently calls.
  bool InsertConcurrently(const char* key);

  // InsertConcurrently of keys[0..n), in that order: an equal key already present, or
  // earlier in keys, refuses the later one. inserted[i] tells which were linked. The
  // searches of up to kGroup keys at a time go side by side, a step of each in turn, so
  // that their cache misses overlap instead of following one another: at a few hundred
  // thousand random keys an insert waits on about one miss a level.
  static constexpr size_t kGroup = 8;
  void InsertConcurrently(const char* const* keys, size_t n, bool* inserted);

  // The same for serialized inserts (Insert's REQUIRES). A group whose keys ascend goes
  // through Insert one by one instead: the splice hint is cheaper than any search there.
  void Insert(const char* const* keys, size_t n, bool* inserted);

  bool Contains(const char* key) const {
    Node* n = FindGreaterOrEqual(key);
    return n != nullptr && compare_(n->Key(), key) == 0;
  }

  // A cursor over the list. Keys it returns stay valid as long as the list (arena) lives.
  // One thread at a time per Iterator; any number of Iterators at once.
  //
  // A forward scan from SeekToFirst (a flush walks the whole list so) would wait on one
  // cache miss per node, each next pointer known only once the node before it is loaded.
  // After a few steps the scan goes in batches instead: the level-1 list splits level 0
  // into segments of about kBranching nodes, and the batch walks kScanSegments of them side
  // by side, one step each in turn, so that their misses overlap. Nodes inserted meanwhile
  // behind the batch are not returned, as a plain walk past them would not return them.
  class Iterator {
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

 private:
  // Layout in the arena: the slots of levels height-1 .. 1, then the Node (the level 0
  // pointer), then the key bytes. A slot above level 0 is 16 bytes: the next pointer, then
  // a prefix for the next node (see "Prefixes"). Until insertion the level 0 slot holds
  // the height.
  //
  // Prefixes. A slot's prefix is Comparator::Prefix of the node its pointer leads to, or of
  // one that it led to before (kNoPrefix for none). A node's successor on a level only
  // ever moves to a smaller key, as inserts land between the two, so the prefix a reader
  // sees is never below its successor's:
  // - Insert stores the pointer, then the prefix (release). A reader loads the prefix, then
  //   the pointer (acquire): it gets the slot's node or a later, smaller one.
  // - InsertConcurrently gives a new node its predecessor's prefix, read before linking it,
  //   and sets the predecessor's after; two such stores may land out of order, which
  //   leaves a larger prefix.
  // So a prefix below the key's proves the node is before the key, and a search may step
  // onto it unseen; any other prefix proves nothing to a reader, which compares the node
  // (or stops, and compares on the level below). A serialized Insert may also trust a
  // larger prefix, as its own stores are the only ones while prefixes_trusted_.
  static constexpr size_t kSlotSize = 16;
  static constexpr uint64_t kNoPrefix = ~uint64_t{0};
  struct Node {
    const char* Key() const { return reinterpret_cast<const char*>(&next_[1]); }
    static Node* FromKey(const char* key) {
      return reinterpret_cast<Node*>(const_cast<char*>(key)) - 1;
    }

    Node* Next(int level) const { return Slot(level)->load(std::memory_order_acquire); }
    void SetNext(int level, Node* x) { Slot(level)->store(x, std::memory_order_release); }
    Node* NoBarrierNext(int level) const { return Slot(level)->load(std::memory_order_relaxed); }
    // Starts loading the node after this one on `level` (its level 0 pointer and the key's
    // first bytes). A walk calls this on the node it is about to compare, so that the load
    // of the node it may move to next overlaps the comparison instead of following it.
    // Only a hint: a null or stale pointer does no harm.
    void PrefetchSuccessor(int level) const { __builtin_prefetch(NoBarrierNext(level), 0, 1); }
    void NoBarrierSetNext(int level, Node* x) { Slot(level)->store(x, std::memory_order_relaxed); }
    bool CASNext(int level, Node* expected, Node* x) {
      return Slot(level)->compare_exchange_strong(expected, x, std::memory_order_acq_rel,
                                                  std::memory_order_acquire);
    }

    void StashHeight(int height) {
      next_[0].store(reinterpret_cast<Node*>(static_cast<uintptr_t>(height)),
                     std::memory_order_relaxed);
    }
    int StashedHeight() const {
      return static_cast<int>(
          reinterpret_cast<uintptr_t>(next_[0].load(std::memory_order_relaxed)));
    }

    // The slot prefix for level >= 1 (see "Prefixes").
    uint64_t PrefixAt(int level) const {
      return PrefixSlot(level)->load(std::memory_order_acquire);
    }
    void SetPrefixAt(int level, uint64_t p) {
      PrefixSlot(level)->store(p, std::memory_order_release);
    }
    void NoBarrierSetPrefixAt(int level, uint64_t p) {
      PrefixSlot(level)->store(p, std::memory_order_relaxed);
    }
    // Starts loading this node's slot for `level` (pointer and prefix).
    void PrefetchSlot(int level) const { __builtin_prefetch(Slot(level), 0, 1); }

   private:
    std::atomic<uint64_t>* PrefixSlot(int level) const {
      return reinterpret_cast<std::atomic<uint64_t>*>(Slot(level) + 1);
    }
    std::atomic<Node*>* Slot(int level) const {
      return reinterpret_cast<std::atomic<Node*>*>(
          const_cast<char*>(reinterpret_cast<const char*>(&next_[0])) - kSlotSize * level);
    }
    std::atomic<Node*> next_[1];
  };

  Node* NewNode(int height, size_t key_size) {
    const size_t prefix = kSlotSize * (height - 1);
    char* raw = allocator_->AllocateAligned(prefix + sizeof(Node) + key_size);
    for (int i = 0; i < height - 1; i++) {
      new (raw + i * kSlotSize) std::atomic<Node*>(nullptr);
      new (raw + i * kSlotSize + sizeof(Node*)) std::atomic<uint64_t>(kNoPrefix);
    }
    Node* n = new (raw + prefix) Node;
    n->StashHeight(height);
    return n;
  }

  static int RandomHeight() {
    Random& rnd = skiplist_internal::ThreadRandom();
    int height = 1;
    while (height < kMaxHeight && rnd.Next() % kBranching == 0) height++;
    return height;
  }

  int GetMaxHeight() const { return max_height_.load(std::memory_order_relaxed); }

  // First node >= key, or nullptr.
  Node* FindGreaterOrEqual(const char* key) const {
    Node* x = head_;
    int level = GetMaxHeight() - 1;
    if constexpr (skiplist_internal::HasPrefix<Comparator>) {
      // Above level 0 by the prefixes (see "Prefixes"); level 0 compares every node.
      const uint64_t key_prefix = compare_.Prefix(key);
      for (; level >= 1; level--) {
        while (true) {
          const uint64_t p = x->PrefixAt(level);  // before the pointer
          Node* n = x->Next(level);
          if (n == nullptr || p > key_prefix) break;
          n->PrefetchSlot(level);
          if (p == key_prefix && compare_(n->Key(), key) >= 0) break;
          x = n;
        }
      }
      Node* before;
      Node* found;
      FindSpliceForLevel(key, x, 0, &before, &found);
      return found;
    }
    Node* known_bigger = nullptr;  // skips re-comparing the same node on the next level
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr && next != known_bigger) next->PrefetchSuccessor(level);
      int c = (next == nullptr || next == known_bigger) ? 1 : compare_(next->Key(), key);
      if (c < 0) {
        x = next;
      } else if (c == 0 || level == 0) {
        return next;
      } else {
        known_bigger = next;
        level--;
      }
    }
  }

  // Last node < key, or head_.
  Node* FindLessThan(const char* key) const {
    Node* x = head_;
    int level = GetMaxHeight() - 1;
    Node* known_bigger = nullptr;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr && next != known_bigger) next->PrefetchSuccessor(level);
      if (next != nullptr && next != known_bigger && compare_(next->Key(), key) < 0) {
        x = next;
      } else if (level == 0) {
        return x;
      } else {
        known_bigger = next;
        level--;
      }
    }
  }

  // Last node <= key, or head_.
  Node* FindLessOrEqual(const char* key) const {
    Node* x = head_;
    int level = GetMaxHeight() - 1;
    Node* known_bigger = nullptr;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr && next != known_bigger) next->PrefetchSuccessor(level);
      int c = (next == nullptr || next == known_bigger) ? 1 : compare_(next->Key(), key);
      if (c < 0) {
        x = next;
      } else if (c == 0) {
        return next;
      } else if (level == 0) {
        return x;
      } else {
        known_bigger = next;
        level--;
      }
    }
  }

  // Last node, or head_ if the list is empty.
  Node* FindLast() const {
    Node* x = head_;
    int level = GetMaxHeight() - 1;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr) {
        x = next;
      } else if (level == 0) {
        return x;
      } else {
        level--;
      }
    }
  }

  // Walks `level` from `before` (which must be < key) to the pair prev < key <= next.
  // `known_bigger` (may be null) is a node already found >= key: the walk stops at it
  // without comparing again.
  void FindSpliceForLevel(const char* key, Node* before, int level, Node** prev, Node** next,
                          const Node* known_bigger = nullptr) const {
    while (true) {
      Node* n = before->Next(level);
      if (n != nullptr && n != known_bigger) {
        n->PrefetchSuccessor(level);
        // Also where the walk goes if it descends from n: one of the two loads is next.
        if (level > 0) n->PrefetchSuccessor(level - 1);
      }
      if (n == nullptr || n == known_bigger || compare_(n->Key(), key) >= 0) {
        *prev = before;
        *next = n;
        return;
      }
      before = n;
    }
  }

  // Whether the splice recorded by the last Insert (hint_prev_/hint_next_) is where `key`
  // goes on every level below `height`. It is when, on level 0, key falls between the pair
  // (prev < key <= next) and the pair on each of those levels is still adjacent: the pairs
  // are nested (each level's lies around the one below), so the level-0 bracket holds above
  // too, and the adjacency check catches nodes that InsertConcurrently linked in between
  // since. Levels at or above `height` are not used by this insert and not checked.
  bool HintFits(const char* key, int height, int max_height) const {
    // No hint yet, or another inserter raised the height since: levels are missing.
    if (hint_levels_ != max_height) return false;
    const Node* p = hint_prev_[0];
    const Node* n = hint_next_[0];
    if (p != head_ && compare_(p->Key(), key) >= 0) return false;
    if (n != nullptr && compare_(n->Key(), key) < 0) return false;
    const int levels = height < max_height ? height : max_height;
    for (int i = 0; i < levels; i++) {
      if (hint_prev_[i]->Next(i) != hint_next_[i]) return false;
    }
    return true;
  }

  uint64_t PrefixOf(const char* key) const {
    if constexpr (skiplist_internal::HasPrefix<Comparator>) {
      return compare_.Prefix(key);
    } else {
      return kNoPrefix;
    }
  }

  // FindSplice by the prefixes above level 0: a node is loaded only when the walk moves
  // onto it, or when its prefix does not settle the order. `exact`: every prefix is its
  // node's (prefixes_trusted_, for Insert), so a larger one settles it too; otherwise only
  // a smaller one does (see "Prefixes").
  void FindSpliceByPrefix(const char* key, uint64_t key_prefix, bool exact, int top, Node** prev,
                          Node** next) const {
    Node* before = head_;
    const Node* known_bigger = nullptr;
    for (int i = top - 1; i >= 1; i--) {
      Node* n;
      while (true) {
        const uint64_t p = before->PrefixAt(i);
        n = before->Next(i);
        if (n == nullptr || n == known_bigger || (p > key_prefix && exact)) break;
        // Most likely the walk moves onto n next: start loading its slot.
        n->PrefetchSlot(i);
        if (p >= key_prefix && compare_(n->Key(), key) >= 0) break;
        before = n;
      }
      prev[i] = before;
      next[i] = n;
      known_bigger = n;
    }
    FindSpliceForLevel(key, before, 0, &prev[0], &next[0], known_bigger);
  }

  // One search of FindSplicesTogether: FindSpliceByPrefix (or FindSplice) cut into steps.
  // `cand` is before's successor on `level` and `cand_prefix` the prefix beside it, both
  // read (and cand's slot prefetched) a step earlier.
  struct Search {
    const char* key;
    uint64_t key_prefix;
    Node* before;
    Node* cand;
    uint64_t cand_prefix;
    const Node* known_bigger;
    bool exact;  // a larger prefix settles the order too (see FindSpliceByPrefix)
    int level;   // -1 once done
    Node** prev;
    Node** next;
  };

  // Reads s's next candidate on its level and starts loading what the step after needs:
  // the candidate's slot on that level, or on level 0 its key.
  void LoadCandidate(Search* s) const {
    if (s->level > 0) {
      s->cand_prefix = s->before->PrefixAt(s->level);  // before the pointer
      s->cand = s->before->Next(s->level);
      if (s->cand != nullptr) s->cand->PrefetchSlot(s->level);
    } else {
      s->cand = s->before->Next(0);
      if (s->cand != nullptr) __builtin_prefetch(s->cand, 0, 1);
    }
  }

  // One step of s: decides about its candidate, then moves onto it or down a level.
  // Returns false once s has its splice. The decisions are FindSpliceByPrefix's (levels
  // above 0) and FindSpliceForLevel's (level 0, and every level without prefixes).
  bool SearchStep(Search* s) const {
    Node* n = s->cand;
    bool stop = n == nullptr || n == s->known_bigger;
    if (!stop) {
      if (skiplist_internal::HasPrefix<Comparator> && s->level > 0) {
        stop = (s->exact && s->cand_prefix > s->key_prefix) ||
               (s->cand_prefix >= s->key_prefix && compare_(n->Key(), s->key) >= 0);
      } else {
        stop = compare_(n->Key(), s->key) >= 0;
      }
    }
    if (!stop) {
      s->before = n;
    } else {
      s->prev[s->level] = s->before;
      s->next[s->level] = n;
      s->known_bigger = n;
      if (--s->level < 0) return false;
    }
    LoadCandidate(s);
    return true;
  }

  // The splices of keys[0..n) for levels [0, top), found side by side (see the batch
  // InsertConcurrently). `exact` as for FindSpliceByPrefix.
  void FindSplicesTogether(const char* const* keys, size_t n, int top, bool exact,
                           Node* (*prev)[kMaxHeight], Node* (*next)[kMaxHeight]) const {
    Search searches[kGroup];
    size_t active = 0;
    for (size_t i = 0; i < n; i++) {
      Search& s = searches[active++];
      s.key = keys[i];
      s.key_prefix = PrefixOf(keys[i]);
      s.before = head_;
      s.known_bigger = nullptr;
      s.exact = exact;
      s.level = top - 1;
      s.prev = prev[i];
      s.next = next[i];
      LoadCandidate(&s);
    }
    while (active > 0) {
      for (size_t i = 0; i < active;) {
        if (SearchStep(&searches[i])) {
          i++;
        } else {
          searches[i] = searches[--active];  // done: its slot goes to the last one
        }
      }
    }
  }

  // Links x between prev and next on `level`, for a serialized insert.
  static void LinkSerializedAt(Node* x, int level, Node* prev, Node* next, uint64_t key_prefix) {
    // x is unreachable until prev points at it, so its own pointer needs no barrier; the
    // release store below publishes it together with the key bytes.
    x->NoBarrierSetNext(level, next);
    if (level == 0) {
      prev->SetNext(0, x);
    } else {
      // next's prefix moves from prev's slot to x's (exact while trusted; otherwise no
      // smaller than next's, which is all readers need).
      x->NoBarrierSetPrefixAt(level, prev->PrefixAt(level));
      prev->SetNext(level, x);
      prev->SetPrefixAt(level, key_prefix);  // after the pointer: see "Prefixes"
    }
  }

  // The heights of the group's nodes into heights[]; returns the largest.
  static int GroupHeights(const char* const* group, size_t count, int* heights) {
    int height = 1;
    for (size_t i = 0; i < count; i++) {
      heights[i] = Node::FromKey(group[i])->StashedHeight();
      if (heights[i] > height) height = heights[i];
    }
    return height;
  }

  // Links x on levels [0, height) at the splice found for it (stale parts are walked again
  // from their prev), as InsertConcurrently does. False if an equal key is present.
  bool LinkConcurrently(Node* x, const char* key, int height, Node** prev, Node** next);
  // The same for serialized inserts, keeping the prefixes as Insert does.
  bool LinkSerialized(Node* x, const char* key, int height, Node** prev, Node** next);

  // FindSplice for the inserts, by prefixes where the comparator gives them.
  void FindSpliceForInsert(const char* key, bool exact, int top, Node** prev, Node** next) const {
    if constexpr (skiplist_internal::HasPrefix<Comparator>) {
      FindSpliceByPrefix(key, compare_.Prefix(key), exact, top, prev, next);
    } else {
      FindSplice(key, top, prev, next);
    }
  }

  // Fills prev/next for levels [0, top) from the top down, each level starting where the
  // one above stopped.
  void FindSplice(const char* key, int top, Node** prev, Node** next) const {
    Node* before = head_;
    const Node* known_bigger = nullptr;
    for (int i = top - 1; i >= 0; i--) {
      FindSpliceForLevel(key, before, i, &prev[i], &next[i], known_bigger);
      before = prev[i];
      known_bigger = next[i];
    }
  }

  const Comparator compare_;
  Allocator* const allocator_;
  Node* const head_;
  // Height of the tallest node ever linked (or being linked). Readers may see it before the
  // head's pointers at the new levels are set; those read as nullptr and are skipped.
  std::atomic<int> max_height_;
  // The splice of the last Insert, for levels [0, hint_levels_): on each level a node
  // before the key and the node after it, adjacent when recorded, and after the insert the
  // inserted node as `prev` on the levels it was linked at. Sequential writes (db_bench
  // fillseq, bulk loads in key order) then find their place without a search: about 20
  // comparisons from the head per insert at a million entries became one or two. Touched
  // only by Insert, whose callers are serialized. InsertConcurrently leaves it alone;
  // HintFits notices what it linked meanwhile.
  Node* hint_prev_[kMaxHeight];
  Node* hint_next_[kMaxHeight];
  int hint_levels_ = 0;
  // Whether every slot's prefix is exactly that of the node its pointer leads to, so that
  // Insert may trust a larger one too. Insert keeps them so; InsertConcurrently may leave a
  // larger one (see "Prefixes"), so its first call clears this for good, and from then on
  // Insert compares nodes as FindSplice does.
  std::atomic<bool> prefixes_trusted_{skiplist_internal::HasPrefix<Comparator>};
};

template <typename Comparator, typename Allocator>
bool SkipList<Comparator, Allocator>::Insert(const char* key) {
  Node* x = Node::FromKey(key);
  const int height = x->StashedHeight();
  const int max_height = GetMaxHeight();
  // The splice is built in the hint arrays themselves, so that it is recorded for the next
  // insert without a copy; a full search leaves an exact splice there as well.
  Node** prev = hint_prev_;
  Node** next = hint_next_;
  const bool trusted = prefixes_trusted_.load(std::memory_order_relaxed);
  const uint64_t key_prefix = PrefixOf(key);
  if (!HintFits(key, height, max_height)) {
    FindSpliceForInsert(key, trusted, max_height, prev, next);
    hint_levels_ = max_height;
  }
  if (next[0] != nullptr && compare_(next[0]->Key(), key) == 0) return false;
  for (int i = max_height; i < height; i++) {
    prev[i] = head_;
    next[i] = nullptr;
  }
  if (height > max_height) {
    max_height_.store(height, std::memory_order_relaxed);
    hint_levels_ = height;
  }
  for (int i = 0; i < height; i++) {
    LinkSerializedAt(x, i, prev[i], next[i], key_prefix);
    prev[i] = x;  // the next key in an ascending run goes right after x
  }
  return true;
}

template <typename Comparator, typename Allocator>
bool SkipList<Comparator, Allocator>::InsertConcurrently(const char* key) {
  Node* x = Node::FromKey(key);
  const int height = x->StashedHeight();
  if (prefixes_trusted_.load(std::memory_order_relaxed)) {
    prefixes_trusted_.store(false, std::memory_order_relaxed);
  }
  int max_height = GetMaxHeight();
  while (height > max_height) {
    if (max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
      max_height = height;
      break;
    }
  }
  Node* prev[kMaxHeight];
  Node* next[kMaxHeight];
  FindSpliceForInsert(key, /*exact=*/false, max_height, prev, next);
  return LinkConcurrently(x, key, height, prev, next);
}

template <typename Comparator, typename Allocator>
void SkipList<Comparator, Allocator>::InsertConcurrently(const char* const* keys, size_t n,
                                                         bool* inserted) {
  if (prefixes_trusted_.load(std::memory_order_relaxed)) {
    prefixes_trusted_.store(false, std::memory_order_relaxed);
  }
  Node* prev[kGroup][kMaxHeight];
  Node* next[kGroup][kMaxHeight];
  for (size_t start = 0; start < n; start += kGroup) {
    const size_t count = n - start < kGroup ? n - start : kGroup;
    const char* const* group = keys + start;
    // Every level a key of the group will be linked at is searched.
    int heights[kGroup];
    const int height = GroupHeights(group, count, heights);
    int max_height = GetMaxHeight();
    while (height > max_height) {
      if (max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
        max_height = height;
        break;
      }
    }
    FindSplicesTogether(group, count, max_height, /*exact=*/false, prev, next);
    // In order: a key's splice may have gone stale by an earlier one's link, which its
    // link then walks past like another thread's.
    for (size_t i = 0; i < count; i++) {
      inserted[start + i] =
          LinkConcurrently(Node::FromKey(group[i]), group[i], heights[i], prev[i], next[i]);
    }
  }
}

template <typename Comparator, typename Allocator>
void SkipList<Comparator, Allocator>::Insert(const char* const* keys, size_t n, bool* inserted) {
  Node* prev[kGroup][kMaxHeight];
  Node* next[kGroup][kMaxHeight];
  for (size_t start = 0; start < n; start += kGroup) {
    const size_t count = n - start < kGroup ? n - start : kGroup;
    const char* const* group = keys + start;
    bool ascending = true;
    for (size_t i = 0; i + 1 < count && ascending; i++) {
      ascending = compare_(group[i], group[i + 1]) < 0;
    }
    if (ascending) {
      for (size_t i = 0; i < count; i++) inserted[start + i] = Insert(group[i]);
      continue;
    }
    int heights[kGroup];
    const int height = GroupHeights(group, count, heights);
    // Levels above the old height lead from the head to nothing, or to a node of this
    // group linked before: a stale splice, which LinkSerialized walks past.
    int max_height = GetMaxHeight();
    if (height > max_height) {
      max_height_.store(height, std::memory_order_relaxed);
      max_height = height;
    }
    FindSplicesTogether(group, count, max_height, prefixes_trusted_.load(std::memory_order_relaxed),
                        prev, next);
    for (size_t i = 0; i < count; i++) {
      inserted[start + i] =
          LinkSerialized(Node::FromKey(group[i]), group[i], heights[i], prev[i], next[i]);
    }
    hint_levels_ = 0;  // the next Insert searches afresh
  }
}

template <typename Comparator, typename Allocator>
bool SkipList<Comparator, Allocator>::LinkSerialized(Node* x, const char* key, int height,
                                                     Node** prev, Node** next) {
  const uint64_t key_prefix = PrefixOf(key);
  for (int i = 0; i < height; i++) {
    // An earlier key of the group linked in between: prev[i] is still < key.
    if (prev[i]->NoBarrierNext(i) != next[i]) {
      FindSpliceForLevel(key, prev[i], i, &prev[i], &next[i]);
    }
    if (i == 0 && next[0] != nullptr && compare_(next[0]->Key(), key) == 0) return false;
    LinkSerializedAt(x, i, prev[i], next[i], key_prefix);
  }
  return true;
}

template <typename Comparator, typename Allocator>
bool SkipList<Comparator, Allocator>::LinkConcurrently(Node* x, const char* key, int height,
                                                       Node** prev, Node** next) {
  const uint64_t key_prefix = PrefixOf(key);
  for (int i = 0; i < height; i++) {
    while (true) {
      if (i == 0 && next[0] != nullptr && compare_(next[0]->Key(), key) == 0) {
        return false;  // nothing linked yet, so no reader can see x
      }
      x->NoBarrierSetNext(i, next[i]);
      // Read before the CAS, prev[i]'s prefix is no smaller than next[i]'s (see
      // "Prefixes").
      if (i > 0) x->NoBarrierSetPrefixAt(i, prev[i]->PrefixAt(i));
      if (prev[i]->CASNext(i, next[i], x)) {
        if (i > 0) prev[i]->SetPrefixAt(i, key_prefix);  // after the pointer
        break;
      }
      // Another insert changed prev[i]'s successor; prev[i] is still < key, so resume
      // from it.
      FindSpliceForLevel(key, prev[i], i, &prev[i], &next[i]);
    }
  }
  return true;
}

}  // namespace shale
