#!/bin/bash
# Thread scaling of the two transactional reference workloads, as issue 15 asks: txn_2t
# (TransactionDB, WRITE_COMMITTED) and txn_unordered_2t (--unordered_write: WRITE_PREPARED
# with two write queues and no concurrency control), each with ../shared/bench/
# seed_workloads.sh's flags but --threads=T for T = 1, 2, 4, 8, 16, and 600,000 writes in
# all (600000/T per thread), so that every row does the same work.
#
# usage: tools/txn_scaling.sh A_DB_BENCH B_DB_BENCH
#   Runs A then B, REPEAT rounds (default 3), on a fresh directory under ${BENCH_DIR:-/tmp},
#   and prints per policy and thread count the median ops/sec of each and their ratio.
set -u
A=${1:?usage: txn_scaling.sh A_DB_BENCH B_DB_BENCH}
B=${2:?usage: txn_scaling.sh A_DB_BENCH B_DB_BENCH}
REPEAT=${REPEAT:-3}
DIR=${BENCH_DIR:-/tmp}/txn_scaling.$$
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
N=1000000

# ops/sec of one run: binary, threads, extra flags
run() {
  rm -rf "$DIR/db"
  "$1" --db="$DIR/db" --benchmarks=fillrandom --threads="$2" --num=$N --writes=$((600000 / $2)) \
    --batch_size=8 --max_write_buffer_number=16 --max_background_jobs=4 \
    --level0_file_num_compaction_trigger=99999 --level0_slowdown_writes_trigger=99999 \
    --level0_stop_writes_trigger=99999 --enable_pipelined_write=false --disable_auto_compactions=1 \
    --transaction_db=1 $3 2>&1 |
    awk '/ micros\/op /{for(i=1;i<=NF;i++) if($i=="ops/sec"){print $(i-1); exit}}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }

printf '%-17s %3s %12s %12s %6s\n' workload T A_ops/sec B_ops/sec A/B
for T in 1 2 4 8 16; do
  for w in txn_2t txn_unordered_2t; do
    extra=""
    [ $w = txn_unordered_2t ] && extra="--unordered_write=1"
    as=(); bs=()
    for ((r = 0; r < REPEAT; r++)); do
      as+=("$(run "$A" "$T" "$extra")")
      bs+=("$(run "$B" "$T" "$extra")")
    done
    a=$(median "${as[@]}"); b=$(median "${bs[@]}")
    printf '%-17s %3s %12s %12s %6s\n' $w "$T" "$a" "$b" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN{ if (a+0>0 && b+0>0) printf "%.2f", a/b; else print "-" }')"
  done
done
