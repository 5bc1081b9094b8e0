#!/usr/bin/env bash
# Checks db_bench's contract: every supported benchmark prints a result line in RocksDB's
# format and, with --histogram=1, a Percentiles line; the merge benchmarks count and
# report as RocksDB's, and need a known --merge_operator; the meta benchmarks print what
# RocksDB's print; --statistics, interval and report-file output parse; every flag of
# issue 5 is accepted, unknown flags fail, accepted-but-unused (deprecated) flags warn;
# unsupported benchmarks fail with a message; --transaction_db runs the writes through a
# TransactionDB, and randomtransaction's verification passes and can fail;
# --num_column_families spreads keys over families as RocksDB's; the write loop's range
# deletions leave RocksDB's keys. Never asserts a speed.
#   usage: tools/db_bench_test.sh [PATH_TO_DB_BENCH]   (default: build/tools/db_bench)
# Exits 0 when every check passes; prints one line per failed check.
. "$(dirname "$0")/test_common.sh"

# The result line as seed_workloads.sh reads it: ops/sec after "micros/op".
ops_of() { awk '/ micros\/op /{for(i=1;i<=NF;i++) if($i=="ops/sec"){print $(i-1); exit}}' "$1"; }
p99_of() { awk '/^Percentiles:/{for(i=1;i<=NF;i++) if($i=="P99:"){print $(i+1); exit}}' "$1"; }
RESULT_RE='^[A-Za-z0-9]+ *: +[0-9]+\.[0-9]{3} micros/op [0-9]+ ops/sec [0-9]+\.[0-9]{3} seconds [0-9]+ operations;'

# Benchmarks that need data first run after fillseq in the same invocation.
for b in fillseq fillbatch fillrandom filluniquerandom fillsync fill100K overwrite readseq \
         readreverse readrandom readrandomfast readmissing seekrandom readwhilewriting \
         readrandomwriterandom updaterandom deleteseq deleterandom compact compress \
         uncompress ingestexternalfile backup restore; do
  out=$DIR/$b.out
  case $b in fill*|compress|uncompress) list=$b ;; restore) list=fillseq,backup,$b ;; *) list=fillseq,$b ;; esac
  extra=(--threads=2)
  case $b in
    seekrandom) extra+=(--seek_nexts=4) ;;
    filluniquerandom|compress|uncompress) extra=(--threads=1) ;;
    compact) extra+=(--write_buffer_size=65536) ;;
    ingestexternalfile)
      extra=(--threads=1 --ingest_external_file_batch_size=2 --ingest_external_file_num_batches=3) ;;
    backup|restore) extra=(--threads=1 --backup_dir="$DIR/$b.backup" --restore_dir="$DIR/$b.restore") ;;
  esac
  if ! "$BIN" --db="$DIR/db" --benchmarks="$list" --num=1000 --histogram=1 "${extra[@]}" \
       >"$out" 2>"$out.err"; then
    fail "$b exited non-zero: $(tail -1 "$out.err")"; continue
  fi
  grep -E "$RESULT_RE" "$out" | grep -q "^$b " || fail "$b: no result line in RocksDB's format"
  [ -n "$(ops_of "$out")" ] || fail "$b: seed_workloads' awk finds no ops/sec"
  [ -n "$(p99_of "$out")" ] || fail "$b: no Percentiles line with P99"
  grep -q '^Microseconds per ' "$out" || fail "$b: no 'Microseconds per' block"
done
grep -q '^compress .*(output: [0-9.]*%)' "$DIR/compress.out" || fail "compress: no output ratio"
grep -q "^Backup path: \[$DIR/backup.backup\]" "$DIR/backup.out" || fail "backup: no Backup path line"
grep -q "^Restore path: \[$DIR/restore.restore\]" "$DIR/restore.out" || fail "restore: no Restore path line"
# The restored DB holds what fillseq wrote.
"$BIN" --db="$DIR/restore.restore" --use_existing_db=1 --benchmarks=readrandom --num=1000 \
  --threads=1 >"$DIR/restored.out" 2>&1 || fail "restore: the restored DB does not open"
grep -q '(1000 of 1000 found)' "$DIR/restored.out" || fail "restore: the restored DB lacks keys"
grep -q 'found, issued [0-9]* non-exist keys)' "$DIR/readrandomfast.out" \
  || fail "readrandomfast: no found/non-exist message"

