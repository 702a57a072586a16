'use strict'
// The Node benchmark (not a test): `make bench-node`, or `node --expose-gc bench/bench.js` in node/.
// Everything is measured in this one run, interleaved, so the ratios compare like with like.
//
// Strict mode on the default layout can issue at most 4,096 IDs per ms (one node), so a tight
// loop of Snowflake.nextId() measures that cap (~244 ns/ID), not the call. The per-call cost is
// measured on MonotonicSnowflake (default layout: never waits) and on a strict Snowflake with
// the non-exhausting layout 41/1/21 (2,097,152 IDs per ms), and the table says which is which.
//
// Issue 15: uuid7() (a string, on the process-wide strict generator) beside uuid's v7() and the
// uuidv7 package's uuidv7(). Issue 16: nextId() on the coarse clock source. Issue 18: the async
// forms' fast path (a Promise settled at once, no thread hop) beside the synchronous call.
const crypto = require('node:crypto')
const polyflake = require('..')
const { Snowflake, MonotonicSnowflake, Uuid7Generator, UlidGenerator } = polyflake
const { Snowflake: Sapphire } = require('./node_modules/@sapphire/snowflake')
const { v7: uuidV7 } = require('./node_modules/uuid')
const { uuidv7: uuidv7Pkg } = require('./node_modules/uuidv7')

const EPOCH = 1704067200000n
const ROUNDS = 9
const N = 200_000

const strictDefault = new Snowflake({ nodeId: 1 })
const strictWide = new Snowflake({ nodeId: 1, layout: '41/1/21' })
const mono = new MonotonicSnowflake({ nodeId: 2 })
const sapphire = new Sapphire(EPOCH)
const protoNext = MonotonicSnowflake.prototype.nextId
const coarseMono = new MonotonicSnowflake({ nodeId: 3, clock: 'coarse' })
const coarseWide = new Snowflake({ nodeId: 0, layout: '41/1/21', clock: 'coarse' })
const u7 = new Uuid7Generator()
const ul = new UlidGenerator()
const { uuid7, ulid } = polyflake

const cases = [
  ['Date.now()', () => Date.now()],
  ['crypto.randomUUID()', () => crypto.randomUUID()],
  ['uuid v7()', () => uuidV7()],
  ['uuidv7 uuidv7()', () => uuidv7Pkg()],
  ['polyflake uuid7()', () => uuid7()],
  ['polyflake Uuid7Generator.nextId()', () => u7.nextId()],
  ['polyflake Uuid7Generator.nextIdBuffer()', () => u7.nextIdBuffer()],
  ['polyflake ulid()', () => ulid()],
  ['polyflake UlidGenerator.nextId()', () => ul.nextId()],
  ['@sapphire/snowflake generate()', () => sapphire.generate()],
  ['polyflake MonotonicSnowflake.nextId() (41/10/12)', () => mono.nextId()],
  ['polyflake Snowflake.nextId() (strict, 41/1/21)', () => strictWide.nextId()],
  ['polyflake MonotonicSnowflake.nextId() (41/10/12, coarse clock)', () => coarseMono.nextId()],
  ['polyflake Snowflake.nextId() (strict, 41/1/21, coarse clock)', () => coarseWide.nextId()],
  // The async fast path: a Promise settled at once (the call's cost; awaiting it is timed below).
  ['polyflake Snowflake.nextIdAsync() (strict, 41/1/21; fast path)', () => strictWide.nextIdAsync()],
  ['polyflake Snowflake.tryNextId() (strict, 41/1/21)', () => strictWide.tryNextId()],
  ['polyflake Snowflake.nextId() (strict, 41/10/12: capped at 4,096/ms)', () => strictDefault.nextId()],
  // The napi-rs class method (what the bound per-instance nextId replaces on the hot path).
  ['polyflake MonotonicSnowflake.prototype.nextId.call(gen) (napi-rs method)', () => protoNext.call(mono)],
]

let sink
function timeOnce(fn) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink = fn()
  return Number(process.hrtime.bigint() - t0) / N
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

