#!/usr/bin/env bash
# Builds shale (Release) and runs db_bench's default small suite on a fresh temporary
# directory, which is removed afterwards. Run from anywhere; extra arguments go to
# db_bench (e.g. --num=1000000 or --histogram=1). BUILD_DIR (default: build) picks the
# build directory.
#   usage: tools/run_default_bench.sh [DB_BENCH_FLAG ...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --target db_bench
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
"$BUILD_DIR"/tools/db_bench \
  --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom \
  --num=100000 --db="$DIR/db" "$@"
