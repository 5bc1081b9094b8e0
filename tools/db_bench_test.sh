#!/usr/bin/env bash
# Checks db_bench's contract: every supported benchmark prints a result line in RocksDB's
# format and, with --histogram=1, a Percentiles line; unknown flags fail; accepted-but-
# unused flags warn; unsupported benchmarks fail with a message.
#   usage: tools/db_bench_test.sh [PATH_TO_DB_BENCH]   (default: build/tools/db_bench)
# Exits 0 when every check passes; prints one line per failed check.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/tools/db_bench}
[ -x "$BIN" ] || { echo "no db_bench at $BIN" >&2; exit 2; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# The result line as seed_workloads.sh reads it: ops/sec after "micros/op".
ops_of() { awk '/ micros\/op /{for(i=1;i<=NF;i++) if($i=="ops/sec"){print $(i-1); exit}}' "$1"; }
p99_of() { awk '/^Percentiles:/{for(i=1;i<=NF;i++) if($i=="P99:"){print $(i+1); exit}}' "$1"; }
RESULT_RE='^[A-Za-z0-9]+ *: +[0-9]+\.[0-9]{3} micros/op [0-9]+ ops/sec [0-9]+\.[0-9]{3} seconds [0-9]+ operations;'

# Benchmarks that need data first run after fillseq in the same invocation.
for b in fillseq fillbatch fillrandom filluniquerandom fillsync fill100K overwrite readseq \
         readreverse readrandom readmissing seekrandom readwhilewriting \
         readrandomwriterandom updaterandom deleteseq deleterandom; do
  out=$DIR/$b.out
  case $b in fill*) list=$b ;; *) list=fillseq,$b ;; esac
  extra=""; [ "$b" = seekrandom ] && extra="--seek_nexts=4"
  if ! "$BIN" --db="$DIR/db" --benchmarks="$list" --num=1000 --histogram=1 --threads=2 \
       $( [ "$b" = filluniquerandom ] && echo --threads=1 ) $extra >"$out" 2>"$out.err"; then
    fail "$b exited non-zero: $(tail -1 "$out.err")"; continue
  fi
  grep -E "$RESULT_RE" "$out" | grep -q "^$b " || fail "$b: no result line in RocksDB's format"
  [ -n "$(ops_of "$out")" ] || fail "$b: seed_workloads' awk finds no ops/sec"
  [ -n "$(p99_of "$out")" ] || fail "$b: no Percentiles line with P99"
  grep -q '^Microseconds per ' "$out" || fail "$b: no 'Microseconds per' block"
done

# flush is a meta operation: a message, no result line.
"$BIN" --db="$DIR/db" --benchmarks=fillseq,flush,readrandom --num=1000 >"$DIR/flush.out" 2>/dev/null \
  && grep -q '^flush memtable$' "$DIR/flush.out" || fail "flush: no 'flush memtable'"

# The header's fields, as RocksDB prints them.
for field in 'Keys:       16 bytes each' 'Values:     100 bytes each (50 bytes after compression)' \
             'Entries:    1000' 'RawSize:' 'FileSize:' 'Compression: ' 'Perf Level: 1'; do
  grep -qF "$field" "$DIR/flush.out" || fail "header lacks '$field'"
done

# Repeat syntax.
"$BIN" --db="$DIR/db" --benchmarks='fillseq,readrandom[X2-W1]' --num=1000 >"$DIR/rep.out" 2>/dev/null \
  && grep -q '^readrandom \[MEDIAN 2 runs\]' "$DIR/rep.out" || fail "readrandom[X2-W1]: no MEDIAN line"

# Unknown flags are errors.
if "$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --no_such_flag=1 >/dev/null 2>"$DIR/unk.err"; then
  fail "unknown flag accepted"
fi
grep -q "no_such_flag" "$DIR/unk.err" || fail "unknown flag: error does not name it"

# An accepted-but-unused flag warns once, on stderr, and the run still succeeds.
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --cache_size=1048576 >/dev/null 2>"$DIR/warn.err" \
  || fail "--cache_size made the run fail"
[ "$(grep -c 'WARNING: --cache_size is accepted but not used by shale yet' "$DIR/warn.err")" = 1 ] \
  || fail "--cache_size: expected exactly one warning"
# ...but not when left at its default, nor for disable_auto_compactions=1 (what shale does).
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --disable_auto_compactions=1 >/dev/null 2>"$DIR/quiet.err"
grep -q 'WARNING: --' "$DIR/quiet.err" && fail "unexpected warning: $(grep 'WARNING: --' "$DIR/quiet.err")"

# Benchmarks shale cannot run yet fail, with a message, before running anything.
for b in compact mergerandom randomtransaction multireadrandom; do
  if "$BIN" --db="$DIR/db" --benchmarks="fillseq,$b" --num=10 >"$DIR/uns.out" 2>"$DIR/uns.err"; then
    fail "$b: accepted"
  fi
  grep -q "not supported by shale yet" "$DIR/uns.err" || fail "$b: no message"
  grep -q ' micros/op ' "$DIR/uns.out" && fail "$b: ran fillseq before refusing"
done
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --transaction_db=1 >/dev/null 2>&1 \
  && fail "--transaction_db=1 accepted"

if [ "$FAILS" -eq 0 ]; then echo "db_bench_test: all checks passed"; else echo "db_bench_test: $FAILS failed"; fi
[ "$FAILS" -eq 0 ]
