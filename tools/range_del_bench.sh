#!/bin/bash
# Issue 39's speed targets for range deletions, with RocksDB's own db_bench flags, so that
# one command line runs either binary:
#   fill_tomb    fillrandom of N keys that also writes a range tombstone of W keys every
#                N/T writes (--writes_per_range_tombstone, --range_tombstone_width,
#                --max_num_range_tombstones): T tombstones over T*W keys (1% by default)
#   read_tomb / seek_tomb           readrandom / seekrandom on that DB as the fill left it
#   read_tomb_c / seek_tomb_c       the same after a full compaction (the compact job)
#   read_plain_c / seek_plain_c     the same DB filled without tombstones, compacted: the
#                                   deleted data's cost once compacted should be none
# The two binaries alternate job by job, each on its own fresh DB.
#
# usage: tools/range_del_bench.sh A_DB_BENCH B_DB_BENCH
#   REPEAT rounds (default 3), medians printed; N keys (default 1000000), T tombstones
#   (default 1000), W width (default 10), SECS per read job (default 20), BENCH_DIR
#   (default /tmp).
set -u
A=${1:?usage: range_del_bench.sh A_DB_BENCH B_DB_BENCH}
B=${2:?usage: range_del_bench.sh A_DB_BENCH B_DB_BENCH}
REPEAT=${REPEAT:-3}
N=${N:-1000000}
T=${T:-1000}
W=${W:-10}
SECS=${SECS:-20}
DIR=${BENCH_DIR:-/tmp}/range_del_bench.$$
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT

COMMON="--num=$N --key_size=20 --value_size=100 --compression_type=none --cache_size=67108864
  --bloom_bits=10 --seed=1 --statistics=0"
READ="--use_existing_db=1 --threads=2 --duration=$SECS --seek_nexts=10"

# ops/sec of the first result line of one db_bench run: binary, db, flags...
ops() {
  local bin=$1 db=$2
  shift 2
  "$bin" --db="$db" $COMMON "$@" 2>&1 |
    awk '/ micros\/op /{for(i=1;i<=NF;i++) if($i=="ops/sec"){print $(i-1); exit}}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }

jobs="fill_tomb read_tomb seek_tomb read_tomb_c seek_tomb_c read_plain_c seek_plain_c"
declare -A res
for ((r = 0; r < REPEAT; r++)); do
  for side in A B; do
    bin=${!side}
    db="$DIR/$side"
    rm -rf "$db" "$db.plain"
    res[$side.fill_tomb]+=" $(ops "$bin" "$db" --benchmarks=fillrandom \
      --writes_per_range_tombstone=$((N / T)) --range_tombstone_width="$W" \
      --max_num_range_tombstones="$T")"
    res[$side.read_tomb]+=" $(ops "$bin" "$db" --benchmarks=readrandom $READ)"
    res[$side.seek_tomb]+=" $(ops "$bin" "$db" --benchmarks=seekrandom $READ)"
    ops "$bin" "$db" --benchmarks=compact --use_existing_db=1 >/dev/null
    res[$side.read_tomb_c]+=" $(ops "$bin" "$db" --benchmarks=readrandom $READ)"
    res[$side.seek_tomb_c]+=" $(ops "$bin" "$db" --benchmarks=seekrandom $READ)"
    rm -rf "$db"
    ops "$bin" "$db.plain" --benchmarks=fillrandom,compact >/dev/null
    res[$side.read_plain_c]+=" $(ops "$bin" "$db.plain" --benchmarks=readrandom $READ)"
    res[$side.seek_plain_c]+=" $(ops "$bin" "$db.plain" --benchmarks=seekrandom $READ)"
    rm -rf "$db.plain"
  done
done

printf '%-14s %12s %12s %6s\n' job A_ops/sec B_ops/sec A/B
for j in $jobs; do
  a=$(median ${res[A.$j]})
  b=$(median ${res[B.$j]})
  printf '%-14s %12s %12s %6s\n' "$j" "$a" "$b" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN{ if (a+0>0 && b+0>0) printf "%.2f", a/b; else print "-" }')"
done
