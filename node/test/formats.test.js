'use strict'
// UUIDv7 and ULID through the Node binding: tests/vectors/formats.json (the RFC 9562
// example, the ULID spec's examples, the limits, aliases and bad text), and the API: strings by
// default, a Buffer on request, batches as one Buffer or an array of strings, the module-level
// uuid7()/ulid(), explicit settings, and the helpers' refusals.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { VECTORS, polyflake, readJson, throwsCode } = require('./helpers')

const {
  Uuid7Generator, UlidGenerator, ManualClock, uuid7, ulid, parseUuid, parseUlid, formatUuid, formatUlid,
  uuid7TimestampMs, ulidTimestampMs, uuid7Time, ulidTime,
} = polyflake
const V = readJson(path.join(VECTORS, 'formats.json'))

const big = (buf) => BigInt(`0x${buf.toString('hex')}`)
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ULID_TEXT = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/

test('the RFC 9562 example: value, canonical text, fields and timestamp', () => {
  const ex = V.uuid.rfc9562_example
  const bytes = parseUuid(ex.text)
  assert.ok(Buffer.isBuffer(bytes) && bytes.length === 16)
  const value = big(bytes)
  assert.equal(value, BigInt(ex.value))
  assert.equal(formatUuid(ex.text), ex.canonical)
  assert.equal(formatUuid(bytes), ex.canonical)
  assert.equal(uuid7TimestampMs(ex.text), ex.unix_ts_ms)
  assert.equal(uuid7TimestampMs(bytes), ex.unix_ts_ms)
  // The time as a Date for a log line: exact, from text or bytes.
  assert.deepEqual(uuid7Time(ex.text), new Date(ex.unix_ts_ms))
  assert.equal(uuid7Time(bytes).getTime(), ex.unix_ts_ms)
  assert.equal(Number((value >> 76n) & 0xfn), ex.version)
  assert.equal(Number((value >> 62n) & 0x3n), ex.variant)
  assert.equal(Number((value >> 64n) & 0xfffn), ex.rand_a)
  assert.equal(value & ((1n << 62n) - 1n), BigInt(ex.rand_b))
})

test('UUID limits, bad text and other versions', () => {
  for (const l of V.uuid.limits) {
    assert.equal(uuid7TimestampMs(l.text), l.unix_ts_ms, l.text)
    assert.equal(uuid7Time(l.text).getTime(), l.unix_ts_ms, l.text)
    assert.equal(formatUuid(parseUuid(l.text)), l.text)
  }
  for (const bad of V.uuid.bad_text) {
    throwsCode(assert, () => parseUuid(bad), RangeError, 'INVALID_ID')
    throwsCode(assert, () => formatUuid(bad), RangeError, 'INVALID_ID')
  }
  for (const other of V.uuid.not_v7) {
    assert.equal(parseUuid(other).length, 16, 'a UUID of another version still parses')
    throwsCode(assert, () => uuid7TimestampMs(other), RangeError, 'INVALID_ID')
    throwsCode(assert, () => uuid7Time(other), RangeError, 'INVALID_ID')
  }
})

test('ULID examples, monotonic pair, limits, aliases and bad text', () => {
  for (const ex of V.ulid.examples) {
    const bytes = parseUlid(ex.text)
    assert.equal(big(bytes), BigInt(ex.value), ex.text)
    assert.equal(formatUlid(bytes), ex.text)
    assert.equal(ulidTimestampMs(ex.text), ex.unix_ts_ms)
    assert.equal(ulidTimestampMs(bytes), ex.unix_ts_ms)
    assert.deepEqual(ulidTime(ex.text), new Date(ex.unix_ts_ms))
    assert.equal(ulidTime(bytes).getTime(), ex.unix_ts_ms)
  }
  const [a, b] = V.ulid.monotonic_pair.map((t) => big(parseUlid(t)))
  assert.equal(b, a + 1n)
  for (const l of V.ulid.limits) {
    assert.equal(ulidTimestampMs(l.text), l.unix_ts_ms, l.text)
    assert.equal(ulidTime(l.text).getTime(), l.unix_ts_ms, l.text)
    assert.equal(formatUlid(parseUlid(l.text)), l.text)
  }
  for (const al of V.ulid.aliases) assert.equal(formatUlid(al.text), al.canonical, al.text)
  for (const bad of V.ulid.bad_text) {
    throwsCode(assert, () => parseUlid(bad), RangeError, 'INVALID_ID')
    throwsCode(assert, () => ulidTimestampMs(bad), RangeError, 'INVALID_ID')
    throwsCode(assert, () => ulidTime(bad), RangeError, 'INVALID_ID')
  }
})

