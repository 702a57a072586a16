#!/usr/bin/env bash
# Run a command beside a real etcd: start Debian's etcd on 127.0.0.1 with two free ports and a
# temporary data dir, wait until it reports healthy, run the command with the client URL as
# its last argument (and in POLYFLAKE_ETCD_ENDPOINT), then stop etcd and remove its data.
# Usage: with_etcd.sh COMMAND [ARGS...]
set -euo pipefail
etcd_bin=${ETCD_BIN:-/usr/bin/etcd}
[ -x "$etcd_bin" ] || { echo "$etcd_bin is missing: 'make deps-apt' installs etcd-server" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
client_port=$(free_port)
peer_port=$(free_port)
while [ "$peer_port" = "$client_port" ]; do peer_port=$(free_port); done
data=$(mktemp -d /tmp/polyflake-etcd-XXXXXX)
client="http://127.0.0.1:$client_port"
peer="http://127.0.0.1:$peer_port"

"$etcd_bin" --name polyflake-c-test --data-dir "$data/data" \
  --listen-client-urls "$client" --advertise-client-urls "$client" \
  --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
  --initial-cluster "polyflake-c-test=$peer" >"$data/etcd.log" 2>&1 &
etcd_pid=$!
cleanup() {
  kill "$etcd_pid" 2>/dev/null || true
  wait "$etcd_pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

healthy() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$client_port" || return 1
  printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  reply=$(cat <&3 || true)
  exec 3>&-
  [[ $reply == *'"health":"true"'* ]]
}
for _ in $(seq 1 300); do
  if healthy 2>/dev/null; then break; fi
  kill -0 "$etcd_pid" 2>/dev/null || { echo "etcd exited:" >&2; cat "$data/etcd.log" >&2; exit 1; }
  sleep 0.1
done
healthy 2>/dev/null || { echo "etcd not healthy within 30 s:" >&2; tail -n 30 "$data/etcd.log" >&2; exit 1; }
echo "etcd $("$etcd_bin" --version | head -n1 | awk '{print $NF}') up at $client (pid $etcd_pid)"

POLYFLAKE_ETCD_ENDPOINT=$client "$@" "$client"
