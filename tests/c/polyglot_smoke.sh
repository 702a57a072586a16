#!/usr/bin/env bash
# The C, C++ and Go participants of the cross-language run, all at once on one temporary lease
# directory, twice (the second round takes the same slots again behind the restart guard); then
# every output is checked: exit 0 and a silent stderr, the .json fields, the .bin size, IDs
# strictly increasing and carrying the node id, no duplicate across the union, distinct node ids,
# and each language's second round after its first. Then the uuidv7 mode, all three at once: 16
# big-endian bytes per UUID, version 7 and RFC 9562's variant, strictly increasing per language,
# no duplicate across the union, the .json with "format": "uuidv7" and node_id null. Also the
# error path: bad arguments and an unusable lease directory give exit 1 and one line on stderr.
# With a ZooKeeper ensemble as second argument (tests/stores/with_zookeeper.sh passes it), the
# Snowflake rounds lease from it (LEASE_DIR zk://ENSEMBLE/PREFIX) instead of a lease directory,
# and an unreachable ensemble joins the error path.
# Usage: polyglot_smoke.sh DIR_WITH_PARTICIPANTS [ZOOKEEPER_ENSEMBLE]
set -euo pipefail
bin=$1
work=$(mktemp -d /tmp/polyflake-polyglot-XXXXXX)
trap 'rm -rf "$work"' EXIT
langs="c cpp go"
lease=$work/leases
bad_lease=/dev/null/x
if [ $# -ge 2 ]; then
  lease="zk://$2/polyflake-polyglot-smoke-$$"
  bad_lease="zk://127.0.0.1:1/polyflake-unreachable"
  echo "leasing from ZooKeeper: $lease"
fi

for round in 1 2; do
  pids=""
  for l in $langs; do
    "$bin/participant_$l" "$lease" 0.5 "$work/$l.$round.bin" 2>"$work/$l.$round.err" &
    pids="$pids $!"
  done
  for p in $pids; do wait "$p" || { cat "$work"/*.err >&2; echo "a participant failed" >&2; exit 1; }; done
  for l in $langs; do
    [ ! -s "$work/$l.$round.err" ] || { echo "participant_$l wrote to stderr:" >&2; cat "$work/$l.$round.err" >&2; exit 1; }
  done
done

python3 - "$work" $langs <<'PY'
import json, struct, sys
work, langs = sys.argv[1], sys.argv[2:]
seen, nodes = set(), {}
for rnd in (1, 2):
    round_nodes = set()
    for lang in langs:
        meta = json.load(open(f"{work}/{lang}.{rnd}.bin.json"))
        assert list(meta) == ["language", "node_id", "count", "seconds", "first", "last"], meta
        assert meta["language"] == lang, meta
        raw = open(f"{work}/{lang}.{rnd}.bin", "rb").read()
        assert len(raw) == 8 * meta["count"] and meta["count"] > 1000, (lang, len(raw), meta)
        ids = struct.unpack(f"<{meta['count']}Q", raw)
        assert all(a < b for a, b in zip(ids, ids[1:])), f"{lang}: not strictly increasing"
        assert str(ids[0]) == meta["first"] and str(ids[-1]) == meta["last"], meta
        # Default layout 41/10/12: the node id sits above the 12 sequence bits.
        assert {(i >> 12) & 1023 for i in ids} == {meta["node_id"]}, f"{lang}: node id"
        assert meta["node_id"] not in round_nodes, f"{lang}: node {meta['node_id']} taken twice"
        round_nodes.add(meta["node_id"])
        before = len(seen)
        seen.update(ids)
        assert len(seen) == before + len(ids), f"{lang} round {rnd}: duplicate IDs"
        if rnd == 1:
            nodes[lang] = (meta["node_id"], ids[-1])
        else:
            node, last = nodes[lang]
            assert meta["node_id"] == node, f"{lang}: identity did not keep its slot"
            assert ids[0] > last, f"{lang}: round 2 starts before round 1 ended"
        print(f"  {lang:4} round {rnd}: node {meta['node_id']:4}, {meta['count']:9} IDs in {meta['seconds']:.3f} s")
print(f"participants: {len(seen)} IDs, no duplicate, distinct node ids")
PY

pids=""
for l in $langs; do
  "$bin/participant_$l" /nonexistent/lease-dir-unused 0.5 "$work/$l.uuid" uuidv7 2>"$work/$l.uuid.err" &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || { cat "$work"/*.uuid.err >&2; echo "a uuidv7 participant failed" >&2; exit 1; }; done
python3 - "$work" $langs <<'PY'
import json, sys, uuid
work, langs = sys.argv[1], sys.argv[2:]
seen = set()
for lang in langs:
    meta = json.load(open(f"{work}/{lang}.uuid.json"))
    assert list(meta) == ["language", "format", "node_id", "count", "seconds", "first", "last"], meta
    assert meta["language"] == lang and meta["format"] == "uuidv7" and meta["node_id"] is None, meta
    raw = open(f"{work}/{lang}.uuid", "rb").read()
    assert len(raw) == 16 * meta["count"] and meta["count"] > 1000, (lang, len(raw), meta)
    ids = [raw[i:i + 16] for i in range(0, len(raw), 16)]
    assert all(a < b for a, b in zip(ids, ids[1:])), f"{lang}: not strictly increasing"
    first, last = uuid.UUID(bytes=ids[0]), uuid.UUID(bytes=ids[-1])
    assert str(first) == meta["first"] and str(last) == meta["last"], meta
    assert all(i[6] >> 4 == 7 and i[8] >> 6 == 2 for i in ids[:: max(1, len(ids) // 1000)]), lang
    before = len(seen)
    seen.update(ids)
    assert len(seen) == before + len(ids), f"{lang}: duplicate UUIDs"
    print(f"  {lang:4} uuidv7: {meta['count']:9} UUIDs in {meta['seconds']:.3f} s")
print(f"uuidv7 participants: {len(seen)} UUIDs, no duplicate")
PY

for l in $langs; do
  for args in "$work/leases" "$work/leases x $work/o" "$work/leases -1 $work/o" "$bad_lease 0.1 $work/o" \
      "$work/leases 0.1 $work/o uuid" "$work/leases 0.1 $work/o uuidv7 x"; do
    # shellcheck disable=SC2086
    if "$bin/participant_$l" $args >"$work/out" 2>"$work/err"; then
      echo "participant_$l $args succeeded" >&2; exit 1; fi
    [ "$(wc -l <"$work/err")" = 1 ] || { echo "participant_$l $args: not one line:" >&2; cat "$work/err" >&2; exit 1; }
  done
  echo "  $l error path: $(cat "$work/err")"
done
echo "polyglot participants (C, C++, Go; leases: $lease): ok"
