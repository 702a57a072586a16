'use strict'
// The quiet faults, met through Node: a slot file deleted (or the whole lease
// directory removed) under a live holder while a second process leases the slot afresh, forward
// clock steps on a ManualClock, a second ID space on one store, a slot poisoned by a step, a lost
// lease that heals (heal: true) and one that stays lost (the default); and
// the same-input table (tests/vectors/bad_node_sources.json): the core's code and message,
// word for word. The rules are the core's; these tests check that Node reaches them intact.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { NODE_DIR, VECTORS, polyflake, readJson, throwsCode, tempDir, sleep, lines, readIds } = require('./helpers')

const {
  Snowflake, MonotonicSnowflake, ManualClock, DEFAULT_EPOCH_MS, DEFAULT_MAX_FORWARD_STEP_MS,
  DEFAULT_FORWARD_CONFIRM_MS,
} = polyflake

const YEAR_MS = 31_536_000_000
const HOUR_MS = 3_600_000
const T = DEFAULT_EPOCH_MS + 1_000_000

// A holder in its own process: slot 0 of a one-slot directory, the restart guard waited out,
// then batches of 1,000 IDs into OUT for MS ms or until refused; `END <code or OK> <status>`.
const STREAM = `
const fs = require('node:fs')
const { Snowflake } = require(process.argv[1])
const [dir, out, ms] = process.argv.slice(2)
const g = Snowflake.fromFileLease({ dir, slots: 1, reserveMs: 500 })
g.waitReady()
process.stdout.write('NODE ' + g.nodeId + '\\n')
const fd = fs.openSync(out, 'w')
const until = Date.now() + Number(ms)
let end = 'OK'
while (Date.now() < until) {
  try {
    fs.writeSync(fd, new Uint8Array(g.nextIds(1000).buffer))
  } catch (e) {
    end = e.code
    break
  }
}
fs.closeSync(fd)
process.stdout.write('END ' + end + ' ' + g.health().status + '\\n')
`

// Each holder claims its node id in a host scope of its own: the fault under test is the store's
// (two holders of one slot file), which the host-wide claim would otherwise keep from happening on
// one host while the first holder lives.
function stream(dir, out, ms) {
  const scope = `${(process.env.POLYFLAKE_HOST_SCOPE || 'node-faults').slice(0, 30)}-${path.basename(out, '.bin')}`
  const child = spawn(process.execPath, ['-e', STREAM, NODE_DIR, dir, out, String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, POLYFLAKE_HOST_SCOPE: scope },
  })
  return { child, next: lines(child), exited: new Promise((resolve) => child.on('close', resolve)) }
}

// Process A holds slot 0 and issues at full speed; `remove` takes its slot file away; process B
// leases slot 0 afresh. Zero IDs in common; A stops with LEASE_LOST, B issues past all of A's.
async function holderAndSuccessorAfter(remove) {
  const work = tempDir('deleted')
  const store = path.join(work, 'leases')
  const a = stream(store, path.join(work, 'a.bin'), 4000)
  let b = null
  try {
    assert.equal(await a.next(), 'NODE 0')
    await sleep(300)
    remove(store)
    b = stream(store, path.join(work, 'b.bin'), 1500)
    assert.equal(await b.next(), 'NODE 0', 'the successor took slot 0')
    const [aEnd, bEnd] = [await a.next(), await b.next()]
    assert.deepEqual([await a.exited, await b.exited], [0, 0])
    const [idsA, idsB] = [readIds(path.join(work, 'a.bin')), readIds(path.join(work, 'b.bin'))]
    assert.ok(idsA.length >= 1000 && idsB.length >= 1000, `both issued (${idsA.length}, ${idsB.length})`)
    const seen = new Set(idsA)
    const dups = idsB.filter((id) => seen.has(id)).length
    assert.equal(dups, 0, `${dups} IDs issued by both holders of slot 0`)
    assert.equal(aEnd, 'END LEASE_LOST lease_lost', 'the first holder stopped')
    assert.equal(bEnd, 'END OK ok')
    const maxA = idsA.reduce((m, id) => (id > m ? id : m), 0n)
    const minB = idsB.reduce((m, id) => (id < m ? id : m), idsB[0])
    assert.ok(minB > maxA, 'the successor issues past everything the first holder issued')
  } finally {
    a.child.kill('SIGKILL')
    if (b) b.child.kill('SIGKILL')
    fs.rmSync(work, { recursive: true, force: true })
  }
}

test('a slot file deleted under a live holder: the lease is lost, and nothing repeats', async () => {
  await holderAndSuccessorAfter((store) => fs.unlinkSync(path.join(store, 'slot-0000')))
})

