'use strict'
// fromZooKeeper against a real ZooKeeper: `make test-node` runs the suite under
// tests/stores/with_zookeeper.sh, which starts Debian's ZooKeeper on a free loopback port and
// names it in POLYFLAKE_TEST_ZOOKEEPER. An ID and health naming the store; processes racing for
// fewer slots (exactly `slots` win); bad input (empty ensemble, an unreachable one within
// connectTimeoutMs, a prefix without a leading slash, wrong types); the TLS and auth options.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { polyflake, throwsCode, lines } = require('./helpers')

const { Snowflake, MonotonicSnowflake } = polyflake
const ENSEMBLE = process.env.POLYFLAKE_TEST_ZOOKEEPER

// Fails, never skips: a run without the server is a run that tested nothing.
function ensemble() {
  assert.ok(ENSEMBLE, 'POLYFLAKE_TEST_ZOOKEEPER is not set: run `make test-node` (tests/stores/with_zookeeper.sh starts ZooKeeper)')
  return ENSEMBLE
}

let prefixes = 0
const freshPrefix = () => `/polyflake-node-${process.pid}-${prefixes++}`

test('a ZooKeeper lease: an ID, health naming the store, close() frees the slot', () => {
  const prefix = freshPrefix()
  const opts = { ensemble: ensemble(), prefix, slots: 2, reserveMs: 1000, sessionTimeoutMs: 4000, identity: 'a' }
  const a = Snowflake.fromZooKeeper(opts)
  try {
    a.waitReady(5000)
    const id = a.nextId()
    assert.equal(typeof id, 'bigint')
    assert.equal(a.decode(id).nodeId, a.nodeId)
    const h = a.health()
    assert.equal(h.ok, true, JSON.stringify(h))
    assert.equal(h.source, 'zookeeper')
    assert.equal(h.lease.kind, 'zookeeper')
    assert.ok(h.lease.store.includes(ENSEMBLE), `store ${h.lease.store} names the ensemble`)
    assert.ok(h.lease.store.includes(prefix), `store ${h.lease.store} names the prefix`)
    // The ensemble as an array, a monotonic generator: the other slot.
    const b = MonotonicSnowflake.fromZooKeeper({ ...opts, ensemble: ENSEMBLE.split(','), identity: 'b' })
    try {
      assert.notEqual(b.nodeId, a.nodeId)
      throwsCode(assert, () => Snowflake.fromZooKeeper({ ...opts, identity: 'c' }), Error, 'NO_FREE_SLOT')
    } finally {
      b.close()
    }
    // b's slot is free again at once.
    const c = Snowflake.fromZooKeeper({ ...opts, identity: 'c' })
    c.close()
  } finally {
    a.close()
  }
})

// One racer: leases, prints `NODE n` or the error code, holds until its stdin closes.
const RACER = `
const { Snowflake } = require(${JSON.stringify(require.resolve('..'))})
const [ensemble, prefix, identity] = process.argv.slice(1)
let g = null
try {
  // A long connect timeout: six processes start at once on a loaded machine.
  g = Snowflake.fromZooKeeper({ ensemble, prefix, slots: 2, identity, reserveMs: 200, sessionTimeoutMs: 4000, connectTimeoutMs: 15000 })
  console.log('NODE ' + g.nodeId)
} catch (e) {
  console.log('ERR ' + e.code)
  if (e.code !== 'NO_FREE_SLOT') console.error(e.message)
}
process.stdin.resume()
process.stdin.on('end', () => { if (g) g.close(); process.exit(0) })
`

test('six processes race for two slots: exactly two win, on distinct slots', async () => {
  const prefix = freshPrefix()
  const racers = Array.from({ length: 6 }, (_, i) =>
    spawn(process.execPath, ['-e', RACER, ensemble(), prefix, `racer-${i}`], { stdio: ['pipe', 'pipe', 'inherit'] }))
  try {
    const said = await Promise.all(racers.map((p) => lines(p)()))
    const won = said.filter((s) => s.startsWith('NODE '))
    const lost = said.filter((s) => !s.startsWith('NODE '))
    assert.equal(won.length, 2, said.join(' | '))
    assert.equal(new Set(won).size, 2, `two winners on one slot: ${won}`)
    assert.deepEqual(lost, Array(4).fill('ERR NO_FREE_SLOT'))
  } finally {
    for (const p of racers) p.stdin.end()
    await Promise.all(racers.map((p) => new Promise((r) => (p.exitCode !== null ? r() : p.on('exit', r)))))
  }
})

