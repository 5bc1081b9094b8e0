// Block encodings from tests/testdata/block.txt (see testutil/datadriven.h). The cases of
// the file share one block, replaced by `build` or `bytes` and damaged by `corrupt`:
//
//   build restart-interval=N    input: key:value lines, in order (no ':' in a key; \xNN
//                               escapes a byte).
//                               output: the block's layout, entry by entry, as decoded here
//                               from the bytes (not by Block), then the restart array.
//   bytes                       input: the block as hex, for blocks BlockBuilder never makes.
//   corrupt offset=N [xor=M]    XORs byte N (negative: from the end) with M (default 0xff).
//   truncate size=N             keeps the first N bytes.
//   iter [min-key-size=N]       input: one operation a line (first, last, next, prev,
//                               seek KEY, seek-for-prev KEY); output: after each, the entry
//                               "key:value" or "." when not Valid, and the status if not OK.
//                               The block's own status() comes first when not OK.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "shale/comparator.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "tests/testutil/datadriven.h"
#include "util/coding.h"

namespace shale {
namespace {

// The layout of a block BlockBuilder made: one line per entry, then the restart array.
std::string Layout(const std::string& block) {
  std::ostringstream out;
  out << "size " << block.size() << "\n";
  if (block.size() < 4) return out.str() + "too short\n";
  const uint32_t num_restarts = DecodeFixed32(block.data() + block.size() - 4);
  if (num_restarts > (block.size() - 4) / 4) return out.str() + "bad restart count\n";
  const size_t restart_offset = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
  Slice in(block.data(), restart_offset);
  std::string key;
  while (!in.empty()) {
    const size_t offset = restart_offset - in.size();
    uint32_t shared, non_shared, value_len;
    if (!GetVarint32(&in, &shared) || !GetVarint32(&in, &non_shared) ||
        !GetVarint32(&in, &value_len) || in.size() < static_cast<size_t>(non_shared) + value_len ||
        shared > key.size()) {
      return out.str() + "bad entry at " + std::to_string(offset) + "\n";
    }
    key.resize(shared);
    key.append(in.data(), non_shared);
    out << "@" << offset << " shared=" << shared << " non-shared=" << non_shared
        << " value-len=" << value_len << " " << Printable(key) << ":"
        << Printable(Slice(in.data() + non_shared, value_len)) << "\n";
    in.remove_prefix(non_shared + value_len);
  }
  out << "restarts at " << restart_offset << ":";
  for (uint32_t i = 0; i < num_restarts; i++) {
    out << " " << DecodeFixed32(block.data() + restart_offset + 4 * i);
  }
  out << " (" << num_restarts << ")\n";
  return out.str();
}

std::string Position(const InternalIterator& it) {
  std::string r = it.Valid() ? Printable(it.key()) + ":" + Printable(it.value()) : ".";
  if (!it.status().ok()) r += " " + it.status().ToString();
  return r + "\n";
}

std::string Iterate(const std::string& bytes, const DataDrivenCase& c) {
  Block block{BlockContents(Slice(bytes))};
  std::string out;
  if (!block.status().ok()) out += "block: " + block.status().ToString() + "\n";
  std::unique_ptr<InternalIterator> it(
      block.NewIterator(BytewiseComparator(), static_cast<size_t>(c.IntArg("min-key-size"))));
  for (const std::string& line : c.input) {
    std::istringstream in(line);
    std::string op, target;
    in >> op >> target;
    if (op == "first") {
      it->SeekToFirst();
    } else if (op == "last") {
      it->SeekToLast();
    } else if (op == "next") {
      it->Next();
    } else if (op == "prev") {
      it->Prev();
    } else if (op == "seek") {
      it->Seek(target);
    } else if (op == "seek-for-prev") {
      it->SeekForPrev(target);
    } else {
      return out + "unknown operation " + op + "\n";
    }
    out += line + ": " + Position(*it);
  }
  return out;
}

TEST(BlockDataTest, Encodings) {
  std::string block;  // the current block's bytes
  RunDataDriven("block.txt", [&block](const DataDrivenCase& c) -> std::string {
    if (c.command == "build") {
      BlockBuilder builder(static_cast<int>(c.IntArg("restart-interval", 16)));
      for (const std::string& line : c.input) {
        const size_t colon = line.find(':');
        std::string key, value;
        if (colon == std::string::npos || !Unescape(line.substr(0, colon), &key) ||
            !Unescape(line.substr(colon + 1), &value)) {
          return "bad entry " + line;
        }
        builder.Add(key, value);
      }
      const size_t estimate = builder.CurrentSizeEstimate();
      block = builder.Finish().ToString();
      std::string out = Layout(block);
      if (estimate != block.size()) out += "size estimate " + std::to_string(estimate) + "\n";
      return out;
    }
    if (c.command == "bytes") {
      std::string hex;
      for (const std::string& line : c.input) hex += line + " ";
      if (!ParseHex(hex, &block)) return "bad hex";
      return "size " + std::to_string(block.size());
    }
    if (c.command == "corrupt") {
      int64_t offset = c.IntArg("offset");
      if (offset < 0) offset += static_cast<int64_t>(block.size());
      if (offset < 0 || offset >= static_cast<int64_t>(block.size())) return "offset outside";
      block[offset] = static_cast<char>(block[offset] ^ c.IntArg("xor", 0xff));
      return HexDump(block);
    }
    if (c.command == "truncate") {
      const auto size = static_cast<size_t>(c.IntArg("size"));
      if (size > block.size()) return "size outside";
      block.resize(size);
      return HexDump(block);
    }
    if (c.command == "iter") return Iterate(block, c);
    return "unknown command " + c.command;
  });
}

}  // namespace
}  // namespace shale