test('a lease directory removed under a live holder: the same', async () => {
  await holderAndSuccessorAfter((store) => fs.rmSync(store, { recursive: true }))
})

// --- A lost lease that heals (heal: true) and one that does not (the default) ------------------

// Call nextId() for `ms` ms, keeping every ID in `ids`; the codes of the refusals met.
async function mintThrough(g, ids, ms) {
  const refused = new Set()
  const until = Date.now() + ms
  while (Date.now() < until) {
    try {
      ids.push(g.nextId())
    } catch (e) {
      if (e.code !== 'LEASE_LOST' && e.code !== 'LEASE_NOT_READY') throw e
      refused.add(e.code)
      await sleep(5)
    }
  }
  return refused
}

test('heal: a slot file deleted under a live holder heals: a new slot by itself, nothing repeats, the counters go on', async () => {
  const dir = tempDir('heal')
  const g = Snowflake.fromFileLease({ dir, slots: 2, reserveMs: 500, heal: true, epochMs: DEFAULT_EPOCH_MS + 10 })
  try {
    g.waitReady(5000)
    const ids = Array.from(g.nextIds(5000))
    const issuedBefore = g.health().idsIssued
    assert.ok(issuedBefore >= ids.length)
    fs.unlinkSync(path.join(dir, `slot-${String(g.nodeId).padStart(4, '0')}`))
    // Lost within a renewal (reserveMs / 5), then a new slot behind its guard (about one reserve):
    // calls in between are refused, never answered with an ID of the lost slot.
    const statuses = new Set()
    const until = Date.now() + 10_000
    while (Date.now() < until && !statuses.has('lease_lost') && !statuses.has('restart_guard')) {
      statuses.add(g.health().status)
      await mintThrough(g, ids, 10)
    }
    assert.ok(statuses.has('lease_lost') || statuses.has('restart_guard'), [...statuses].join())
    const started = Date.now()
    g.waitReady(10_000) // waits through the heal (heal off: LEASE_LOST at once)
    assert.ok(Date.now() - started < 5000)
    const h = g.health()
    assert.equal(h.status, 'ok', h.reason)
    assert.equal(h.lease.slot, g.nodeId)
    assert.equal(h.lease.lost, false)
    const from = ids.length
    ids.push(...g.nextIds(5000))
    for (const x of ids.slice(from)) assert.equal(g.decode(x).nodeId, g.nodeId)
    assert.ok(fs.existsSync(path.join(dir, `slot-${String(g.nodeId).padStart(4, '0')}`)))
    assert.equal(new Set(ids).size, ids.length, 'an ID repeated across the heal')
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'the new slot issues past the lost one')
    const issued = g.health().idsIssued
    assert.ok(issued >= ids.length && ids.length > issuedBefore, `${issued} ${ids.length} ${issuedBefore}`)
  } finally {
    g.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('heal off (the default): a slot file deleted under a live holder stays lost (LEASE_LOST)', async () => {
  const dir = tempDir('noheal')
  const g = Snowflake.fromFileLease({ dir, slots: 2, reserveMs: 500, epochMs: DEFAULT_EPOCH_MS + 11 })
  try {
    g.waitReady(5000)
    const ids = Array.from(g.nextIds(1000))
    fs.unlinkSync(path.join(dir, `slot-${String(g.nodeId).padStart(4, '0')}`))
    const refused = await mintThrough(g, ids, 1500)
    assert.deepEqual([...refused], ['LEASE_LOST'])
    for (let round = 0; round < 2; round++) {
      assert.equal(g.health().status, 'lease_lost')
      throwsCode(assert, () => g.nextId(), Error, 'LEASE_LOST')
      const started = Date.now()
      throwsCode(assert, () => g.waitReady(5000), Error, 'LEASE_LOST') // at once: nothing comes back
      assert.ok(Date.now() - started < 1000)
      await sleep(1000)
    }
    assert.equal(new Set(ids).size, ids.length)
  } finally {
    g.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('heal takes a boolean, on every lease kind', () => {
  for (const bad of [1, 'yes', null]) {
    throwsCode(assert, () => Snowflake.fromFileLease({ dir: '/nonexistent-polyflake-dir', heal: bad }), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => Snowflake.fromEtcd({ endpoints: 'http://127.0.0.1:9', heal: bad }), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => Snowflake.fromZooKeeper({ ensemble: '127.0.0.1:9', heal: bad }), TypeError, 'ERR_INVALID_ARG_TYPE')
  }
  // Not an option of a fixed node id.
  throwsCode(assert, () => new Snowflake({ nodeId: 7, heal: true }), TypeError, 'ERR_INVALID_ARG_TYPE')
})

test('a forward step is refused (CLOCK_JUMPED_AHEAD, with its data), and nothing is issued from it once the clock is corrected', () => {
  const clock = new ManualClock(T)
  const g = new Snowflake({ nodeId: 1, clock })
  assert.equal(g.maxForwardStepMs, DEFAULT_MAX_FORWARD_STEP_MS)
  assert.equal(g.forwardConfirmMs, DEFAULT_FORWARD_CONFIRM_MS)
  const before = g.nextId()
  clock.advance(YEAR_MS) // a bad NTP server
  const e = throwsCode(assert, () => g.nextId(), Error, 'CLOCK_JUMPED_AHEAD')
  assert.ok(!(e instanceof RangeError), 'a clock fault, not a bad argument')
  assert.equal(e.nodeId, 1)
  assert.equal(e.maxForwardStepMs, DEFAULT_MAX_FORWARD_STEP_MS)
  assert.ok(e.aheadMs >= YEAR_MS && e.aheadMs < YEAR_MS + 1000, `aheadMs ${e.aheadMs}`)
  assert.equal(e.confirmRemainingMs, DEFAULT_FORWARD_CONFIRM_MS)
  throwsCode(assert, () => g.nextIds(10), Error, 'CLOCK_JUMPED_AHEAD')
  const h = g.health()
  assert.deepEqual([h.ok, h.status], [false, 'clock_ahead'])
  assert.ok(h.clockAheadMs >= YEAR_MS && h.clockAheadMs < YEAR_MS + 1000, `clockAheadMs ${h.clockAheadMs}`)
  assert.ok(h.forwardRefused >= 2, `forwardRefused ${h.forwardRefused}`)
  clock.elapse(30_000) // half a minute later the clock is corrected
  clock.advance(-YEAR_MS)
  const after = g.nextId()
  assert.ok(after > before)
  assert.ok(g.decode(after).timestampMs < T + 60_000, 'issued from trusted time, not the step')
  assert.deepEqual([g.health().ok, g.health().clockAheadMs], [true, 0])
  clock.advance(59_000) // a step within the bound is trusted
  assert.equal(g.decode(g.nextId()).timestampMs, clock.now())
})

test('a forward step that holds for forwardConfirmMs of elapsed time is believed', () => {
  const clock = new ManualClock(T)
  const g = MonotonicSnowflake.fromHostname('ids-2', { clock, maxForwardStepMs: 1000n, forwardConfirmMs: 10_000 })
  assert.deepEqual([g.maxForwardStepMs, g.forwardConfirmMs], [1000, 10_000])
  const s = new Snowflake({ nodeId: 2, clock, maxForwardStepMs: 1000, forwardConfirmMs: 10_000 })
  s.nextId()
  g.nextId()
  clock.advance(HOUR_MS) // a real correction of an hour
  throwsCode(assert, () => s.nextId(), Error, 'CLOCK_JUMPED_AHEAD')
  // Monotonic mode keeps issuing, from the trusted time: its floor does not follow the step.
  assert.ok(g.decode(g.nextIds(1000)[999]).timestampMs < T + 10)
  assert.equal(g.health().ok, true)
  assert.ok(g.health().clockAheadMs >= HOUR_MS)
  clock.elapse(9_999)
  assert.equal(throwsCode(assert, () => s.nextId(), Error, 'CLOCK_JUMPED_AHEAD').confirmRemainingMs, 1)
  clock.elapse(1)
  assert.equal(s.decode(s.nextId()).timestampMs, clock.now())
  assert.deepEqual([s.health().status, s.health().clockAheadMs], ['ok', 0])
})

test('a suspend is elapsed time, not a step; maxForwardStepMs: null turns the check off', () => {
  const clock = new ManualClock(T)
  const g = new Snowflake({ nodeId: 3, clock })
  g.nextId()
  clock.elapse(8 * HOUR_MS) // a laptop lid closed overnight: wall and boot clock move together
  assert.equal(g.decode(g.nextId()).timestampMs, clock.now())
  const off = new Snowflake({ nodeId: 4, clock, maxForwardStepMs: null })
  assert.equal(off.maxForwardStepMs, null)
  off.nextId()
  clock.advance(YEAR_MS)
  assert.equal(off.decode(off.nextId()).timestampMs, clock.now())
  for (const bad of [-1, 1.5, '1000']) {
    assert.throws(() => new Snowflake({ nodeId: 5, clock, maxForwardStepMs: bad }), (e) => e.code === 'ERR_OUT_OF_RANGE' || e.code === 'ERR_INVALID_ARG_TYPE')
  }
  throwsCode(assert, () => new Snowflake({ nodeId: 5, clock, maxForwardStepMs: 10 ** 12 }), RangeError, 'INVALID_ARGUMENT')
  throwsCode(assert, () => new Snowflake({ nodeId: 5, clock, forwardConfirmMs: null }), TypeError, 'ERR_INVALID_ARG_TYPE')
})

test('a lease store serves one ID space: another layout or epoch is refused (ID_SPACE_MISMATCH)', () => {
  const dir = tempDir('space')
  const a = Snowflake.fromFileLease({ dir, slots: 4, reserveMs: 100 })
  try {
    const e = throwsCode(assert, () => Snowflake.fromFileLease({ dir, slots: 4, reserveMs: 100, layout: 'big_fleet' }), RangeError, 'ID_SPACE_MISMATCH')
    assert.ok(e.message.includes('41/10/12') && e.message.includes('41/12/10'), e.message)
    assert.ok(e.message.includes(dir), e.message)
    assert.ok(e.store.includes(dir), e.store)
    assert.match(e.storeSpace, /41\/10\/12/)
    assert.match(e.ourSpace, /41\/12\/10/)
    throwsCode(assert, () => MonotonicSnowflake.fromFileLease({ dir, epochMs: DEFAULT_EPOCH_MS + 1 }), RangeError, 'ID_SPACE_MISMATCH')
    a.close()
    // Nobody holds the store now; it keeps its space.
    throwsCode(assert, () => Snowflake.fromFileLease({ dir, layout: 'big_fleet' }), RangeError, 'ID_SPACE_MISMATCH')
  } finally {
    a.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// A slot record as the core's previous version wrote it (a complete record: R = `hwm`), padded
// to 256 bytes: how a slot poisoned by a holder whose clock stepped ahead looks.
function oldRecord(slot, hwm) {
  const text = `polyflake-slot v1\nslot=${slot}\nowner=h\nhigh_water_ms=${hwm}\n`
  return text.padEnd(255, ' ') + '\n'
}

test('a poisoned slot is skipped while another is free; taken last, health says why (guardNote); maxGuardWaitMs allows it', () => {
  const dir = tempDir('poisoned')
  const MONTH_MS = 30 * 86_400_000
  fs.writeFileSync(path.join(dir, 'slot-0000'), oldRecord(0, Date.now() + MONTH_MS))
  const gens = []
  try {
    const first = Snowflake.fromFileLease({ dir, slots: 2, reserveMs: 100 })
    gens.push(first)
    assert.equal(first.nodeId, 1, 'the free slot with a short guard comes first')
    first.waitReady()
    assert.equal(first.health().lease.phase, 'held')
    const last = Snowflake.fromFileLease({ dir, slots: 2, reserveMs: 100 })
    gens.push(last)
    assert.equal(last.nodeId, 0)
    const h = last.health()
    assert.equal(h.status, 'restart_guard')
    assert.deepEqual([h.lease.phase, h.lease.guardWaiting, h.lease.expired, h.lease.lost], ['restart_guard', true, false, false])
    assert.match(h.lease.guardNote, /max_guard_wait_ms/)
    assert.match(h.reason, /max_guard_wait_ms/)
    assert.ok(h.lease.guardRemainingMs > MONTH_MS - 60_000)
    const e = throwsCode(assert, () => last.waitReady(20), Error, 'LEASE_NOT_READY')
    assert.equal(e.nodeId, 0)
    assert.ok(e.remainingMs > MONTH_MS - 60_000)
    last.close()
    const allowed = Snowflake.fromFileLease({ dir, slots: 2, reserveMs: 100, maxGuardWaitMs: YEAR_MS })
    gens.push(allowed)
    assert.equal(allowed.nodeId, 0)
    assert.equal(allowed.health().lease.guardNote, '')
  } finally {
    for (const g of gens) g.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('waitReady: nothing to wait for without a lease; a closed generator refuses at once', () => {
  const g = new Snowflake({ nodeId: 6, clock: new ManualClock(T) })
  g.waitReady()
  g.waitReady(0n)
  throwsCode(assert, () => g.waitReady(-1), RangeError, 'ERR_OUT_OF_RANGE')
  throwsCode(assert, () => g.waitReady('1'), TypeError, 'ERR_INVALID_ARG_TYPE')
  g.close()
  const e = throwsCode(assert, () => g.waitReady(), Error, 'GENERATOR_CLOSED')
  assert.equal(e.nodeId, 6)
  throwsCode(assert, () => new ManualClock(T).elapse(-1), RangeError, 'ERR_OUT_OF_RANGE')
})

test('errors carry the core error\'s data as properties (camelCase), never shadowing name or message', () => {
  const e = throwsCode(assert, () => new Snowflake({ nodeId: 2n ** 64n }), RangeError, 'INVALID_NODE_ID')
  assert.deepEqual([e.nodeId, e.max, e.name], [2n ** 64n, 1023, 'RangeError'], 'a node id a Number cannot hold is a bigint')
  const arg = throwsCode(assert, () => new Snowflake({ nodeId: 1, maxWaitMs: -1 }), RangeError, 'INVALID_ARGUMENT')
  assert.deepEqual([arg.name, arg.invalidArgumentName], ['RangeError', 'max_wait_ms'])
  assert.match(arg.reason, /-1/)
  const layout = throwsCode(assert, () => new Snowflake({ nodeId: 1, layout: 'nope' }), RangeError, 'UNKNOWN_LAYOUT')
  assert.deepEqual([layout.name, layout.unknownLayoutName], ['RangeError', 'nope'])
  const clock = new ManualClock(T)
  const g = new Snowflake({ nodeId: 7, clock })
  g.nextId()
  clock.advance(-600)
  const back = throwsCode(assert, () => g.nextId(), Error, 'CLOCK_MOVED_BACKWARDS')
  assert.deepEqual([back.nodeId, back.behindMs, back.stuck, back.maxWaitMs], [7, 600, false, 5])
})

test('health() has exactly the keys index.d.ts declares (Health, ClockSync and LeaseHealth)', () => {
  const dts = fs.readFileSync(path.join(NODE_DIR, 'index.d.ts'), 'utf8')
  // Each declared key, and whether it is optional (`?:`: absent while the core has no value).
  const declared = (name) => {
    const body = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`))
    assert.ok(body, `index.d.ts declares ${name}`)
    return new Map([...body[1].matchAll(/^ {2}(\w+)(\??):/gm)].map((m) => [m[1], m[2] === '?']))
  }
  const same = (obj, name, atLeast = 12) => {
    const keys = declared(name)
    for (const k of Object.keys(obj)) assert.ok(keys.has(k), `${name}.${k} is not declared in index.d.ts`)
    for (const [k, optional] of keys) assert.ok(optional || k in obj, `${name}.${k} is declared but missing`)
    assert.ok(keys.size >= atLeast, `${name}: ${[...keys.keys()]}`)
  }
  const dir = tempDir('keys')
  const g = MonotonicSnowflake.fromFileLease({ dir, slots: 1, reserveMs: 100, clock: new ManualClock(T) })
  try {
    g.nextIds(3) // a leased generator on a ManualClock: the guard holds, health still answers
  } catch (e) {
    assert.equal(e.code, 'LEASE_NOT_READY')
  }
  try {
    const h = g.health()
    same(h, 'Health')
    same(h.clockSync, 'ClockSync', 4)
    same(h.lease, 'LeaseHealth')
    assert.equal(typeof h.lease.guardUntilMs, 'number')
    assert.equal(h.lastIssuedMs, undefined)
  } finally {
    g.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// One behaviour per input, in every binding.
const TABLE = readJson(path.join(VECTORS, 'bad_node_sources.json'))

for (const c of TABLE.cases) {
  test(`same input as every binding: ${c.name} -> ${c.error}, the core's message`, () => {
    const dir = tempDir('table')
    const { kind, ...src } = c.source
    let call
    if (kind === 'ipv4') {
      assert.deepEqual(Object.keys(src).sort(), ['address', 'prefix_len'])
      call = () => Snowflake.fromIpv4(src.address, src.prefix_len)
    } else {
      assert.equal(kind, 'file_lease')
      const names = { dir: 'dir', reserve_ms: 'reserveMs', identity: 'identity', slots: 'slots' }
      const opts = {}
      for (const [k, v] of Object.entries(src)) {
        assert.ok(k in names, `unknown key ${k}`)
        opts[names[k]] = k === 'dir' ? dir : v
      }
      call = () => Snowflake.fromFileLease(opts)
    }
    try {
      const e = throwsCode(assert, call, RangeError, c.error)
      assert.equal(e.message, c.message)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('the same-input table has its six cases', () => {
  assert.deepEqual(TABLE.cases.map((c) => c.name).sort(), ['empty_identity', 'ipv4_prefix_300', 'ipv4_prefix_33',
    'ipv4_prefix_minus_1', 'reserve_ms_0', 'zero_slots'])
})
