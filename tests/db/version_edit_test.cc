#include "db/version_edit.h"

#include <gtest/gtest.h>

#include "util/coding.h"

namespace shale {
namespace {

FileMetaData MakeFile(uint64_t number, const std::string& smallest, const std::string& largest,
                      SequenceNumber s0, SequenceNumber s1) {
  FileMetaData f;
  f.number = number;
  f.file_size = number * 1000 + 17;
  f.smallest = InternalKey(smallest, s0, kTypeValue);
  f.largest = InternalKey(largest, s1, kTypeDeletion);
  f.smallest_seqno = s0;
  f.largest_seqno = s1;
  f.num_entries = number * 3;
  f.num_deletions = number;
  return f;
}

void ExpectSameFile(const FileMetaData& a, const FileMetaData& b) {
  EXPECT_EQ(a.number, b.number);
  EXPECT_EQ(a.file_size, b.file_size);
  EXPECT_EQ(a.smallest.Encode(), b.smallest.Encode());
  EXPECT_EQ(a.largest.Encode(), b.largest.Encode());
  EXPECT_EQ(a.smallest_seqno, b.smallest_seqno);
  EXPECT_EQ(a.largest_seqno, b.largest_seqno);
  EXPECT_EQ(a.num_entries, b.num_entries);
  EXPECT_EQ(a.num_deletions, b.num_deletions);
}

VersionEdit FullEdit() {
  VersionEdit edit;
  edit.SetComparatorName("shale.BytewiseComparator");
  edit.SetLogNumber(17);
  edit.SetPrevLogNumber(16);
  edit.SetMinLogNumberToKeep(12);
  edit.SetNextFile(1ull << 40);
  edit.SetLastSequence(kMaxSequenceNumber);
  edit.SetColumnFamily(0);
  for (int i = 0; i < 4; i++) {
    edit.AddFile(i, MakeFile(100 + i, std::string("a").append(std::to_string(i)),
                             std::string("z").append(std::to_string(i)), 5 + i, (1ull << 50) + i));
    edit.DeleteFile(i + 1, 300 + i);
  }
  edit.AddFile(6, MakeFile(7, std::string("\0\xff", 2), std::string("\xff\xff\xff", 3), 0, 0));
  return edit;
}

TEST(VersionEditTest, RoundTrip) {
  VersionEdit edit = FullEdit();
  std::string encoded;
  edit.EncodeTo(&encoded);

  VersionEdit parsed;
  ASSERT_TRUE(parsed.DecodeFrom(encoded).ok());
  EXPECT_TRUE(parsed.has_comparator());
  EXPECT_EQ("shale.BytewiseComparator", parsed.comparator());
  EXPECT_EQ(17u, parsed.log_number());
  EXPECT_EQ(16u, parsed.prev_log_number());
  EXPECT_TRUE(parsed.has_min_log_number_to_keep());
  EXPECT_EQ(12u, parsed.min_log_number_to_keep());
  EXPECT_EQ(1ull << 40, parsed.next_file_number());
  EXPECT_EQ(kMaxSequenceNumber, parsed.last_sequence());
  EXPECT_EQ(0u, parsed.column_family());
  ASSERT_EQ(edit.new_files().size(), parsed.new_files().size());
  for (size_t i = 0; i < edit.new_files().size(); i++) {
    EXPECT_EQ(edit.new_files()[i].first, parsed.new_files()[i].first);
    ExpectSameFile(edit.new_files()[i].second, parsed.new_files()[i].second);
  }
  EXPECT_EQ(edit.deleted_files(), parsed.deleted_files());

  // Encoding is deterministic: re-encoding the parsed edit gives the same bytes.
  std::string again;
  parsed.EncodeTo(&again);
  EXPECT_EQ(encoded, again);
  EXPECT_NE(std::string::npos, parsed.DebugString().find("AddFile: 6 7"));
}

TEST(VersionEditTest, EmptyEditAndColumnFamily) {
  VersionEdit empty;
  std::string encoded;
  empty.EncodeTo(&encoded);
  EXPECT_TRUE(encoded.empty());
  VersionEdit parsed;
  ASSERT_TRUE(parsed.DecodeFrom(encoded).ok());
  EXPECT_FALSE(parsed.has_comparator());
  EXPECT_FALSE(parsed.has_log_number());
  EXPECT_FALSE(parsed.has_prev_log_number());
  EXPECT_FALSE(parsed.has_next_file_number());
  EXPECT_FALSE(parsed.has_last_sequence());

  VersionEdit cf;
  cf.SetColumnFamily(9);
  cf.DeleteFile(2, 5);
  encoded.clear();
  cf.EncodeTo(&encoded);
  ASSERT_TRUE(parsed.DecodeFrom(encoded).ok());
  EXPECT_EQ(9u, parsed.column_family());
  ASSERT_EQ(1u, parsed.deleted_files().size());
}

TEST(VersionEditTest, DecodeClearsPreviousState) {
  VersionEdit edit = FullEdit();
  VersionEdit small;
  small.SetLogNumber(3);
  std::string encoded;
  small.EncodeTo(&encoded);
  ASSERT_TRUE(edit.DecodeFrom(encoded).ok());
  EXPECT_FALSE(edit.has_comparator());
  EXPECT_TRUE(edit.new_files().empty());
  EXPECT_TRUE(edit.deleted_files().empty());
  EXPECT_EQ(3u, edit.log_number());
}

TEST(VersionEditTest, EveryTruncationIsCorruptionOrAPrefix) {
  std::string encoded;
  FullEdit().EncodeTo(&encoded);
  // Every proper prefix either ends exactly on a field boundary (and decodes) or is
  // Corruption; it never crashes or reads past the end (ASan checks that).
  int corrupt = 0;
  for (size_t n = 0; n < encoded.size(); n++) {
    VersionEdit parsed;
    Status s = parsed.DecodeFrom(Slice(encoded.data(), n));
    if (!s.ok()) {
      EXPECT_TRUE(s.IsCorruption()) << n << " " << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find("VersionEdit")) << s.ToString();
      corrupt++;
    }
  }
  EXPECT_GT(corrupt, static_cast<int>(encoded.size()) / 2);
}

TEST(VersionEditTest, MalformedInputIsCorruption) {
  auto decode = [](const std::string& bytes) {
    VersionEdit e;
    return e.DecodeFrom(bytes);
  };
  // Unknown tag without the safe-to-ignore bit.
  std::string s;
  PutVarint32(&s, 77);
  PutVarint64(&s, 1);
  EXPECT_TRUE(decode(s).IsCorruption());

  // A new file whose smallest key is too short to be an internal key.
  s.clear();
  PutVarint32(&s, 7);
  PutVarint32(&s, 1);    // level
  PutVarint64(&s, 5);    // number
  PutVarint64(&s, 100);  // size
  PutLengthPrefixedSlice(&s, "abc");
  PutLengthPrefixedSlice(&s, InternalKey("z", 1, kTypeValue).Encode());
  PutVarint64(&s, 1);
  PutVarint64(&s, 1);
  PutVarint64(&s, 0);
  PutVarint64(&s, 0);
  PutVarint32(&s, 0);
  Status st = decode(s);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_NE(std::string::npos, st.ToString().find("key range")) << st.ToString();

  // Sequence range upside down.
  FileMetaData f = MakeFile(5, "a", "b", 10, 20);
  f.smallest_seqno = 30;
  VersionEdit e;
  e.AddFile(1, f);
  s.clear();
  e.EncodeTo(&s);
  EXPECT_TRUE(decode(s).IsCorruption());

  // Absurd level.
  s.clear();
  PutVarint32(&s, 6);
  PutVarint32(&s, 5000);
  PutVarint64(&s, 1);
  EXPECT_TRUE(decode(s).IsCorruption());

  // A varint that never ends.
  s = std::string(12, '\xff');
  EXPECT_TRUE(decode(s).IsCorruption());
}

TEST(VersionEditTest, SafeToIgnoreTagsAreSkipped) {
  VersionEdit e;
  e.SetLogNumber(4);
  std::string s;
  e.EncodeTo(&s);
  PutVarint32(&s, VersionEdit::kTagSafeToIgnore | 5);
  PutLengthPrefixedSlice(&s, "some future field");
  PutVarint32(&s, 3);  // next file number after it
  PutVarint64(&s, 99);
  VersionEdit parsed;
  ASSERT_TRUE(parsed.DecodeFrom(s).ok());
  EXPECT_EQ(4u, parsed.log_number());
  EXPECT_EQ(99u, parsed.next_file_number());

  // A safe-to-ignore tag with a truncated payload is still Corruption.
  std::string bad;
  PutVarint32(&bad, VersionEdit::kTagSafeToIgnore | 5);
  PutVarint32(&bad, 10);
  bad += "abc";
  EXPECT_TRUE(parsed.DecodeFrom(bad).IsCorruption());
}

TEST(VersionEditTest, RandomBytesNeverCrash) {
  std::string encoded;
  FullEdit().EncodeTo(&encoded);
  uint64_t state = 88172645463325252ull;
  for (int iter = 0; iter < 2000; iter++) {
    std::string bytes = encoded;
    for (int k = 0; k < 3; k++) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      bytes[state % bytes.size()] ^= static_cast<char>(1 + (state >> 32) % 255);
    }
    VersionEdit parsed;
    Status s = parsed.DecodeFrom(bytes);
    EXPECT_TRUE(s.ok() || s.IsCorruption());
  }
}

}  // namespace
}  // namespace shale
