#include "tests/testutil/datadriven.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace shale {

namespace {

bool RewriteRequested() {
  const char* v = getenv("SHALE_REWRITE_TESTDATA");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool IsBlank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// Splits "cmd a b=1 c=(x, y)" into the command and its arguments. Spaces inside
// parentheses belong to the value. False if a parenthesis is left open.
bool ParseCommandLine(const std::string& line, DataDrivenCase* c) {
  std::vector<std::string> words;
  std::string word;
  int depth = 0;
  for (char ch : line) {
    if (ch == '(') depth++;
    if (ch == ')') depth--;
    if ((ch == ' ' || ch == '\t') && depth == 0) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  if (!word.empty()) words.push_back(word);
  if (depth != 0 || words.empty()) return false;
  c->command = words[0];
  for (size_t i = 1; i < words.size(); i++) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    if (eq == std::string::npos) {
      c->args.push_back({w, {}});
      continue;
    }
    std::string value = w.substr(eq + 1);
    std::vector<std::string> values;
    if (value.size() >= 2 && value.front() == '(' && value.back() == ')') {
      std::istringstream in(value.substr(1, value.size() - 2));
      std::string v;
      while (std::getline(in, v, ',')) {
        const size_t b = v.find_first_not_of(' ');
        const size_t e = v.find_last_not_of(' ');
        values.push_back(b == std::string::npos ? "" : v.substr(b, e - b + 1));
      }
    } else {
      values.push_back(value);
    }
    c->args.push_back({w.substr(0, eq), values});
  }
  return true;
}

}  // namespace

bool DataDrivenCase::HasArg(const std::string& key) const {
  for (const auto& a : args) {
    if (a.first == key) return true;
  }
  return false;
}

std::string DataDrivenCase::Arg(const std::string& key, const std::string& default_value) const {
  for (const auto& a : args) {
    if (a.first == key) return a.second.empty() ? "" : a.second[0];
  }
  return default_value;
}

int64_t DataDrivenCase::IntArg(const std::string& key, int64_t default_value) const {
  if (!HasArg(key)) return default_value;
  const std::string v = Arg(key);
  char* end = nullptr;
  const long long n = strtoll(v.c_str(), &end, 0);
  if (v.empty() || *end != '\0') {
    ADD_FAILURE() << Where() << ": argument " << key << "=" << v << " is not an integer";
    return default_value;
  }
  return n;
}

std::vector<std::string> DataDrivenCase::Args(const std::string& key) const {
  for (const auto& a : args) {
    if (a.first == key) return a.second;
  }
  return {};
}

std::string DataDrivenCase::Where() const {
  std::string s = file + ":" + std::to_string(line) + ": " + command;
  for (const auto& [k, vs] : args) {
    s += " " + k;
    if (vs.size() == 1) s += "=" + vs[0];
    if (vs.size() > 1) {
      s += "=(";
      for (size_t i = 0; i < vs.size(); i++) s += (i ? "," : "") + vs[i];
      s += ")";
    }
  }
  return s;
}

std::string TestDataDir() { return SHALE_TESTDATA_DIR; }

void RunDataDriven(const std::string& relative_path,
                   const std::function<std::string(const DataDrivenCase&)>& run) {
  const std::string path = TestDataDir() + "/" + relative_path;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<std::string> lines = SplitLines(ss.str());
  const bool rewrite = RewriteRequested();
  std::string rewritten;  // the file with actual outputs, built as we go
  int cases = 0;
  size_t i = 0;
  while (i < lines.size()) {
    if (IsBlank(lines[i]) || lines[i][0] == '#') {
      rewritten += lines[i++] + "\n";
      continue;
    }
    DataDrivenCase c;
    c.file = relative_path;
    c.line = static_cast<int>(i) + 1;
    if (!ParseCommandLine(lines[i], &c)) {
      ADD_FAILURE_AT(path.c_str(), c.line) << "malformed command line: " << lines[i];
      return;
    }
    rewritten += lines[i++] + "\n";
    while (i < lines.size() && lines[i] != "----") {
      c.input.push_back(lines[i]);
      rewritten += lines[i++] + "\n";
    }
    if (i == lines.size()) {
      ADD_FAILURE_AT(path.c_str(), c.line) << "case without a ---- line: " << c.Where();
      return;
    }
    rewritten += lines[i++] + "\n";  // the separator
    while (i < lines.size() && !IsBlank(lines[i])) c.expected += lines[i++] + "\n";
    cases++;
    std::string actual = run(c);
    if (!actual.empty() && actual.back() != '\n') actual += '\n';
    if (rewrite) {
      for (const std::string& l : SplitLines(actual)) {
        // A blank line would end the case early when the file is read back.
        EXPECT_FALSE(IsBlank(l)) << c.Where() << ": output holds a blank line";
      }
      rewritten += actual;
    } else if (actual != c.expected) {
      ADD_FAILURE_AT(path.c_str(), c.line) << c.Where() << "\nexpected:\n"
                                           << c.expected << "actual:\n"
                                           << actual
                                           << "(SHALE_REWRITE_TESTDATA=1 rewrites the file)";
    }
  }
  EXPECT_GT(cases, 0) << path << " holds no case";
  if (rewrite) {
    std::ofstream out(path, std::ios::trunc);
    out << rewritten;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    fprintf(stderr, "rewrote %s (%d cases)\n", path.c_str(), cases);
  }
}

std::string HexDump(const Slice& bytes, size_t per_line) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i++) {
    if (i > 0) out += (per_line != 0 && i % per_line == 0) ? '\n' : ' ';
    const auto b = static_cast<unsigned char>(bytes[i]);
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

bool ParseHex(const std::string& text, std::string* bytes) {
  bytes->clear();
  int nibbles = 0;
  int acc = 0;
  for (char ch : text) {
    if (ch == ' ' || ch == '\n' || ch == '\t') continue;
    int v;
    if (ch >= '0' && ch <= '9') {
      v = ch - '0';
    } else if (ch >= 'a' && ch <= 'f') {
      v = ch - 'a' + 10;
    } else if (ch >= 'A' && ch <= 'F') {
      v = ch - 'A' + 10;
    } else {
      return false;
    }
    acc = acc * 16 + v;
    if (++nibbles % 2 == 0) {
      bytes->push_back(static_cast<char>(acc));
      acc = 0;
    }
  }
  return nibbles % 2 == 0;
}

std::string Printable(const Slice& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); i++) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += static_cast<char>(b);
    } else {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", b);
      out += buf;
    }
  }
  return out;
}