# multireadrandom in each form (vector MultiGet, --multiread_batched, --multiread_stride):
# RocksDB's result line, keys counted as operations (2 threads x 500) and in "(N of M
# found)" (one thread's message, as RocksDB keeps), one histogram entry per MultiGet call
# (1000 keys / 10 per call = 100), RocksDB's entries_per_batch line on stderr (after the
# fill's progress, on the same terminal line).
for mode in --multiread_batched=0 --multiread_batched=1 --multiread_stride=7; do
  out=$DIR/mrr$mode.out
  if ! "$BIN" --db="$DIR/db" --benchmarks=fillseq,multireadrandom --num=1000 --reads=500 \
       --batch_size=10 --histogram=1 --threads=2 "$mode" >"$out" 2>"$out.err"; then
    fail "multireadrandom $mode exited non-zero: $(tail -1 "$out.err")"; continue
  fi
  grep -E "$RESULT_RE" "$out" \
    | grep -Eq '^multireadrandom : .* 1000 operations; +[0-9.]+ MB/s \(500 of 500 found\)$' \
    || fail "multireadrandom $mode: no result line of 2 x 500 keys, '(500 of 500 found)'"
  [ "$(awk '/^Microseconds per read:/{getline; print $2}' "$out")" = 100 ] \
    || fail "multireadrandom $mode: not one histogram entry per MultiGet call"
  grep -q 'entries_per_batch = 10$' "$out.err" || fail "multireadrandom $mode: no entries_per_batch"
done
# Keys drawn from twice the keys written: some found, some not, all counted.
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=500 >/dev/null 2>&1 \
  && "$BIN" --db="$DIR/db" --use_existing_db=1 --benchmarks=multireadrandom --num=1000 \
       --reads=1000 --batch_size=8 --multiread_batched=1 >"$DIR/mrrhalf.out" 2>/dev/null \
  || fail "multireadrandom over missing keys failed"
if [[ "$(cat "$DIR/mrrhalf.out")" =~ \(([0-9]+)\ of\ 1000\ found\) ]]; then
  f=${BASH_REMATCH[1]}
  { [ "$f" -gt 0 ] && [ "$f" -lt 1000 ]; } || fail "multireadrandom over missing keys: $f of 1000 found"
else
  fail "multireadrandom over missing keys: no '(N of 1000 found)'"
fi

# Merge benchmarks (8-byte uint64add counters, as seed_workloads runs them): a result line
# in the same format, merges in their own histogram, RocksDB's messages. The ones that
# read run after mergerandom in the same invocation.
MERGE=(--merge_operator=uint64add --value_size=8)
for b in mergerandom readrandommergerandom readwhilemerging seekrandomwhilemerging \
         readrandomoperands; do
  out=$DIR/$b.out
  case $b in mergerandom) list=$b ;; *) list=mergerandom,$b ;; esac
  if ! "$BIN" --db="$DIR/db" --benchmarks="$list" --num=1000 --histogram=1 --threads=2 \
       "${MERGE[@]}" >"$out" 2>"$out.err"; then
    fail "$b exited non-zero: $(tail -1 "$out.err")"; continue
  fi
  grep -E "$RESULT_RE" "$out" | grep -q "^$b " || fail "$b: no result line in RocksDB's format"
  [ -n "$(ops_of "$out")" ] || fail "$b: seed_workloads' awk finds no ops/sec"
  [ -n "$(p99_of "$out")" ] || fail "$b: no Percentiles line with P99"
done
grep -Eq '^mergerandom +: .* 2000 operations; +[0-9.]+ MB/s \( updates:1000\)$' \
  "$DIR/mergerandom.out" || fail "mergerandom: not 2 x 1000 merges with MB/s and '( updates:1000)'"
grep -q '^Microseconds per merge:' "$DIR/mergerandom.out" || fail "mergerandom: no merge histogram"
grep -q '^Microseconds per write:' "$DIR/mergerandom.out" && fail "mergerandom: merges counted as writes"
# readrandommergerandom: each thread's reads and merges add up to its 1000 operations.
msg=$(grep -o '(reads:[0-9]* merges:[0-9]* total:[0-9]* hits:[0-9]* maxlength:[0-9]*)' \
      "$DIR/readrandommergerandom.out")
if [[ "$msg" =~ reads:([0-9]+)\ merges:([0-9]+)\ total:1000\ hits:([0-9]+)\ maxlength:([0-9]+) ]]; then
  r=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]} h=${BASH_REMATCH[3]} len=${BASH_REMATCH[4]}
  [ $((r + m)) = 1000 ] || fail "readrandommergerandom: reads $r + merges $m != 1000"
  [ "$m" -gt "$r" ] || fail "readrandommergerandom: --mergereadpercent=70 gave $m merges, $r reads"
  # Every key was merged into before (mergerandom), so reads find 8-byte sums.
  { [ "$h" -gt 0 ] && [ "$len" = 8 ]; } || fail "readrandommergerandom: hits $h, maxlength $len"
else
  fail "readrandommergerandom: no (reads:.. merges:.. total:1000 hits:.. maxlength:..) message"
fi
for pct in 0 100; do
  "$BIN" --db="$DIR/db" --benchmarks=readrandommergerandom --num=500 --mergereadpercent=$pct \
    "${MERGE[@]}" >"$DIR/rmr$pct.out" 2>/dev/null || fail "readrandommergerandom $pct% failed"
done
grep -q '(reads:500 merges:0 ' "$DIR/rmr0.out" || fail "--mergereadpercent=0 merged"
grep -q '(reads:0 merges:500 ' "$DIR/rmr100.out" || fail "--mergereadpercent=100 read"
# readwhilemerging: the merger's operations stay out of the result (2 readers x 1000).
grep -Eq '^readwhilemerging +: .* 2000 operations;' "$DIR/readwhilemerging.out" \
  || fail "readwhilemerging: not 2 x 1000 reads"
