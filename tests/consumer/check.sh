#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds the consumer against it with
# find_package(shale) and with pkg-config, and runs both.
# usage: check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" "$work/db1"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig:$work/prefix/lib/x86_64-linux-gnu/pkgconfig"
# Link the static archive (with its private dependencies) so the run needs no LD path.
c++ -std=c++20 "$src/tests/consumer/main.cc" -o "$work/pc-consumer" \
  $(pkg-config --cflags shale) "$work"/prefix/lib*/libshale.a $(pkg-config --static --libs-only-l shale | sed 's/-lshale//')
"$work/pc-consumer" "$work/db2"
