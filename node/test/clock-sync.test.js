'use strict'
// The kernel's word on the clock through Node (the core's own cases: core/tests/clock_sync.rs):
// health().clockSync reports it, and `maxClockErrorMs` refuses to issue (CLOCK_UNSYNCHRONIZED,
// health 'clock_unsynchronized') while the kernel says the clock is not synchronized or its
// maximum error is over the bound, and issues again once it is back, within the monitor's
// second. The kernel's state is moved under a live node process by a stand-in for adjtimex
// (core/tests/support/fake_adjtimex.c, built here and preloaded into the child), never the real
// clock's.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { ROOT, NODE_DIR, polyflake, throwsCode, tempDir, sleep, lines } = require('./helpers')

const { Snowflake, Uuid7Generator, ManualClock } = polyflake

test('health().clockSync is the kernel\'s word; without a bound it is never a reason to refuse', () => {
  const g = new Snowflake({ nodeId: 950 })
  try {
    g.nextId()
    const h = g.health()
    const { clockSyncStates } = polyflake._typeNames()
    assert.deepEqual(Object.keys(h.clockSync), ['state', 'synchronized', 'maxErrorUs', 'estErrorUs'])
    assert.ok(clockSyncStates.includes(h.clockSync.state), h.clockSync.state)
    assert.equal(typeof h.clockSync.synchronized, 'boolean')
    assert.ok(h.clockSync.maxErrorUs >= -1 && h.clockSync.estErrorUs >= -1)
    // Whatever this host's clock is (this container's is unsynchronized), an unbound generator
    // issues and says what the kernel says.
    assert.equal(h.ok, true, h.reason)
    assert.equal(h.clockSync.synchronized, !['unsynchronized', 'unavailable'].includes(h.clockSync.state))
  } finally {
    g.close()
  }
})

test('maxClockErrorMs goes with the system clock: 1 to 16000, refused with a test clock', () => {
  for (const bad of [0, 16001]) {
    const e = throwsCode(assert, () => new Snowflake({ nodeId: 951, maxClockErrorMs: bad }), RangeError, 'INVALID_ARGUMENT')
    assert.ok(e.message.includes(String(bad)), e.message)
  }
  const e = throwsCode(assert, () => new Uuid7Generator({ maxClockErrorMs: 100, clock: new ManualClock(1_737_747_358_021) }), RangeError, 'INVALID_ARGUMENT')
  assert.match(e.message, /injected clock/)
  new Snowflake({ nodeId: 951, maxClockErrorMs: null }).close()
})

// Build the stand-in once per run: its path.
function shim(dir) {
  const so = path.join(dir, 'fake_adjtimex.so')
  const src = path.join(ROOT, 'core', 'tests', 'support', 'fake_adjtimex.c')
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', so, src], { encoding: 'utf8' })
  assert.equal(r.status, 0, `building ${src} (a C compiler, cc): ${r.error || r.stderr}`)
  return so
}

// The child: a Snowflake and a Uuid7Generator bound to 50 ms of error and a Snowflake without a
// bound; each 'check' line is answered with what each does now, the async form included.
const CHILD = `
const p = require(${JSON.stringify(NODE_DIR)})
const bound = new p.Snowflake({ nodeId: 952, maxClockErrorMs: 50 })
const uuid = new p.Uuid7Generator({ maxClockErrorMs: 50 })
const free = new p.Snowflake({ nodeId: 953 })
const says = (call) => { try { call(); return 'ID' } catch (e) { return e.code } }
require('node:readline').createInterface({ input: process.stdin }).on('line', async () => {
  let error = {}
  try { bound.nextId() } catch (e) { error = e }
  const async = await bound.nextIdAsync().then(() => 'ID', (e) => e.code)
  const h = bound.health()
  process.stdout.write(JSON.stringify({
    bound: error.code || 'ID', message: error.message, nodeId: error.nodeId, maxErrorUs: error.maxErrorUs,
    cause: error.clockUnsynchronizedCause, async, uuid: says(() => uuid.nextId()), free: says(() => free.nextId()),
    status: h.status, reason: h.reason, ...h.clockSync,
  }) + '\\n')
})
`

test('maxClockErrorMs refuses while the kernel says unsynchronized or over the bound, and issues again once it is back', async (t) => {
  const dir = tempDir('adjtimex')
  const state = path.join(dir, 'state')
  const set = (s) => fs.writeFileSync(state, s)
  set('0 0 5000 1000') // synchronized, 5 ms of maximum error
  const child = spawn(process.execPath, ['-e', CHILD], {
    env: { ...process.env, LD_PRELOAD: shim(dir), PF_FAKE_ADJTIMEX: state },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const next = lines(child)
  const ask = async () => {
    child.stdin.write('check\n')
    return JSON.parse(await next())
  }
  // The monitor reads the kernel once a second (each generator in turn): ask until the answer
  // is `done`, for at most 2.5 s (a loaded machine too). Returns the last answer and how long
  // it took.
  const until = async (done) => {
    const t0 = Date.now()
    for (;;) {
      const a = await ask()
      if (done(a) || Date.now() - t0 > 2500) return [a, Date.now() - t0]
      await sleep(50)
    }
  }
  try {
    let a = await ask()
    assert.deepEqual([a.bound, a.async, a.uuid, a.status, a.state, a.maxErrorUs], ['ID', 'ID', 'ID', 'ok', 'ok', 5000])
    assert.equal(a.synchronized, true)

    set('5 64 16000000 16000000') // unsynchronized (TIME_ERROR, STA_UNSYNC)
    let ms
    const refused = (a) => [a.bound, a.async, a.uuid].every((c) => c === 'CLOCK_UNSYNCHRONIZED')
    ;[a, ms] = await until(refused)
    t.diagnostic(`unsynchronized: refused after ${ms} ms`)
    assert.deepEqual([a.bound, a.async, a.uuid, a.free], ['CLOCK_UNSYNCHRONIZED', 'CLOCK_UNSYNCHRONIZED', 'CLOCK_UNSYNCHRONIZED', 'ID'])
    assert.match(a.message, /not synchronized/)
    assert.equal(a.nodeId, 952)
    assert.match(a.cause, /not synchronized/)
    assert.deepEqual([a.status, a.state, a.synchronized], ['clock_unsynchronized', 'unsynchronized', false])
    assert.match(a.reason, /not synchronized/)

    set('0 0 80000 1000') // synchronized, but 80 ms of maximum error: over the 50 ms bound
    ;[a, ms] = await until((a) => /80\.0 ms/.test(a.message))
    t.diagnostic(`80 ms of maximum error: said after ${ms} ms`)
    assert.equal(a.bound, 'CLOCK_UNSYNCHRONIZED')
    assert.match(a.message, /80\.0 ms, over max_clock_error_ms = 50/)
    assert.equal(a.maxErrorUs, 80000)

    set('1 0 2000 500') // synchronized, a leap second to insert tonight: issuing again
    ;[a, ms] = await until((a) => [a.bound, a.async, a.uuid].every((c) => c === 'ID'))
    t.diagnostic(`synchronized again: issuing after ${ms} ms`)
    assert.deepEqual([a.bound, a.async, a.uuid, a.status, a.state], ['ID', 'ID', 'ID', 'ok', 'insert_leap'])
  } finally {
    child.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
