'use strict'
// A fixed node id keeps the promises a lease keeps, tried through Node with real processes on
// one host (the core's own cases: core/tests/static_guard.rs): a handover between processes (a
// holder that closes, that calls process.exit() with its generator open, that is SIGKILLed), a
// restart with the clock stepped back (libfaketime on the wall clock only), a monotonic holder
// 100 ms ahead handing over, a handover between worker_threads and between cluster workers, a
// lease and a static id sharing one claim, a mark deleted under its holder, a directory that
// cannot keep a mark, and a JS clock function, which is exempt from the host-wide claim. Every
// case counts duplicates across the holders' IDs: zero.
//
// Each holder is `node -e HOLDER` (below), told what to do by its environment; it writes its IDs
// to a file as little-endian u64s and says what happened on stdout. Every state directory is a
// fresh temporary one, every holder is SIGKILLed in cleanup.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const { NODE_DIR, polyflake, throwsCode, tempDir, sleep, lines, readIds } = require('./helpers')

const { Snowflake, MonotonicSnowflake } = polyflake

// The holder. Environment: NODE, MODE (strict | monotonic), STATE (its state directory: the guard
// is then `required`), LEASE (a file lease directory, slots: 2, instead of the static NODE),
// CLOCK=fn (a JS clock function), OUT (where its IDs go), BURST (a batch minted first: a
// monotonic holder runs ahead by it), COUNT (IDs to mint one by one, the first ones a
// tryNextId() and one timed call), MS (mint for this long instead), ASYNC=1 (the first ID through nextIdAsync, timing the event loop meanwhile), RETRY=1
// (retry the build while the node id is in use, saying TRYING once), GO=1 (after READY, wait
// for a line on stdin before minting), END: close (close, then end), exit (process.exit() with
// the generator open), hang (wait to be killed).
//
// It prints `READY <node id> <status>`, then `DONE waits=<restartWaits> first=<ms the first
// call took> gap=<longest event-loop gap during it, ms> try=<tryNextId() before it> status=<...>`
// and, if a call was refused, ` REFUSED <code> <message>`.
const HOLDER = `
'use strict'
const p = require(${JSON.stringify(NODE_DIR)})
const fs = require('node:fs')
const env = process.env
const say = (s) => process.stdout.write(s + '\\n')
const opts = {}
if (env.STATE) Object.assign(opts, { restartGuard: 'required', stateDir: env.STATE })
if (env.CLOCK === 'fn') opts.clock = () => Date.now()
const Cls = env.MODE === 'monotonic' ? p.MonotonicSnowflake : p.Snowflake
const make = () => env.LEASE
  ? Cls.fromFileLease({ dir: env.LEASE, slots: 2, reserveMs: 50 })
  : new Cls({ nodeId: Number(env.NODE), ...opts })
const pause = new Int32Array(new SharedArrayBuffer(4))
let g
for (let said = false; ;) {
  try {
    g = make()
    break
  } catch (e) {
    if (e.code !== 'NODE_ID_IN_USE' || env.RETRY !== '1' || performance.now() > 20000) {
      say('FAILED ' + e.code + ' ' + e.message)
      process.exit(3)
    }
    if (!said) say('TRYING')
    said = true
    Atomics.wait(pause, 0, 0, 0.2)
  }
}
say('READY ' + g.nodeId + ' ' + g.health().status)
const lineIn = () => new Promise((resolve) => process.stdin.once('data', () => {
  process.stdin.destroy()
  resolve()
}))
;(async () => {
  if (env.GO === '1') await lineIn()
  const ids = []
  let refused = ''
  let probe = null
  // One call: false once refused (said in DONE), else true; tryNextId's null is not kept.
  const attempt = async (call) => {
    try {
      const id = await call()
      if (id !== null) ids.push(id)
      return true
    } catch (e) {
      refused = ' REFUSED ' + e.code + ' ' + e.message
      return false
    }
  }
  const burst = env.BURST ? g.nextIds(Number(env.BURST)) : new BigInt64Array(0)
  const [count, ms] = [Number(env.COUNT || 0), Number(env.MS || 0)]
  let [first, gap] = [0, 0]
  if (count > 0 || ms > 0) {
    let ok = await attempt(() => (probe = g.tryNextId()))
    let last = performance.now()
    const tick = setInterval(() => {
      const now = performance.now()
      gap = Math.max(gap, now - last)
      last = now
    }, 5)
    const t0 = performance.now()
    ok = ok && (await attempt(() => (env.ASYNC === '1' ? g.nextIdAsync() : g.nextId())))
    first = performance.now() - t0
    // A synchronous wait blocks the loop for all of it; the async one lets the timer run.
    gap = Math.max(gap, performance.now() - last)
    clearInterval(tick)
    const until = performance.now() + ms
    while (ok && (ids.length < count || performance.now() < until)) ok = await attempt(() => g.nextId())
  }
  const out = Buffer.alloc(ids.length * 8)
  ids.forEach((id, i) => out.writeBigUInt64LE(id, i * 8))
  fs.writeFileSync(env.OUT, Buffer.concat([Buffer.from(burst.buffer), out]))
  const h = g.health()
  say('DONE waits=' + h.restartWaits + ' first=' + first.toFixed(1) + ' gap=' + gap.toFixed(1) +
    ' try=' + (probe === null ? 'null' : 'id') + ' status=' + h.status + refused)
  if (env.END === 'exit') process.exit(0)
  if (env.END === 'hang') setInterval(() => {}, 1000)
  else g.close()
})()
`

