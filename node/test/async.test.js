'use strict'
// The async forms: nextIdAsync/nextIdsAsync settle at once when the core needs no
// wait and wait on the libuv thread pool otherwise, so the event loop keeps turning during a
// strict batch that spans hundreds of milliseconds; tryNextId returns null where nextId would
// sleep; sync and async IDs of one generator are unique and increasing together.
const test = require('node:test')
const assert = require('node:assert/strict')
const { polyflake, throwsCode } = require('./helpers')

const { Snowflake, MonotonicSnowflake, Uuid7Generator, ManualClock, MAX_BATCH } = polyflake

// How many times setImmediate callbacks ran while `promise` was pending.
async function turnsDuring(promise) {
  let turns = 0
  let done = false
  const spin = () => {
    if (done) return
    turns++
    setImmediate(spin)
  }
  setImmediate(spin)
  const value = await promise
  done = true
  return { value, turns }
}

test('a strict nextIdsAsync(10**6) runs on the pool: the event loop keeps turning', async () => {
  const g = new Snowflake({ nodeId: 1 })
  const t0 = performance.now()
  const { value: ids, turns } = await turnsDuring(g.nextIdsAsync(10 ** 6))
  const ms = performance.now() - t0
  assert.ok(ids instanceof BigInt64Array && ids.length === 10 ** 6)
  for (let i = 1; i < ids.length; i++) if (!(ids[i] > ids[i - 1])) assert.fail(`not increasing at ${i}`)
  // 10**6 IDs at 4,096 per ms fill at least 244 ms: a blocked loop would turn about once.
  assert.ok(ms >= 200, `the batch took ${ms.toFixed(0)} ms: it cannot have filled 244 ms`)
  assert.ok(turns >= 50, `the event loop turned only ${turns} times in ${ms.toFixed(0)} ms`)
  // The synchronous form, for contrast, blocks the loop: no turn while it runs.
  const sync = await turnsDuring(Promise.resolve().then(() => g.nextIds(10 ** 6)))
  assert.ok(sync.turns <= 2, `the synchronous batch let the loop turn ${sync.turns} times`)
  g.close()
})

test('the fast path settles without a thread hop: an already-resolved promise', async () => {
  const g = new Snowflake({ nodeId: 2 })
  // A node id taken afresh starts as if its current millisecond were spent (a previous holder
  // in another process may have issued in it): the first ID waits for the next millisecond.
  g.nextId()
  // Resolved at once: it wins a race against a promise resolved in the same tick.
  const first = await Promise.race([g.nextIdAsync(), Promise.resolve('later').then((x) => x)])
  assert.equal(typeof first, 'bigint')
  const batch = await Promise.race([g.nextIdsAsync(100), Promise.resolve().then(() => 'later')])
  assert.ok(batch instanceof BigInt64Array, 'a batch that fits the millisecond settles at once')
  g.close()
})

test('mixed sync and async IDs: unique and increasing per generator', async () => {
  for (const g of [new Snowflake({ nodeId: 3 }), new MonotonicSnowflake({ nodeId: 7 })]) {
    const all = []
    const pending = []
    for (let round = 0; round < 200; round++) {
      all.push(g.nextId())
      pending.push(g.nextIdAsync().then((id) => ({ round, ids: [id] })))
      pending.push(g.nextIdsAsync(round % 7 === 0 ? 20000 : 50).then((ids) => ({ round, ids: Array.from(ids) })))
      const t = g.tryNextId()
      if (t !== null) all.push(t)
      all.push(...g.nextIds(30))
    }
    const sync = [...all]
    for (let i = 1; i < sync.length; i++) assert.ok(sync[i] > sync[i - 1], `synchronous IDs not increasing at ${i}`)
    for (const { round, ids } of await Promise.all(pending)) {
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `round ${round}: a batch not increasing`)
      all.push(...ids)
    }
    assert.equal(new Set(all).size, all.length, 'a duplicate ID')
    g.close()
  }
})

test('async IDs of one generator strictly increase in settle order on a test clock', async () => {
  const clock = new ManualClock(1737747358021)
  const g = new Snowflake({ nodeId: 4, clock })
  let last = -1n
  for (let i = 0; i < 5000; i++) {
    const sync = g.nextId()
    assert.ok(sync > last)
    const id = await g.nextIdAsync()
    assert.ok(id > sync)
    last = id
    if (i % 1000 === 999) clock.elapse(1)
  }
  g.close()
})

test('tryNextId returns null where nextId would sleep, and throws what nextId throws', () => {
  const clock = new ManualClock(1737747358021)
  const g = new Snowflake({ nodeId: 5, clock, maxWaitMs: 5 })
  g.nextIds(4096) // the millisecond is spent
  assert.equal(g.tryNextId(), null)
  clock.elapse(1)
  assert.equal(typeof g.tryNextId(), 'bigint')
  clock.advance(-3) // a small rewind: nextId would wait it out
  assert.equal(g.tryNextId(), null)
  clock.advance(-600) // a large one: refused at once
  throwsCode(assert, () => g.tryNextId(), Error, 'CLOCK_MOVED_BACKWARDS')
  const m = new MonotonicSnowflake({ nodeId: 5, clock })
  for (let i = 0; i < 5000; i++) assert.notEqual(m.tryNextId(), null, 'monotonic never waits')
  g.close()
  throwsCode(assert, () => g.tryNextId(), Error, 'GENERATOR_CLOSED')
})

test('a wait on the pool that ends in a refusal rejects with the core error', async () => {
  const clock = new ManualClock(1737747358021)
  const g = new Snowflake({ nodeId: 6, clock, maxWaitMs: 2 })
  g.nextIds(4096)
  // Frozen clock, spent millisecond: nextId waits 2 ms on the pool, then refuses.
  await assert.rejects(g.nextIdAsync(), (e) => e.code === 'CLOCK_MOVED_BACKWARDS' && e instanceof Error)
  await assert.rejects(g.nextIdsAsync(10), (e) => e.code === 'CLOCK_MOVED_BACKWARDS')
  // Bad arguments reject too (never a throw at the call): see types.test.js for every form.
  await assert.rejects(g.nextIdsAsync(MAX_BATCH + 1), (e) => e instanceof RangeError)
  await assert.rejects(g.nextIdsAsync('x'), (e) => e.code === 'ERR_INVALID_ARG_TYPE')
  clock.elapse(1)
  assert.equal(typeof (await g.nextIdAsync()), 'bigint')
  g.close()
})

test('the UUIDv7 generator\'s async batch keeps the loop turning too', async () => {
  const g = new Uuid7Generator()
  const { value, turns } = await turnsDuring(g.nextIdsAsync(MAX_BATCH))
  assert.equal(value.length, 16 * MAX_BATCH)
  assert.ok(turns >= 1, 'settled')
  g.close()
})
