#!/usr/bin/env bash
# Checks tools/benchmark.sh on a tiny run: every job gives a row with the summary columns
# filled from db_bench's output, a job db_bench refuses (here a stand-in db_bench that
# refuses everything, as ours refuses a benchmark it lacks) gives an empty row and a
# non-zero exit, and --compare (here against the same
# binary, so no RocksDB is needed) adds a ratio row per job. Charts are checked only when
# gnuplot is already installed. Never asserts a speed.
#   usage: tools/benchmark_test.sh [PATH_TO_DB_BENCH]   (default: build/tools/db_bench)
. "$(dirname "$0")/test_common.sh"
export DB_BENCH=$BIN NUM_KEYS=10000 NUM_THREADS=2 WRITE_BUFFER_SIZE_MB=1 INSTALL_GNUPLOT=0

# column N of the report row for JOB and BINARY (a prefix of the binary's name).
col() {
  awk -F'\t' -v job="$1" -v bin="$2" -v n="$3" \
    '$1 == job && index($2, bin) == 1 { print $n; exit }' "$4"
}

jobs=(bulkload fillseq overwrite readwhilewriting readrandom updaterandom mergerandom)
DB_DIR=$DIR/db OUTPUT_DIR=$DIR/out "$ROOT/tools/benchmark.sh" "${jobs[@]}" >"$DIR/table" 2>"$DIR/err" \
  || fail "benchmark.sh exited non-zero: $(tail -3 "$DIR/err")"
report=$DIR/out/report.tsv
[ -s "$report" ] || fail "no report.tsv"
want='job	binary	ops/sec	MB/s	size GB	L0 GB	sum GB	write-amp	write MB/s	usec/op	p50	p75	p99	p99.9	p99.99	stall secs	stall %	du -s -k'
[ "$(head -1 "$report")" = "$want" ] || fail "report header: $(head -1 "$report")"
for job in "${jobs[@]}"; do
  # ops/sec, size GB, usec/op, p50..p99.99, stall secs, stall %, du: numbers for every job.
  for n in 3 5 10 11 12 13 14 15 16 17 18; do
    v=$(col "$job" shale "$n" "$report")
    [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "$job: column $n is '$v'"
  done
done
# Jobs that write have MB/s; write-amp and write MB/s need a flush before the stats were
# taken, which a tiny run leaves to timing: at least one job must have them.
for job in fillseq overwrite updaterandom mergerandom; do
  v=$(col "$job" shale 4 "$report")
  [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "$job: MB/s is '$v'"
done
awk -F'\t' 'NR > 1 && $8 ~ /^[0-9.]+$/ && $9 ~ /^[0-9.]+$/ { ok = 1 } END { exit !ok }' "$report" \
  || fail "no job has write-amp and write MB/s"
grep -q '^readrandom ' "$DIR/table" || fail "no readable table on stdout"

# A refused job: an empty row, a message, exit non-zero.
refuser=$DIR/refusing_db_bench
printf '#!/bin/sh\necho "benchmark is not supported by shale yet: it needs X" >&2\nexit 1\n' >"$refuser"
chmod +x "$refuser"
if DB_BENCH=$refuser DB_DIR=$DIR/db OUTPUT_DIR=$DIR/out2 "$ROOT/tools/benchmark.sh" mergerandom \
     >/dev/null 2>"$DIR/err2"; then
  fail "mergerandom: exit 0 although db_bench refused it"
fi
grep -q "not supported by shale yet" "$DIR/err2" || fail "mergerandom: db_bench's reason not shown"
grep -q '^mergerandom' "$DIR/out2/report.tsv" || fail "refused mergerandom: no row"
[ -z "$(col mergerandom refusing 3 "$DIR/out2/report.tsv")" ] || fail "mergerandom: ops/sec filled in"

# Comparison mode: both rows and a ratio row per job.
OTHER_DB_BENCH=$BIN DB_DIR=$DIR/db3 OUTPUT_DIR=$DIR/out3 REPORT_INTERVAL_SECONDS=1 \
  "$ROOT/tools/benchmark.sh" --compare fillseq readrandom >/dev/null 2>"$DIR/err3" \
  || fail "--compare exited non-zero: $(tail -3 "$DIR/err3")"
for job in fillseq readrandom; do
  [ "$(awk -F'\t' -v j=$job '$1 == j' "$DIR/out3/report.tsv" | wc -l)" = 3 ] \
    || fail "--compare $job: expected 3 rows"
  v=$(col "$job" ratio 3 "$DIR/out3/report.tsv")
  [[ "$v" =~ ^[0-9]+\.[0-9]{2}$ ]] || fail "--compare $job: ratio of ops/sec is '$v'"
done
if command -v gnuplot >/dev/null; then
  for f in fillseq.latency.png readrandom.latency.png; do
    [ -s "$DIR/out3/$f" ] || fail "no chart $f"
  done
fi

finish benchmark_test