// Every holder this file started, SIGKILLed at the end of each test (a failing test leaves no
// process holding a node id).
const kids = new Set()

function killAll() {
  for (const k of kids) k.kill()
  kids.clear()
}

// Start a holder with `vars`, under `faketime -f OFFSET` (the wall clock only) when given.
function holder(vars, offset) {
  const env = { ...process.env, ...vars }
  let cmd = process.execPath
  let args = ['-e', HOLDER]
  if (offset) {
    env.FAKETIME_DONT_FAKE_MONOTONIC = '1' // elapsed time (the waits' deadlines) stays true
    args = ['-f', offset, cmd, ...args]
    cmd = 'faketime'
  }
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d) => { err += d })
  const next = lines(child)
  const gone = new Promise((resolve) => child.once('exit', resolve))
  const kid = {
    pid: child.pid,
    // The next line starting with `prefix` (a FAILED line or the end fails the test).
    async line(prefix) {
      for (;;) {
        let l
        try {
          l = await next()
        } catch (e) {
          throw new Error(`${e.message}; stderr: ${err}`)
        }
        if (l.startsWith(prefix)) return l
        assert.ok(!l.startsWith('FAILED'), `${l}; stderr: ${err}`)
      }
    },
    go: () => child.stdin.write('go\n'),
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      return gone
    },
    gone,
  }
  kids.add(kid)
  return kid
}

test.afterEach(killAll)

// `DONE ...` as { waits, first, gap, try, status, refused }.
function done(line) {
  const f = Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
  const refused = line.includes(' REFUSED ') ? line.slice(line.indexOf(' REFUSED ') + 9) : ''
  return { waits: Number(f.waits), first: Number(f.first), gap: Number(f.gap), try: f.try, status: f.status, refused }
}

// Every ID of every holder once: returns how many there were.
function assertNoDuplicates(sets) {
  const seen = new Set()
  let dups = 0
  for (const ids of sets) {
    for (const id of ids) {
      if (seen.has(id)) dups++
      seen.add(id)
    }
  }
  assert.equal(dups, 0, `${dups} duplicate IDs among ${sets.length} holders`)
  return seen.size
}

const max = (ids) => ids.reduce((a, b) => (b > a ? b : a), 0n)
const min = (ids) => ids.reduce((a, b) => (b < a ? b : a), 2n ** 63n)

