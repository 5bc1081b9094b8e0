#!/usr/bin/env python3
"""Crash-test driver for db_stress: kill it, restart it on the same DB and expected state,
let it verify every key, repeat.

  blackbox   db_stress runs until this driver SIGKILLs it at a random moment
             (--interval seconds on average).
  whitebox   db_stress kills itself at a random kill point inside the engine's file I/O
             (--kill_random_test: WAL/SST/MANIFEST append and sync, CURRENT rename, file
             deletion), sometimes already during recovery. With --kill_at=<point>
             only that point fires, at its first hit unless --kill_random_test says
             otherwise, and already during recovery; each run it kills is followed by a
             run without kill points that must recover, verify and finish (the CURRENT
             rename happens once per open, so this is how it gets killed at all).

--disable_wal runs db_stress without the WAL: a crash then loses the unflushed writes, and
each restart checks the prefix rule instead: db_stress logs every write with the sequence
number it got, and the DB must hold that history replayed in sequence order up to one cut,
across all keys, a cut that keeps every write made durable by a Flush and none above the
sequence the DB recovered (tools/db_stress_prefix.h). The cut must be at the recovered
sequence itself, as RocksDB's crash test demands (`-- --strict_recovered_seq=false`
accepts any cut at or below it).

--use_txn runs db_stress through a TransactionDB: every write is a transaction, some of
them prepared before their commit (two-phase), some rolled back. After each kill the
restart commits or rolls back the prepared transactions the DB recovered, as the dead run
meant to (any other prepared transaction fails the run), and checks that every
transaction in flight at the kill is all there or all absent. --use_optimistic_txn runs
it through an OptimisticTransactionDB (no two-phase commit). --txn_write_policy picks the
TransactionDB's write policy: 0 WRITE_COMMITTED, 1 WRITE_PREPARED (prepared data in the
memtable before its commit; db_stress then also draws unordered_write with two write
queues among its write modes, and keeps a small commit cache), or `both` (the default):
the first half of the kills (or of --duration) under WRITE_COMMITTED, then a fresh DB and
expected state for the second half under WRITE_PREPARED. (A DB keeps the policy it was
written with, so the switch needs a new DB.)

--column_families=N runs db_stress on N column families (batches across them, one family
dropped and re-created now and then: --clear_column_family_one_in); every restart verifies
every family's keys, and a kill between a family's drop and its re-creation leaves each of
its keys as it was or absent. With --disable_wal the families flush as one (db_stress
turns atomic_flush on) and none is dropped, and the prefix rule holds across all of them.

Each run draws db_stress's --enable_compaction_filter as RocksDB's crash test does (on in one
run of four; never with --disable_wal): a compaction filter then removes the keys the
oracle holds deleted, and that run takes no snapshots. --enable_compaction_filter=0 or 1
pins it.

Each run also draws db_stress's --delrangepercent (0, 1 or 5; RocksDB's crash test runs 1)
and --range_deletion_width (1, 10 or 100; RocksDB's default is 10): DeleteRanges then clear
runs of keys in the oracle, and each restart's verification, by Get and by iterators both
ways, must find every range all deleted or all as before. Never with transactions, whose
writes take no range deletion (RocksDB's crash test turns them off there too).
--delrangepercent=N pins it.

Every restart verifies the whole key space against the oracle before doing anything else;
a disagreement makes db_stress exit 1, which fails the test. The loop ends after --kills
kills or --duration seconds, whichever comes first, then a last run verifies again.
The seed of run i is --seed + i; each run prints its full option line, so a failure can be
replayed with the same flags. Extra arguments after `--` go to every db_stress run.
"""
import argparse
import collections
import fcntl
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["blackbox", "whitebox"])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--db_stress", default=os.path.join(here, "..", "build", "tools", "db_stress"))
    p.add_argument("--db", default="", help="DB directory (default: a new temporary one)")
    p.add_argument("--duration", type=float, default=600, help="seconds to run at most")
    p.add_argument("--kills", type=int, default=0, help="stop after this many kills (0: none)")
    p.add_argument("--interval", type=float, default=3.0,
                   help="blackbox: mean seconds between kills; whitebox: longest run")
    p.add_argument("--kill_random_test", type=int, default=0,
                   help="whitebox: a kill point fires 1 time in N (default 20000, or 1 "
                   "with --kill_at)")
    p.add_argument("--kill_at", default="",
                   help="whitebox: only this kill point fires (e.g. current_rename)")
    p.add_argument("--disable_wal", action="store_true",
                   help="write without the WAL and check the prefix rule after each kill")
    txn = p.add_mutually_exclusive_group()
    txn.add_argument("--use_txn", action="store_true",
                     help="write through TransactionDB transactions, some two-phase")
    txn.add_argument("--use_optimistic_txn", action="store_true",
                     help="write through OptimisticTransactionDB transactions")
    p.add_argument("--txn_write_policy", choices=["0", "1", "both"], default="both",
                   help="--use_txn: 0 WRITE_COMMITTED, 1 WRITE_PREPARED, both: one, then "
                   "the other on a fresh DB")
    p.add_argument("--column_families", type=int, default=1,
                   help="column families of the DB (db_stress --column_families): batches "
                   "span them and every restart verifies them all; not with transactions; "
                   "with --disable_wal the families flush as one (atomic_flush) and none is "
                   "dropped")
    p.add_argument("--clear_column_family_one_in", type=int, default=1000,
                   help="with several column families: db_stress drops a family and creates "
                   "it again, empty, before 1 operation in N (0: never)")
    p.add_argument("--enable_compaction_filter", choices=["0", "1", "drawn"], default="drawn",
                   help="db_stress --enable_compaction_filter in each run: 0, 1, or drawn "
                   "(1 in 4 runs, as RocksDB's crash test; 0 with --disable_wal)")
    p.add_argument("--delrangepercent", default="drawn",
                   help="db_stress --delrangepercent in each run: a number, or drawn (0, 1 or "
                   "5, with a width of 1, 10 or 100 keys); 0 with transactions")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--max_key", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0, help="0: from the clock")
    p.add_argument("--keep", action="store_true", help="keep the DB directory at the end")
    # Everything after `--` goes to db_stress. (A positional nargs="*" argument cannot take
    # it: argparse fills that one, empty, right after `mode`.)
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = p.parse_args(argv)
    args.extra = extra
    return args


