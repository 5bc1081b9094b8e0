# Sourced by the tools' test scripts: BIN (the db_bench under test: the first argument,
# default build/tools/db_bench), ROOT, a scratch directory DIR removed on exit, and
# fail/finish to count failed checks and end with the right status.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/build/tools/db_bench}
[ -x "$BIN" ] || { echo "no db_bench at $BIN" >&2; exit 2; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
# finish NAME: prints the verdict and exits 0 only if no check failed.
finish() {
  if [ "$FAILS" -eq 0 ]; then echo "$1: all checks passed"; else echo "$1: $FAILS failed"; fi
  [ "$FAILS" -eq 0 ]
  exit
}