test('the helpers refuse wrong types and wrong lengths', () => {
  for (const f of [parseUuid, parseUlid]) {
    throwsCode(assert, () => f(5), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => f(Buffer.alloc(16)), TypeError, 'ERR_INVALID_ARG_TYPE')
  }
  for (const f of [formatUuid, formatUlid, uuid7TimestampMs, ulidTimestampMs, uuid7Time, ulidTime]) {
    throwsCode(assert, () => f(Buffer.alloc(15)), RangeError, 'ERR_OUT_OF_RANGE')
    throwsCode(assert, () => f(123n), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => f(undefined), TypeError, 'ERR_INVALID_ARG_TYPE')
  }
})

test('uuid7() and ulid(): text, increasing, now', () => {
  const before = Date.now()
  const us = Array.from({ length: 5000 }, () => uuid7())
  const ls = Array.from({ length: 5000 }, () => ulid())
  const after = Date.now()
  for (const [texts, re, parse, ms] of [[us, UUID_TEXT, parseUuid, uuid7TimestampMs], [ls, ULID_TEXT, parseUlid, ulidTimestampMs]]) {
    let last = -1n
    for (const t of texts) {
      assert.match(t, re)
      const v = big(parse(t))
      assert.ok(v > last, `${t} does not increase`)
      last = v
    }
    assert.ok(ms(texts[0]) >= before && ms(texts.at(-1)) <= after, 'strict: never ahead of the wall clock')
  }
  // The text order is the byte order.
  assert.deepEqual([...us].sort(), us)
  assert.deepEqual([...ls].sort(), ls)
})

