#!/usr/bin/env python3
"""Flush and compaction throughput of two db_bench binaries, read from each DB's LOG.

usage: tools/flush_compaction_mbps.py A_DB_BENCH B_DB_BENCH
  environment: REPEAT (rounds, default 3; the median round is kept), NUM (keys, default
  1000000), CONFIGS (comma-separated subset of the names below), BENCH_DIR (default /tmp),
  ROUNDS=1 (also print every round's figures, to stderr).

Each configuration runs `fillrandom` with automatic compactions off (so every byte the
flushes write is a flush's own), then `compact` (one manual compaction of all the L0 files
into L1), with A then B alternating on a fresh directory each time. From the LOG it takes:

  shale:   "Level-0 flush table #N: B bytes, E entries, M micros, C cpu micros OK" per flush,
           "Compacted ... B bytes written, M micros, C cpu micros" per compaction;
  RocksDB: "Flush lasted M microseconds, and C cpu microseconds" with
           "Level-0 flush table #N: B bytes OK" per flush (joined on the job number), and the
           "compaction_finished" event (total_output_size, compaction_time_micros,
           compaction_time_cpu_micros) per compaction.

MB/s is the bytes all jobs of a kind wrote over the wall time they took (MiB = 2^20
bytes); "cpu" is the same bytes over the CPU time of the jobs' threads, steadier on a busy
machine because it leaves out waiting for the disk and for a core.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

COMMON = ("--benchmarks=fillrandom,compact --key_size=20 --value_size=400 --disable_wal=1 "
          "--bloom_bits=10 --disable_auto_compactions=1 --level0_file_num_compaction_trigger=99999 "
          "--level0_slowdown_writes_trigger=99999 --level0_stop_writes_trigger=99999 "
          "--max_background_jobs=2 --subcompactions=1")
CONFIGS = {
    "none": "--compression_type=none",
    "lz4": "--compression_type=lz4",
    "snappy": "--compression_type=snappy",
    "zstd": "--compression_type=zstd",
    "none_ribbon": "--compression_type=none --use_ribbon_filter=1",
}

SHALE_FLUSH = re.compile(r"\[JOB (\d+)\] Level-0 flush table #\d+: (\d+) bytes, \d+ entries, "
                         r"(\d+) micros(?:, (\d+) cpu micros)? OK")
SHALE_COMPACT = re.compile(r"\[JOB (\d+)\] Compacted .* (\d+) bytes written, (\d+) micros, "
                           r"(\d+) cpu micros")
ROCKS_FLUSH_TIME = re.compile(r"\[JOB (\d+)\] Flush lasted (\d+) microseconds, and (\d+) cpu")
ROCKS_FLUSH_BYTES = re.compile(r"\[JOB (\d+)\] Level-0 flush table #\d+: (\d+) bytes OK")


def parse_log(text):
    """Returns {"flush": [bytes, micros, cpu], "compaction": [...]} summed over the jobs."""
    totals = {"flush": [0, 0, 0], "compaction": [0, 0, 0]}

    def add(kind, nbytes, micros, cpu):
        t = totals[kind]
        t[0] += nbytes
        t[1] += micros
        t[2] += cpu

    rocks_times, rocks_bytes = {}, {}
    for line in text.splitlines():
        m = SHALE_FLUSH.search(line)
        if m:
            add("flush", int(m.group(2)), int(m.group(3)), int(m.group(4) or 0))
            continue
        m = SHALE_COMPACT.search(line)
        if m:
            add("compaction", int(m.group(2)), int(m.group(3)), int(m.group(4)))
            continue
        m = ROCKS_FLUSH_TIME.search(line)
        if m:
            rocks_times[m.group(1)] = (int(m.group(2)), int(m.group(3)))
            continue
        m = ROCKS_FLUSH_BYTES.search(line)
        if m:
            rocks_bytes[m.group(1)] = int(m.group(2))
            continue
        if '"event": "compaction_finished"' in line:
            event = json.loads(line[line.index("{"):])
            add("compaction", event["total_output_size"], event["compaction_time_micros"],
                event.get("compaction_time_cpu_micros", 0))
    for job, nbytes in rocks_bytes.items():
        if job in rocks_times:
            add("flush", nbytes, *rocks_times[job])
    return totals


def mbps(nbytes, micros):
    return nbytes / 1048576.0 / (micros / 1e6) if micros > 0 else 0.0


def run_once(binary, flags, num, workdir):
    db = os.path.join(workdir, "db")
    shutil.rmtree(db, ignore_errors=True)
    cmd = [binary, "--db=" + db, "--num=%d" % num] + COMMON.split() + flags.split()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), out.stdout[-2000:]))
    with open(os.path.join(db, "LOG"), errors="replace") as f:
        totals = parse_log(f.read())
    shutil.rmtree(db, ignore_errors=True)
    return {kind: (mbps(b, us), mbps(b, cpu), b) for kind, (b, us, cpu) in totals.items()}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binaries = sys.argv[1:3]
    repeat = int(os.environ.get("REPEAT", "3"))
    num = int(os.environ.get("NUM", "1000000"))
    names = os.environ.get("CONFIGS", ",".join(CONFIGS)).split(",")
    workdir = tempfile.mkdtemp(prefix="flush_compaction_mbps.",
                               dir=os.environ.get("BENCH_DIR", "/tmp"))
    print("common flags: --num=%d %s" % (num, COMMON))
    print("A = %s\nB = %s\nREPEAT=%d (median)\n" % (binaries[0], binaries[1], repeat))
    header = ("| config | kind | A MB/s | B MB/s | A/B | A MB/cpu-s | B MB/cpu-s | A/B cpu "
              "| A MB | B MB |")
    print(header)
    print("|---|---|" + "---:|" * 8)
    try:
        for name in names:
            samples = {0: [], 1: []}
            for _ in range(repeat):
                for which in (0, 1):
                    samples[which].append(run_once(binaries[which], CONFIGS[name], num, workdir))
                    if os.environ.get("ROUNDS") == "1":
                        got = samples[which][-1]
                        print("round %s %s: flush %.1f MB/s %.1f MB/cpu-s, compaction %.1f MB/s "
                              "%.1f MB/cpu-s" % (name, "AB"[which], got["flush"][0], got["flush"][1],
                                                 got["compaction"][0], got["compaction"][1]),
                              file=sys.stderr)
            for kind in ("flush", "compaction"):
                wall = [statistics.median(s[kind][0] for s in samples[w]) for w in (0, 1)]
                cpu = [statistics.median(s[kind][1] for s in samples[w]) for w in (0, 1)]
                size = [statistics.median(s[kind][2] for s in samples[w]) / 1048576.0
                        for w in (0, 1)]
                ratio = wall[0] / wall[1] if wall[1] else float("nan")
                cpu_ratio = cpu[0] / cpu[1] if cpu[1] else float("nan")
                print("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.0f | %.0f |" %
                      (name, kind, wall[0], wall[1], ratio, cpu[0], cpu[1], cpu_ratio, size[0],
                       size[1]))
                sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
