#!/usr/bin/env bash
# Installs the Debian packages parktrace needs to build, test and demo.
# Runs apt only when something is missing, so repeated calls are cheap.
set -eu
PKGS="make gcc g++ binutils clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
      libc6-dbg libdevel-nytprof-perl python3 openjdk-17-jdk-headless procps libclang-rt-14-dev
      strace util-linux"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "parktrace: missing packages:$missing (run as root to install them)" >&2
    exit 2
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