for (const [name, Cls, re, parse, ms] of [
  ['Uuid7Generator', Uuid7Generator, UUID_TEXT, parseUuid, uuid7TimestampMs],
  ['UlidGenerator', UlidGenerator, ULID_TEXT, parseUlid, ulidTimestampMs],
]) {
  test(`${name}: every shape of ID, one increasing sequence`, async () => {
    const clock = new ManualClock(1737747358021)
    const g = new Cls({ clock })
    assert.equal(g.mode, 'strict')
    const seen = []
    const text = g.nextId()
    assert.match(text, re)
    seen.push(big(parse(text)))
    const one = g.nextIdBuffer()
    assert.ok(Buffer.isBuffer(one) && one.length === 16)
    seen.push(big(one))
    const batch = g.nextIds(1000)
    assert.ok(Buffer.isBuffer(batch) && batch.length === 16000)
    for (let i = 0; i < 1000; i++) seen.push(big(batch.subarray(16 * i, 16 * i + 16)))
    const strings = g.nextIdStrings(10)
    assert.equal(strings.length, 10)
    for (const s of strings) seen.push(big(parse(s)))
    seen.push(big(parse(g.tryNextId())))
    seen.push(big(parse(await g.nextIdAsync())))
    const asyncBatch = await g.nextIdsAsync(5)
    for (let i = 0; i < 5; i++) seen.push(big(asyncBatch.subarray(16 * i, 16 * i + 16)))
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `not increasing at ${i}`)
    assert.equal(ms(text), 1737747358021)
    assert.equal(ms(batch.subarray(0, 16)), 1737747358021)
    const h = g.health()
    assert.equal(h.ok, true)
    assert.equal(h.idsIssued, seen.length)
    g.close()
    assert.equal(g.health().status, 'closed')
    throwsCode(assert, () => g.nextId(), Error, 'GENERATOR_CLOSED')
    await assert.rejects(g.nextIdAsync(), (e) => e.code === 'GENERATOR_CLOSED')
  })

  test(`${name}: strict refuses a rewind, monotonic borrows ahead within maxLeadMs`, () => {
    const clock = new ManualClock(1737747358021)
    const strict = new Cls({ clock, maxWaitMs: 0 })
    strict.nextId()
    clock.advance(-100)
    throwsCode(assert, () => strict.nextId(), Error, 'CLOCK_MOVED_BACKWARDS')
    throwsCode(assert, () => strict.tryNextId(), Error, 'CLOCK_MOVED_BACKWARDS')
    const mono = new Cls({ mode: 'monotonic', clock, maxLeadMs: 1000 })
    const a = mono.nextId()
    clock.advance(-50)
    const b = mono.nextId()
    assert.ok(big(parse(b)) > big(parse(a)))
    clock.advance(-5000)
    throwsCode(assert, () => mono.nextId(), Error, 'LEAD_LIMIT_EXCEEDED')
  })

  test(`${name}: bad options`, () => {
    throwsCode(assert, () => new Cls(5), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => new Cls({ nodeId: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => new Cls({ mode: 'fast' }), RangeError, 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Cls({ maxLeadMs: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => new Cls({ maxWaitMs: -1 }), RangeError, 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Cls({ clock: 'sundial' }), RangeError, 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Cls({ clock: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE')
    const g = new Cls()
    throwsCode(assert, () => g.nextIds(-1), RangeError, 'INVALID_ARGUMENT')
    assert.equal(g.nextIds(0).length, 0)
    throwsCode(assert, () => g.nextIds(1.5), TypeError, 'ERR_INVALID_ARG_TYPE')
    throwsCode(assert, () => g.nextIds(2 ** 60), RangeError, 'ERR_OUT_OF_RANGE')
    throwsCode(assert, () => g.nextIds('3'), TypeError, 'ERR_INVALID_ARG_TYPE')
    g.close()
  })

  test(`${name}: the coarse clock, by name`, () => {
    const g = new Cls({ clock: 'coarse' })
    const before = Date.now()
    const t = ms(g.nextId())
    assert.ok(t <= Date.now() && t >= before - 100, `coarse timestamp ${t} near ${before}`)
    assert.ok(['precise', 'coarse'].includes(g.health().clockSource))
    g.close()
  })
}

test('TimeIdGenerator: one class of either format; the two classes are its subclasses', () => {
  const { TimeIdGenerator } = polyflake
  assert.ok(new Uuid7Generator() instanceof TimeIdGenerator && new UlidGenerator() instanceof TimeIdGenerator)
  assert.equal(Object.getPrototypeOf(UlidGenerator), TimeIdGenerator)
  const g = new TimeIdGenerator({ format: 'ulid', clock: new ManualClock(1737747358021) })
  assert.equal(g.format, 'ulid')
  const [a, b] = [big(g.nextIdBuffer()), big(g.nextIdBuffer())]
  assert.equal(b - a, 1n, 'the ULID spec: +1 within the millisecond')
  assert.match(g.nextId(), ULID_TEXT)
  const u = new TimeIdGenerator()
  assert.equal(u.format, 'uuid7')
  assert.match(u.nextId(), UUID_TEXT)
  assert.equal(new Uuid7Generator({ format: 'uuid7' }).format, 'uuid7')
  throwsCode(assert, () => new UlidGenerator({ format: 'uuid7' }), TypeError, 'ERR_INVALID_ARG_TYPE')
  throwsCode(assert, () => new TimeIdGenerator({ format: 'uuidv7' }), RangeError, 'INVALID_ARGUMENT')
})
