// KeyBuffer (util/key_buffer.h): keys up to kInline bytes stay inside the object, longer
// ones move to the heap and stay there; every key reads back whole, and SetInternalKey
// writes what AppendInternalKey writes.
#include "util/key_buffer.h"

#include <gtest/gtest.h>

#include <string>

#include "util/dbformat.h"

namespace shale {
namespace {

TEST(KeyBufferTest, ShortKeysStayInline) {
  KeyBuffer k;
  EXPECT_EQ(k.slice().ToString(), "");
  k.Assign("key000017");
  EXPECT_EQ(k.slice().ToString(), "key000017");
  EXPECT_FALSE(k.on_heap());
  const std::string longest(KeyBuffer::kInline, 'x');
  k.Assign(longest);
  EXPECT_EQ(k.slice().ToString(), longest);
  EXPECT_FALSE(k.on_heap());
  k.Assign(Slice());
  EXPECT_EQ(k.size(), 0u);
}

TEST(KeyBufferTest, LongKeysMoveToTheHeapAndStay) {
  KeyBuffer k;
  const std::string longer(KeyBuffer::kInline + 1, 'y');
  k.Assign(longer);
  EXPECT_TRUE(k.on_heap());
  EXPECT_EQ(k.slice().ToString(), longer);
  k.Assign("short");
  EXPECT_TRUE(k.on_heap());
  EXPECT_EQ(k.slice().ToString(), "short");
  // Growing again, well past twice the capacity.
  const std::string much_longer(10 * KeyBuffer::kInline, 'z');
  k.Assign(much_longer);
  EXPECT_EQ(k.slice().ToString(), much_longer);
}

TEST(KeyBufferTest, InternalKeyMatchesAppendInternalKey) {
  KeyBuffer k;
  for (const std::string& user_key :
       {std::string(), std::string("k"), std::string(KeyBuffer::kInline - 8, 'a'),
        std::string(KeyBuffer::kInline - 7, 'b'), std::string(300, 'c')}) {
    for (ValueType t : {kTypeValue, kTypeDeletion, kValueTypeForSeek}) {
      std::string expected;
      AppendInternalKey(&expected, user_key, 12345, t);
      k.SetInternalKey(user_key, 12345, t);
      EXPECT_EQ(k.slice().ToString(), expected) << user_key.size();
    }
  }
}

}  // namespace
}  // namespace shale
