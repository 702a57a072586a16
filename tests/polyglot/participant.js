'use strict'
// The Node participant of the cross-language uniqueness run (issue 8):
//
//   node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH
//
// A strict generator (default layout and epoch) on a file lease of LEASE_DIR (default slots,
// identity "node"), waiting out the restart guard with waitReady() for up to 15 s (a slot of a
// fresh directory has no record yet, so it waits one reserve); then single nextId() calls at full
// speed for SECONDS (the time is checked every 1,024 IDs), the IDs kept in a growable
// BigUint64Array; then OUT_PATH gets them as raw little-endian u64 in issue order and
// OUT_PATH + '.json' a summary. Exit 0 on success; any error: one line on stderr, exit 1.
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

function main() {
  const [dir, secondsArg, out] = process.argv.slice(2)
  if (process.argv.length !== 5) fail('usage: node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH')
  const seconds = Number(secondsArg)
  if (!Number.isFinite(seconds) || seconds < 0) fail(`SECONDS must be a number >= 0, got ${JSON.stringify(secondsArg)}`)
  const { Snowflake } = require(path.resolve(__dirname, '..', '..', 'node'))

  const gen = Snowflake.fromFileLease({ dir, identity: 'node' })
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
