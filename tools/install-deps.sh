#!/usr/bin/env bash
# Installs the Debian packages parktrace needs to build, test and demo
# (tmux: test_live.py runs the live view in a real terminal).
# Runs apt only when something is missing, so repeated calls are cheap.
#
# The real-server suite (tools/servers/, tests/integration/test_servers.py)
# needs the servers and their load clients too. Their packaged services are
# never used: the suite starts each server itself, on loopback, with a data
# directory of its own. So nothing is started at install time: while apt
# runs, a policy-rc.d refuses every service start (unless the machine
# already has one, as a container does).
set -eu
PKGS="make gcc g++ binutils clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
      libc6-dbg libdevel-nytprof-perl python3 python3-dbg openjdk-17-jdk-headless procps libclang-rt-14-dev
      strace util-linux tmux
      protobuf-c-compiler libprotobuf-c-dev libmicrohttpd-dev golang-go prometheus groff man-db systemd bash-completion"
# python3-dbg: the debug symbols of Debian's CPython, which name its GIL
# (take_gil) in a waiting stack (test_runtimes.py).
# Fleet export (issue 18): protoc-c and libprotobuf-c for pprof, libmicrohttpd
# for --listen; go (go tool pprof), prometheus (promtool and the server),
# groff, man-db, systemd (systemd-analyze) and bash-completion only check
# the results in tests (make install).
# Servers and their clients: PostgreSQL 15 and pgbench, MariaDB and sysbench,
# Tomcat 10 (its servlet API jar is in libtomcat10-java) and wrk, ZooKeeper
# (server and Java client jars), memcached and memcslap (libmemcached-tools),
# and the embedded Java databases H2, HSQLDB and Derby (tools/servers/h2.py).
SERVER_PKGS="postgresql-15 postgresql-client-15 postgresql-contrib mariadb-server mariadb-client sysbench
      tomcat10 libtomcat10-java wrk zookeeper memcached libmemcached-tools libh2-java libhsqldb-java libderby-java"
missing=""
for p in $PKGS $SERVER_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "parktrace: missing packages:$missing (run as root to install them)" >&2
    exit 2
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# parktrace install-deps.sh: no service starts while it installs\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
