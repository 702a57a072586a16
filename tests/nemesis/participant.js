// A nemesis participant in Node: lease a slot from etcd and mint until killed.
//
// Usage: node participant.js ETCD_URL PREFIX SLOTS NAME OUT_PATH
//
// Each batch is appended to OUT_PATH as one record: u32 count, i64 R (the lease's high-water
// mark right after the batch, Unix ms), then `count` IDs (u64), all little-endian. A refusal is
// retried; a lost lease ends the process with exit code 3 (the harness starts a new one).
'use strict'

const fs = require('node:fs')
const { Snowflake } = require('../../node')

const [url, prefix, slots, name, out] = process.argv.slice(2)

function sleep (ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

let g
for (;;) {
  try {
    g = Snowflake.fromEtcd({ endpoints: url, prefix, slots: Number(slots), identity: name, reserveMs: 500, ttlS: 2, connectTimeoutMs: 1000 })
    break
  } catch (e) { // every slot held for now, or etcd away: try again
    process.stderr.write(`${name}: ${e.code}\n`)
    sleep(200)
  }
}
const fd = fs.openSync(out, 'a')
for (;;) {
  let ids
  try {
    ids = g.nextIds(1000)
  } catch (e) {
    if (e.code === 'LEASE_LOST') process.exit(3)
    sleep(5)
    continue
  }
  const head = Buffer.alloc(12)
  head.writeUInt32LE(ids.length, 0)
  head.writeBigInt64LE(BigInt(g.health().lease.highWaterMs), 4)
  fs.writeSync(fd, Buffer.concat([head, Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength)]))
}
