'use strict'
// The Node benchmark (not a test), in two modes, both from node/:
//
//   node --expose-gc bench/bench.js          `make bench-node`: the human tables and targets
//   node --expose-gc bench/bench.js --check  `make -s bench-check-node`: the rows of the benchmark
//                                            gate (`make bench-check`), one JSON object a line on
//                                            stdout, nothing else there
//
// Everything is measured in one run, interleaved round by round, so a ratio compares like with
// like on a machine other engineers share: every figure that counts is a ratio to a reference
// measured in the same round, the median over rounds.
//
// Strict mode on the default layout can issue at most 4,096 IDs per ms (one node), so a tight
// loop of Snowflake.nextId() measures that cap (~244 ns/ID), not the call. The per-call cost is
// measured on MonotonicSnowflake (default layout: never waits) and on a strict Snowflake with
// the non-exhausting layout 41/1/21 (2,097,152 IDs per ms), and the table says which is which.
//
// UUIDv7: uuid7() (a string, on the process-wide strict generator) beside uuid's v7() and the
// uuidv7 package's uuidv7(). The coarse clock: nextId() on the coarse clock source. The async
// forms: their fast path (a Promise settled at once, no thread hop) beside the synchronous call.
// The floors (bench/floor.c, built by .build/mk/node.mk): a Node-API function that issues nothing,
// alone, and returning a constant ID through napi_create_bigint_uint64 or through the slot the
// binding's nextId uses (node/src/fast.rs).
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const polyflake = require('..')
const { Snowflake, MonotonicSnowflake, Uuid7Generator, UlidGenerator } = polyflake
const { Snowflake: Sapphire } = require('./node_modules/@sapphire/snowflake')
const { v7: uuidV7 } = require('./node_modules/uuid')
const { uuidv7: uuidv7Pkg } = require('./node_modules/uuidv7')

const CHECK = process.argv.includes('--check')
const EPOCH = 1704067200000n

// Benchmark generators claim their node ids in a host scope of their own (never clashing with a
// test suite or another run on this host), with the restart guard off (no mark in a state
// directory: a mark, one reserve ahead of the clock, would also bound a monotonic lead), and
// monotonic ones without a lead limit: the default 5,000 ms is passed within a second of a
// flat-out loop, and every call after refuses with LEAD_LIMIT_EXCEEDED.
const host = { restartGuard: 'off', hostScope: `bench-node-${process.pid}` }
const unbounded = { ...host, maxLeadMs: null }

const strictDefault = new Snowflake({ nodeId: 1, ...host })
const strictWide = new Snowflake({ nodeId: 1, layout: '41/1/21', ...host })
const mono = new MonotonicSnowflake({ nodeId: 2, ...unbounded })
const sapphire = new Sapphire(EPOCH)
const protoNext = MonotonicSnowflake.prototype.nextId
const coarseMono = new MonotonicSnowflake({ nodeId: 3, clock: 'coarse', ...unbounded })
const coarseWide = new Snowflake({ nodeId: 0, layout: '41/1/21', clock: 'coarse', ...host })
const batchMono = new MonotonicSnowflake({ nodeId: 4, ...unbounded })
const u7 = new Uuid7Generator()
const ul = new UlidGenerator()
const { uuid7, ulid } = polyflake
for (const g of [coarseMono, coarseWide]) {
  if (g.clockSource !== 'coarse') console.error(`note: the coarse clock is not in effect: ${g.health().clockNote}`)
}

// The floor probe (bench/floor.c): .build/mk/node.mk builds it into $(CARGO_TARGET_DIR)/node-bench.
const floorPath = process.env.POLYFLAKE_NODE_FLOOR ||
  path.join(process.env.CARGO_TARGET_DIR || path.join(__dirname, '..', '..', 'target'), 'node-bench', 'floor.node')
const floor = fs.existsSync(floorPath) ? require(floorPath) : null
if (!floor) console.error(`note: ${floorPath} is missing (make bench-node builds it): no floor rows`)
// The same JS shape as the binding's nextId (node/src/fast.rs, ISSUE_IN_JS) over the probe.
const floorSlot = floor && ((next, slot) => function nextId() {
  const id = next()
  return id === undefined ? slot[0] : id
})(floor.slot, floor.slotArray)