def tail(text, lines=40):
    return "\n".join(text.splitlines()[-lines:])


def main():
    args = parse_args()
    seed = args.seed or int(time.time() * 1000) % (1 << 31)
    rng = random.Random(seed)
    tmp = None
    db = args.db
    if not db:
        tmp = tempfile.mkdtemp(prefix="shale_crashtest_")
        db = os.path.join(tmp, "db")
    expected = db + ".expected"
    # One driver per DB: a second one would destroy the DB and reset the expected state
    # between this one's kills, and each would then report the other's writes as lost or
    # as phantoms. The lock is held until this process exits.
    os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    driver_lock = open(db + ".driver-lock", "w")
    try:
        fcntl.flock(driver_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("db_crashtest: another db_crashtest is using %s; not starting" % db, flush=True)
        return 2
    base = [args.db_stress, "--db=" + db, "--expected_values_dir=" + expected,
            "--threads=%d" % args.threads, "--max_key=%d" % args.max_key]
    if args.disable_wal:
        base.append("--disable_wal=1")
    if args.use_txn:
        base.append("--use_txn")
    if args.use_optimistic_txn:
        base.append("--use_optimistic_txn")
    if args.column_families > 1:
        if args.use_txn or args.use_optimistic_txn:
            print("db_crashtest: --column_families > 1 runs without transactions", flush=True)
            return 2
        # Without the WAL the families flush as one (db_stress sets atomic_flush) and none
        # is dropped: the prefix rule then holds across them.
        clear = 0 if args.disable_wal else args.clear_column_family_one_in
        base += ["--column_families=%d" % args.column_families,
                 "--clear_column_family_one_in=%d" % clear]
    base += args.extra
    one_in = args.kill_random_test or (1 if args.kill_at else 20000)
    print("db_crashtest: %s --seed=%d on %s" % (args.mode, seed, db), flush=True)

    start = time.time()
    kills = runs = 0
    points = collections.Counter()  # whitebox: kills by kill point
    recovered = 0  # --kill_at: recovery runs after a kill that verified and finished
    behind = [0, 0]  # --disable_wal: restarts that found lost unflushed writes, keys behind
    # --disable_wal: restarts whose DB held fewer writes than its recovered sequence counts,
    # and those writes
    short = [0, 0]
    recover_next = False
    prepared = [0, 0]  # --use_txn: recovered prepared transactions committed, rolled back
    policy = None  # --use_txn: the write policy of the current DB
    policy_kills = collections.Counter()  # --use_txn: kills by write policy
    clears = 0  # --column_families: families dropped and re-created, as the runs printed
    filtered = 0  # runs with --enable_compaction_filter
    ranged = 0  # runs with DeleteRange
    failed = None
    while failed is None:
        if args.kills and kills >= args.kills:
            break
        if time.time() - start >= args.duration:
            break
        cmd = base + ["--seed=%d" % (seed + runs), "--reopen=0"]
        fresh = runs == 0
        if args.use_txn:
            want = args.txn_write_policy
            if want == "both":
                # The second half under WRITE_PREPARED; never between a kill and the run
                # that must recover from it.
                second_half = (kills >= (args.kills + 1) // 2 if args.kills else
                               time.time() - start >= args.duration / 2)
                want = "1" if policy == "1" or (second_half and not recover_next) else "0"
            fresh = fresh or (policy is not None and want != policy)
            policy = want
            cmd.append("--txn_write_policy=" + policy)
        if fresh:
            cmd.append("--destroy_db_initially")
        if args.disable_wal or args.enable_compaction_filter == "0":
            use_filter = 0
        elif args.enable_compaction_filter == "1":
            use_filter = 1
        else:
            use_filter = rng.choice([0, 0, 0, 1])
        filtered += use_filter
        if args.use_txn or args.use_optimistic_txn:
            delrange = 0
        elif args.delrangepercent == "drawn":
            delrange = rng.choice([0, 1, 5])
        else:
            delrange = int(args.delrangepercent)
        ranged += delrange > 0
        # Before the arguments after `--`, which may override them.
        cmd.insert(1, "--enable_compaction_filter=%d" % use_filter)
        cmd.insert(1, "--delrangepercent=%d" % delrange)
        cmd.insert(1, "--range_deletion_width=%d" % rng.choice([1, 10, 100]))
        recovery_run = recover_next
        recover_next = False
        if args.mode == "blackbox":
            cmd += ["--ops_per_thread=0", "--duration=3600"]
        elif recovery_run:
            cmd += ["--ops_per_thread=0", "--duration=%d" % max(1, int(args.interval))]
        else:
            cmd += ["--ops_per_thread=0", "--duration=%d" % max(1, int(args.interval)),
                    "--kill_random_test=%d" % one_in]
            if args.kill_at:
                cmd += ["--kill_at=" + args.kill_at, "--kill_during_recovery"]
            elif rng.random() < 0.2:
                cmd.append("--kill_during_recovery")
        runs += 1
        out = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        if args.mode == "blackbox" and not recovery_run:
            deadline = time.time() + rng.uniform(0.3, 1.7) * args.interval
            while time.time() < deadline and proc.poll() is None:
                time.sleep(0.02)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        else:
            try:
                proc.wait(timeout=args.interval + 120)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        rc = proc.wait()
        out.seek(0)
        log = out.read()
        out.close()
        match = re.search(r"by the prefix rule \(.*?(\d+) keys behind", log)
        if match and int(match.group(1)) > 0:
            behind[0] += 1
            behind[1] += int(match.group(1))
        for line in log.splitlines():
            if line.startswith("db_stress: recovered prepared transaction "):
                prepared[0 if line.endswith("committed as its run meant to") else 1] += 1
        clears += len(re.findall(r"^db_stress: column family \d+ dropped and re-created",
                                 log, re.M))
        match = re.search(r"\((\d+) logged writes at or below it lost\)", log)
        if match and int(match.group(1)) > 0:
            short[0] += 1
            short[1] += int(match.group(1))
        if rc == -signal.SIGKILL and not recovery_run:
            kills += 1
            if args.use_txn:
                policy_kills[policy] += 1
            for line in log.splitlines():
                if line.startswith("db_stress: kill point: "):
                    point = line[len("db_stress: kill point: "):].rstrip(")")
                    points[point.split(" (")[0]] += 1
                    if args.kill_at:
                        points[point.replace(" (", ", ").replace(" the call", "")] += 1
            recover_next = bool(args.kill_at)
        elif rc != 0:
            failed = (cmd, rc, log)
        elif recovery_run:
            recovered += 1
        if "FAILED" in log:
            failed = (cmd, rc, log)

    if failed is None:
        # The last word: a run that only verifies (at start and at its end).
        cmd = base + ["--seed=%d" % (seed + runs), "--reopen=0", "--ops_per_thread=%d" %
                      args.threads]
        if policy is not None:
            cmd.append("--txn_write_policy=" + policy)
        runs += 1
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in res.stdout.splitlines():
            if line.startswith("db_stress: recovered prepared transaction "):
                prepared[0 if line.endswith("committed as its run meant to") else 1] += 1
        if res.returncode != 0:
            failed = (cmd, res.returncode, res.stdout)
        elif recover_next:
            recovered += 1  # it recovered from the last kill

    elapsed = time.time() - start
    if failed is not None:
        cmd, rc, log = failed
        print("db_crashtest: FAILED (exit %d) after %d kills, %d runs, %.0f s\n  %s\n%s" %
              (rc, kills, runs, elapsed, " ".join(cmd), tail(log)), flush=True)
        print("db_crashtest: DB and expected state kept in %s" % os.path.dirname(db))
        return 1
    mode = args.mode + (" without the WAL" if args.disable_wal else "") + (
        " with --use_txn" if args.use_txn else "") + (
        " with --use_optimistic_txn" if args.use_optimistic_txn else "") + (
        " with %d column families (%d dropped and re-created)" % (args.column_families, clears)
        if args.column_families > 1 else "")
    print("db_crashtest: %s: %d kills, %d runs (%d with the compaction filter, %d with "
          "DeleteRange), %.0f s, 0 failures (--seed=%d)%s%s" %
          (mode, kills, runs, filtered, ranged, elapsed,
           seed,
           "; kill points: " + ", ".join("%s %d" % kv for kv in sorted(points.items()))
           if points else "",
           "; recovered and verified after %d of them" % recovered if args.kill_at else ""),
          flush=True)
    if args.use_txn:
        print("db_crashtest: %d prepared transactions recovered after kills and committed, "
              "%d rolled back, as their runs meant to; kills under WRITE_COMMITTED %d, under "
              "WRITE_PREPARED %d" % (prepared[0], prepared[1], policy_kills["0"],
                                     policy_kills["1"]), flush=True)
    if args.disable_wal:
        print("db_crashtest: %d restarts found unflushed writes lost (%d keys behind their "
              "last acknowledged write in all), each accepted by the prefix rule" %
              (behind[0], behind[1]), flush=True)
        print("db_crashtest: %d restarts recovered a sequence above the last write the DB "
              "held (%d logged writes at or below it missing in all)" % (short[0], short[1]),
              flush=True)
    if tmp is not None and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
