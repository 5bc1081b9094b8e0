// SkipList's insert path (part of skiplist.h, which includes this file; the declarations
// and their comments are there): the serialized Insert with its splice hint, the
// concurrent one with compare-and-swap links, the group inserts whose searches go side by
// side, and the splice searches they share.
#pragma once

#include "memtable/skiplist.h"

namespace shale {

template <typename Comparator, typename Allocator>
struct SkipList<Comparator, Allocator>::Search {
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

template <typename Comparator, typename Allocator>
inline bool SkipList<Comparator, Allocator>::HintFits(const char* key, int height,
                                                      int max_height) const {
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

template <typename Comparator, typename Allocator>
inline uint64_t SkipList<Comparator, Allocator>::PrefixOf(const char* key) const {
  if constexpr (skiplist_internal::HasPrefix<Comparator>) {
    return compare_.Prefix(key);
  } else {
    return kNoPrefix;
  }
}

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::FindSpliceByPrefix(const char* key,
                                                                uint64_t key_prefix, bool exact,
                                                                int top, Node** prev,
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

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::LoadCandidate(Search* s) const {
  if (s->level > 0) {
    s->cand_prefix = s->before->PrefixAt(s->level);  // before the pointer
    s->cand = s->before->Next(s->level);
    if (s->cand != nullptr) s->cand->PrefetchSlot(s->level);
  } else {
    s->cand = s->before->Next(0);
    if (s->cand != nullptr) __builtin_prefetch(s->cand, 0, 1);
  }
}

template <typename Comparator, typename Allocator>
inline bool SkipList<Comparator, Allocator>::SearchStep(Search* s) const {
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

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::FindSplicesTogether(const char* const* keys, size_t n,
                                                                 int top, bool exact,
                                                                 Node* (*prev)[kMaxHeight],
                                                                 Node* (*next)[kMaxHeight]) const {
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

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::LinkSerializedAt(Node* x, int level, Node* prev,
                                                              Node* next, uint64_t key_prefix) {
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

template <typename Comparator, typename Allocator>
inline int SkipList<Comparator, Allocator>::GroupHeights(const char* const* group, size_t count,
                                                         int* heights) {
  int height = 1;
  for (size_t i = 0; i < count; i++) {
    heights[i] = Node::FromKey(group[i])->StashedHeight();
    if (heights[i] > height) height = heights[i];
  }
  return height;
}

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::FindSpliceForInsert(const char* key, bool exact,
                                                                 int top, Node** prev,
                                                                 Node** next) const {
  if constexpr (skiplist_internal::HasPrefix<Comparator>) {
    FindSpliceByPrefix(key, compare_.Prefix(key), exact, top, prev, next);
  } else {
    FindSplice(key, top, prev, next);
  }
}

template <typename Comparator, typename Allocator>
inline void SkipList<Comparator, Allocator>::FindSplice(const char* key, int top, Node** prev,
                                                        Node** next) const {
  Node* before = head_;
  const Node* known_bigger = nullptr;
  for (int i = top - 1; i >= 0; i--) {
    FindSpliceForLevel(key, before, i, &prev[i], &next[i], known_bigger);
    before = prev[i];
    known_bigger = next[i];
  }
}

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
