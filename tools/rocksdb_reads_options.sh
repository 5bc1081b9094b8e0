#!/bin/sh
# Shows that RocksDB reads an OPTIONS file shale wrote, every column family of it: a small
# program built against Debian's RocksDB (librocksdb-dev, 7.8) calls RocksDB's own
# LoadOptionsFromFile on the file (unknown option names refused) and opens a scratch DB
# with the descriptors it returns, so that RocksDB writes an OPTIONS file of its own. That
# file must have the same families, in the same order, each with every value shale wrote,
# except the ones RocksDB sanitizes when it opens (a 0 that means "derive it":
# arena_block_size, max_compaction_bytes, delayed_write_rate) and the two the program sets
# (create_if_missing, create_missing_column_families).
#
# usage: tools/rocksdb_reads_options.sh SHALE_OPTIONS_FILE_OR_DB_DIR...
# A DB directory stands for its newest OPTIONS file. Files with several families come from
#   SHALE_KEEP_OPTIONS_DIR=DIR build/tests/db_column_family_options_test
# (one DIR/<test>.ini per test that keeps its file). CXX names the compiler (default c++).
# Not part of CI: it needs librocksdb-dev installed.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SHALE_OPTIONS_FILE_OR_DB_DIR..." >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cat >"$scratch/reads.cc" <<'EOF'
// argv[1]: an OPTIONS file; argv[2]: a directory for a new DB opened with its families.
#include <cstdio>
#include <vector>

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/options_util.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  rocksdb::ConfigOptions config;  // ignore_unknown_options = false: unknown names refused
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::Status s = rocksdb::LoadOptionsFromFile(config, argv[1], &db_options, &families);
  if (!s.ok()) {
    std::fprintf(stderr, "LoadOptionsFromFile: %s\n", s.ToString().c_str());
    return 1;
  }
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  s = rocksdb::DB::Open(db_options, argv[2], families, &handles, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "DB::Open: %s\n", s.ToString().c_str());
    return 1;
  }
  for (rocksdb::ColumnFamilyHandle* h : handles) s = db->DestroyColumnFamilyHandle(h);
  if (s.ok()) s = db->Close();
  delete db;
  if (!s.ok()) {
    std::fprintf(stderr, "Close: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%zu column families\n", families.size());
  return 0;
}
EOF
if ! ${CXX:-c++} -std=c++17 -O0 -o "$scratch/reads" "$scratch/reads.cc" -lrocksdb \
    >"$scratch/build" 2>&1; then
  cat "$scratch/build"
  echo "FAIL: could not build against RocksDB (is librocksdb-dev installed?)"
  exit 1
fi

# [section "argument"]|name=value, one per line. RocksDB spells the string-append operator
# with its delimiter; shale writes its name, which means the default delimiter ','.
flatten() {
  awk '/^[ \t]*#/ { next }
       /^[ \t]*\[/ { sec = $0; gsub(/^[ \t]+|[ \t]+$/, "", sec); next }
       /=/ { n = substr($0, 1, index($0, "=") - 1); gsub(/^[ \t]+|[ \t]+$/, "", n);
             print sec "|" n "=" substr($0, index($0, "=") + 1) }' "$1" |
    sed 's/|merge_operator={id=StringAppendOperator;delimiter=,;}$/|merge_operator=StringAppendOperator/' |
    sort
}
sections() { grep '^[[:space:]]*\[' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

status=0
n=0
for src in "$@"; do
  if [ -d "$src" ]; then
    src=$(ls "$src"/OPTIONS-* | grep -v dbtmp | sort | tail -1)
  fi
  n=$((n + 1))
  db="$scratch/db$n"
  if ! "$scratch/reads" "$src" "$db" >"$scratch/out" 2>&1; then
    cat "$scratch/out"
    echo "FAIL: RocksDB could not load $src"
    status=1
    continue
  fi
  theirs=$(ls "$db"/OPTIONS-* | sort | tail -1)
  # The same families in the same order (RocksDB writes the default first, as shale does).
  if ! sections "$src" | grep -v '^\[Version\]$' >"$scratch/ours.sections" ||
     ! sections "$theirs" | grep -v '^\[Version\]$' >"$scratch/theirs.sections" ||
     ! cmp -s "$scratch/ours.sections" "$scratch/theirs.sections"; then
    diff "$scratch/ours.sections" "$scratch/theirs.sections" || true
    echo "FAIL: RocksDB read other sections from $src"
    status=1
    continue
  fi
  flatten "$src" >"$scratch/shale"
  flatten "$theirs" >"$scratch/rocksdb"
  comm -23 "$scratch/shale" "$scratch/rocksdb" |
    grep -v -E '^(\[CFOptions ".*"\]\|(arena_block_size|max_compaction_bytes)=0|\[DBOptions\]\|(delayed_write_rate=0|create_if_missing=.*|create_missing_column_families=.*))$' \
      >"$scratch/lost" || true
  if [ -s "$scratch/lost" ]; then
    echo "FAIL: RocksDB read these differently from $src:"
    cat "$scratch/lost"
    status=1
    continue
  fi
  echo "OK: RocksDB loaded $src: $(cat "$scratch/out"); all $(wc -l <"$scratch/shale") values read back"
done
exit $status
