#!/usr/bin/env bash
# The write path's thread-scaling table: fillrandom with --threads 1..16, --batch_size 1
# and 8, the WAL on and off, in each write mode, for db_bench binary A and (optionally)
# B, the two alternating config by config. Prints a Markdown table of ops/sec (keys
# written per second) and A/B. Every config writes TOTAL keys in all (split between the
# threads) into a fresh DB with compactions and stalls off, so the write path is measured.
#
# usage: tools/write_scaling.sh A_DB_BENCH [B_DB_BENCH]
# Environment: TOTAL (keys per config; default 400000), THREADS (default "1 2 4 8 16"),
#   BENCH_DIR (scratch directory; default /tmp).
set -euo pipefail
A=${1:?usage: write_scaling.sh A_DB_BENCH [B_DB_BENCH]}
B=${2:-}
TOTAL=${TOTAL:-400000}
THREADS=${THREADS:-"1 2 4 8 16"}
DIR=$(mktemp -d "${BENCH_DIR:-/tmp}/write_scaling.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

declare -A MODES=(
  [serial]="--allow_concurrent_memtable_write=0 --enable_pipelined_write=0"
  [parallel]="--enable_pipelined_write=0"
  [pipelined]="--enable_pipelined_write=1"
  [unordered]="--enable_pipelined_write=0 --unordered_write=1"
)
COMMON="--benchmarks=fillrandom --num=1000000 --key_size=16 --value_size=100 \
--max_write_buffer_number=16 --max_background_jobs=4 --disable_auto_compactions=1 \
--level0_file_num_compaction_trigger=99999 --level0_slowdown_writes_trigger=99999 \
--level0_stop_writes_trigger=99999"

# ops/sec of one run, or "-" if it failed
run() {
  local bin=$1 flags=$2
  rm -rf "$DIR/db"
  # shellcheck disable=SC2086
  "$bin" --db="$DIR/db" $COMMON $flags 2>/dev/null |
    awk '/^fillrandom .* ops\/sec/{for(i=1;i<=NF;i++) if($i=="ops/sec"){print $(i-1); f=1}} END{if(!f) print "-"}'
}

echo "| threads | batch | WAL | mode | A ops/sec |${B:+ B ops/sec | A/B |}"
echo "|---:|---:|---|---|---:|${B:+---:|---:|}"
for wal in 1 0; do
  for batch in 1 8; do
    for mode in serial parallel pipelined unordered; do
      for t in $THREADS; do
        flags="--threads=$t --batch_size=$batch --writes=$((TOTAL / t)) --disable_wal=$((1 - wal)) ${MODES[$mode]}"
        a=$(run "$A" "$flags")
        row="| $t | $batch | $([ "$wal" = 1 ] && echo on || echo off) | $mode | $a |"
        if [ -n "$B" ]; then
          b=$(run "$B" "$flags")
          ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "-"}')
          row="$row $b | $ratio |"
        fi
        echo "$row"
      done
    done
  done
done