// A holder A mints and lets go (`end`: close, exit, or hang and be SIGKILLed); its successor B,
// started while A holds the node id and retrying the build until it is free, takes it at once,
// with its clock `offset` behind (faketime) when given. Returns B's DONE (and its READY line)
// and both ID sets.
async function handover(t, { node, dir, end, aVars = {}, bVars = {}, offset }) {
  const [aOut, bOut] = [path.join(dir, `a-${end}`), path.join(dir, `b-${end}`)]
  const a = holder({ NODE: String(node), STATE: dir, OUT: aOut, END: end, GO: '1', ...aVars })
  await a.line('READY')
  const b = holder({ NODE: String(node), STATE: dir, OUT: bOut, RETRY: '1', ...bVars }, offset)
  await b.line('TRYING')
  a.go()
  await a.line('DONE')
  if (end === 'hang') await a.kill()
  await a.gone
  const ready = await b.line('READY')
  const got = { ...done(await b.line('DONE')), ready }
  await b.gone
  t.diagnostic(`${end}${offset ? `, successor at ${offset}` : ''}: first call ${got.first} ms, waits ${got.waits}, event-loop gap ${got.gap} ms${got.refused ? `, refused ${got.refused.split(' ')[0]}` : ''}`)
  return { got, ids: [readIds(aOut), readIds(bOut)] }
}

