'use strict'
// Every wait can be interrupted: `Worker.terminate()` returns within 100 ms while the
// Worker is blocked in a long strict call (a batch spanning 10 s of milliseconds on layout
// 41/21/1, a rewind waited out on a clock function stepped back 10 s inside a 20 s budget, the
// UUIDv7 and ULID forms, a batch waiting on the libuv pool), and so does the whole process on
// `process.exit()` while a Worker is blocked or a batch waits on the main thread's pool. Without the hook each would take about 10 s.
//
// The bound is 100 ms; on a loaded 2-core machine a Worker's teardown alone can take tens of ms,
// so each case is run 3 times and its MEDIAN must be within 100 ms, every run within 100 ms plus
// a margin of 400 ms (measured here: 5-40 ms idle).
const test = require('node:test')
const assert = require('node:assert/strict')
const { Worker } = require('node:worker_threads')
const { spawn } = require('node:child_process')
const { NODE_DIR, lines } = require('./helpers')

const BOUND_MS = 100
const MARGIN_MS = 400

// A Worker running `setup` then, after posting 'waiting', the blocking `call` (both JS source,
// `p` is the addon, `g` what setup made). It posts what the call returned, if it ever returns.
function source(setup, call) {
  return `
const { parentPort } = require('node:worker_threads')
const p = require(${JSON.stringify(NODE_DIR)})
${setup}
parentPort.postMessage('waiting')
let r, e
try { r = ${call} } catch (err) { e = err }
parentPort.postMessage(e ? 'threw ' + e.code : 'returned ' + (r && r.length))
`
}

// Start the Worker, wait until its call has waited `waitMs`, terminate it: the ms terminate took.
async function terminateWhileWaiting(setup, call, waitMs = 150) {
  const w = new Worker(source(setup, call), { eval: true })
  const messages = []
  const waiting = new Promise((resolve, reject) => {
    w.on('message', (m) => {
      messages.push(m)
      if (m === 'waiting') resolve()
    })
    w.on('error', reject)
  })
  await waiting
  await new Promise((resolve) => setTimeout(resolve, waitMs))
  const t0 = process.hrtime.bigint()
  const code = await w.terminate()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  assert.equal(code, 1, `terminated, not finished: ${messages}`)
  // The call never completed: at most a statement or two after it ran (Node lowers the
  // environment's flag just before V8 stops the script), seeing no IDs.
  for (const m of messages.slice(1)) assert.match(m, /^(returned undefined|threw)/)
  return ms
}

async function threeRuns(t, what, run) {
  const ms = []
  for (let i = 0; i < 3; i++) ms.push(await run())
  const sorted = [...ms].sort((a, b) => a - b)
  t.diagnostic(`${what}: ${ms.map((x) => x.toFixed(1)).join(', ')} ms (median ${sorted[1].toFixed(1)})`)
  assert.ok(sorted[1] <= BOUND_MS, `${what}: median ${sorted[1]} ms > ${BOUND_MS} ms (${ms})`)
  for (const x of ms) assert.ok(x <= BOUND_MS + MARGIN_MS, `${what}: ${x} ms > ${BOUND_MS} + ${MARGIN_MS} ms`)
}

// Each run takes a node id of its own (41/21/1 has 2,097,152): a terminated run's generator may
// have spent IDs up to 10 s ahead, and its node id keeps that (in this process, and in the mark
// it leaves on the host) whatever the epoch, so a successor on it would wait that out first.
let nextNode = 100
const node = () => nextNode++

// A clock function (not a test clock: it follows the one-generator-per-node-id rule in this
// process) that steps back 10 s after the first ID, inside a 20 s budget: the next call waits
// the rewind out.
const rewound = (make) => `
let back = 0
const clock = () => Date.now() - back
const g = ${make}
g.nextId()
back = 10000
`

test('Worker.terminate() during a strict nextIds(20000) on 41/21/1', async (t) => {
  // On the system clock: the batch sleeps through each spent millisecond.
  await threeRuns(t, 'nextIds(20000), system clock', () =>
    terminateWhileWaiting(`const g = new p.Snowflake({ nodeId: ${node()}, layout: '41/21/1' })`, 'g.nextIds(20000)'))
})

