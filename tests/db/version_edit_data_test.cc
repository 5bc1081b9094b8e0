// VersionEdit encodings from tests/testdata/version_edit.txt (see testutil/datadriven.h).
//
//   encode            input: one field per line, in the spelling `decode` prints:
//                       comparator NAME | log N | prev-log N | next-file N | last-seq N |
//                       cf N | delete LEVEL NUMBER |
//                       add LEVEL NUMBER SIZE SMALLEST LARGEST SEQ..SEQ ENTRIES DELETIONS
//                     output: the encoding in hex, then its decode.
//   decode            input: hex bytes. output: OK and the fields, one a line, or the
//                     Status.
//
// An encoding is also decoded and encoded again, and must come back byte for byte.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "db/version_edit.h"
#include "tests/testutil/datadriven.h"

namespace shale {
namespace {

// The fields of an edit, one a line, as `encode` reads them.
std::string Describe(const VersionEdit& e) {
  std::ostringstream out;
  if (e.has_comparator()) out << "comparator " << Printable(e.comparator()) << "\n";
  if (e.has_log_number()) out << "log " << e.log_number() << "\n";
  if (e.has_prev_log_number()) out << "prev-log " << e.prev_log_number() << "\n";
  if (e.has_next_file_number()) out << "next-file " << e.next_file_number() << "\n";
  if (e.has_last_sequence()) out << "last-seq " << e.last_sequence() << "\n";
  if (e.column_family() != 0) out << "cf " << e.column_family() << "\n";
  for (const auto& [level, number] : e.deleted_files()) {
    out << "delete " << level << " " << number << "\n";
  }
  for (const auto& [level, f] : e.new_files()) {
    out << "add " << level << " " << f.number << " " << f.file_size << " "
        << InternalKeyText(f.smallest.Encode()) << " " << InternalKeyText(f.largest.Encode())
        << " " << f.smallest_seqno << ".." << f.largest_seqno << " " << f.num_entries << " "
        << f.num_deletions << "\n";
  }
  return out.str();
}

// Applies one `encode` input line to *e; a message on a malformed line.
std::string ApplyField(const std::string& line, VersionEdit* e) {
  std::istringstream in(line);
  std::string field;
  in >> field;
  if (field == "comparator") {
    std::string name;
    in >> name;
    e->SetComparatorName(name);
    return "";
  }
  if (field == "add") {
    int level;
    FileMetaData f;
    std::string smallest, largest, seqs;
    in >> level >> f.number >> f.file_size >> smallest >> largest >> seqs >> f.num_entries >>
        f.num_deletions;
    std::string s, l;
    const size_t dots = seqs.find("..");
    if (in.fail() || !ParseInternalKeyText(smallest, &s) || !ParseInternalKeyText(largest, &l) ||
        dots == std::string::npos) {
      return "bad add line: " + line;
    }
    f.smallest.DecodeFrom(s);
    f.largest.DecodeFrom(l);
    f.smallest_seqno = std::stoull(seqs.substr(0, dots));
    f.largest_seqno = std::stoull(seqs.substr(dots + 2));
    e->AddFile(level, f);
    return "";
  }
  uint64_t a = 0, b = 0;
  in >> a;
  if (in.fail()) return "bad line: " + line;
  if (field == "log") {
    e->SetLogNumber(a);
  } else if (field == "prev-log") {
    e->SetPrevLogNumber(a);
  } else if (field == "next-file") {
    e->SetNextFile(a);
  } else if (field == "last-seq") {
    e->SetLastSequence(a);
  } else if (field == "cf") {
    e->SetColumnFamily(static_cast<uint32_t>(a));
  } else if (field == "delete" && (in >> b)) {
    e->DeleteFile(static_cast<int>(a), b);
  } else {
    return "bad line: " + line;
  }
  return "";
}

std::string Decode(const std::string& bytes) {
  VersionEdit e;
  Status s = e.DecodeFrom(bytes);
  if (!s.ok()) return s.ToString() + "\n";
  std::string again;
  e.EncodeTo(&again);
  return "OK\n" + Describe(e) + (again == bytes ? "" : "re-encoded differently: " + HexDump(again, 0) + "\n");
}

TEST(VersionEditDataTest, Encodings) {
  RunDataDriven("version_edit.txt", [](const DataDrivenCase& c) -> std::string {
    if (c.command == "encode") {
      VersionEdit e;
      for (const std::string& line : c.input) {
        const std::string err = ApplyField(line, &e);
        if (!err.empty()) return err;
      }
      std::string bytes;
      e.EncodeTo(&bytes);
      std::string out = "encoded " + std::to_string(bytes.size()) + " bytes\n";
      if (!bytes.empty()) out += HexDump(bytes) + "\n";
      return out + "decoded: " + Decode(bytes);
    }
    if (c.command == "decode") {
      std::string hex;
      for (const std::string& line : c.input) hex += line + " ";
      std::string bytes;
      if (!ParseHex(hex, &bytes)) return "bad hex";
      return Decode(bytes);
    }
    return "unknown command " + c.command;
  });
}

}  // namespace
}  // namespace shale