test('a handover between processes (close, process.exit() with the generator open, SIGKILL) repeats nothing', async (t) => {
  const dir = tempDir('handover')
  try {
    const all = []
    for (const end of ['close', 'exit', 'hang']) {
      const { got, ids } = await handover(t, { node: 900, dir, end, aVars: { COUNT: '3000' }, bVars: { COUNT: '3000' } })
      assert.equal(got.refused, '', got.refused)
      assert.deepEqual([ids[0].length, ids[1].length], [3000, 3000], end)
      // A clean close or exit leaves the last ID's state in the mark: nothing to wait for. A
      // killed holder's mark is up to one reserve (5 s) ahead: the first call waits for it.
      if (end === 'hang') {
        assert.equal(got.waits, 1)
        assert.ok(got.first <= polyflake.DEFAULT_RESERVE_MS + 1500, `waited ${got.first} ms`)
      } else {
        assert.equal(got.waits, 0, `${end}: waited ${got.first} ms`)
      }
      assert.ok(min(ids[1]) > max(ids[0]), `${end}: the successor started above its predecessor`)
      all.push(...ids)
    }
    assert.equal(assertNoDuplicates(all), 3 * 6000)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

function faketimePresent() {
  const r = spawnSync('faketime', ['-f', '-1s', 'true'])
  return r.status === 0
}

test('a restart after a SIGKILL with the clock 3 s behind waits (nextIdAsync without blocking the event loop) and repeats nothing', async (t) => {
  assert.ok(faketimePresent(), 'faketime is missing: make deps-apt installs it')
  const dir = tempDir('kill3s')
  try {
    // The killed holder's mark is up to one reserve (5 s) ahead of its last renewal and the
    // successor reads 3 s less: its first call waits 7 to 8 s (within the call's 10 s). The
    // async form waits on the libuv pool: tryNextId() says null meanwhile, and the event loop
    // keeps its 5 ms timer going.
    const { got, ids } = await handover(t, {
      node: 901, dir, end: 'hang', offset: '-3s', aVars: { MS: '300' }, bVars: { MS: '300', ASYNC: '1' },
    })
    assert.equal(got.refused, '', got.refused)
    assert.deepEqual([got.waits, got.try, got.ready], [1, 'null', 'READY 901 restart_guard'])
    assert.ok(got.first >= 5000 && got.first <= polyflake.DEFAULT_MAX_RESTART_WAIT_MS, `waited ${got.first} ms`)
    assert.ok(got.gap < 250, `the event loop stalled for ${got.gap} ms during the wait`)
    assert.ok(ids[1].length > 0)
    assertNoDuplicates(ids)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a restart after a clean close or process.exit() with the clock 1 s behind: the sync call waits it out, nothing repeated', async (t) => {
  assert.ok(faketimePresent(), 'faketime is missing: make deps-apt installs it')
  const dir = tempDir('back200')
  try {
    for (const end of ['close', 'exit']) {
      // An ntpd step of 1 s between two holders: without the mark every ID of that second
      // would come again. The successor's synchronous first call blocks the thread for what is
      // left of the second after the holder's last ID (it wrote its IDs, closed or exited, and
      // the successor started since: 1 s, not 200 ms, as a loaded machine's Node start can take
      // longer than 200 ms, and a successor that starts after the step has passed never waits).
      const { got, ids } = await handover(t, {
        node: 902, dir, end, offset: '-1s', aVars: { MS: '300' }, bVars: { MS: '300' },
      })
      assert.equal(got.refused, '', got.refused)
      assert.deepEqual([got.waits, got.try], [1, 'null'], end)
      assert.ok(got.first > 0 && got.first <= 1000 + 1000, `${end}: waited ${got.first} ms`)
      assertNoDuplicates(ids)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a restart with the clock 30 s behind a killed holder is refused with LEASE_NOT_READY, nothing issued', async (t) => {
  assert.ok(faketimePresent(), 'faketime is missing: make deps-apt installs it')
  const dir = tempDir('kill30s')
  try {
    const { got, ids } = await handover(t, {
      node: 903, dir, end: 'hang', offset: '-30s', aVars: { MS: '100' }, bVars: { MS: '100' },
    })
    assert.match(got.refused, /^LEASE_NOT_READY /)
    assert.match(got.refused, /longer than a call waits/)
    assert.ok(got.first < 1000, `refused after ${got.first} ms, not at once`)
    assert.equal(ids[1].length, 0)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a MonotonicSnowflake 100 ms ahead exits; fresh processes on its node id start at once, above its lead', async (t) => {
  const dir = tempDir('ahead')
  try {
    // 409,600 IDs in one batch put a monotonic holder 100 ms ahead of its clock; it exits with
    // the generator open, and a strict then a monotonic successor start after it.
    const outs = [0, 1, 2].map((i) => path.join(dir, `o${i}`))
    const a = holder({ NODE: '904', STATE: dir, OUT: outs[0], MODE: 'monotonic', BURST: '409600', END: 'exit' })
    await a.line('DONE')
    await a.gone
    for (const [i, mode] of [[1, 'strict'], [2, 'monotonic']]) {
      const b = holder({ NODE: '904', STATE: dir, OUT: outs[i], MODE: mode, COUNT: '20000', END: 'close' })
      const got = done(await b.line('DONE'))
      t.diagnostic(`${mode} successor: first call ${got.first} ms, waits ${got.waits}`)
      assert.equal(got.refused, '', got.refused)
      await b.gone
    }
    const ids = outs.map(readIds)
    assert.deepEqual(ids.map((x) => x.length), [409_600, 20_000, 20_000])
    assert.equal(assertNoDuplicates(ids), 449_600)
    assert.ok(min(ids[1]) > max(ids[0]), 'the strict successor started under the lead')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a JS clock function is exempt from the host-wide claim (two processes run one node id), not from the rule in one process', async () => {
  const dir = tempDir('userclock')
  try {
    // Two processes on clock functions and node 905: both hold it and mint.
    const a = holder({ NODE: '905', CLOCK: 'fn', OUT: path.join(dir, 'a'), COUNT: '10', END: 'hang' })
    assert.match(await a.line('READY'), /^READY 905 ok$/)
    await a.line('DONE')
    const b = holder({ NODE: '905', CLOCK: 'fn', OUT: path.join(dir, 'b'), COUNT: '10', END: 'close' })
    assert.match(await b.line('DONE'), /waits=0 .*status=ok$/)
    // Here too, and it keeps no mark: its times are not the host's.
    const here = new Snowflake({ nodeId: 905, clock: () => Date.now() })
    try {
      here.nextId()
      const h = here.health()
      assert.deepEqual([h.lease, h.restartGuardNote], [undefined, ''])
      // In this process the one-generator-per-node-id rule holds.
      const e = throwsCode(assert, () => new Snowflake({ nodeId: 905, clock: () => Date.now() }), Error, 'NODE_ID_IN_USE')
      assert.deepEqual([e.holderPid, e.holder], [null, ''])
    } finally {
      here.close()
    }
    // A holder on the system clock is the host's: the system clock here is refused, naming it;
    // a clock function here is not.
    const s = holder({ NODE: '906', STATE: dir, OUT: path.join(dir, 's'), COUNT: '10', END: 'hang' })
    await s.line('DONE')
    const e = throwsCode(assert, () => new Snowflake({ nodeId: 906 }), Error, 'NODE_ID_IN_USE')
    assert.equal(e.holderPid, s.pid)
    assert.ok(e.holder.includes(`process ${s.pid}`), e.holder)
    new Snowflake({ nodeId: 906, clock: () => Date.now() }).close()
  } finally {
    killAll()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a lease and a static id share one claim: a lease skips a static holder\'s slot, a static id a lease holds elsewhere is refused', async () => {
  const dir = tempDir('claim')
  const layout = '41/3/19' // 8 node ids: the leases below take their slots from the same few
  try {
    // In this process: a static holder of 0, then a lease that skips slot 0 and takes 1, then a
    // static 1, refused naming this process (holderPid null, holder empty).
    const s0 = new Snowflake({ nodeId: 0, layout })
    const l = Snowflake.fromFileLease({ dir: path.join(dir, 'here'), slots: 8, reserveMs: 50, layout })
    try {
      assert.equal(l.nodeId, 1)
      const e = throwsCode(assert, () => new Snowflake({ nodeId: 1, layout }), Error, 'NODE_ID_IN_USE')
      assert.deepEqual([e.nodeId, e.holderPid, e.holder], [1, null, ''])
    } finally {
      l.close()
      s0.close()
    }
    // Across processes (the default layout): a static holder of 907 in one process; a lease
    // holder in another process whose directory offers slots 0 and 1 (below 907: no overlap) ...
    const s = holder({ NODE: '907', STATE: dir, OUT: path.join(dir, 's'), COUNT: '10', END: 'hang' })
    await s.line('DONE')
    const leaseDir = path.join(dir, 'there')
    const lh = holder({ LEASE: leaseDir, OUT: path.join(dir, 'l'), COUNT: '0', END: 'hang' })
    const slot = Number((await lh.line('READY')).split(' ')[1])
    // ... a static id the lease holds there is refused here, naming that process.
    const e = throwsCode(assert, () => new Snowflake({ nodeId: slot }), Error, 'NODE_ID_IN_USE')
    assert.equal(e.holderPid, lh.pid)
    assert.ok(e.holder.includes(`process ${lh.pid}`), `holder: ${e.holder}`)
    assert.ok(e.message.includes(`process ${lh.pid}`), e.message)
    // ... and a lease here skips both what the lease there and the static holder there hold.
    const mine = Snowflake.fromFileLease({ dir: path.join(dir, 'mine'), reserveMs: 50 })
    try {
      assert.ok(![slot, 907].includes(mine.nodeId), `the lease took node id ${mine.nodeId}, which is held`)
    } finally {
      mine.close()
    }
    // Another service on this host in a scope of its own may hold it too, on purpose.
    new Snowflake({ nodeId: 907, hostScope: 'node-test-other-service' }).close()
    throwsCode(assert, () => new Snowflake({ nodeId: 907 }), Error, 'NODE_ID_IN_USE')
  } finally {
    killAll()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('worker_threads: a Worker terminated with its static id open hands it to the next Worker, nothing repeated', async () => {
  const dir = tempDir('workers')
  // Each Worker takes node 908 (retrying while the other holds it in this process), mints
  // 20,000 IDs, posts them, and then closes or waits to be terminated with its generator open.
  const body = (end) => `
const { parentPort } = require('node:worker_threads')
const p = require(${JSON.stringify(NODE_DIR)})
const pause = new Int32Array(new SharedArrayBuffer(4))
let g
for (const t0 = Date.now(); !g;) {
  try { g = new p.Snowflake({ nodeId: 908, restartGuard: 'required', stateDir: ${JSON.stringify(dir)} }) } catch (e) {
    if (e.code !== 'NODE_ID_IN_USE' || Date.now() - t0 > 10000) throw e
    Atomics.wait(pause, 0, 0, 1)
  }
}
parentPort.postMessage(g.nextIds(20000))
${end === 'close' ? 'g.close()' : 'setInterval(() => {}, 1000)'}
`
  const workers = []
  const run = (end) => new Promise((resolve, reject) => {
    const w = new Worker(body(end), { eval: true })
    workers.push(w)
    w.once('message', (ids) => resolve({ w, ids }))
    w.once('error', reject)
  })
  try {
    const all = []
    for (const end of ['terminate', 'close', 'terminate']) {
      const { w, ids } = await run(end)
      all.push(ids)
      if (end === 'terminate') assert.equal(await w.terminate(), 1)
    }
    assert.equal(assertNoDuplicates(all), 60_000)
    for (let i = 1; i < all.length; i++) assert.ok(min(all[i]) > max(all[i - 1]), `Worker ${i} started above ${i - 1}`)
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('cluster: a worker exits with its static id open, the next worker takes it at once, nothing repeated', async () => {
  const dir = tempDir('cluster')
  // The primary forks a worker at a time on node 909: each mints 20,000 IDs, sends them, and
  // exits with the generator open (process.exit()); the next one is forked as it goes.
  const app = path.join(dir, 'app.js')
  fs.writeFileSync(app, `
'use strict'
const cluster = require('node:cluster')
const fs = require('node:fs')
if (cluster.isPrimary) {
  let left = 3
  const fork = () => cluster.fork().on('message', (m) => {
    fs.writeFileSync(${JSON.stringify(dir)} + '/w' + left, Buffer.from(m, 'base64'))
  }).on('exit', () => (--left > 0 ? fork() : process.exit(0)))
  fork()
} else {
  const p = require(${JSON.stringify(NODE_DIR)})
  const g = new p.Snowflake({ nodeId: 909, restartGuard: 'required', stateDir: ${JSON.stringify(dir)} })
  const ids = g.nextIds(20000)
  process.send(Buffer.from(ids.buffer).toString('base64'), () => process.exit(0))
}
`)
  const primary = spawn(process.execPath, [app], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const code = await new Promise((resolve) => primary.once('exit', resolve))
    assert.equal(code, 0)
    const all = [3, 2, 1].map((i) => readIds(path.join(dir, `w${i}`)))
    assert.deepEqual(all.map((x) => x.length), [20_000, 20_000, 20_000])
    assert.equal(assertNoDuplicates(all), 60_000)
    for (let i = 1; i < 3; i++) assert.ok(min(all[i]) > max(all[i - 1]), `worker ${i} started above ${i - 1}`)
  } finally {
    primary.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('the mark: health says where it is; deleted under its holder, it is made again', async () => {
  const dir = tempDir('mark')
  const g = new Snowflake({ nodeId: 910, restartGuard: 'required', stateDir: dir })
  try {
    const first = g.nextId()
    const h = g.health()
    assert.deepEqual([h.lease.kind, h.lease.slot, h.restartGuardNote, h.restartWaits], ['host', 910, '', 0])
    assert.ok(h.lease.store.startsWith(dir + path.sep), h.lease.store)
    assert.ok(fs.existsSync(h.lease.store))
    fs.rmSync(h.lease.store)
    // The holder renews its mark every reserve / 5 (1 s): allow 2.5 s on a loaded machine.
    for (const t0 = Date.now(); !fs.existsSync(h.lease.store) && Date.now() - t0 < 2500;) await sleep(50)
    assert.ok(fs.existsSync(h.lease.store), 'the mark was not made again')
    const again = g.health()
    assert.equal(again.ok, true, again.reason)
    assert.match(again.lease.lastError, /made again/)
    assert.ok(g.nextId() > first)
  } finally {
    g.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a state directory that cannot keep a mark: required refuses naming it, auto says so in health, off keeps none', () => {
  const dir = tempDir('nodir')
  const notADir = path.join(dir, 'file') // as a read-only container's /var/tmp would be
  fs.writeFileSync(notADir, '')
  try {
    const e = throwsCode(assert, () => new Snowflake({ nodeId: 911, restartGuard: 'required', stateDir: notADir }), Error, 'LEASE_STORE')
    assert.ok(e.message.includes(notADir), e.message)
    assert.match(e.message, /POLYFLAKE_STATE_DIR/)
    process.env.PF_TEST_NODE_ID_911 = '911'
    const auto = MonotonicSnowflake.fromEnv('PF_TEST_NODE_ID_911', { restartGuard: 'auto', stateDir: notADir })
    try {
      const h = auto.health()
      assert.deepEqual([h.ok, h.lease], [true, undefined])
      assert.match(h.restartGuardNote, /no restart guard/)
      auto.nextId()
    } finally {
      auto.close()
    }
    const off = Snowflake.fromIpv4('10.0.3.143', 22, { restartGuard: 'off' })
    try {
      assert.equal(off.nodeId, 911)
      assert.match(off.health().restartGuardNote, /^off/)
    } finally {
      off.close()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
