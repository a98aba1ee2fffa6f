#!/bin/sh
# Jetty 9 (Debian's libjetty9-java) under wrk on loopback, as a benchmark
# workload: compiles JettyHello.java if needed, starts it, warms it up with
# wrk for 3 s, loads it for SECONDS with 2 wrk threads and 32 connections,
# prints `ops_per_sec N` (wrk's requests a second) and stops the server.
# JVM flags for the server come from JETTY_JVM_FLAGS (JFR, for one).
# usage: jetty_wrk.sh SECONDS
set -eu
secs=$(awk -v s="${1:-3}" 'BEGIN {printf "%d", s < 1 ? 1 : s + 0.5}')
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../../build/bench-java"
cp="/usr/share/java/jetty9-server.jar:/usr/share/java/jetty9-util.jar:/usr/share/java/jetty9-http.jar"
cp="$cp:/usr/share/java/jetty9-io.jar:/usr/share/java/servlet-api.jar"
mkdir -p "$out"
if [ ! -f "$out/JettyHello.class" ] || [ "$here/JettyHello.java" -nt "$out/JettyHello.class" ]; then
    javac -d "$out" -cp "$cp" "$here/JettyHello.java"
fi
fifo=$(mktemp -u /tmp/pt-jetty.XXXXXX)
mkfifo -m 600 "$fifo"
portfile=$(mktemp /tmp/pt-jetty-port.XXXXXX)
# The server reads the fifo as stdin: closing it (fd 3 below) stops it.
# shellcheck disable=SC2086
java -Xmx256m ${JETTY_JVM_FLAGS:-} -cp "$cp:$out" JettyHello 16 <"$fifo" >"$portfile" 2>/dev/null &
server=$!
exec 3>"$fifo"
rm -f "$fifo"
stop() { exec 3>&-; wait "$server" 2>/dev/null || true; rm -f "$portfile"; }
trap stop EXIT
port=""
for _ in $(seq 1 200); do
    port=$(awk '/^port / {print $2}' "$portfile")
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "jetty_wrk.sh: the server did not start" >&2; exit 1; }
wrk -t2 -c32 -d3s "http://127.0.0.1:$port/warm" >/dev/null
wrk -t2 -c32 -d"${secs}s" "http://127.0.0.1:$port/item" |
    awk '/^Requests\/sec:/ {printf "ops_per_sec %s\n", $2; found = 1} END {exit !found}'
