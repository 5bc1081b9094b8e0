#!/usr/bin/env bash
# Runs db_bench jobs the way RocksDB's tools/benchmark.sh does and writes one summary row
# per job: ops/sec, MB/s, size GB, L0 GB, sum GB, write-amp, write MB/s, usec/op, p50,
# p75, p99, p99.9, p99.99, stall time, stall %, du -s -k. Any db_bench that prints
# RocksDB's output works (ours, or RocksDB's own).
#
#   usage: tools/benchmark.sh [--compare] JOB...
#   jobs:  bulkload fillseq overwrite readwhilewriting readrandom updaterandom mergerandom
#
# Jobs run in the order given on one DB; all but bulkload and fillseq need the DB an
# earlier job (or run) left in DB_DIR. With --compare each job runs with DB_BENCH, then
# with OTHER_DB_BENCH (each on its own DB), alternating job by job; the table then has
# both rows and their ratio (ours / other) per column, and gnuplot draws, per job, the
# throughput over time (from --report_interval_seconds) and the latency percentiles of
# both in OUTPUT_DIR/<job>.throughput.png and OUTPUT_DIR/<job>.latency.png.
#
# Environment (defaults in brackets):
#   DB_BENCH        our binary [build/tools/db_bench]
#   OTHER_DB_BENCH  the binary --compare runs against [/usr/bin/db_bench, Debian's
#                   rocksdb-tools]
#   NUM_KEYS [1000000]  NUM_THREADS [2]  KEY_SIZE [20]  VALUE_SIZE [400]
#   CACHE_SIZE bytes [67108864]  DURATION seconds, 0 = by NUM_KEYS [0]
#   DB_DIR [a new temporary directory, removed at the end]
#   OUTPUT_DIR logs, report.tsv and charts [a new temporary directory, kept]
#   BLOCK_SIZE [8192]  COMPRESSION_TYPE [snappy]  WRITE_BUFFER_SIZE_MB [64]
#   TARGET_FILE_SIZE_BASE_MB [64]  MAX_BYTES_FOR_LEVEL_BASE_MB [256]  PER_LEVEL_FANOUT [8]
#   MAX_BACKGROUND_JOBS [2]  SUBCOMPACTIONS [1]  SYNC (writes of multithreaded jobs) [0]
#   LEVEL0_FILE_NUM_COMPACTION_TRIGGER [4]  LEVEL0_SLOWDOWN_WRITES_TRIGGER [20]
#   LEVEL0_STOP_WRITES_TRIGGER [30]  STATS_INTERVAL_SECONDS [60]
#   REPORT_INTERVAL_SECONDS [1]  CHARTS 0 to draw none [1]
#   INSTALL_GNUPLOT 0 to never apt-get install gnuplot-nox when it is missing [1]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "benchmark.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 1; }

compare=0
if [ "${1:-}" = --compare ]; then compare=1; shift; fi
[ $# -ge 1 ] || usage
for job in "$@"; do
  case $job in
    bulkload|fillseq|overwrite|readwhilewriting|readrandom|updaterandom|mergerandom) ;;
    *) die "unknown job '$job'" ;;
  esac
done

DB_BENCH=${DB_BENCH:-$ROOT/build/tools/db_bench}
OTHER_DB_BENCH=${OTHER_DB_BENCH:-/usr/bin/db_bench}
[ -x "$DB_BENCH" ] || die "no db_bench at $DB_BENCH (set DB_BENCH)"
if [ $compare = 1 ]; then
  [ -x "$OTHER_DB_BENCH" ] || die "no db_bench at $OTHER_DB_BENCH (set OTHER_DB_BENCH, or apt-get install rocksdb-tools)"
fi
num_keys=${NUM_KEYS:-1000000}
num_threads=${NUM_THREADS:-2}
key_size=${KEY_SIZE:-20}
value_size=${VALUE_SIZE:-400}
cache_size=${CACHE_SIZE:-67108864}
duration=${DURATION:-0}
sync=${SYNC:-0}
charts=${CHARTS:-1}

if [ -n "${DB_DIR:-}" ]; then
  db_root=$DB_DIR
  mkdir -p "$db_root" || die "cannot create DB_DIR $db_root"
else
  db_root=$(mktemp -d)
  trap 'rm -rf "$db_root"' EXIT
fi
output_dir=${OUTPUT_DIR:-$(mktemp -d)}
mkdir -p "$output_dir" || die "cannot create OUTPUT_DIR $output_dir"
report=$output_dir/report.tsv