# readrandomoperands: 20 operands per key on average, more than the 8 slots it starts
# with, so reads go through the Incomplete retry; every key was merged into, so every
# read finds operands.
"$BIN" --db="$DIR/db" --benchmarks=mergerandom,readrandomoperands --num=100 --writes=2000 \
  "${MERGE[@]}" >"$DIR/rro.out" 2>"$DIR/rro.err" || fail "readrandomoperands failed: $(tail -1 "$DIR/rro.err")"
grep -Eq '^readrandomoperands : .* 100 operations; +[0-9.]+ MB/s \(100 of 100 found\)' "$DIR/rro.out" \
  || fail "readrandomoperands: not '(100 of 100 found)' with MB/s"
# getmergeoperands (stringappend, so Get returns the lists joined): both ways find the
# number, GetMergeOperands returns the 999 lists, one operation in the result line.
"$BIN" --db="$DIR/db" --benchmarks=getmergeoperands --merge_operator=stringappend \
  >"$DIR/gmo.out" 2>"$DIR/gmo.err" || fail "getmergeoperands failed: $(tail -1 "$DIR/gmo.err")"
[ "$(grep -c '^Found key? 1$' "$DIR/gmo.out")" = 2 ] || fail "getmergeoperands: not found both ways"
grep -Eq '^Get: [0-9.e+-]+ seconds$' "$DIR/gmo.out" || fail "getmergeoperands: no 'Get: X seconds'"
grep -Eq '^Get Merge operands: [0-9.e+-]+ seconds $' "$DIR/gmo.out" \
  || fail "getmergeoperands: no 'Get Merge operands: X seconds'"
grep -q '^Sample data from Get API call: 1,2,3,4,5,$' "$DIR/gmo.out" || fail "getmergeoperands: Get's list"
grep -q 'call: 999 operands: 1,2,3,4,5,' "$DIR/gmo.out" || fail "getmergeoperands: not 999 operands"
grep -E "$RESULT_RE" "$DIR/gmo.out" | grep -q '^getmergeoperands .* 1 operations;' \
  || fail "getmergeoperands: no result line of one operation"
# Two threads write the key's lists twice over: 1998 operands, more than the 1001 slots
# it asks for first, and all of them come back (to the thread that reads last).
"$BIN" --db="$DIR/db" --benchmarks=getmergeoperands --merge_operator=stringappend --threads=2 \
  >"$DIR/gmo2.out" 2>"$DIR/gmo2.err" || fail "getmergeoperands, 2 threads, failed"
grep -q 'call: 1998 operands: 1,' "$DIR/gmo2.out" || fail "getmergeoperands, 2 threads: not 1998 operands"
# An unknown merge operator is an error before anything runs, as in RocksDB.
if "$BIN" --db="$DIR/db" --benchmarks=fillseq,mergerandom --num=10 --merge_operator=nosuch \
     >"$DIR/nosuch.out" 2>"$DIR/nosuch.err"; then
  fail "--merge_operator=nosuch accepted"
fi
grep -q '^invalid merge operator\[nosuch\]' "$DIR/nosuch.err" || fail "--merge_operator=nosuch: no message"
grep -q ' micros/op ' "$DIR/nosuch.out" && fail "--merge_operator=nosuch: ran fillseq"
# The benchmarks that merge are skipped, as RocksDB's, without a merge operator.
for b in mergerandom readrandommergerandom readwhilemerging seekrandomwhilemerging getmergeoperands; do
  if "$BIN" --db="$DIR/db" --benchmarks="fillseq,$b" --num=10 >"$DIR/nomo.out" 2>/dev/null; then
    fail "$b without --merge_operator: exit 0"
  fi
  grep -q "^$b *: skipped (--merge_operator is unknown)$" "$DIR/nomo.out" \
    || fail "$b without --merge_operator: no 'skipped' line"
  grep -q ' micros/op ' "$DIR/nomo.out" && fail "$b without --merge_operator: ran fillseq"
done

# Meta benchmarks print what RocksDB's print and no result line.
"$BIN" --db="$DIR/db" --num=2000 --write_buffer_size=65536 \
  --benchmarks=fillrandom,flush,waitforcompaction,compactall,stats,levelstats,memstats \
  >"$DIR/meta.out" 2>"$DIR/meta.err" || fail "meta benchmarks exited non-zero: $(tail -1 "$DIR/meta.err")"
for want in '^waitforcompaction(.*): finished$' '^\*\* Compaction Stats \[default\] \*\*$' \
            '^Level +Files +Size' '^ *Sum ' '^Level Files Size\(MB\)$' \
            '^rocksdb.cur-size-all-mem-tables: [0-9]+$'; do
  grep -Eq "$want" "$DIR/meta.out" || fail "meta benchmarks: no line matching '$want'"
done
[ "$(grep -c ' micros/op ' "$DIR/meta.out")" = 1 ] || fail "meta benchmarks printed result lines"

