'use strict'
// tests/vectors/layouts.json through the binding: every case is minted (a frozen ManualClock at
// the case's millisecond, `sequence + 1` IDs from the case's node) and decoded, for every layout.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { VECTORS, polyflake, readJson, throwsCode } = require('./helpers')

const { Snowflake, Layout, ManualClock, DEFAULT_EPOCH_MS } = polyflake
const V = readJson(path.join(VECTORS, 'layouts.json'))

test('the default epoch matches the vectors', () => {
  assert.equal(DEFAULT_EPOCH_MS, V.epoch_ms_default)
})

for (const [name, L] of Object.entries(V.layouts)) {
  const bits = { timestampBits: L.timestamp_bits, nodeBits: L.node_bits, sequenceBits: L.sequence_bits }
  const spelled = `${L.timestamp_bits}/${L.node_bits}/${L.sequence_bits}`

  test(`layout ${name}: fields`, () => {
    for (const layout of [new Layout(L.timestamp_bits, L.node_bits, L.sequence_bits), Layout.fromName(spelled)]) {
      assert.equal(layout.maxNodeId, L.max_node_id)
      assert.equal(layout.maxSequence, L.max_sequence)
      assert.equal(layout.maxElapsedMs, L.max_elapsed_ms)
      assert.equal(layout.years.toFixed(2), L.years.toFixed(2))
      assert.equal(layout.toString(), spelled)
    }
  })

  test(`layout ${name}: ${L.cases.length} cases minted and decoded`, () => {
    for (const c of L.cases) {
      const where = JSON.stringify(c)
      const clock = new ManualClock(c.epoch_ms)
      const g = new Snowflake({ nodeId: c.node_id, layout: bits, clock })
      // A frozen clock: sequence + 1 IDs fill the millisecond from 0, so the last is the case.
      const ids = g.nextIds(c.sequence + 1)
      assert.equal(ids[c.sequence], BigInt(c.id), where)
      if (c.sequence === 0) {
        const again = new Snowflake({ nodeId: c.node_id, layout: spelled, clock })
        assert.equal(again.nextId(), BigInt(c.id), where)
      }
      const want = { timestampMs: c.epoch_ms, nodeId: c.node_id, sequence: c.sequence, time: new Date(c.epoch_ms) }
      assert.deepEqual({ ...g.decode(c.id) }, want, where)
      assert.deepEqual({ ...g.decode(BigInt(c.id)) }, want, where)
      if (name.startsWith('default')) assert.deepEqual({ ...Snowflake.decode(c.id) }, want, where)
    }
  })
}

test('the design literals', () => {
  for (const lit of V.literals) {
    const want = { timestampMs: lit.epoch_ms, nodeId: lit.node_id, sequence: lit.sequence, time: new Date(lit.epoch_ms) }
    assert.deepEqual({ ...Snowflake.decode(BigInt(lit.id)) }, want)
    assert.deepEqual({ ...Snowflake.decode(lit.id) }, want)
  }
})

test('invalid node ids for the default layout', () => {
  for (const n of V.invalid.node_id_default_layout) {
    const clock = new ManualClock(DEFAULT_EPOCH_MS)
    if (Number.isSafeInteger(n)) {
      throwsCode(assert, () => new Snowflake({ nodeId: n, clock }), RangeError, 'INVALID_NODE_ID')
    } else {
      // JSON gave an unsafe Number: the Number is refused before the core, the exact bigint by it.
      throwsCode(assert, () => new Snowflake({ nodeId: n, clock }), RangeError, 'ERR_OUT_OF_RANGE')
    }
    throwsCode(assert, () => new Snowflake({ nodeId: BigInt(n), clock }), RangeError, 'INVALID_NODE_ID')
  }
})

test('invalid IDs for decode', () => {
  for (const s of V.invalid.decode_default_layout) {
    throwsCode(assert, () => Snowflake.decode(s), RangeError, 'INVALID_ID')
    let big = null
    try {
      big = BigInt(s)
    } catch {}
    // BigInt() accepts some spellings the ID parser refuses (' 1', '0x10', ''): those are valid
    // bigints and only out-of-range ones must be refused.
    if (big !== null && (big < 0n || big >= 2n ** 63n)) {
      throwsCode(assert, () => Snowflake.decode(big), RangeError, 'INVALID_ID')
    }
  }
})

test('invalid layouts', () => {
  for (const [t, n, s] of V.invalid.layouts) {
    const clock = new ManualClock(DEFAULT_EPOCH_MS)
    throwsCode(assert, () => new Layout(t, n, s), RangeError, 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.fromName(`${t}/${n}/${s}`), RangeError, 'INVALID_LAYOUT')
    throwsCode(assert, () => new Snowflake({ nodeId: 0, clock, layout: { timestampBits: t, nodeBits: n, sequenceBits: s } }),
      RangeError, 'INVALID_LAYOUT')
  }
})