// glibc's malloc hands the free memory at the top of its heap back to the system, and takes it
// again page by page for the next batch's ArrayBuffer, until the process frees a chunk it had to
// mmap (above 128 KiB, up to 32 MiB): from then on it keeps it (its thresholds only ever rise).
// A long-lived process gets there soon; a benchmark gets there first, so a batch row does not
// flip between the two states within or between runs (nextIds(4096): 3.6 against 1.4 ns per ID,
// 160,000 page faults against 5,000 in a check run). Needs --expose-gc (both make targets).
if (typeof global.gc === 'function') {
  new ArrayBuffer(16 << 20)
  global.gc()
} else {
  console.error('note: run with --expose-gc (batch rows may include page faults; see bench.js)')
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
let sink

// One timing of `n` calls of `fn`, in ns per call (per ID for a batch: `per` IDs a call).
function timeOnce(fn, n, per = 1) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink = fn()
  return Number(process.hrtime.bigint() - t0) / (n * per)
}

// Every timing lasts about WINDOW_NS: on a shared machine a short timing is either preempted or
// not, and the median over many rounds keeps the ones that were not (a timing of 20 ms is always
// preempted a little, by a different amount each time).
const WINDOW_NS = 1e6

// The calls (of `per` IDs each) a timing of `fn` makes to last about WINDOW_NS, after a warm-up.
function calls(fn, per = 1) {
  const n = Math.ceil(20_000 / per)
  timeOnce(fn, n, per)
  const ns = median([0, 1, 2].map(() => timeOnce(fn, n, per))) * per
  return Math.max(1, Math.min(1_000_000, Math.round(WINDOW_NS / ns)))
}

// `count` rounds, each timing every case once for about WINDOW_NS, or `n` calls where a case says
// (the order rotates by one a round, so no case always follows the same one). Returns each
// case's samples, by round.
function rounds(cases, count) {
  const n = cases.map((c) => c.n ?? calls(c.fn, c.per))
  const samples = cases.map(() => [])
  for (let r = 0; r < count; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length
      samples[i].push(timeOnce(cases[i].fn, n[i], cases[i].per))
    }
  }
  return samples
}

// The check mode: one JSON object a row, each case beside its reference. A row's case and its
// reference are timed back to back (in alternating order) in each of many rounds, so a round
// that another process slowed slows both, and the median of the rounds' ratios sets aside the
// rounds where it slowed one of them.
function check() {
  const ROUNDS = 301
  const refs = {
    'process.hrtime.bigint()': () => process.hrtime.bigint(),
    'Date.now()': () => Date.now(),
    '@sapphire/snowflake generate()': () => sapphire.generate(),
  }
  const hr = 'process.hrtime.bigint()'
  const sap = '@sapphire/snowflake generate()'
  const rows = [
    { row: 'node nextId strict 41/1/21', fn: () => strictWide.nextId(), ref: hr },
    { row: 'node nextId monotonic 41/10/12', fn: () => mono.nextId(), ref: hr },
    { row: 'node nextId coarse strict 41/1/21', fn: () => coarseWide.nextId(), ref: hr },
    { row: 'node nextId coarse monotonic 41/10/12', fn: () => coarseMono.nextId(), ref: hr },
    { row: 'node nextId coarse monotonic vs sapphire', fn: () => coarseMono.nextId(), ref: sap },
    { row: 'node nextId monotonic vs sapphire', fn: () => mono.nextId(), ref: sap },
    // Per ID (monotonic: one reservation a batch, never a wait).
    { row: 'node nextIds(4096) per id', fn: () => batchMono.nextIds(4096), ref: hr, per: 4096 },
    { row: 'node uuid7()', fn: () => uuid7(), ref: 'Date.now()' },
    { row: 'node ulid()', fn: () => ulid(), ref: 'Date.now()' },
  ]
  if (floor) {
    rows.push({ row: 'node floor napi call', fn: () => floor.slot(), ref: hr })
    rows.push({ row: 'node floor napi bigint', fn: () => floor.bigint(), ref: hr })
    rows.push({ row: 'node floor napi slot', fn: () => floorSlot(), ref: hr })
  }
  for (const r of rows) r.n = calls(r.fn, r.per)
  const refCalls = Object.fromEntries(Object.entries(refs).map(([name, fn]) => [name, calls(fn)]))
  const got = rows.map(() => ({ ns: [], ref: [], ratio: [] }))
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < rows.length; k++) {
      const i = (k + r) % rows.length
      const { fn, ref, n, per } = rows[i]
      let a, b
      if (r % 2 === 0) {
        a = timeOnce(fn, n, per)
        b = timeOnce(refs[ref], refCalls[ref])
      } else {
        b = timeOnce(refs[ref], refCalls[ref])
        a = timeOnce(fn, n, per)
      }
      got[i].ns.push(a)
      got[i].ref.push(b)
      got[i].ratio.push(a / b)
    }
  }
  rows.forEach(({ row, ref }, i) => {
    const out = {
      row,
      ns: rounded(median(got[i].ns)),
      reference: ref,
      reference_ns: rounded(median(got[i].ref)),
      ratio: Number(median(got[i].ratio).toFixed(4)),
    }
    process.stdout.write(`${JSON.stringify(out)}\n`)
  })
}
const rounded = (x) => Number(x.toFixed(x < 10 ? 3 : 1))