# sstables prints the rocksdb.sstables property as RocksDB's does: a line per level, and
# after the flush the one L0 file with its sequence range and boundary keys in hex.
"$BIN" --db="$DIR/db" --benchmarks=fillseq,flush,sstables --num=1000 >"$DIR/sst.out" \
  2>"$DIR/sst.err" || fail "sstables exited non-zero: $(tail -1 "$DIR/sst.err")"
[ "$(grep -Ec '^--- level [0-6] --- version# [0-9]+ ---$' "$DIR/sst.out")" = 7 ] \
  || fail "sstables: not one '--- level N --- version# V ---' line per level"
grep -Eq "^ [0-9]+:[0-9]+\[1 \.\. 1000\]\['[0-9A-F]{32}' seq:1, type:1 \.\. '[0-9A-F]{32}' seq:1000, type:1\]$" \
  "$DIR/sst.out" || fail "sstables: no line for the flushed file"
[ "$(grep -c ' micros/op ' "$DIR/sst.out")" = 1 ] || fail "sstables printed a result line"

# --statistics: RocksDB's "STATISTICS:" dump, tickers then histograms.
"$BIN" --db="$DIR/db" --benchmarks=fillseq,readrandom --num=1000 --statistics=1 \
  --stats_level=4 >"$DIR/stat.out" 2>/dev/null || fail "--statistics run failed"
grep -q '^STATISTICS:$' "$DIR/stat.out" || fail "--statistics: no STATISTICS: line"
grep -Eq '^[a-z]+\.block\.cache\.miss COUNT : [0-9]+$' "$DIR/stat.out" \
  || fail "--statistics: no block cache ticker line"
grep -Eq '^[a-z]+\.db\.write\.micros P50 : [0-9.]+ P95 : [0-9.]+ P99 : [0-9.]+ P100 : [0-9.]+ COUNT : [1-9][0-9]* SUM : [0-9]+$' \
  "$DIR/stat.out" || fail "--statistics: no db.write.micros histogram line with a count"

# Interval reports: thread lines on stderr, thread 0 adds the compaction stats; the
# report file gets "secs_elapsed,interval_qps" lines.
"$BIN" --db="$DIR/db" --benchmarks=fillseq,readrandom --num=2000 --stats_interval=500 \
  --stats_per_interval=1 --duration=2 --report_interval_seconds=1 \
  --report_file="$DIR/report.csv" >/dev/null 2>"$DIR/interval.err" || fail "interval run failed"
grep -Eq '^[0-9/]+-[0-9:]+  \.\.\. thread 0: \([0-9]+,[0-9]+\) ops and \([0-9.]+,[0-9.]+\) ops/second in \([0-9.]+,[0-9.]+\) seconds$' \
  "$DIR/interval.err" || fail "no interval line in RocksDB's format"
grep -q '^\*\* Compaction Stats' "$DIR/interval.err" || fail "--stats_per_interval: no compaction stats"
[ "$(head -1 "$DIR/report.csv")" = "secs_elapsed,interval_qps" ] || fail "report file: bad header"
grep -Eq '^[0-9]+,[0-9]+$' "$DIR/report.csv" || fail "report file: no interval line"

# flush is a meta operation: a message, no result line.
"$BIN" --db="$DIR/db" --benchmarks=fillseq,flush,readrandom --num=1000 >"$DIR/flush.out" 2>/dev/null \
  && grep -q '^flush memtable$' "$DIR/flush.out" || fail "flush: no 'flush memtable'"

# --verify_checksum sets the reads' ReadOptions::verify_checksums: with a byte of a data
# block overwritten, readseq fails with the checksum mismatch when it is on (RocksDB's
# default) and reads through when it is off.
rm -rf "$DIR/vc"
"$BIN" --db="$DIR/vc" --benchmarks=fillseq,flush --num=1000 --compression_type=none \
  >/dev/null 2>&1 || fail "--verify_checksum: fill failed"