# Flags every job passes; both RocksDB 7.8's db_bench and ours accept each of them.
common_flags=(
  --num="$num_keys" --key_size="$key_size" --value_size="$value_size"
  --block_size="${BLOCK_SIZE:-8192}" --cache_size="$cache_size" --cache_numshardbits=6
  --compression_type="${COMPRESSION_TYPE:-snappy}" --compression_ratio=0.5
  --write_buffer_size=$(( ${WRITE_BUFFER_SIZE_MB:-64} << 20 ))
  --target_file_size_base=$(( ${TARGET_FILE_SIZE_BASE_MB:-64} << 20 ))
  --max_bytes_for_level_base=$(( ${MAX_BYTES_FOR_LEVEL_BASE_MB:-256} << 20 ))
  --max_bytes_for_level_multiplier="${PER_LEVEL_FANOUT:-8}"
  --level_compaction_dynamic_level_bytes=true --num_levels=8
  --pin_l0_filter_and_index_blocks_in_cache=1 --bloom_bits=10 --open_files=-1
  --subcompactions="${SUBCOMPACTIONS:-1}" --max_background_jobs="${MAX_BACKGROUND_JOBS:-2}"
  --statistics=1 --histogram=1 --stats_per_interval=1
  --stats_interval_seconds="${STATS_INTERVAL_SECONDS:-60}"
  --report_interval_seconds="${REPORT_INTERVAL_SECONDS:-1}"
)
[ "$duration" -gt 0 ] && common_flags+=(--duration="$duration")
l0_flags=(
  --level0_file_num_compaction_trigger="${LEVEL0_FILE_NUM_COMPACTION_TRIGGER:-4}"
  --level0_slowdown_writes_trigger="${LEVEL0_SLOWDOWN_WRITES_TRIGGER:-20}"
  --level0_stop_writes_trigger="${LEVEL0_STOP_WRITES_TRIGGER:-30}"
  --max_write_buffer_number=8
)
# No compaction while loading, and no L0 stalls: compact once afterwards.
bulk_flags=(
  --disable_auto_compactions=1 --disable_wal=1 --sync=0 --threads=1
  --allow_concurrent_memtable_write=false --max_write_buffer_number=8
  --level0_file_num_compaction_trigger=10485760 --level0_slowdown_writes_trigger=10485760
  --level0_stop_writes_trigger=10485760
)

# run_db_bench BINARY DB LOG BENCHMARK FLAG...: one db_bench run; the DB's compaction
# stats are asked for at the end (",stats") so that even a short run prints them.
run_db_bench() {
  local bin=$1 db=$2 log=$3 bench=$4
  shift 4
  local cmd=("$bin" --benchmarks="$bench,stats" --db="$db" "${common_flags[@]}"
             --seed="$(date +%s)" --report_file="$log.r.csv" "$@")
  echo "${cmd[*]}" >"$log"
  "${cmd[@]}" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || echo "  $(basename "$bin") $bench failed (exit $rc): $(grep -v '^\.\.\.' "$log" | tail -1)" >&2
  return $rc
}

