// A nemesis participant in Node: lease a slot from etcd and mint until killed.
//
// Usage: node participant.js ETCD_URL PREFIX SLOTS NAME OUT_PATH [TTL_S]
//
// Each batch is appended to OUT_PATH as one record: u32 count, i64 R (the lease's high-water
// mark right after the batch, Unix ms), then `count` IDs (u64), all little-endian. A refusal is
// retried; a lost lease ends the process with exit code 3 (the harness starts a new one) after one
// line on stderr, "NAME: LEASE_LOST: why" (the harness times it); a failed renewal, as soon as a
// batch sees it, is a line "NAME: LEASE_FAILURES count: error". TTL_S: the etcd lease's time to
// live (default 2).
'use strict'

const fs = require('node:fs')
const { Snowflake } = require('../../node')

const [url, prefix, slots, name, out, ttl] = process.argv.slice(2)
const ttlS = ttl === undefined ? 2 : Number(ttl)

function sleep (ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

let g
for (;;) {
  try {
    g = Snowflake.fromEtcd({ endpoints: url, prefix, slots: Number(slots), identity: name, reserveMs: 500, ttlS, connectTimeoutMs: 1000 })
    break
  } catch (e) { // every slot held for now, or etcd away: try again
    process.stderr.write(`${name}: ${e.code}\n`)
    sleep(200)
  }
}
const fd = fs.openSync(out, 'a')
let failures = 0
for (;;) {
  let ids
  try {
    ids = g.nextIds(1000)
  } catch (e) {
    if (e.code === 'LEASE_LOST') {
      fs.writeSync(2, `${name}: LEASE_LOST: ${e.message}\n`)
      process.exit(3)
    }
    sleep(5)
    continue
  }
  const health = g.health()
  if (health.leaseFailures !== failures) { // a renewal failed (timed out): tell the harness
    failures = health.leaseFailures
    fs.writeSync(2, `${name}: LEASE_FAILURES ${failures}: ${health.lease.lastError}\n`)
  }
  const head = Buffer.alloc(12)
  head.writeUInt32LE(ids.length, 0)
  head.writeBigInt64LE(BigInt(health.lease.highWaterMs), 4)
  fs.writeSync(fd, Buffer.concat([head, Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength)]))
}