// Warm up every case, then interleave the rounds.
for (const [, fn] of cases) timeOnce(fn)
const samples = cases.map(() => [])
for (let r = 0; r < ROUNDS; r++) cases.forEach(([, fn], i) => samples[i].push(timeOnce(fn)))
const per = Object.fromEntries(cases.map(([name], i) => [name, median(samples[i])]))

// nextIds(10**6): one reservation (monotonic) and the strict fill (waits into each next ms).
// Each round first collects the previous rounds' 8 MB arrays (run with --expose-gc), so a round
// times the call, not a major GC that earlier garbage happened to trigger inside it.
const collect = typeof global.gc === 'function' ? global.gc : () => {}
function batch(gen, n, rounds) {
  gen.nextIds(n)
  const xs = []
  for (let r = 0; r < rounds; r++) {
    collect()
    const t0 = process.hrtime.bigint()
    const ids = gen.nextIds(n)
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (ids.length !== n) throw new Error('short batch')
  }
  return median(xs)
}
const batchMono = batch(mono, 1e6, 9)
const batchWide = batch(strictWide, 1e6, 9)
const batchStrict = batch(strictDefault, 1e6, 3)

// The async fast path awaited, beside the synchronous call awaited the same way (an async loop
// of N awaits of a plain value), so the difference is the Promise the async form makes.
async function timeAwait(fn) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink = await fn()
  return Number(process.hrtime.bigint() - t0) / N
}

// A 1-second tight loop: every ID kept, then duplicates (sorted copy) and out-of-order counted.
function tightLoop(next) {
  const cap = 16_000_000
  const ids = new BigInt64Array(cap)
  let n = 0
  let outOfOrder = 0
  let prev = -1n
  const end = process.hrtime.bigint() + 1_000_000_000n
  while (n < cap) {
    for (let k = 0; k < 1000 && n < cap; k++) {
      const id = next()
      if (id <= prev) outOfOrder++
      prev = id
      ids[n++] = id
    }
    if (process.hrtime.bigint() >= end) break
  }
  const sorted = ids.subarray(0, n).slice().sort()
  let dups = 0
  for (let i = 1; i < n; i++) if (sorted[i] === sorted[i - 1]) dups++
  return { n, dups, outOfOrder }
}
async function awaited() {
  const pairs = [
    ['await nextId() (sync call, awaited)', () => strictWide.nextId()],
    ['await nextIdAsync() (fast path)', () => strictWide.nextIdAsync()],
  ]
  for (const [, fn] of pairs) await timeAwait(fn)
  const xs = pairs.map(() => [])
  for (let r = 0; r < ROUNDS; r++) for (let i = 0; i < pairs.length; i++) xs[i].push(await timeAwait(pairs[i][1]))
  return pairs.map(([name], i) => [name, median(xs[i])])
}