# summarize LOG NAME DB: prints the tab-separated summary row of the run in LOG, whose
# result line starts with NAME; empty fields for what the log lacks.
summarize() {
  local log=$1 name=$2 db=$3 du_k
  du_k=$(du -s -k "$db" 2>/dev/null | awk '{print $1}')
  awk -v name="$name" -v du_k="$du_k" '
    function gb(v, unit) {
      if (unit == "KB") return v / 1048576
      if (unit == "MB") return v / 1024
      if (unit == "GB") return v
      if (unit == "TB") return v * 1024
      return v / 1073741824
    }
    function hms_seconds(t,   p) {
      split(t, p, ":")
      return p[1] * 3600 + p[2] * 60 + p[3]
    }
    # The result line: "<name> : <usec> micros/op <ops> ops/sec ... operations;[ <MB> MB/s]"
    $1 == name && $2 == ":" && $4 == "micros/op" {
      usec = $3; ops = $5; mbs = ""; want_hist = 1; in_hist = 0
      for (i = 6; i < NF; i++) if ($i == "operations;" && $(i + 2) == "MB/s") mbs = $(i + 1)
      next
    }
    # With --histogram the operation histogram follows the result line (after a blank line
    # when the message ends with one); other histograms (the DB stats) do not count.
    want_hist && /^[ \t]*$/ { next }
    want_hist { want_hist = 0; if (/^Microseconds per /) in_hist = 1; next }
    /^Percentiles:/ && in_hist {
      p50 = $3; p75 = $5; p99 = $7; p999 = $9; p9999 = $11; in_hist = 0
      next
    }
    # The compaction stats table: column positions come from its header; the size takes
    # two fields (number, unit) in the rows.
    $1 == "Level" && $2 == "Files" {
      wcol = 0
      for (i = 1; i <= NF; i++) if ($i == "Write(GB)") wcol = i + 1
      next
    }
    $1 == "L0" && wcol { l0_w = $wcol }
    $1 == "Sum" && wcol { sum_w = $wcol; size_gb = gb($3, $4) }
    /^Uptime\(secs\):/ { uptime = $2 }
    /^Cumulative stall:/ { stall_pct = $5; stall_hms = hms_seconds($3) }
    # Tickers: "rocksdb.x COUNT : n" or "shale.x COUNT : n".
    $2 == "COUNT" && $1 ~ /^[a-z]+\.flush\.write\.bytes$/ { flush_b = $4 }
    $2 == "COUNT" && $1 ~ /^[a-z]+\.compact\.write\.bytes$/ { compact_b = $4 }
    $2 == "COUNT" && $1 ~ /^[a-z]+\.stall\.micros$/ { stall_us = $4 }
    END {
      # Written bytes from the statistics when present (exact), else from the table.
      if (flush_b != "") { l0 = flush_b / 1073741824; sum = (flush_b + compact_b) / 1073741824 }
      else { l0 = l0_w; sum = sum_w }
      wamp = (l0 != "" && l0 > 0) ? sprintf("%.2f", sum / l0) : ""
      wmbs = (sum != "" && uptime > 0) ? sprintf("%.1f", sum * 1024 / uptime) : ""
      stall_s = stall_us != "" ? stall_us / 1e6 : stall_hms
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
        ops, mbs, size_gb == "" ? "" : sprintf("%.3f", size_gb),
        l0 == "" ? "" : sprintf("%.3f", l0), sum == "" ? "" : sprintf("%.3f", sum),
        wamp, wmbs, usec, p50, p75, p99, p999, p9999,
        stall_s == "" ? "" : sprintf("%.3f", stall_s), stall_pct, du_k
    }' "$log"
}

header="job\tbinary\tops/sec\tMB/s\tsize GB\tL0 GB\tsum GB\twrite-amp\twrite MB/s\tusec/op\tp50\tp75\tp99\tp99.9\tp99.99\tstall secs\tstall %\tdu -s -k"
printf '%b\n' "$header" >"$report"

# version_of LOG: "shale-0.1.0" / "rocksdb-7.8.3" from the header of a db_bench log.
version_of() {
  awk '$2 == "version" { sub(":", "", $1); print tolower($1) "-" $3; exit }' "$1"
}

# run_job JOB LABEL BINARY: runs JOB with BINARY on LABEL's DB; appends its rows to the
# report. Returns non-zero if a db_bench run failed.
run_job() {
  local job=$1 label=$2 bin=$3 db=$db_root/$2/db dir=$output_dir/$2 rc=0
  mkdir -p "$dir" "$db_root/$label"
  row_binary=$(basename "$bin")
  local log=$dir/$job.log
  case $job in
    bulkload)
      run_db_bench "$bin" "$db" "$log" fillrandom --use_existing_db=0 "${bulk_flags[@]}" || rc=1
      add_row "$job" "$log" fillrandom "$db"
      run_db_bench "$bin" "$db" "$dir/$job.compact.log" compact --use_existing_db=1 \
        --threads=1 --disable_auto_compactions=1 "${l0_flags[@]}" || rc=1
      add_row "$job.compact" "$dir/$job.compact.log" compact "$db"
      ;;
    fillseq)
      run_db_bench "$bin" "$db" "$log" fillseq --use_existing_db=0 --sync=0 --threads=1 \
        --disable_wal=0 --allow_concurrent_memtable_write=false "${l0_flags[@]}" || rc=1
      add_row "$job" "$log" fillseq "$db"
      ;;
    mergerandom)
      run_db_bench "$bin" "$db" "$log" mergerandom --use_existing_db=1 --sync="$sync" \
        --threads="$num_threads" --merge_operator=put "${l0_flags[@]}" || rc=1
      add_row "$job" "$log" mergerandom "$db"
      ;;
    *)
      run_db_bench "$bin" "$db" "$log" "$job" --use_existing_db=1 --sync="$sync" \
        --threads="$num_threads" "${l0_flags[@]}" || rc=1
      add_row "$job" "$log" "$job" "$db"
      ;;
  esac
  return $rc
}

# add_row JOB LOG NAME DB: the summary row of one db_bench run, named by the binary's
# version (or by row_binary when it printed none, having refused the run).
add_row() {
  local job=$1 log=$2 name=$3 db=$4 version
  version=$(version_of "$log")
  printf '%s\t%s\t%s\n' "$job" "${version:-$row_binary}" "$(summarize "$log" "$name" "$db")" >>"$report"
}

