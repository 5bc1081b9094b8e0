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
//
// Files: this one declares the class and holds the node layout and the searches reads use;
// skiplist_insert.h the insert paths and skiplist_iterator.h the Iterator. Both are
// included at the end of this file; include only this one.
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
  class Iterator;  // memtable/skiplist_iterator.h

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
  bool HintFits(const char* key, int height, int max_height) const;

  uint64_t PrefixOf(const char* key) const;

  // FindSplice by the prefixes above level 0: a node is loaded only when the walk moves
  // onto it, or when its prefix does not settle the order. `exact`: every prefix is its
  // node's (prefixes_trusted_, for Insert), so a larger one settles it too; otherwise only
  // a smaller one does (see "Prefixes").
  void FindSpliceByPrefix(const char* key, uint64_t key_prefix, bool exact, int top, Node** prev,
                          Node** next) const;

  // One search of FindSplicesTogether: FindSpliceByPrefix (or FindSplice) cut into steps.
  // `cand` is before's successor on `level` and `cand_prefix` the prefix beside it, both
  // read (and cand's slot prefetched) a step earlier.
  struct Search;

  // Reads s's next candidate on its level and starts loading what the step after needs:
  // the candidate's slot on that level, or on level 0 its key.
  void LoadCandidate(Search* s) const;

  // One step of s: decides about its candidate, then moves onto it or down a level.
  // Returns false once s has its splice. The decisions are FindSpliceByPrefix's (levels
  // above 0) and FindSpliceForLevel's (level 0, and every level without prefixes).
  bool SearchStep(Search* s) const;

  // The splices of keys[0..n) for levels [0, top), found side by side (see the batch
  // InsertConcurrently). `exact` as for FindSpliceByPrefix.
  void FindSplicesTogether(const char* const* keys, size_t n, int top, bool exact,
                           Node* (*prev)[kMaxHeight], Node* (*next)[kMaxHeight]) const;

  // Links x between prev and next on `level`, for a serialized insert.
  static void LinkSerializedAt(Node* x, int level, Node* prev, Node* next, uint64_t key_prefix);

  // The heights of the group's nodes into heights[]; returns the largest.
  static int GroupHeights(const char* const* group, size_t count, int* heights);

  // Links x on levels [0, height) at the splice found for it (stale parts are walked again
  // from their prev), as InsertConcurrently does. False if an equal key is present.
  bool LinkConcurrently(Node* x, const char* key, int height, Node** prev, Node** next);
  // The same for serialized inserts, keeping the prefixes as Insert does.
  bool LinkSerialized(Node* x, const char* key, int height, Node** prev, Node** next);

  // FindSplice for the inserts, by prefixes where the comparator gives them.
  void FindSpliceForInsert(const char* key, bool exact, int top, Node** prev, Node** next) const;

  // Fills prev/next for levels [0, top) from the top down, each level starting where the
  // one above stopped.
  void FindSplice(const char* key, int top, Node** prev, Node** next) const;

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

}  // namespace shale

#include "memtable/skiplist_insert.h"
#include "memtable/skiplist_iterator.h"