async function main() {
const awaitedTimes = await awaited()
const loops = [
  ['polyflake Snowflake (strict, 41/10/12)', tightLoop(() => strictDefault.nextId())],
  ['polyflake MonotonicSnowflake (41/10/12)', tightLoop(() => mono.nextId())],
  ['@sapphire/snowflake generate()', tightLoop(() => sapphire.generate())],
]

const sap = per['@sapphire/snowflake generate()']
const uuidRef = per['uuid v7()']
const uuidv7Ref = per['uuidv7 uuidv7()']
const fmt = (x) => x.toFixed(1)
const lines = []
lines.push(`${typeof global.gc === 'function' ? '' : '(run without --expose-gc: batch timings include GC) '}Node ${process.version}, ${require('node:os').cpus()[0].model}, ${require('node:os').cpus().length} cores; median of ${ROUNDS} interleaved rounds of ${N.toLocaleString('en-US')} calls.`)
lines.push('')
lines.push('| call | ns/call | vs @sapphire/snowflake | vs uuid v7() | vs uuidv7 |')
lines.push('| --- | ---: | ---: | ---: | ---: |')
for (const [name] of cases) {
  const r = (ref) => `${(per[name] / ref).toFixed(2)}x`
  lines.push(`| ${name} | ${fmt(per[name])} | ${r(sap)} | ${r(uuidRef)} | ${r(uuidv7Ref)} |`)
}
lines.push('')
lines.push('| awaited in an async loop | ns/call |')
lines.push('| --- | ---: |')
for (const [name, ns] of awaitedTimes) lines.push(`| ${name} | ${fmt(ns)} |`)
lines.push('')
lines.push('| batch | ms (median) |')
lines.push('| --- | ---: |')
lines.push(`| MonotonicSnowflake.nextIds(10**6) (one reservation) | ${batchMono.toFixed(2)} |`)
lines.push(`| Snowflake.nextIds(10**6), strict 41/1/21 | ${batchWide.toFixed(2)} |`)
lines.push(`| Snowflake.nextIds(10**6), strict 41/10/12 (waits: 4,096 per ms) | ${batchStrict.toFixed(2)} |`)
lines.push('')
lines.push('| 1-second tight loop | IDs | duplicates | out of order |')
lines.push('| --- | ---: | ---: | ---: |')
for (const [name, r] of loops) lines.push(`| ${name} | ${r.n.toLocaleString('en-US')} | ${r.dups.toLocaleString('en-US')} | ${r.outOfOrder.toLocaleString('en-US')} |`)
lines.push('')
const ratioMono = per['polyflake MonotonicSnowflake.nextId() (41/10/12)'] / sap
const ratioWide = per['polyflake Snowflake.nextId() (strict, 41/1/21)'] / sap
const poly = loops.filter(([name]) => name.startsWith('polyflake'))
lines.push('Targets:')
lines.push(`- nextId() <= 0.75x @sapphire/snowflake: monotonic ${ratioMono.toFixed(2)}x, strict 41/1/21 ${ratioWide.toFixed(2)}x: ${ratioMono <= 0.75 && ratioWide <= 0.75 ? 'MET' : 'MISSED'}`)
lines.push(`- nextIds(10**6) <= 10 ms (MonotonicSnowflake): ${batchMono.toFixed(2)} ms: ${batchMono <= 10 ? 'MET' : 'MISSED'}`)
lines.push(`- zero duplicates and zero out-of-order for polyflake: ${poly.every(([, r]) => r.dups === 0 && r.outOfOrder === 0) ? 'MET' : 'MISSED'}`)
const met = (ok) => (ok ? 'MET' : 'MISSED')
const u = per['polyflake uuid7()']
lines.push(`- uuid7() <= 0.1x uuid v7(): ${(u / uuidRef).toFixed(3)}x: ${met(u / uuidRef <= 0.1)}`)
lines.push(`- uuid7() <= 0.5x uuidv7 uuidv7(): ${(u / uuidv7Ref).toFixed(3)}x: ${met(u / uuidv7Ref <= 0.5)}`)
const cm = per['polyflake MonotonicSnowflake.nextId() (41/10/12, coarse clock)'] / sap
const cw = per['polyflake Snowflake.nextId() (strict, 41/1/21, coarse clock)'] / sap
lines.push(`- nextId() on the coarse clock <= 0.35x @sapphire/snowflake: monotonic ${cm.toFixed(2)}x, strict 41/1/21 ${cw.toFixed(2)}x: ${met(cm <= 0.35 && cw <= 0.35)}`)
const sync = per['polyflake Snowflake.nextId() (strict, 41/1/21)']
const fast = per['polyflake Snowflake.nextIdAsync() (strict, 41/1/21; fast path)']
const [[, awaitSync], [, awaitAsync]] = awaitedTimes
lines.push(`- nextIdAsync() fast path within 1.5x of nextId(): the call ${(fast / sync).toFixed(2)}x (${fmt(fast)} vs ${fmt(sync)} ns): ${met(fast / sync <= 1.5)}; awaited, ${(awaitAsync / awaitSync).toFixed(2)}x`)
console.log(lines.join('\n'))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
