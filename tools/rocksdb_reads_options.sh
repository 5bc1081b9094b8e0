#!/bin/sh
# Shows that RocksDB reads an OPTIONS file shale wrote: RocksDB's own db_bench (Debian's
# rocksdb-tools, 7.8) opens a scratch DB with --options_file=<the file>, which goes through
# RocksDB's LoadOptionsFromFile (unknown option names refused), and the OPTIONS file RocksDB
# then writes must hold every value shale wrote, except the ones RocksDB sanitizes when it
# opens (a 0 that means "derive it": arena_block_size, max_compaction_bytes,
# delayed_write_rate) and create_if_missing (db_bench sets it).
#
# usage: tools/rocksdb_reads_options.sh SHALE_OPTIONS_FILE_OR_DB_DIR [ROCKSDB_DB_BENCH]
# Not part of CI: it needs RocksDB installed.
set -eu
src=${1:?usage: $0 SHALE_OPTIONS_FILE_OR_DB_DIR [ROCKSDB_DB_BENCH]}
rocks=${2:-/usr/bin/db_bench}
if [ -d "$src" ]; then
  src=$(ls "$src"/OPTIONS-* | grep -v dbtmp | sort | tail -1)
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! "$rocks" --options_file="$src" --benchmarks=fillseq --num=10 --db="$scratch/db" \
    >"$scratch/out" 2>&1; then
  cat "$scratch/out"
  echo "FAIL: RocksDB could not load $src"
  exit 1
fi
# section|name=value, one per line, with the column family argument dropped.
flatten() {
  awk -F= '/^\[/ { sec = $0; sub(/ ".*/, "", sec); sub(/^\[/, "", sec); sub(/\]$/, "", sec) }
           /=/ && !/^#/ { n = $1; gsub(/^ +/, "", n); v = substr($0, index($0, "=") + 1);
                          print sec "|" n "=" v }' "$1" | sort
}
flatten "$src" >"$scratch/shale"
flatten "$(ls "$scratch"/db/OPTIONS-* | sort | tail -1)" >"$scratch/rocksdb"
comm -23 "$scratch/shale" "$scratch/rocksdb" |
  grep -v -E '^(CFOptions\|(arena_block_size|max_compaction_bytes)=0|DBOptions\|(delayed_write_rate=0|create_if_missing=.*))$' \
    >"$scratch/lost" || true
if [ -s "$scratch/lost" ]; then
  echo "FAIL: RocksDB read these differently:"
  cat "$scratch/lost"
  exit 1
fi
echo "OK: RocksDB ($rocks) loaded $src; all $(wc -l <"$scratch/shale") values read back"