test('fromZooKeeper: bad input gets a clear error, never a hang', () => {
  const zk = ensemble()
  const table = [
    ['empty ensemble', { ensemble: '' }, RangeError, 'INVALID_NODE_SOURCE'],
    ['empty array', { ensemble: [] }, RangeError, 'INVALID_NODE_SOURCE'],
    ['relative prefix', { ensemble: zk, prefix: 'polyflake' }, RangeError, 'INVALID_NODE_SOURCE'],
    ['slots 0', { ensemble: zk, slots: 0 }, RangeError, 'INVALID_NODE_SOURCE'],
    ['no ensemble', {}, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['ensemble a number', { ensemble: 2181 }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['ensemble of numbers', { ensemble: [2181] }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['prefix a number', { ensemble: zk, prefix: 5 }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['session timeout a string', { ensemble: zk, sessionTimeoutMs: '10s' }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['negative connect timeout', { ensemble: zk, connectTimeoutMs: -1 }, RangeError, 'ERR_OUT_OF_RANGE'],
    ['caFile a number', { ensemble: zk, caFile: 1 }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['password a buffer', { ensemble: zk, password: Buffer.from('x') }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['an etcd option', { ensemble: zk, endpoints: 'http://127.0.0.1:2379' }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['a node id', { ensemble: zk, nodeId: 1 }, TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['a missing CA file', { ensemble: zk, caFile: '/nonexistent/ca.pem', connectTimeoutMs: 1000 }, RangeError, 'INVALID_NODE_SOURCE'],
  ]
  for (const [what, opts, cls, code] of table) {
    const t0 = performance.now()
    const e = throwsCode(assert, () => Snowflake.fromZooKeeper(opts), cls, code)
    assert.ok(performance.now() - t0 < 5000, `${what}: took ${performance.now() - t0} ms`)
    assert.ok(e.message.length > 0, what)
  }
  throwsCode(assert, () => Snowflake.fromZooKeeper(), TypeError, 'ERR_INVALID_ARG_TYPE')
  throwsCode(assert, () => Snowflake.fromZooKeeper('127.0.0.1:2181'), TypeError, 'ERR_INVALID_ARG_TYPE')
})

test('an unreachable ensemble is refused within connectTimeoutMs', () => {
  const t0 = performance.now()
  const e = throwsCode(assert, () => Snowflake.fromZooKeeper({ ensemble: '127.0.0.1:1', connectTimeoutMs: 500 }), Error, 'LEASE_STORE')
  const ms = performance.now() - t0
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms with connectTimeoutMs 500`)
  assert.match(e.message, /127\.0\.0\.1:1/)
})

test('the TLS options reach the core: a missing CA file is named (ZooKeeper and etcd)', () => {
  const zk = throwsCode(assert, () => Snowflake.fromZooKeeper({ ensemble: ensemble(), caFile: '/nonexistent/zk-ca.pem' }), RangeError, 'INVALID_NODE_SOURCE')
  assert.match(zk.message, /\/nonexistent\/zk-ca\.pem/)
  const e = throwsCode(assert, () => Snowflake.fromEtcd({ endpoints: 'https://127.0.0.1:1', caFile: '/nonexistent/ca.pem', connectTimeoutMs: 500 }), RangeError, 'INVALID_NODE_SOURCE')
  assert.match(e.message, /\/nonexistent\/ca\.pem/)
  const k = throwsCode(assert, () => Snowflake.fromEtcd({ endpoints: 'https://127.0.0.1:1', certFile: '/nonexistent/c.pem', keyFile: '/nonexistent/k.pem' }), RangeError, 'INVALID_NODE_SOURCE')
  assert.match(k.message, /\/nonexistent\/[ck]\.pem/)
  throwsCode(assert, () => Snowflake.fromEtcd({ endpoints: 'http://127.0.0.1:1', username: 7 }), TypeError, 'ERR_INVALID_ARG_TYPE')
})