sst=$(ls "$DIR/vc"/*.sst 2>/dev/null | head -1)
if [ -z "$sst" ]; then
  fail "--verify_checksum: no table file after the flush"
else
  printf 'X' | dd of="$sst" bs=1 seek=2000 conv=notrunc 2>/dev/null
  "$BIN" --db="$DIR/vc" --use_existing_db=1 --benchmarks=readseq --num=1000 \
    >"$DIR/vc1.out" 2>&1 && fail "--verify_checksum=1: read a corrupted block"
  grep -q 'Corruption: .*checksum mismatch' "$DIR/vc1.out" \
    || fail "--verify_checksum=1: no checksum mismatch reported"
  "$BIN" --db="$DIR/vc" --use_existing_db=1 --benchmarks=readseq --num=1000 \
    --verify_checksum=0 >"$DIR/vc0.out" 2>&1 || fail "--verify_checksum=0: read failed"
  grep -q '^readseq ' "$DIR/vc0.out" || fail "--verify_checksum=0: no result line"
fi

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

# Every flag of issue 5 is accepted (each set to a valid value; a benchmark list of "" runs
# nothing but opens the DB).
for f in benchmarks=fillseq num=10 reads=5 writes=5 duration=0 threads=1 key_size=10 \
         value_size=20 compression_ratio=0.4 compression_type=none batch_size=2 sync=0 \
         disable_wal=1 use_existing_db=0 seed=7 histogram=1 statistics=1 stats_level=2 \
         stats_interval=100 stats_interval_seconds=1 stats_per_interval=1 \
         report_interval_seconds=0 report_file="$DIR/r.csv" cache_size=1048576 \
         cache_numshardbits=2 block_size=1024 bloom_bits=10 use_ribbon_filter=1 \
         cache_index_and_filter_blocks=1 write_buffer_size=1048576 max_write_buffer_number=3 \
         max_background_jobs=3 max_background_compactions=2 max_background_flushes=1 \
         subcompactions=2 level0_file_num_compaction_trigger=3 level0_slowdown_writes_trigger=10 \
         level0_stop_writes_trigger=12 max_bytes_for_level_base=1048576 \
         max_bytes_for_level_multiplier=4 target_file_size_base=524288 num_levels=5 \
         level_compaction_dynamic_level_bytes=1 disable_auto_compactions=1 \
         delayed_write_rate=1048576 open_files=100 use_direct_reads=0 \
         use_direct_io_for_flush_and_compaction=0 mmap_read=0 merge_operator=uint64add \
         max_successive_merges=3 readwritepercent=80 mergereadpercent=60 merge_keys=5 \
         enable_pipelined_write=0 allow_concurrent_memtable_write=0 unordered_write=0 \
         two_write_queues=0 transaction_db=0 transaction_lock_timeout=100 transaction_sets=3 \
         transaction_set_snapshot=1 transaction_sleep=5 optimistic_transaction_db=0 wal_dir= \
         benchmark_write_rate_limit=0 perf_level=1 seek_nexts=2 arena_block_size=65536 \
         memtable_use_huge_page=1; do
  "$BIN" --db="$DIR/db" --benchmarks= --num=10 "--$f" >/dev/null 2>"$DIR/flag.err" \
    || fail "--$f rejected: $(head -1 "$DIR/flag.err")"
done

# Deprecated flags and flags for features shale lacks warn once each, on stderr; the run
# still succeeds.
for f in disable_seek_compaction=1 max_grandparent_overlap_factor=5 \
         delete_obsolete_files_period_micros=5 min_level_to_compress=1 \
         memtablerep=vector; do
  "$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 "--$f" >/dev/null 2>"$DIR/warn.err" \
    || fail "--$f made the run fail"
  [ "$(grep -c "WARNING: --${f%%=*} is accepted but not used by shale yet" "$DIR/warn.err")" = 1 ] \
    || fail "--$f: expected exactly one warning"
done
# ...but not the flags shale now acts on.
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --cache_size=1048576 --statistics=1 \
  --mmap_read=1 --disable_auto_compactions=1 --level0_slowdown_writes_trigger=4 --use_ribbon_filter=1 \
  --bloom_bits=10 --cache_index_and_filter_blocks=1 --subcompactions=2 --stats_level=2 \
  --max_bytes_for_level_base=1048576 --level_compaction_dynamic_level_bytes=1 \
  --delayed_write_rate=1048576 --max_background_compactions=2 --merge_operator=max \
  --max_successive_merges=4 --mergereadpercent=50 >/dev/null 2>"$DIR/quiet.err"
grep -q 'WARNING: --' "$DIR/quiet.err" && fail "unexpected warning: $(grep 'WARNING: --' "$DIR/quiet.err")"

# --benchmark_write_rate_limit paces readwhilewriting's writer: at 200,000 bytes/s for one
# second, 116-byte writes, about 1,700 (an unpaced writer does tens of thousands).
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=1000 >/dev/null 2>&1
"$BIN" --db="$DIR/db" --use_existing_db=1 --benchmarks=readwhilewriting --num=1000 \
  --duration=1 --threads=1 --statistics=1 --benchmark_write_rate_limit=200000 \
  >"$DIR/rate.out" 2>"$DIR/rate.err" || fail "--benchmark_write_rate_limit run failed"
grep -q 'WARNING: --' "$DIR/rate.err" && fail "--benchmark_write_rate_limit warns"
written=$(awk '/number.keys.written COUNT/{print $NF}' "$DIR/rate.out")
[ -n "$written" ] && [ "$written" -gt 0 ] && [ "$written" -le 2600 ] \
  || fail "--benchmark_write_rate_limit=200000: ${written:-no} keys written in 1 s"

# Benchmarks shale cannot run yet fail, with a message, before running anything.
for b in xorupdaterandom compact0; do
  if "$BIN" --db="$DIR/db" --benchmarks="fillseq,$b" --num=10 >"$DIR/uns.out" 2>"$DIR/uns.err"; then
    fail "$b: accepted"
  fi
  grep -q "not supported by shale yet" "$DIR/uns.err" || fail "$b: no message"
  grep -q ' micros/op ' "$DIR/uns.out" && fail "$b: ran fillseq before refusing"
done
"$BIN" --db="$DIR/db" --benchmarks=fillseq --num=10 --compaction_style=1 >/dev/null 2>&1 \
  && fail "--compaction_style=1 accepted"

# --transaction_db=1: the write benchmarks run through a TransactionDB (its Open sets
# allow_2pc, which the OPTIONS file records; a plain DB::Open would not), two threads of
# batches, fillseq's keys read back whole.
rm -rf "$DIR/txn"
"$BIN" --db="$DIR/txn" --transaction_db=1 --benchmarks=fillrandom,overwrite,fillseq,readrandom \
  --num=2000 --threads=2 --batch_size=4 --histogram=1 >"$DIR/txn.out" 2>"$DIR/txn.err" \
  || fail "--transaction_db=1 writes: $(head -3 "$DIR/txn.err")"
for b in fillseq fillrandom overwrite readrandom; do
  grep -E "$RESULT_RE" "$DIR/txn.out" | grep -q "^$b " || fail "--transaction_db=1: no $b result line"
done
grep -q '(2000 of 2000 found)' "$DIR/txn.out" || fail "--transaction_db=1: readrandom missed keys"
grep -q 'WARNING: --' "$DIR/txn.err" && fail "--transaction_db=1: $(grep 'WARNING: --' "$DIR/txn.err")"
grep -qx ' *allow_2pc=true' "$(ls "$DIR"/txn/OPTIONS-* | tail -1)" \
  || fail "--transaction_db=1: the DB was not opened as a TransactionDB (no allow_2pc=true)"
# RocksDB opens --unordered_write under --transaction_db as WritePrepared with two write
# queues and no concurrency control; so does shale. Everything written is read back.
"$BIN" --db="$DIR/txnu" --transaction_db=1 --unordered_write=1 --enable_pipelined_write=0 \
  --benchmarks=fillseq,readrandom --num=2000 --threads=2 >"$DIR/txnu.out" 2>"$DIR/txnu.err" \
  || fail "--transaction_db=1 --unordered_write=1: $(head -3 "$DIR/txnu.err")"
grep -E "$RESULT_RE" "$DIR/txnu.out" | grep -q "^fillseq " \
  || fail "--transaction_db=1 --unordered_write=1: no fillseq result line"
grep -q '(2000 of 2000 found)' "$DIR/txnu.out" \
  || fail "--transaction_db=1 --unordered_write=1: readrandom missed keys: $(grep readrandom "$DIR/txnu.out")"
grep -qx ' *two_write_queues=true' "$(ls "$DIR"/txnu/OPTIONS-* | tail -1)" \
  || fail "--transaction_db=1 --unordered_write=1: not opened with two write queues"

# randomtransaction: 2 threads x 300 transactions over 3 sets of 20 hot keys; RocksDB's
# result line with "( transactions:N aborts:M)" (one thread's message), then the check
# that every set sums to the same total. Short lock waits and snapshots taken at Begin
# make aborts likely but never required. The same through an OptimisticTransactionDB,
# which --optimistic_transaction_db picks over --transaction_db, as RocksDB's.
rtxn() { "$BIN" --db="$DIR/rt" --benchmarks=randomtransaction --num=20 --transaction_sets=3 "$@"; }
for mode in "--transaction_db=1 --transaction_lock_timeout=0 --transaction_set_snapshot=1" \
            "--optimistic_transaction_db=1 --transaction_db=1" \
            "--transaction_db=1 --transaction_lock_timeout=100"; do
  rm -rf "$DIR/rt"
  # shellcheck disable=SC2086
  rtxn --threads=2 --writes=300 --histogram=1 $mode >"$DIR/rt.out" \
    2>"$DIR/rt.err" || fail "randomtransaction $mode: $(head -3 "$DIR/rt.err")"
  grep -E "$RESULT_RE" "$DIR/rt.out" \
    | grep -Eq '^randomtransaction : .* 600 operations; +[0-9.]+ MB/s \( transactions:300 aborts:[0-9]+\)$' \
    || fail "randomtransaction $mode: no result line of 2 x 300 transactions with aborts"
  grep -q '^Microseconds per op:' "$DIR/rt.out" || fail "randomtransaction $mode: no histogram"
  grep -qx 'RandomTransactionVerify Success.' "$DIR/rt.out" \
    || fail "randomtransaction $mode: verification did not pass"
done
# Run again on that DB: the sums keep growing together.
rtxn --transaction_db=1 --use_existing_db=1 --writes=100 >"$DIR/rt2.out" 2>&1 \
  && grep -qx 'RandomTransactionVerify Success.' "$DIR/rt2.out" \
  || fail "randomtransaction on an existing DB: $(tail -2 "$DIR/rt2.out")"
# The verification can fail: read as 4 sets, no transaction run, the fourth (never
# written) sums to 0 against the others' total. RocksDB's line, and exit 1.
rtxn --transaction_db=1 --use_existing_db=1 --writes=0 --transaction_sets=4 >"$DIR/rt4.out" \
  2>"$DIR/rt4.err" && fail "randomtransaction: a failed verification exited 0"
grep -qx 'RandomTransactionVerify FAILED!!' "$DIR/rt4.out" \
  || fail "randomtransaction: 4 sets over 3 written not reported as FAILED"
grep -q '^RandomTransactionVerify: Corruption: set [0-9]* sums to ' "$DIR/rt4.err" \
  || fail "randomtransaction: the failure does not say which sets differ"
# Without a TransactionDB the same increments go in plain batches, and nothing is checked.
rm -rf "$DIR/rt"
rtxn --writes=200 >"$DIR/rtp.out" 2>&1 || fail "randomtransaction without transactions failed"
grep -Eq '^randomtransaction : .* 200 operations; +[0-9.]+ MB/s \( batches:200 \)$' \
  "$DIR/rtp.out" || fail "randomtransaction without transactions: no '( batches:200 )' line"
grep -q 'RandomTransactionVerify' "$DIR/rtp.out" && fail "randomtransaction: verified plain batches"
for sets in 0 10000; do
  rtxn --transaction_db=1 --transaction_sets=$sets >"$DIR/rts.out" 2>"$DIR/rts.err" \
    && fail "--transaction_sets=$sets accepted"
  grep -qx 'invalid value for transaction_sets' "$DIR/rts.err" || fail "--transaction_sets=$sets: no message"
done

# The write modes run (two threads, batches, with and without the WAL), and the mode
# combinations RocksDB refuses fail at Open with its message.
for mode in "--enable_pipelined_write=0" "--enable_pipelined_write=1" \
            "--enable_pipelined_write=0 --allow_concurrent_memtable_write=0" \
            "--enable_pipelined_write=0 --unordered_write=1" \
            "--enable_pipelined_write=0 --two_write_queues=1" \
            "--enable_pipelined_write=0 --unordered_write=1 --two_write_queues=1 --disable_wal=1" \
            "--enable_write_thread_adaptive_yield=0 --write_thread_max_yield_usec=10"; do
  # shellcheck disable=SC2086
  "$BIN" --db="$DIR/modes" --benchmarks=fillseq,readrandom --num=2000 --threads=2 \
    --batch_size=4 $mode >"$DIR/mode.out" 2>"$DIR/mode.err" || fail "$mode: $(head -3 "$DIR/mode.err")"
  grep -q "^fillseq .* ops/sec" "$DIR/mode.out" || fail "$mode: no fillseq line"
  grep -q 'WARNING: --' "$DIR/mode.err" && fail "$mode: $(grep 'WARNING: --' "$DIR/mode.err")"
  grep -q '(2000 of 2000 found)' "$DIR/mode.out" || fail "$mode: readrandom did not find every key"
done
"$BIN" --db="$DIR/modes" --benchmarks=fillseq --num=10 --unordered_write=1 >/dev/null \
  2>"$DIR/mode.err" && fail "--unordered_write=1 with pipelined writes (db_bench's default) accepted"
grep -q "unordered_write is incompatible with enable_pipelined_write" "$DIR/mode.err" \
  || fail "--unordered_write=1: not RocksDB's message: $(head -2 "$DIR/mode.err")"

# --num_column_families: RocksDB's family names, created if missing; a key's number picks
# its family (n % families), so readrandom after a fill finds every key in its family, and
# readseq, over the default family as RocksDB's, sees a quarter of them. With
# --num_hot_column_families=2 of 6, fillseq creates the families in three stages; opening
# the DB again with only the first two hot fails with RocksDB's message.
cfs=(--db="$DIR/cf" --num=2000 --num_column_families=4)
"$BIN" "${cfs[@]}" --benchmarks=fillseq,readrandom,readseq --threads=1 >"$DIR/cf.out" \
  2>"$DIR/cf.err" || fail "--num_column_families=4: $(tail -1 "$DIR/cf.err")"
grep -q '^readrandom .*(2000 of 2000 found)' "$DIR/cf.out" \
  || fail "--num_column_families=4: readrandom did not find every key in its family"
grep -Eq '^readseq .* 500 operations;' "$DIR/cf.out" \
  || fail "--num_column_families=4: readseq did not see the default family's quarter"
for cf in default column_family_name_000001 column_family_name_000002 column_family_name_000003; do
  grep -q "^\[CFOptions \"$cf\"\]" "$(ls "$DIR"/cf/OPTIONS-* | tail -1)" \
    || fail "--num_column_families=4: no family $cf"
done
hot=(--db="$DIR/hot" --num=3000 --num_column_families=6 --num_hot_column_families=2)
"$BIN" "${hot[@]}" --benchmarks=fillseq >"$DIR/hot.out" 2>"$DIR/hot.err" \
  || fail "--num_hot_column_families=2: $(tail -1 "$DIR/hot.err")"
grep -q '^\[CFOptions "column_family_name_000005"\]' "$(ls "$DIR"/hot/OPTIONS-* | tail -1)" \
  || fail "--num_hot_column_families=2: the last stage's families were not created"
"$BIN" "${hot[@]}" --use_existing_db=1 --benchmarks=readrandom >"$DIR/hot.out" \
  2>"$DIR/hot.err" && fail "--num_hot_column_families: opened without naming every family"
grep -q 'Column families not opened: column_family_name_000002' "$DIR/hot.err" \
  || fail "--num_hot_column_families: not RocksDB's message: $(tail -1 "$DIR/hot.err")"
"$BIN" "${cfs[@]}" --benchmarks=fillrandom --column_family_distribution=10,20 >/dev/null \
  2>"$DIR/cf.err" && fail "--column_family_distribution not summing to 100 accepted"
grep -qx 'column_family_distribution items must sum to 100' "$DIR/cf.err" \
  || fail "--column_family_distribution: not RocksDB's message"

# --use_keep_filter (RocksDB's flag): compactions run with a filter that keeps everything;
# the DB says so in its OPTIONS file and every key is still there after compact.
keep=(--db="$DIR/keep" --num=2000 --use_keep_filter --threads=1)
"$BIN" "${keep[@]}" --benchmarks=fillseq,compact,readseq >"$DIR/keep.out" 2>"$DIR/keep.err" \
  || fail "--use_keep_filter: $(tail -1 "$DIR/keep.err")"
grep -qx 'A noop compaction filter is used' "$DIR/keep.out" \
  || fail "--use_keep_filter: not RocksDB's line"
grep -q '^compaction_filter=KeepFilter' <(sed 's/^ *//' "$(ls "$DIR"/keep/OPTIONS-* | tail -1)") \
  || fail "--use_keep_filter: the DB was not opened with the filter"
grep -Eq '^readseq .* 2000 operations;' "$DIR/keep.out" \
  || fail "--use_keep_filter: keys lost in compaction"

# Range deletions in the write loop (RocksDB's --writes_per_range_tombstone and its
# companions). One thread and a fixed seed draw the same keys as RocksDB 11.8.1's db_bench,
# so the keys left are RocksDB's count for the same command line (each figure below is what
# its readseq counted): every 10th put adds [k, k+20) at the generator's next number, 50 in
# all, as a range deletion, as 20 point deletions, or across flushes; batches of 7 put after
# the first 100 keys; overwrite adds its own; two families. fillseq hides nothing (each
# range starts past the keys written and is written over later).
RD=(--seed=7 --threads=1 --writes_per_range_tombstone=10 --max_num_range_tombstones=50
    --range_tombstone_width=20)
rd_check() {  # rd_check NAME EXPECTED_KEYS EXPECTED_DELETIONS_LINES ARGS...
  local name=$1 keys=$2 lines=$3
  shift 3
  if ! "$BIN" --db="$DIR/rd" "$@" >"$DIR/rd.out" 2>"$DIR/rd.err"; then
    fail "range deletions, $name: $(tail -1 "$DIR/rd.err")"; return
  fi
  grep -Eq "^readseq .* $keys operations;" "$DIR/rd.out" \
    || fail "range deletions, $name: not $keys keys left: $(grep '^readseq' "$DIR/rd.out")"
  [ "$(grep -c '^Number of range deletions: ' "$DIR/rd.out")" = "$lines" ] \
    || fail "range deletions, $name: not $lines 'Number of range deletions' lines"
}
rd_check "none" 617 0 --seed=7 --threads=1 --num=1000 --benchmarks=fillrandom,readseq
rd_check "ranges" 574 1 "${RD[@]}" --num=1000 --benchmarks=fillrandom,readseq
grep -qx 'Number of range deletions: 50' "$DIR/rd.out" || fail "range deletions: not 50 added"
rd_check "expanded" 574 1 "${RD[@]}" --num=1000 --expand_range_tombstones \
  --benchmarks=fillrandom,readseq
rd_check "flushed" 574 1 "${RD[@]}" --num=1000 --write_buffer_size=65536 \
  --benchmarks=fillrandom,compact,readseq
rd_check "fillseq" 2000 1 "${RD[@]}" --num=2000 --benchmarks=fillseq,readseq
rd_check "batches" 1208 1 --seed=11 --threads=1 --num=2000 --batch_size=7 \
  --writes_before_delete_range=100 --range_tombstone_width=37 --max_num_range_tombstones=30 \
  --writes_per_range_tombstone=13 --benchmarks=fillrandom,readseq
rd_check "overwrite" 1659 2 --seed=11 --threads=1 --num=2000 --writes_per_range_tombstone=3 \
  --max_num_range_tombstones=400 --range_tombstone_width=2 \
  --benchmarks=fillrandom,overwrite,readseq
rd_check "families" 649 1 --seed=11 --threads=1 --num=2000 --num_column_families=2 \
  --writes_per_range_tombstone=5 --max_num_range_tombstones=100 --range_tombstone_width=10 \
  --benchmarks=fillrandom,readseq
"$BIN" --db="$DIR/rd" --benchmarks=fillseq --writes_per_range_tombstone=1 \
  --range_tombstone_width=-1 >/dev/null 2>"$DIR/rd.err" && fail "negative tombstone width ran"
grep -q 'range_tombstone_width' "$DIR/rd.err" || fail "negative tombstone width: no message"

finish db_bench_test
