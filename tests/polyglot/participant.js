'use strict'
// The Node participant of the cross-language uniqueness run:
//
//   node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH [uuidv7]
//
// A strict generator (default layout and epoch) on a file lease of LEASE_DIR (default slots,
// identity "node"; a LEASE_DIR of the form zk://HOST:PORT[,HOST:PORT]/PREFIX leases from that
// ZooKeeper ensemble under /PREFIX instead), waiting out the restart guard with waitReady() for up to 15 s (a slot of a
// fresh directory has no record yet, so it waits one reserve); then single nextId() calls at full
// speed for SECONDS (the time is checked every 1,024 IDs), the IDs kept in a growable
// BigUint64Array; then OUT_PATH gets them as raw little-endian u64 in issue order and
// OUT_PATH + '.json' a summary. With a 4th argument `uuidv7`: no lease (LEASE_DIR is ignored),
// single nextIdBuffer() calls of a strict Uuid7Generator, written as 16 bytes big-endian each,
// the summary with "format": "uuidv7" and a null node_id (run.py --format uuidv7).
// Exit 0 on success; any error: one line on stderr, exit 1.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { performance } = require('node:perf_hooks')

const GUARD_WAIT_MS = 15_000
const CHECK_EVERY = 1024

function fail(message) {
  process.stderr.write(`participant.js: ${String(message).split('\n')[0]}\n`)
  process.exit(1)
}

function writeIds(file, ids, count) {
  let bytes
  if (os.endianness() === 'LE') {
    bytes = Buffer.from(ids.buffer, ids.byteOffset, count * 8)
  } else {
    bytes = Buffer.alloc(count * 8)
    for (let i = 0; i < count; i++) bytes.writeBigUInt64LE(ids[i], i * 8)
  }
  fs.writeFileSync(file, bytes)
}

// The UUIDv7 run: single calls for `seconds`, 16 bytes big-endian each.
function uuidv7(polyflake, seconds, out) {
  const gen = new polyflake.Uuid7Generator()
  let buf = Buffer.alloc(16 << 20)
  let count = 0
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  for (;;) {
    if ((count + CHECK_EVERY) * 16 > buf.length) {
      const grown = Buffer.alloc(buf.length * 2)
      buf.copy(grown)
      buf = grown
    }
    for (let i = 0; i < CHECK_EVERY; i++) gen.nextIdBuffer().copy(buf, 16 * count++)
    if (performance.now() >= end) break
  }
  const elapsed = (performance.now() - t0) / 1000
  gen.close()
  fs.writeFileSync(out, buf.subarray(0, 16 * count))
  const value = (i) => BigInt(`0x${buf.toString('hex', 16 * i, 16 * i + 16)}`).toString()
  const summary = {
    language: 'node',
    format: 'uuidv7',
    node_id: null,
    count,
    seconds: elapsed,
    first: value(0),
    last: value(count - 1),
  }
  fs.writeFileSync(`${out}.json`, JSON.stringify(summary) + '\n')
}

// LEASE_DIR as a lease: zk://HOST:PORT[,HOST:PORT]/PREFIX is a ZooKeeper ensemble, anything
// else a directory of slot files.
function lease(Snowflake, dir) {
  const zk = /^zk:\/\/([^/]+)(\/.+)$/.exec(dir)
  if (dir.startsWith('zk://') && !zk) fail(`LEASE_DIR ${JSON.stringify(dir)}: expected zk://HOST:PORT[,HOST:PORT]/PREFIX`)
  if (zk) return Snowflake.fromZooKeeper({ ensemble: zk[1], prefix: zk[2], identity: 'node' })
  return Snowflake.fromFileLease({ dir, identity: 'node' })
}

function main() {
  const [dir, secondsArg, out, format] = process.argv.slice(2)
  const usage = 'usage: node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH [uuidv7]'
  if (process.argv.length !== 5 && !(process.argv.length === 6 && format === 'uuidv7')) fail(usage)
  const seconds = Number(secondsArg)
  if (!Number.isFinite(seconds) || seconds < 0) fail(`SECONDS must be a number >= 0, got ${JSON.stringify(secondsArg)}`)
  const polyflake = require(path.resolve(__dirname, '..', '..', 'node'))
  if (format === 'uuidv7') return uuidv7(polyflake, seconds, out)

  const gen = lease(polyflake.Snowflake, dir)
  gen.waitReady(GUARD_WAIT_MS)
  const nextId = gen.nextId
  let ids = new BigUint64Array(1 << 20)
  let count = 0
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  for (;;) {
    if (count + CHECK_EVERY > ids.length) {
      const grown = new BigUint64Array(ids.length * 2)
      grown.set(ids)
      ids = grown
    }
    for (let i = 0; i < CHECK_EVERY; i++) ids[count++] = nextId()
    if (performance.now() >= end) break
  }
  const elapsed = (performance.now() - t0) / 1000
  const nodeId = gen.nodeId
  gen.close()

  writeIds(out, ids, count)
  const summary = {
    language: 'node',
    node_id: nodeId,
    count,
    seconds: elapsed,
    first: ids[0].toString(),
    last: ids[count - 1].toString(),
  }
  fs.writeFileSync(`${out}.json`, JSON.stringify(summary) + '\n')
}

try {
  main()
} catch (e) {
  fail(e && e.code ? `${e.code}: ${e.message}` : (e && e.message) || e)
}
