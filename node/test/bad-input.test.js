'use strict'
// The bad-input table: every wrong type, unsafe Number, out-of-range value and misuse gets a
// clear error of the right class with a stable code; nothing is rounded, nothing crashes.
const test = require('node:test')
const assert = require('node:assert/strict')
const { polyflake, throwsCode } = require('./helpers')

const {
  Snowflake, MonotonicSnowflake, Uuid7Generator, UlidGenerator, ManualClock, ScriptedClock, Layout, idsToStrings, idToString, parseId,
} = polyflake
const T0 = 1737747358021
const clock = () => new ManualClock(T0)
const gen = () => new Snowflake({ nodeId: 1, clock: clock() })
const mono = () => new MonotonicSnowflake({ nodeId: 1, clock: clock() })

// [what, call, error class, code]
const TABLE = [
  // IDs: a Number is never accepted (it may already be rounded), bigints must be in [0, 2^63).
  ['decode(Number)', () => Snowflake.decode(141264821508263936), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['decode(small Number)', () => Snowflake.decode(5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['decode(-1n)', () => Snowflake.decode(-1n), RangeError, 'INVALID_ID'],
  ['decode(2n ** 63n)', () => Snowflake.decode(2n ** 63n), RangeError, 'INVALID_ID'],
  ['decode(2n ** 64n)', () => Snowflake.decode(2n ** 64n), RangeError, 'INVALID_ID'],
  ['decode(2n ** 200n)', () => Snowflake.decode(2n ** 200n), RangeError, 'INVALID_ID'],
  ['decode(-(2n ** 200n))', () => Snowflake.decode(-(2n ** 200n)), RangeError, 'INVALID_ID'],
  ['decode("12a")', () => Snowflake.decode('12a'), RangeError, 'INVALID_ID'],
  ['decode("")', () => Snowflake.decode(''), RangeError, 'INVALID_ID'],
  ['decode("-1")', () => Snowflake.decode('-1'), RangeError, 'INVALID_ID'],
  ['decode("9223372036854775808")', () => Snowflake.decode('9223372036854775808'), RangeError, 'INVALID_ID'],
  ['decode(null)', () => Snowflake.decode(null), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['decode(undefined)', () => Snowflake.decode(), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['decode({})', () => Snowflake.decode({}), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['instance decode(Number)', () => gen().decode(1), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['instance decode(2n ** 63n)', () => mono().decode(2n ** 63n), RangeError, 'INVALID_ID'],
  ['parseId(Number)', () => parseId(7), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['parseId("0x10")', () => parseId('0x10'), RangeError, 'INVALID_ID'],
  ['idToString(-5n)', () => idToString(-5n), RangeError, 'INVALID_ID'],
  ['idsToStrings([1])', () => idsToStrings([1]), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['idsToStrings([-1n])', () => idsToStrings([-1n]), RangeError, 'INVALID_ID'],
  ['idsToStrings(BigInt64Array [-1n])', () => idsToStrings(new BigInt64Array([-1n])), RangeError, 'INVALID_ID'],
  ['idsToStrings("1")', () => idsToStrings('1'), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['idsToStrings(Float64Array)', () => idsToStrings(new Float64Array(2)), TypeError, 'ERR_INVALID_ARG_TYPE'],

  // Node ids: integers only; unsafe Numbers refused before they could be rounded.
  ['nodeId 1.5', () => new Snowflake({ nodeId: 1.5, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nodeId NaN', () => new Snowflake({ nodeId: NaN, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nodeId Infinity', () => new Snowflake({ nodeId: Infinity, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nodeId "1"', () => new Snowflake({ nodeId: '1', clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nodeId 2 ** 53', () => new Snowflake({ nodeId: 2 ** 53, clock: clock() }), RangeError, 'ERR_OUT_OF_RANGE'],
  ['nodeId -1', () => new Snowflake({ nodeId: -1, clock: clock() }), RangeError, 'INVALID_NODE_ID'],
  ['nodeId 1024', () => new Snowflake({ nodeId: 1024, clock: clock() }), RangeError, 'INVALID_NODE_ID'],
  ['nodeId 2n ** 64n', () => new Snowflake({ nodeId: 2n ** 64n, clock: clock() }), RangeError, 'INVALID_NODE_ID'],
  ['nodeId missing', () => new Snowflake({ clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['options missing', () => new Snowflake(), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['options a number', () => new Snowflake(37), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['unknown option', () => new Snowflake({ nodeId: 1, nodeID: 2 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['maxLeadMs on a strict Snowflake', () => new Snowflake({ nodeId: 1, maxLeadMs: 5, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],

  // Other settings.
  ['epochMs 1.5', () => new Snowflake({ nodeId: 1, epochMs: 1.5, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['epochMs 2n ** 70n', () => new Snowflake({ nodeId: 1, epochMs: 2n ** 70n, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  ['epochMs -1', () => new Snowflake({ nodeId: 1, epochMs: -1, clock: clock() }), RangeError, 'INVALID_EPOCH'],
  ['epochMs in the future', () => new Snowflake({ nodeId: 1, epochMs: Date.now() + 86400000 }), RangeError, 'INVALID_EPOCH'],
  ['maxWaitMs "5"', () => new Snowflake({ nodeId: 1, maxWaitMs: '5', clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['maxWaitMs -1', () => new Snowflake({ nodeId: 1, maxWaitMs: -1, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  ['maxWaitMs NaN', () => new Snowflake({ nodeId: 1, maxWaitMs: NaN, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  ['maxWaitMs 1e9', () => new Snowflake({ nodeId: 1, maxWaitMs: 1e9, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  ['maxLeadMs -5', () => new MonotonicSnowflake({ nodeId: 1, maxLeadMs: -5, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  ['maxLeadMs 0.5', () => new MonotonicSnowflake({ nodeId: 1, maxLeadMs: 0.5, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['maxClockErrorMs 0', () => new Snowflake({ nodeId: 1, maxClockErrorMs: 0 }), RangeError, 'INVALID_ARGUMENT'],
  ['maxClockErrorMs 1.5', () => new UlidGenerator({ maxClockErrorMs: 1.5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['maxClockErrorMs with a test clock', () => new Snowflake({ nodeId: 1, maxClockErrorMs: 100, clock: clock() }), RangeError, 'INVALID_ARGUMENT'],
  // The node id's claim on the host (a fixed node id's restart guard, the scope).
  ['restartGuard true', () => Snowflake.fromIpv4('10.0.0.7', 24, { restartGuard: true }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['stateDir 5', () => MonotonicSnowflake.fromHostname('ids-7', { stateDir: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['stateDir on a file lease', () => Snowflake.fromFileLease({ dir: '/nonexistent', stateDir: '/tmp' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['restartGuard on a format generator', () => new UlidGenerator({ restartGuard: 'off' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['hostScope of 41 bytes', () => Snowflake.fromFileLease({ dir: '/nonexistent', hostScope: 'x'.repeat(41) }), RangeError, 'INVALID_ARGUMENT'],
  ['layout "nope"', () => new Snowflake({ nodeId: 1, layout: 'nope', clock: clock() }), RangeError, 'UNKNOWN_LAYOUT'],
  ['layout "41/10/13"', () => new Snowflake({ nodeId: 1, layout: '41/10/13', clock: clock() }), RangeError, 'INVALID_LAYOUT'],
  ['layout 41', () => new Snowflake({ nodeId: 1, layout: 41, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['layout bits 41.5', () => new Layout(41.5, 10, 11.5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['layout bits -1', () => new Layout(-1, 10, 54), RangeError, 'ERR_OUT_OF_RANGE'],
  ['layout object with a typo', () => new Snowflake({ nodeId: 1, layout: { timestampBits: 41, nodeBits: 10, seqBits: 12 }, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['layout object missing a field', () => new Snowflake({ nodeId: 1, layout: { timestampBits: 41, nodeBits: 10 }, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['Layout.fromName(5)', () => Layout.fromName(5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  // A string names the clock source ('precise' or 'coarse'); the core refuses any other name.
  ['clock "system"', () => new Snowflake({ nodeId: 1, clock: 'system' }), RangeError, 'INVALID_ARGUMENT'],
  ['clock {}', () => new Snowflake({ nodeId: 1, clock: {} }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['clock a Layout', () => new Snowflake({ nodeId: 1, clock: new Layout(41, 10, 12) }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['ManualClock(1.5)', () => new ManualClock(1.5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['ManualClock(2 ** 60)', () => new ManualClock(2 ** 60), RangeError, 'ERR_OUT_OF_RANGE'],
  ['ManualClock.advance("1")', () => clock().advance('1'), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['ScriptedClock(5)', () => new ScriptedClock(5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['ScriptedClock([1.5])', () => new ScriptedClock([1.5]), TypeError, 'ERR_INVALID_ARG_TYPE'],

  // Batch sizes: integers in [0, MAX_BATCH].
  ['nextIds(-1)', () => mono().nextIds(-1), RangeError, 'INVALID_ARGUMENT'],
  ['nextIds(2 ** 25)', () => mono().nextIds(2 ** 25), RangeError, 'INVALID_ARGUMENT'],
  ['nextIds(1.5)', () => mono().nextIds(1.5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nextIds(2 ** 53)', () => mono().nextIds(2 ** 53), RangeError, 'ERR_OUT_OF_RANGE'],
  ['nextIds("10")', () => mono().nextIds('10'), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nextIds()', () => mono().nextIds(), TypeError, 'ERR_INVALID_ARG_TYPE'],

  // Misuse and clock functions.
  ['two live generators, one node id', () => {
    const a = new Snowflake({ nodeId: 1000 })
    try {
      new Snowflake({ nodeId: 1000 })
    } finally {
      a.nextId()
    }
  }, Error, 'NODE_ID_IN_USE'],
  // A clock function is not a test clock: each generator on one holds its node id in this
  // process (not host-wide: see static-guard.test.js), so each row here has its own.
  ['a clock function that throws', () => new Snowflake({ nodeId: 61, clock: () => { throw new Error('boom') } }).nextId(), Error, 'CLOCK_FAILED'],
  ['a clock function returning a string', () => new Snowflake({ nodeId: 62, clock: () => '1737747358021' }).nextId(), Error, 'CLOCK_FAILED'],
  ['a clock function returning 1.5', () => new Snowflake({ nodeId: 63, clock: () => 1.5 }).nextId(), Error, 'CLOCK_FAILED'],
  ['a clock before the epoch', () => new Snowflake({ nodeId: 64, clock: () => 5 }).nextId(), Error, 'TIMESTAMP_OVERFLOW'],
  ['two live generators on clock functions, one node id', () => {
    const a = new Snowflake({ nodeId: 65, clock: () => T0 })
    try {
      new Snowflake({ nodeId: 65, clock: () => T0 })
    } finally {
      a.close()
    }
  }, Error, 'NODE_ID_IN_USE'],
  // V8's own receiver check ("Illegal invocation", no code) stops it before any Rust runs.
  ['prototype nextId on a wrong receiver', () => Snowflake.prototype.nextId.call(new ManualClock(T0)), TypeError, undefined],
]

for (const [what, fn, cls, code] of TABLE) {
  test(`bad input: ${what} -> ${cls.name} ${code}`, () => {
    throwsCode(assert, fn, cls, code)
  })
}

test('every core error kind reaches JS as an Error with a stable code', () => {
  // The kinds the table above provokes, which is all of them except USED_AFTER_FORK (Node
  // cannot fork a live process; the core's own fork test covers it).
  const codes = new Set(TABLE.map((row) => row[3]))
  for (const code of ['INVALID_LAYOUT', 'UNKNOWN_LAYOUT', 'INVALID_NODE_ID', 'INVALID_EPOCH', 'INVALID_ARGUMENT',
    'INVALID_ID', 'TIMESTAMP_OVERFLOW', 'NODE_ID_IN_USE', 'CLOCK_FAILED']) {
    assert.ok(codes.has(code), code)
  }
  // CLOCK_MOVED_BACKWARDS and LEAD_LIMIT_EXCEEDED come from the scenario files; here once more.
  const c = clock()
  const g = new Snowflake({ nodeId: 2, clock: c })
  g.nextId()
  c.advance(-600)
  throwsCode(assert, () => g.nextId(), Error, 'CLOCK_MOVED_BACKWARDS')
  const m = new MonotonicSnowflake({ nodeId: 2, maxLeadMs: 0, clock: clock() })
  m.nextIds(4096)
  throwsCode(assert, () => m.nextId(), Error, 'LEAD_LIMIT_EXCEEDED')
})

// Every refusal echoes the value the caller sent, never a clamped bound. A bigint too
// wide for the core's type is the core's `too_wide` refusal (INVALID_ARGUMENT) with its exact
// digits; a Number that is not a safe integer is refused with its JS text.
const BIG = 2n ** 1000n
const ECHO = [
  // [what, call, class, code, the text the message must hold, extra checks]
  ['nodeId 2n ** 1000n', () => new Snowflake({ nodeId: BIG, clock: clock() }), RangeError, 'INVALID_ARGUMENT', String(BIG),
    (e) => assert.equal(e.invalidArgumentName, 'nodeId')],
  ['nodeId -(2n ** 1000n)', () => new Snowflake({ nodeId: -BIG, clock: clock() }), RangeError, 'INVALID_ARGUMENT', String(-BIG)],
  ['nodeId 2n ** 64n (fits the core: its own check)', () => new Snowflake({ nodeId: 2n ** 64n, clock: clock() }), RangeError, 'INVALID_NODE_ID', '18446744073709551616'],
  ['epochMs 2n ** 63n (just past i64)', () => new Snowflake({ nodeId: 1, epochMs: 2n ** 63n, clock: clock() }), RangeError, 'INVALID_ARGUMENT', '9223372036854775808',
    (e) => {
      assert.equal(e.invalidArgumentName, 'epochMs')
      assert.ok(!e.message.includes('9223372036854775807'), 'no clamped bound')
    }],
  ['epochMs 2n ** 1000n', () => new Snowflake({ nodeId: 1, epochMs: BIG, clock: clock() }), RangeError, 'INVALID_ARGUMENT', String(BIG)],
  ['epochMs -(2n ** 64n)', () => new Snowflake({ nodeId: 1, epochMs: -(2n ** 64n), clock: clock() }), RangeError, 'INVALID_ARGUMENT', '-18446744073709551616'],
  ['nextIds(2n ** 64n)', () => mono().nextIds(2n ** 64n), RangeError, 'INVALID_ARGUMENT', '18446744073709551616'],
  ['nextIds(2n ** 1000n)', () => mono().nextIds(BIG), RangeError, 'INVALID_ARGUMENT', String(BIG),
    (e) => assert.equal(e.invalidArgumentName, 'count')],
  ['Uuid7Generator nextIds(2n ** 128n)', () => new polyflake.Uuid7Generator().nextIds(2n ** 128n), RangeError, 'INVALID_ARGUMENT', String(2n ** 128n)],
  ['decode(2n ** 200n)', () => Snowflake.decode(2n ** 200n), RangeError, 'INVALID_ID', String(2n ** 200n),
    (e) => assert.equal(e.input, String(2n ** 200n))],
  ['decode(-(2n ** 200n))', () => Snowflake.decode(-(2n ** 200n)), RangeError, 'INVALID_ID', String(-(2n ** 200n)),
    (e) => assert.match(e.message, /never negative/)],
  ['idToString(2n ** 128n)', () => idToString(2n ** 128n), RangeError, 'INVALID_ID', String(2n ** 128n)],
  ['ScriptedClock([1n, 2n ** 64n])', () => new ScriptedClock([1n, 2n ** 64n]), RangeError, 'INVALID_ARGUMENT', '18446744073709551616 is out of range',
    (e) => assert.match(e.message, /element 1/)],
  ['reserveMs 2n ** 64n', () => Snowflake.fromFileLease({ dir: '/nonexistent', reserveMs: 2n ** 64n }), RangeError, 'INVALID_ARGUMENT', '18446744073709551616'],
  ['slots -5 (negative for an unsigned setting)', () => Snowflake.fromFileLease({ dir: '/nonexistent', slots: -5 }), RangeError, 'ERR_OUT_OF_RANGE', 'slots = -5 is not in [0, 2^32)'],
  ['Layout(2n ** 70n, 10, 12)', () => new Layout(2n ** 70n, 10, 12), RangeError, 'INVALID_ARGUMENT', String(2n ** 70n)],
  ['maxClockErrorMs 16001', () => new Uuid7Generator({ maxClockErrorMs: 16001 }), RangeError, 'INVALID_ARGUMENT', '16001'],
  ['restartGuard "yes"', () => new Snowflake({ nodeId: 1, restartGuard: 'yes' }), RangeError, 'INVALID_ARGUMENT', '"yes"'],
  ['hostScope "two words"', () => new Snowflake({ nodeId: 1, hostScope: 'two words' }), RangeError, 'INVALID_ARGUMENT', '"two words"'],
  // Numbers: refused with the text JavaScript writes for them.
  ['nodeId 2 ** 60', () => new Snowflake({ nodeId: 2 ** 60, clock: clock() }), RangeError, 'ERR_OUT_OF_RANGE', String(2 ** 60)],
  ['nextIds(1e21)', () => mono().nextIds(1e21), RangeError, 'ERR_OUT_OF_RANGE', '1e+21'],
  ['nextIds(-1e300)', () => mono().nextIds(-1e300), RangeError, 'ERR_OUT_OF_RANGE', '-1e+300'],
  ['nodeId Infinity', () => new Snowflake({ nodeId: Infinity, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE', 'got Infinity'],
  ['nodeId 0.1 + 0.2', () => new Snowflake({ nodeId: 0.1 + 0.2, clock: clock() }), TypeError, 'ERR_INVALID_ARG_TYPE', String(0.1 + 0.2)],
  ['ManualClock(2 ** 60 + 0.5 is 2 ** 60)', () => new ManualClock(2 ** 60), RangeError, 'ERR_OUT_OF_RANGE', String(2 ** 60)],
]

for (const [what, fn, cls, code, sent, more] of ECHO) {
  test(`the refusal echoes what was sent: ${what}`, () => {
    const e = throwsCode(assert, fn, cls, code)
    assert.ok(e.message.includes(sent), `${JSON.stringify(sent)} not in: ${e.message}`)
    if (more) more(e)
  })
}

test('the refusal echoes what was sent: nextIdsAsync(2n ** 1000n) alike (a bad count rejects)', async () => {
  let e = null
  const promise = mono().nextIdsAsync(BIG)
  assert.ok(promise instanceof Promise, 'a bad count rejects, never throws at the call')
  try {
    await promise
  } catch (err) {
    e = err
  }
  assert.ok(e instanceof RangeError)
  assert.equal(e.code, 'INVALID_ARGUMENT')
  assert.ok(e.message.includes(String(BIG)), e.message)
})

test('a detached nextId stays bound to its generator', () => {
  const c = clock()
  const next = new Snowflake({ nodeId: 37, clock: c }).nextId
  assert.equal(next(), 141264821508263936n)
  assert.equal(next(), 141264821508263937n)
})

test('the prototype nextId and the bound one share one sequence', () => {
  const g = gen()
  const a = g.nextId()
  const b = Snowflake.prototype.nextId.call(g)
  const c = g.nextIdString()
  assert.equal(b, a + 1n)
  assert.equal(c, String(a + 2n))
  assert.ok(!Object.keys(g).includes('nextId'), 'the bound nextId is not enumerable')
})

test('IDs above 2^53 round-trip exactly as bigint and string', () => {
  const id = 2n ** 62n + 12345n
  assert.equal(parseId(String(id)), id)
  assert.equal(idToString(id), String(id))
  assert.deepEqual(idsToStrings([id, String(id - 1n)]), [String(id), String(id - 1n)])
  assert.deepEqual(idsToStrings(new BigInt64Array([id])), [String(id)])
})

test('a clock function may return a Number or a bigint', () => {
  let t = T0
  const g = new Snowflake({ nodeId: 37, clock: () => t })
  assert.equal(g.nextId(), 141264821508263936n)
  // A clock function holds its node id in this process: node 38, one node field step on.
  const b = new Snowflake({ nodeId: 38, clock: () => BigInt(T0) })
  assert.equal(b.nextId(), 141264821508263936n + (1n << 12n))
})