// The full benchmark: the human tables and the targets.
async function full() {
  const ROUNDS = 101
  const N = 200_000 // awaits a timing of the awaited loops (median of 9)
  const table = [
    ['Date.now()', () => Date.now()],
    ['process.hrtime.bigint()', () => process.hrtime.bigint()],
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
  if (floor) {
    table.push(['floor: Node-API function returning nothing (the call alone)', () => floor.slot()])
    table.push(['floor: Node-API function, constant bigint (napi_create_bigint_uint64)', () => floor.bigint()])
    table.push(['floor: Node-API function, constant ID through the slot (as nextId)', () => floorSlot()])
  }
  // The capped case spends 10 milliseconds of 4,096 IDs a timing: a 1 ms timing would mostly
  // find a fresh millisecond (the other cases ran in between) and never wait.
  const capped = 'polyflake Snowflake.nextId() (strict, 41/10/12: capped at 4,096/ms)'
  const cases = table.map(([name, fn]) => ({ fn, n: name === capped ? 40_960 : undefined }))
  const samples = rounds(cases, ROUNDS)
  const per = Object.fromEntries(table.map(([name], i) => [name, median(samples[i])]))
  // A ratio is the median over rounds of the ratio measured within each round.
  const ratioOf = (a, b) => {
    const [i, j] = [a, b].map((name) => table.findIndex(([n]) => n === name))
    return median(samples[i].map((ns, r) => ns / samples[j][r]))
  }

  // nextIds(10**6): one reservation (monotonic) and the strict fill (waits into each next ms).
  // Each round first collects the previous rounds' 8 MB arrays (run with --expose-gc), so a round
  // times the call, not a major GC that earlier garbage happened to trigger inside it.
  const collect = typeof global.gc === 'function' ? global.gc : () => {}
  function batch(gen, n, count) {
    gen.nextIds(n)
    const xs = []
    for (let r = 0; r < count; r++) {
      collect()
      const t0 = process.hrtime.bigint()
      const ids = gen.nextIds(n)
      xs.push(Number(process.hrtime.bigint() - t0) / 1e6)
      if (ids.length !== n) throw new Error('short batch')
    }
    return median(xs)
  }
  const batchMonoMs = batch(mono, 1e6, 9)
  const batchWideMs = batch(strictWide, 1e6, 9)
  const batchStrictMs = batch(strictDefault, 1e6, 3)

  // The async fast path awaited, beside the synchronous call awaited the same way (an async loop
  // of N awaits of a plain value), so the difference is the Promise the async form makes.
  async function timeAwait(fn) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < N; i++) sink = await fn()
    return Number(process.hrtime.bigint() - t0) / N
  }
  const pairs = [
    ['await nextId() (sync call, awaited)', () => strictWide.nextId()],
    ['await nextIdAsync() (fast path)', () => strictWide.nextIdAsync()],
  ]
  for (const [, fn] of pairs) await timeAwait(fn)
  const xs = pairs.map(() => [])
  for (let r = 0; r < 9; r++) for (let i = 0; i < pairs.length; i++) xs[i].push(await timeAwait(pairs[i][1]))
  const awaitedTimes = pairs.map(([name], i) => [name, median(xs[i])])

  // A 1-second tight loop: every ID kept, then duplicates (sorted copy) and out-of-order counted.
  const LOOP_CAP = 20_000_000
  function tightLoop(next) {
    const cap = LOOP_CAP
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
  const loops = [
    ['polyflake Snowflake (strict, 41/10/12)', tightLoop(() => strictDefault.nextId())],
    ['polyflake MonotonicSnowflake (41/10/12)', tightLoop(() => mono.nextId())],
    ['@sapphire/snowflake generate()', tightLoop(() => sapphire.generate())],
  ]

  // CPU per wall-second at the 41/10/12 ceiling (4,096,000 IDs/s on one node): a strict loop of
  // nextId() for 2 s (it sleeps into each next millisecond once 4,096 are spent), and the CPU
  // time each caller needs for 4,096,000 IDs flat out (what that rate costs a caller that could
  // pace itself for free: polyflake strict 41/1/21, and @sapphire/snowflake, which never waits).
  function cpuLoop(next, seconds) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    const end = t0 + BigInt(seconds * 1e9)
    let n = 0
    while (process.hrtime.bigint() < end) {
      for (let k = 0; k < 1000; k++) sink = next()
      n += 1000
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e9
    const c = process.cpuUsage(c0)
    return { rate: n / wall, cpuPerWall: (c.user + c.system) / 1e6 / wall }
  }
  function cpuFor(next, n) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink = next()
    const wall = Number(process.hrtime.bigint() - t0) / 1e9
    const c = process.cpuUsage(c0)
    return { wall, cpu: (c.user + c.system) / 1e6 }
  }
  const ceiling = cpuLoop(() => strictDefault.nextId(), 2)
  const cpuSamples = { poly: [], sap: [] }
  for (let r = 0; r < 5; r++) {
    cpuSamples.poly.push(cpuFor(() => strictWide.nextId(), 4_096_000))
    cpuSamples.sap.push(cpuFor(() => sapphire.generate(), 4_096_000))
  }
  const cpuMed = (list, key) => median(list.map((x) => x[key]))

  const sap = per['@sapphire/snowflake generate()']
  const uuidRef = per['uuid v7()']
  const uuidv7Ref = per['uuidv7 uuidv7()']
  const fmt = (x) => x.toFixed(1)
  const lines = []
  lines.push(`${typeof global.gc === 'function' ? '' : '(run without --expose-gc: batch timings include GC) '}Node ${process.version}, ${os.cpus()[0].model}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)}; median of ${ROUNDS} interleaved rounds, each timing ~${WINDOW_NS / 1e6} ms of calls; a ratio is the median of the rounds' ratios.`)
  lines.push('')
  lines.push('| call | ns/call | vs @sapphire/snowflake | vs uuid v7() | vs uuidv7 |')
  lines.push('| --- | ---: | ---: | ---: | ---: |')
  for (const [name] of table) {
    const r = (ref) => `${ratioOf(name, ref).toFixed(2)}x`
    lines.push(`| ${name} | ${fmt(per[name])} | ${r('@sapphire/snowflake generate()')} | ${r('uuid v7()')} | ${r('uuidv7 uuidv7()')} |`)
  }
  lines.push('')
  lines.push('| awaited in an async loop | ns/call |')
  lines.push('| --- | ---: |')
  for (const [name, ns] of awaitedTimes) lines.push(`| ${name} | ${fmt(ns)} |`)
  lines.push('')
  lines.push('| batch | ms (median) |')
  lines.push('| --- | ---: |')
  lines.push(`| MonotonicSnowflake.nextIds(10**6) (one reservation) | ${batchMonoMs.toFixed(2)} |`)
  lines.push(`| Snowflake.nextIds(10**6), strict 41/1/21 | ${batchWideMs.toFixed(2)} |`)
  lines.push(`| Snowflake.nextIds(10**6), strict 41/10/12 (waits: 4,096 per ms) | ${batchStrictMs.toFixed(2)} |`)
  lines.push('')
  lines.push('| 1-second tight loop | IDs | duplicates | out of order |')
  lines.push('| --- | ---: | ---: | ---: |')
  for (const [name, r] of loops) lines.push(`| ${name} | ${r.n.toLocaleString('en-US')}${r.n === LOOP_CAP ? " (the loop's cap)" : ''} | ${r.dups.toLocaleString('en-US')} | ${r.outOfOrder.toLocaleString('en-US')} |`)
  lines.push('')
  lines.push('| the 41/10/12 ceiling (4,096,000 IDs/s) | IDs/s | CPU-s per wall-s |')
  lines.push('| --- | ---: | ---: |')
  lines.push(`| polyflake Snowflake.nextId() strict 41/10/12, 2 s loop (sleeps when a ms is spent) | ${Math.round(ceiling.rate).toLocaleString('en-US')} | ${ceiling.cpuPerWall.toFixed(3)} |`)
  const flat = (list, name) => {
    const wall = cpuMed(list, 'wall')
    lines.push(`| ${name}: 4,096,000 IDs flat out, CPU time (median of 5) | ${Math.round(4_096_000 / wall).toLocaleString('en-US')} | ${cpuMed(list, 'cpu').toFixed(3)} |`)
  }
  flat(cpuSamples.poly, 'polyflake Snowflake.nextId() strict 41/1/21')
  flat(cpuSamples.sap, '@sapphire/snowflake generate()')
  lines.push('')
  const ratioMono = ratioOf('polyflake MonotonicSnowflake.nextId() (41/10/12)', '@sapphire/snowflake generate()')
  const ratioWide = ratioOf('polyflake Snowflake.nextId() (strict, 41/1/21)', '@sapphire/snowflake generate()')
  const poly = loops.filter(([name]) => name.startsWith('polyflake'))
  const met = (ok) => (ok ? 'MET' : 'MISSED')
  lines.push('Targets:')
  lines.push(`- nextId() <= 0.75x @sapphire/snowflake: monotonic ${ratioMono.toFixed(2)}x, strict 41/1/21 ${ratioWide.toFixed(2)}x: ${met(ratioMono <= 0.75 && ratioWide <= 0.75)}`)
  lines.push(`- nextIds(10**6) <= 10 ms (MonotonicSnowflake): ${batchMonoMs.toFixed(2)} ms: ${met(batchMonoMs <= 10)}`)
  lines.push(`- zero duplicates and zero out-of-order for polyflake: ${met(poly.every(([, r]) => r.dups === 0 && r.outOfOrder === 0))}`)
  const u = ratioOf('polyflake uuid7()', 'uuid v7()')
  const uv = ratioOf('polyflake uuid7()', 'uuidv7 uuidv7()')
  lines.push(`- uuid7() <= 0.1x uuid v7(): ${u.toFixed(3)}x: ${met(u <= 0.1)}`)
  lines.push(`- uuid7() <= 0.5x uuidv7 uuidv7(): ${uv.toFixed(3)}x: ${met(uv <= 0.5)}`)
  const cm = ratioOf('polyflake MonotonicSnowflake.nextId() (41/10/12, coarse clock)', '@sapphire/snowflake generate()')
  const cw = ratioOf('polyflake Snowflake.nextId() (strict, 41/1/21, coarse clock)', '@sapphire/snowflake generate()')
  lines.push(`- nextId() on the coarse clock <= 0.35x @sapphire/snowflake: monotonic ${cm.toFixed(2)}x, strict 41/1/21 ${cw.toFixed(2)}x: ${met(cm <= 0.35 && cw <= 0.35)}`)
  const sc = ratioOf('polyflake Snowflake.nextId() (strict, 41/1/21, coarse clock)', 'polyflake Snowflake.nextId() (strict, 41/1/21)')
  lines.push(`- strict nextId() on the coarse clock below the precise one: ${sc.toFixed(2)}x: ${met(sc < 1)}`)
  const sync = per['polyflake Snowflake.nextId() (strict, 41/1/21)']
  const fast = per['polyflake Snowflake.nextIdAsync() (strict, 41/1/21; fast path)']
  const fr = ratioOf('polyflake Snowflake.nextIdAsync() (strict, 41/1/21; fast path)', 'polyflake Snowflake.nextId() (strict, 41/1/21)')
  const [[, awaitSync], [, awaitAsync]] = awaitedTimes
  lines.push(`- nextIdAsync() fast path within 1.5x of nextId(): the call ${fr.toFixed(2)}x (${fmt(fast)} vs ${fmt(sync)} ns): ${met(fr <= 1.5)}; awaited, ${(awaitAsync / awaitSync).toFixed(2)}x`)
  console.log(lines.join('\n'))
}

const main = CHECK ? async () => check() : full
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