# ratio_rows: the rows grouped by job (in the order the jobs first appear), each job's
# ours row, other row, then a row of ours / other per column.
ratio_rows() {
  awk -F'\t' -v OFS='\t' '
    NR == 1 { print; next }
    !($1 in count) { order[++jobs] = $1 }
    { row[$1, ++count[$1]] = $0 }
    END {
      for (j = 1; j <= jobs; j++) {
        job = order[j]
        for (k = 1; k <= count[job]; k++) print row[job, k]
        if (count[job] != 2) continue
        n = split(row[job, 1], a, "\t"); split(row[job, 2], b, "\t")
        out = job OFS "ratio"
        for (i = 3; i <= n; i++) {
          r = (a[i] != "" && b[i] != "" && b[i] + 0 != 0) ? sprintf("%.2f", a[i] / b[i]) : ""
          out = out OFS r
        }
        print out
      }
    }'
}

failed=0
for job in "$@"; do
  echo "== $job" >&2
  run_job "$job" ours "$DB_BENCH" || failed=1
  if [ $compare = 1 ]; then run_job "$job" other "$OTHER_DB_BENCH" || failed=1; fi
done

if [ $compare = 1 ]; then
  ratio_rows <"$report" >"$report.tmp" && mv "$report.tmp" "$report"
fi
column -t -s "$(printf '\t')" "$report"
echo "report: $report" >&2

# ---- Charts ----
ensure_gnuplot() {
  command -v gnuplot >/dev/null && return 0
  [ "${INSTALL_GNUPLOT:-1}" = 1 ] || return 1
  echo "installing gnuplot-nox for the charts" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  $sudo apt-get install -y gnuplot-nox >/dev/null 2>&1 ||
    { $sudo apt-get update >/dev/null 2>&1 && $sudo apt-get install -y gnuplot-nox >/dev/null 2>&1; }
  command -v gnuplot >/dev/null
}

# chart_job JOB: throughput over time and latency percentiles, ours beside the other.
chart_job() {
  local job=$1 labels=(ours) label csv plots="" title
  [ $compare = 1 ] && labels+=(other)
  for label in "${labels[@]}"; do
    csv=$output_dir/$label/$job.log.r.csv
    [ -s "$csv" ] && [ "$(wc -l <"$csv")" -gt 1 ] || continue
    title=$(version_of "$output_dir/$label/$job.log")
    plots+="${plots:+, }'$csv' using 1:2 skip 1 with linespoints title '$title'"
  done
  if [ -n "$plots" ]; then
    gnuplot <<EOF
set terminal pngcairo size 900,500 noenhanced font ',10'
set output '$output_dir/$job.throughput.png'
set title '$job: throughput over time (${REPORT_INTERVAL_SECONDS:-1} s intervals)'
set xlabel 'seconds'
set ylabel 'operations per second'
set datafile separator ','
set yrange [0:*]
set grid
set key bottom right
plot $plots
EOF
  fi
  # Percentiles: one cluster per percentile, one bar per binary.
  local data=$output_dir/$job.latency.dat
  awk -F'\t' -v job="$job" '
    $1 == job && $2 != "ratio" { n++; name[n] = $2; for (i = 11; i <= 15; i++) v[n, i] = $i }
    END {
      if (n == 0 || v[1, 11] == "") exit 1
      printf "pct"; for (k = 1; k <= n; k++) printf "\t%s", name[k]; printf "\n"
      split("p50 p75 p99 p99.9 p99.99", label, " ")
      for (i = 11; i <= 15; i++) {
        printf "%s", label[i - 10]
        for (k = 1; k <= n; k++) printf "\t%s", (v[k, i] == "" ? "NaN" : v[k, i])
        printf "\n"
      }
    }' "$report" >"$data" || return 0
  local cols
  cols=$(head -1 "$data" | awk -F'\t' '{print NF}')
  gnuplot <<EOF
set terminal pngcairo size 900,500 noenhanced font ',10'
set output '$output_dir/$job.latency.png'
set title '$job: latency percentiles (microseconds, log scale)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile separator '\t'
set logscale y
set yrange [0.1:*]
set grid ytics
set key top left
plot for [c=2:$cols] '$data' using c:xtic(1) title columnheader(c)
EOF
}

if [ "$charts" = 1 ]; then
  if ensure_gnuplot; then
    for job in "$@"; do chart_job "$job"; done
    ls "$output_dir"/*.png 2>/dev/null | sed 's/^/chart: /' >&2
  else
    echo "no gnuplot: charts skipped (apt-get install gnuplot-nox)" >&2
  fi
fi
exit $failed
