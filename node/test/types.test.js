'use strict'
// The TypeScript surface: the literal unions of index.d.ts (PolyflakeErrorCode,
// HealthStatus, NodeIdSource, GeneratorMode, ClockSourceName, LeaseKind, LeasePhase,
// ClockSyncState, RestartGuardMode) against the
// core's own lists (the addon's internal `_typeNames()`); `isPolyflakeError` on every kind of
// error the package throws and on look-alikes; every async form rejecting (never throwing at the
// call) on bad input; the decoded time as a Date; and tsc --strict: code that narrows through
// the guard and the unions compiles, a wrong literal does not.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const ts = require('typescript')
const { NODE_DIR, polyflake } = require('./helpers')

const {
  Snowflake, MonotonicSnowflake, Uuid7Generator, UlidGenerator, ManualClock, isPolyflakeError, MAX_BATCH,
  uuid7, ulid, uuid7Time, ulidTime, uuid7TimestampMs, ulidTimestampMs,
} = polyflake
const T = 1_737_747_358_021
const DTS = path.join(NODE_DIR, 'index.d.ts')

// The string literals of each `export type NAME = 'a' | 'b' | ...` in index.d.ts.
function unions() {
  const file = ts.createSourceFile(DTS, fs.readFileSync(DTS, 'utf8'), ts.ScriptTarget.ES2020, true)
  const out = {}
  for (const s of file.statements) {
    if (!ts.isTypeAliasDeclaration(s) || !ts.isUnionTypeNode(s.type)) continue
    const lits = s.type.types.filter((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal))
    if (lits.length === s.type.types.length) out[s.name.text] = lits.map((t) => t.literal.text)
  }
  return out
}

test('the literal unions of index.d.ts are the core\'s lists, in its order', () => {
  const u = unions()
  const core = polyflake._typeNames()
  for (const [union, list] of [['PolyflakeErrorCode', 'errorCodes'], ['HealthStatus', 'healthStatuses'],
    ['NodeIdSource', 'sources'], ['GeneratorMode', 'modes'], ['ClockSourceName', 'clockSources'],
    ['LeaseKind', 'leaseKinds'], ['LeasePhase', 'leasePhases'], ['ClockSyncState', 'clockSyncStates'],
    ['RestartGuardMode', 'restartGuards']]) {
    assert.deepEqual(u[union], core[list], `${union} in index.d.ts against the core's ${list}`)
  }
  assert.ok(core.errorCodes.includes('CLOCK_MOVED_BACKWARDS') && core.errorCodes.includes('LEASE_LOST'))
  assert.equal(core.healthStatuses.length, 14)
  assert.ok(core.errorCodes.includes('CLOCK_UNSYNCHRONIZED') && core.leaseKinds.includes('host'))
})

