#!/usr/bin/env bash
# Run a command beside a real ZooKeeper: start Debian's ZooKeeper 3.8 (its Java main, what
# `zkServer.sh start-foreground` runs) on 127.0.0.1 with a free port and a temporary data dir,
# wait until it serves (`srvr` names its mode), run the command with the ensemble ("127.0.0.1:PORT") as its last
# argument and in POLYFLAKE_TEST_ZOOKEEPER, then stop ZooKeeper and remove its data.
# The bindings' tests (Python, Node, C, Go) and the polyglot run share it; the Rust tests start
# their own servers (core/tests/lease_support).
# Usage: with_zookeeper.sh COMMAND [ARGS...]
set -euo pipefail
java=${JAVA_BIN:-/usr/bin/java}
jar=/usr/share/java/zookeeper.jar
[ -x "$java" ] && [ -f "$jar" ] || {
  echo "ZooKeeper or Java is missing: 'make deps-apt' installs zookeeper and default-jre-headless" >&2
  exit 1
}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
data=$(mktemp -d /tmp/polyflake-zk-XXXXXX)
cat >"$data/zoo.cfg" <<CFG
tickTime=200
dataDir=$data/data
clientPort=$port
clientPortAddress=127.0.0.1
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,cons
CFG
classpath=$jar
for extra in /usr/share/java/netty-codec.jar /usr/share/java/slf4j-simple.jar; do
  [ -f "$extra" ] && classpath="$classpath:$extra"
done
"$java" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.jmx.log4j.disable=true \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$classpath" \
  org.apache.zookeeper.server.ZooKeeperServerMain "$data/zoo.cfg" >"$data/zookeeper.log" 2>&1 &
zk_pid=$!
cleanup() {
  kill "$zk_pid" 2>/dev/null || true
  wait "$zk_pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

# `ruok` answers imok before the server takes sessions; `srvr` names a mode only once it does.
serving() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'srvr' >&3
  # Bounded: a server that accepted but is not answering yet must not hold the loop (seen under load).
  reply=$(timeout 2 cat <&3 || true)
  exec 3>&-
  [[ $reply == *'Mode: '* ]]
}
for _ in $(seq 1 600); do
  if serving 2>/dev/null; then break; fi
  kill -0 "$zk_pid" 2>/dev/null || { echo "ZooKeeper exited:" >&2; cat "$data/zookeeper.log" >&2; exit 1; }
  sleep 0.1
done
serving 2>/dev/null || { echo "ZooKeeper was not serving within 60 s:" >&2; tail -n 30 "$data/zookeeper.log" >&2; exit 1; }
echo "ZooKeeper up at 127.0.0.1:$port (pid $zk_pid)"

POLYFLAKE_TEST_ZOOKEEPER=127.0.0.1:$port "$@" "127.0.0.1:$port"
