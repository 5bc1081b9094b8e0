#!/bin/sh
# Memtable memory of many column families under a budget (db_write_buffer_size), shale's
# and RocksDB's: builds tools/family_memory.cc against Debian's RocksDB (librocksdb-dev)
# and runs it and shale's build alternately, ROUNDS times, on fresh directories. Each run
# prints the largest and mean cur-size-all-mem-tables sample (summed over the families)
# against the budget. Memory behaviour only: Debian's RocksDB is not the speed yardstick.
#
# usage: tools/family_memory.sh SHALE_FAMILY_MEMORY [families budget_mb write_buffer_mb
#                               seconds threads value_size]
# Environment: ROUNDS (default 2), CXX (default c++), BENCH_DIR (default /tmp).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SHALE_FAMILY_MEMORY [args...]" >&2; exit 2; }
shale=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${BENCH_DIR:-/tmp}/family_memory.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"${CXX:-c++}" -std=c++17 -O2 -DFAMILY_MEMORY_ROCKSDB "$here/family_memory.cc" \
  -o "$scratch/family_memory_rocksdb" -lrocksdb -lpthread
for round in $(seq 1 "${ROUNDS:-2}"); do
  for bin in "$shale" "$scratch/family_memory_rocksdb"; do
    rm -rf "$scratch/db"
    "$bin" "$scratch/db" "$@"
  done
done