test('the unions are what the generators report', () => {
  const g = new Snowflake({ nodeId: 1, clock: new ManualClock(T) })
  const h = g.health()
  const core = polyflake._typeNames()
  assert.ok(core.healthStatuses.includes(h.status) && core.sources.includes(h.source))
  assert.ok(core.modes.includes(h.mode) && core.clockSources.includes(h.clockSource))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-types-'))
  try {
    const leased = MonotonicSnowflake.fromFileLease({ dir, slots: 1, reserveMs: 100 })
    const lh = leased.health()
    assert.deepEqual([lh.source, lh.lease.kind, lh.mode], ['file_lease', 'file', 'monotonic'])
    assert.ok(core.leasePhases.includes(lh.lease.phase), lh.lease.phase)
    leased.close()
    assert.equal(leased.health().status, 'closed')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// An error of each kind the package makes, and how it was made.
function caught(fn) {
  try {
    fn()
  } catch (e) {
    return e
  }
  assert.fail('nothing was thrown')
}

test('isPolyflakeError: true for every kind of error the package throws or rejects with', async () => {
  const clock = new ManualClock(T)
  const g = new Snowflake({ nodeId: 2, clock, maxWaitMs: 1 })
  g.nextId()
  clock.advance(-600)
  const errors = [
    caught(() => g.nextId()), // a core fault: Error, CLOCK_MOVED_BACKWARDS
    caught(() => new Snowflake({ nodeId: 5000 })), // a core configuration error: RangeError
    caught(() => Snowflake.decode(5)), // a Number for an ID: TypeError ERR_INVALID_ARG_TYPE
    caught(() => g.nextIds(2 ** 60)), // not a safe integer: RangeError ERR_OUT_OF_RANGE
    caught(() => ulidTimestampMs('not a ulid')), // INVALID_ID
    await g.nextIdAsync().then(() => assert.fail('resolved'), (e) => e), // a rejection
    await g.nextIdsAsync(NaN).then(() => assert.fail('resolved'), (e) => e),
  ]
  for (const e of errors) {
    assert.ok(isPolyflakeError(e), `${e.constructor.name} ${e.code}: ${e.message}`)
    assert.ok(polyflake._typeNames().errorCodes.includes(e.code))
  }
  assert.deepEqual(errors.map((e) => e.code), ['CLOCK_MOVED_BACKWARDS', 'INVALID_NODE_ID', 'ERR_INVALID_ARG_TYPE',
    'ERR_OUT_OF_RANGE', 'INVALID_ID', 'CLOCK_MOVED_BACKWARDS', 'ERR_INVALID_ARG_TYPE'])
  assert.equal(errors[0].behindMs, 600)
})

test('isPolyflakeError: false for everything else, and it never throws', () => {
  const throwing = new Error('x')
  Object.defineProperty(throwing, 'code', { get() { throw new Error('a getter that throws') } })
  const proxy = new Proxy(new Error('x'), { get() { throw new Error('a trap that throws') } })
  const others = [new Error('plain'), Object.assign(new Error('fs'), { code: 'ENOENT' }),
    Object.assign(new Error('number'), { code: 5 }), { code: 'LEASE_LOST', message: 'not an Error' },
    throwing, proxy, null, undefined, 'LEASE_LOST', 5, Symbol('s'), () => {}]
  others.forEach((v, i) => assert.equal(isPolyflakeError(v), false, `others[${i}]`))
  // Any Error with one of the codes passes: the guard reads the code, not where it came from.
  assert.equal(isPolyflakeError(Object.assign(new TypeError('t'), { code: 'LEASE_LOST' })), true)
  assert.equal(isPolyflakeError(), false)
})

// Every async form of every class, with a bad count: a Promise, rejected with the sync form's error.
test('the async forms reject on bad input instead of throwing at the call', async () => {
  const gens = [new Snowflake({ nodeId: 3 }), new MonotonicSnowflake({ nodeId: 4 }), new Uuid7Generator(), new UlidGenerator()]
  const bad = [[NaN, TypeError, 'ERR_INVALID_ARG_TYPE'], ['x', TypeError, 'ERR_INVALID_ARG_TYPE'],
    [undefined, TypeError, 'ERR_INVALID_ARG_TYPE'], [1.5, TypeError, 'ERR_INVALID_ARG_TYPE'],
    [2 ** 60, RangeError, 'ERR_OUT_OF_RANGE'], [-1, RangeError, 'INVALID_ARGUMENT'],
    [MAX_BATCH + 1, RangeError, 'INVALID_ARGUMENT'], [2n ** 1000n, RangeError, 'INVALID_ARGUMENT']]
  for (const g of gens) {
    for (const [count, cls, code] of bad) {
      let p
      assert.doesNotThrow(() => { p = g.nextIdsAsync(count) }, `${g.constructor.name}.nextIdsAsync(${count})`)
      assert.ok(p instanceof Promise)
      await assert.rejects(p, (e) => e instanceof cls && e.code === code && isPolyflakeError(e),
        `${g.constructor.name}.nextIdsAsync(${count}): ${cls.name} ${code}`)
      // The synchronous form throws the same error.
      assert.throws(() => g.nextIds(count), (e) => e instanceof cls && e.code === code)
    }
    g.close()
    let p
    assert.doesNotThrow(() => { p = g.nextIdAsync() })
    await assert.rejects(p, { code: 'GENERATOR_CLOSED' })
    await assert.rejects(g.nextIdsAsync(1), { code: 'GENERATOR_CLOSED' })
  }
})

test('the decoded time is a Date, exact to the millisecond, for every format', () => {
  const clock = new ManualClock(T)
  const g = new Snowflake({ nodeId: 9, clock })
  const d = g.decode(g.nextId())
  assert.ok(d.time instanceof Date)
  assert.deepEqual(d, { timestampMs: T, nodeId: 9, sequence: 0, time: new Date(T) })
  assert.equal(d.time.toISOString(), '2025-01-24T19:35:58.021Z')
  assert.equal(Snowflake.decode(1n << 22n).time.toISOString(), '2024-01-01T00:00:00.001Z')
  // A custom epoch: the Date is still Unix time.
  const e = new Snowflake({ nodeId: 9, clock: new ManualClock(T), epochMs: 1_600_000_000_000 })
  assert.equal(e.decode(e.nextId()).time.getTime(), T)
  assert.equal(e.epochMs, 1_600_000_000_000, 'gen.epochMs stays the configured epoch')
  const m = new MonotonicSnowflake({ nodeId: 9, clock: new ManualClock(T) })
  assert.equal(m.decode(m.nextId()).time.getTime(), T)
  for (const [next, time, ms] of [[uuid7, uuid7Time, uuid7TimestampMs], [ulid, ulidTime, ulidTimestampMs]]) {
    const before = Date.now()
    const id = next()
    const t = time(id)
    assert.ok(t instanceof Date && t.getTime() === ms(id) && t.getTime() >= before && t.getTime() <= Date.now())
  }
  const u = new Uuid7Generator({ clock: new ManualClock(T) })
  assert.equal(uuid7Time(u.nextIdBuffer()).getTime(), T)
  const l = new UlidGenerator({ clock: new ManualClock(T) })
  assert.equal(ulidTime(l.nextId()).toISOString(), '2025-01-24T19:35:58.021Z')
})

// tsc --strict on each of `sources` (name -> code), in one program against the checked-in
// index.d.ts: each file's diagnostics, as 'TSnnnn: message'.
function compile(sources) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-tsc-'))
  const files = Object.fromEntries(Object.keys(sources).map((name, i) => [name, path.join(dir, `check${i}.ts`)]))
  for (const [name, file] of Object.entries(files)) fs.writeFileSync(file, sources[name])
  const program = ts.createProgram(Object.values(files), {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    baseUrl: dir,
    paths: { polyflake: [DTS] },
    typeRoots: [path.join(NODE_DIR, 'node_modules', '@types')],
    types: ['node'],
  })
  const out = {}
  for (const [name, file] of Object.entries(files)) {
    const diags = ts.getPreEmitDiagnostics(program, program.getSourceFile(file))
    out[name] = diags.map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  }
  fs.rmSync(dir, { recursive: true, force: true })
  return out
}

const GOOD = `
import {
  Snowflake, isPolyflakeError, uuid7, uuid7Time, ulidTime, ulid,
  type PolyflakeErrorCode, type PolyflakeError, type HealthStatus, type Health, type LeasePhase,
  type ClockSyncState, type RestartGuardMode, MonotonicSnowflake,
} from 'polyflake'

function advice(status: HealthStatus): string {
  switch (status) {
    case 'ok': return 'fine'
    case 'clock_behind': case 'clock_outside_window': case 'clock_failed': case 'clock_stuck':
    case 'clock_ahead': case 'lead_too_large': return 'clock'
    case 'used_after_fork': case 'restart_guard': case 'lease_expired': case 'lease_lost':
    case 'closed': case 'store_rolled_back': return 'lease or lifecycle'
    case 'clock_unsynchronized': return 'time daemon'
    default: { const never: never = status; return never }
  }
}

const guard: RestartGuardMode = 'required'
const gen = new Snowflake({ nodeId: 1, restartGuard: guard, stateDir: '/tmp', hostScope: 'billing', maxClockErrorMs: null })
const lead = new MonotonicSnowflake({ nodeId: 2, maxLeadMs: null, restartGuard: 'off' })
const h: Health = gen.health()
const sync: ClockSyncState = h.clockSync.state
const maxErrorUs: number = h.clockSync.maxErrorUs
const waits: number = h.restartWaits + h.restartGuardNote.length + lead.health().restartWaits
if (h.lease?.kind === 'host') console.log(h.lease.store)
console.log(sync, maxErrorUs, waits)
const s: HealthStatus = h.status
const phase: LeasePhase | undefined = h.lease?.phase
const mode: 'strict' | 'monotonic' = h.mode
const when: Date = gen.decode(gen.nextId()).time
const ms: number = gen.decode(gen.nextId()).timestampMs
const epoch: number = gen.epochMs
const t: Date = uuid7Time(uuid7())
const t2: Date = ulidTime(ulid())
console.log(advice(s), phase, mode, when.toISOString(), ms, epoch, t, t2)

try {
  gen.nextIds(-1)
} catch (e: unknown) {
  if (isPolyflakeError(e)) {
    const code: PolyflakeErrorCode = e.code
    const err: PolyflakeError = e
    const msg: string = e.message
    if (e.code === 'CLOCK_MOVED_BACKWARDS') console.log(e.behindMs)
    console.log(code, err, msg)
  }
}
gen.nextIdsAsync(NaN).catch((e: unknown) => { if (isPolyflakeError(e) && e.code === 'ERR_INVALID_ARG_TYPE') console.log('rejected') })
`

// Each must fail with exactly one diagnostic of one of the codes (TS2820 is TS2322 with a
// "did you mean").
const BAD = [
  ['a misspelt status literal', `import type { HealthStatus } from 'polyflake'\nexport const s: HealthStatus = 'clock_behnd'\n`, ['TS2322', 'TS2820']],
  ['comparing status with a literal it can never be', `import { Snowflake } from 'polyflake'\nif (new Snowflake({ nodeId: 1 }).health().status === 'healthy') {}\n`, ['TS2367']],
  ['comparing a code with one that does not exist', `import { isPolyflakeError } from 'polyflake'\nconst e: unknown = null\nif (isPolyflakeError(e) && e.code === 'CLOCK_WENT_BACK') {}\n`, ['TS2367']],
  ['a restart guard that does not exist', `import { Snowflake } from 'polyflake'\nexport const g = new Snowflake({ nodeId: 1, restartGuard: 'yes' })\n`, ['TS2322', 'TS2820']],
  ['a restart guard on a lease', `import { Snowflake } from 'polyflake'\nexport const g = Snowflake.fromFileLease({ dir: '/tmp', stateDir: '/tmp' })\n`, ['TS2353', 'TS2561']],
  ['a wrong lease phase', `import type { LeasePhase } from 'polyflake'\nexport const p: LeasePhase = 'renewing'\n`, ['TS2322']],
  ['a wrong source', `import type { Health } from 'polyflake'\nexport const s: Health['source'] = 'file'\n`, ['TS2322', 'TS2820']],
  ['the old decoded field', `import { Snowflake } from 'polyflake'\nexport const ms: number = Snowflake.decode(1n).epochMs\n`, ['TS2339', 'TS2551']],
  ['a string as a code without the guard', `import type { PolyflakeErrorCode } from 'polyflake'\nconst e: unknown = null\nexport const c: PolyflakeErrorCode = (e as Error).message\n`, ['TS2322']],
]

const compiled = (() => {
  let out = null
  return () => (out ??= compile({ good: GOOD, ...Object.fromEntries(BAD.map(([what, code]) => [what, code])) }))
})()

test('tsc --strict: the guard narrows, the unions are exhaustive, Date times type-check', () => {
  assert.deepEqual(compiled().good, [])
})

for (const [what, , want] of BAD) {
  test(`tsc --strict refuses ${what}`, () => {
    const diags = compiled()[what]
    assert.equal(diags.length, 1, diags.join('\n'))
    assert.ok(want.some((w) => diags[0].startsWith(`${w}:`)), diags[0])
  })
}
