#!/usr/bin/env bash
# Installs the Debian packages shale builds and tests with (run as root, or with sudo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libsnappy-dev liblz4-dev libzstd-dev libxxhash-dev libgflags-dev \
  libgtest-dev libgmock-dev libbenchmark-dev >/dev/null