test('Worker.terminate() during a rewind waited out (a clock function stepped back 10 s)', async (t) => {
  await threeRuns(t, 'Snowflake nextId, rewind', () =>
    terminateWhileWaiting(rewound(`new p.Snowflake({ nodeId: ${node()}, maxWaitMs: 20000, clock })`), 'g.nextId()'))
  await threeRuns(t, 'Uuid7Generator nextIds, rewind', () =>
    terminateWhileWaiting(rewound('new p.Uuid7Generator({ maxWaitMs: 20000, clock })'), 'g.nextIds(10)'))
  await threeRuns(t, 'UlidGenerator nextIdStrings, rewind', () =>
    terminateWhileWaiting(rewound('new p.UlidGenerator({ maxWaitMs: 20000, clock })'), 'g.nextIdStrings(10)'))
})

test('Worker.terminate() with nextIdsAsync(20000) waiting on the libuv pool', async (t) => {
  // The pool work is cut by the watch timer while Node's teardown drains the loop.
  await threeRuns(t, 'nextIdsAsync(20000)', () =>
    terminateWhileWaiting(`const g = new p.Snowflake({ nodeId: ${node()}, layout: '41/21/1' })`, 'g.nextIdsAsync(20000)'))
})

test('without a terminate the strict batch runs its course (the hook cuts nothing by itself)', async () => {
  // 2,000 IDs on 41/21/1: about 1 s, through ~50 asks of the hook.
  const w = new Worker(source(`const g = new p.Snowflake({ nodeId: ${node()}, layout: '41/21/1' })`, 'g.nextIds(2000)'), { eval: true })
  const got = []
  w.on('message', (m) => got.push(m))
  const code = await new Promise((resolve) => w.on('exit', resolve))
  assert.equal(code, 0)
  assert.deepEqual(got, ['waiting', 'returned 2000'])
})

// process.exit() from a timer while a Worker is blocked in a 10 s batch: Node terminates every
// Worker and joins its thread before the process exits.
const EXITER = (nodeId) => `
const { Worker } = require('node:worker_threads')
const w = new Worker(${JSON.stringify(source(`const g = new p.Snowflake({ nodeId: ${nodeId}, layout: '41/21/1' })`, 'g.nextIds(20000)'))}, { eval: true })
w.on('message', (m) => {
  if (m !== 'waiting') return
  setTimeout(() => {
    process.stdout.write('EXIT ' + Date.now() + '\\n')
    process.exit(0)
  }, 150)
})
`

test('process.exit() while a Worker is blocked in a long strict batch', async (t) => {
  await threeRuns(t, 'process.exit()', async () => {
    const child = spawn(process.execPath, ['-e', EXITER(node())], { stdio: ['ignore', 'pipe', 'inherit'] })
    const gone = new Promise((resolve) => child.once('exit', (code) => resolve([code, Date.now()])))
    const line = await lines(child)()
    const [code, at] = await gone
    assert.equal(code, 0)
    return at - Number(line.split(' ')[1])
  })
})

// process.exit() in the main thread with a batch waiting on the libuv pool: Node joins the pool's
// threads before the process exits, so the wait must be cut (by the 'exit' listener the first
// pool wait adds) or the exit takes the batch's 10 s.
const POOL_EXITER = (nodeId) => `
const p = require(${JSON.stringify(NODE_DIR)})
const g = new p.Snowflake({ nodeId: ${nodeId}, layout: '41/21/1' })
g.nextIdsAsync(20000).then(() => process.stdout.write('DONE\\n'))
setTimeout(() => {
  process.stdout.write('EXIT ' + Date.now() + '\\n')
  process.exit(0)
}, 150)
`

test('process.exit() in the main thread while nextIdsAsync(20000) waits on the pool', async (t) => {
  await threeRuns(t, 'process.exit(), pool wait', async () => {
    const child = spawn(process.execPath, ['-e', POOL_EXITER(node())], { stdio: ['ignore', 'pipe', 'inherit'] })
    const gone = new Promise((resolve) => child.once('exit', (code) => resolve([code, Date.now()])))
    const line = await lines(child)()
    assert.match(line, /^EXIT \d+$/)
    const [code, at] = await gone
    assert.equal(code, 0)
    return at - Number(line.split(' ')[1])
  })
})