bool Unescape(const std::string& text, std::string* bytes) {
  bytes->clear();
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] != '\\') {
      bytes->push_back(text[i]);
      continue;
    }
    std::string b;
    if (i + 3 >= text.size() || text[i + 1] != 'x' || !ParseHex(text.substr(i + 2, 2), &b) ||
        b.size() != 1) {
      return false;
    }
    bytes->append(b);
    i += 3;
  }
  return true;
}

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case kTypeValue: return "SET";
    case kTypeDeletion: return "DEL";
    case kTypeSingleDeletion: return "SINGLEDEL";
    case kTypeMerge: return "MERGE";
    case kTypeRangeDeletion: return "RANGEDEL";
    default: return "?";
  }
}

bool ParseInternalKeyText(const std::string& text, std::string* internal_key) {
  const size_t hash = text.rfind('#');
  const size_t comma = text.find(',', hash == std::string::npos ? 0 : hash);
  if (hash == std::string::npos || comma == std::string::npos) return false;
  char* end = nullptr;
  const std::string seq_text = text.substr(hash + 1, comma - hash - 1);
  const unsigned long long seq = strtoull(seq_text.c_str(), &end, 10);
  if (seq_text.empty() || *end != '\0' || seq > kMaxSequenceNumber) return false;
  const std::string type_name = text.substr(comma + 1);
  for (ValueType t :
       {kTypeValue, kTypeDeletion, kTypeSingleDeletion, kTypeMerge, kTypeRangeDeletion}) {
    if (type_name == ValueTypeName(t)) {
      internal_key->clear();
      AppendInternalKey(internal_key, text.substr(0, hash), seq, t);
      return true;
    }
  }
  return false;
}

std::string InternalKeyText(const Slice& internal_key) {
  ParsedInternalKey p;
  if (!ParseInternalKey(internal_key, &p).ok()) return "<bad:" + Printable(internal_key) + ">";
  return Printable(p.user_key) + "#" + std::to_string(p.sequence) + "," + ValueTypeName(p.type);
}

}  // namespace shale
