'use strict'
// Node-id sources and leases from Node: file leases in this process and across real child
// processes (the polyglot participant), the restart guard on a ManualClock, close(), the static
// sources, a bad-options table, and etcd leases against a real etcd server started here (one of
// them revoked under a holder that heals).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { ROOT, NODE_DIR, polyflake, throwsCode, tempDir, sleep, run, readIds } = require('./helpers')

const { Snowflake, MonotonicSnowflake, ManualClock } = polyflake
const PARTICIPANT = path.join(ROOT, 'tests', 'polyglot', 'participant.js')

test('two generators on one lease directory hold different slots, which are their node ids', () => {
  const dir = tempDir('two')
  const a = Snowflake.fromFileLease({ dir, slots: 4, identity: 'a' })
  const b = MonotonicSnowflake.fromFileLease({ dir, slots: 4, identity: 'b', maxLeadMs: 50 })
  try {
    // New slots: each first waits out one reserve (a holder nobody can see may have reached it).
    a.waitReady()
    b.waitReady()
    assert.notEqual(a.nodeId, b.nodeId)
    for (const g of [a, b]) {
      assert.ok(g.nodeId >= 0 && g.nodeId < 4, `slot ${g.nodeId} within slots: 4`)
      const detached = g.nextId
      const ids = [g.nextId(), detached(), g.nextIdString(), ...g.nextIds(100)]
      for (const id of ids) assert.equal(g.decode(id).nodeId, g.nodeId)
      const h = g.health()
      assert.equal(h.ok, true, h.reason)
      assert.equal(h.source, 'file_lease')
      assert.equal(h.nodeId, g.nodeId)
      assert.equal(h.idsIssued, 103)
      assert.equal(h.lease.kind, 'file')
      assert.equal(h.lease.store, dir)
      assert.equal(h.lease.slot, g.nodeId)
      assert.equal(h.lease.lost, false)
      assert.equal(h.lease.guardWaiting, false)
      // The high-water mark is ahead of everything issued.
      assert.ok(h.lease.highWaterMs >= h.lastIssuedMs, `R ${h.lease.highWaterMs} >= last ${h.lastIssuedMs}`)
    }
    // A static node id has no lease; its restart guard's mark on the host stands in its place.
    const fixed = new Snowflake({ nodeId: 5 })
    assert.deepEqual([fixed.health().lease.kind, fixed.health().lease.slot], ['host', 5])
    fixed.close()
    const unguarded = new Snowflake({ nodeId: 5, restartGuard: 'off' })
    assert.equal(unguarded.health().lease, undefined)
    unguarded.close()
  } finally {
    a.close()
    b.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('slots: 1 and a second holder: NO_FREE_SLOT; close() frees the slot for the next', () => {
  const dir = tempDir('one')
  const first = Snowflake.fromFileLease({ dir, slots: 1 })
  assert.equal(first.nodeId, 0)
  first.waitReady()
  const last = first.nextId()
  const e = throwsCode(assert, () => Snowflake.fromFileLease({ dir, slots: 1 }), Error, 'NO_FREE_SLOT')
  assert.ok(!(e instanceof RangeError), 'a full store is a runtime fault, not a bad argument')
  assert.match(e.message, new RegExp(dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
  throwsCode(assert, () => MonotonicSnowflake.fromFileLease({ dir, slots: 1 }), Error, 'NO_FREE_SLOT')

  first.close()
  first.close() // twice is fine
  assert.equal(first.closed, true)
  assert.equal(first.nodeId, 0)
  assert.equal(first.decode(last).nodeId, 0) // decode still works
  const detached = first.nextId
  for (const call of [() => first.nextId(), detached, () => Snowflake.prototype.nextId.call(first),
    () => first.nextIdString(), () => first.nextIds(3), () => first.waitReady()]) {
    throwsCode(assert, call, Error, 'GENERATOR_CLOSED')
  }
  // The core keeps a closed generator: health() says so.
  assert.equal(first.health().status, 'closed')

  const next = Snowflake.fromFileLease({ dir, slots: 1 })
  try {
    assert.equal(next.nodeId, 0)
    assert.equal(next.closed, false)
    // The successor starts behind what the first really issued, and issues past it.
    const h = next.health()
    assert.equal(h.lease.guardUntilMs, Number(Snowflake.decode(last).timestampMs))
    next.waitReady(5000)
    const id = next.nextId()
    assert.ok(id > last)
  } finally {
    next.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('the restart guard on a ManualClock: nothing until the clock passes the stored mark', () => {
  const dir = tempDir('guard')
  const T = 1_737_747_358_021
  // A new slot waits one reserve (1000 ms) from when it was taken: let that pass, to T.
  const clock = new ManualClock(T - 1001)
  const a = Snowflake.fromFileLease({ dir, slots: 1, clock, reserveMs: 1000 })
  throwsCode(assert, () => a.nextId(), Error, 'LEASE_NOT_READY')
  clock.elapse(1001)
  const before = a.nextId()
  a.close() // leaves R = the last millisecond it issued (T)

  const behind = new ManualClock(T - 2000)
  const b = Snowflake.fromFileLease({ dir, slots: 1, clock: behind, reserveMs: 1000 })
  try {
    throwsCode(assert, () => b.nextId(), Error, 'LEASE_NOT_READY')
    throwsCode(assert, () => b.nextIds(2), Error, 'LEASE_NOT_READY')
    const h = b.health()
    assert.equal(h.ok, false)
    assert.equal(h.status, 'restart_guard')
    assert.equal(h.lease.guardWaiting, true)
    assert.equal(h.lease.guardUntilMs, T)
    assert.equal(h.lease.guardRemainingMs, 2001)
    behind.set(T)
    throwsCode(assert, () => b.nextId(), Error, 'LEASE_NOT_READY')
    behind.set(T + 1)
    const after = b.nextId()
    assert.ok(after > before)
    assert.equal(b.decode(after).timestampMs, T + 1)
    assert.equal(b.health().status, 'ok')
  } finally {
    b.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('4 child processes (the polyglot participant) lease distinct slots of one directory and mint at once: no duplicate', async () => {
  const work = tempDir('children')
  const lease = path.join(work, 'leases')
  try {
    const outs = [0, 1, 2, 3].map((i) => path.join(work, `out-${i}.bin`))
    const results = await Promise.all(outs.map((out) => run(process.execPath, [PARTICIPANT, lease, '0.3', out])))
    results.forEach((r, i) => assert.equal(r.code, 0, `participant ${i} failed: ${r.err}`))
    const nodes = new Set()
    const all = []
    let total = 0
    for (const out of outs) {
      const meta = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'))
      const ids = readIds(out)
      assert.equal(meta.language, 'node')
      assert.equal(meta.count, ids.length)
      assert.ok(meta.count > 1024, `only ${meta.count} IDs`)
      assert.ok(meta.seconds > 0)
      assert.equal(meta.first, ids[0].toString())
      assert.equal(meta.last, ids[ids.length - 1].toString())
      for (let i = 1; i < ids.length; i++) {
        if (!(ids[i] > ids[i - 1])) assert.fail(`node ${meta.node_id}: ID ${i} does not increase`)
      }
      for (const id of [ids[0], ids[ids.length >> 1], ids[ids.length - 1]]) {
        assert.equal(Snowflake.decode(id).nodeId, meta.node_id)
      }
      nodes.add(meta.node_id)
      all.push(ids)
      total += ids.length
    }
    assert.equal(nodes.size, 4, `node ids ${[...nodes]} are not distinct`)
    const merged = new BigUint64Array(total)
    let at = 0
    for (const ids of all) {
      merged.set(ids, at)
      at += ids.length
    }
    merged.sort()
    for (let i = 1; i < merged.length; i++) {
      if (merged[i] === merged[i - 1]) assert.fail(`duplicate ID ${merged[i]}`)
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
})

test('the participant reports bad arguments on one stderr line and exits 1', async () => {
  const r = await run(process.execPath, [PARTICIPANT, os.tmpdir(), 'soon', path.join(os.tmpdir(), 'x.bin')])
  assert.equal(r.code, 1)
  assert.match(r.err, /^participant\.js: SECONDS must be a number/)
  assert.equal(r.err.trim().split('\n').length, 1)
})

const HOLDER = `
const { Snowflake } = require(process.argv[1])
const g = Snowflake.fromFileLease({ dir: process.argv[2], slots: 1, reserveMs: 300 })
g.waitReady()
g.nextId()
process.stdout.write('HOLD ' + g.nodeId + '\\n')
setInterval(() => g.nextId(), 5)
`

test('a slot held by a process that is killed is taken by the next, after the restart guard', async () => {
  const dir = tempDir('killed')
  const child = spawn(process.execPath, ['-e', HOLDER, NODE_DIR, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const line = await new Promise((resolve, reject) => {
      let out = ''
      child.stdout.setEncoding('utf8').on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.trim())
      })
      child.on('error', reject)
      child.on('exit', (code) => reject(new Error(`holder exited early with ${code}`)))
    })
    assert.equal(line, 'HOLD 0')
    throwsCode(assert, () => Snowflake.fromFileLease({ dir, slots: 1 }), Error, 'NO_FREE_SLOT')
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await gone
    // The kernel released the flock with the process.
    const g = Snowflake.fromFileLease({ dir, slots: 1, reserveMs: 300 })
    try {
      assert.equal(g.nodeId, 0)
      const guard = g.health().lease.guardUntilMs
      assert.equal(typeof guard, 'number', 'the killed holder left its high-water mark')
      g.waitReady(10_000)
      const id = g.nextId()
      assert.ok(g.decode(id).timestampMs > guard, 'the first ID is past the killed holder\'s mark')
    } finally {
      g.close()
    }
  } finally {
    child.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('static sources: an environment variable, a hostname ordinal, an IPv4 subnet', () => {
  process.env.POLYFLAKE_NODE_TEST_ID = '12'
  const fromEnv = Snowflake.fromEnv('POLYFLAKE_NODE_TEST_ID', { clock: new ManualClock(1_737_747_358_021) })
  assert.equal(fromEnv.nodeId, 12)
  assert.equal(fromEnv.health().source, 'env')
  assert.equal(fromEnv.decode(fromEnv.nextId()).nodeId, 12)
  const host = MonotonicSnowflake.fromHostname('ids-7.ids.default.svc', { maxLeadMs: 10, clock: () => 1_737_747_358_021 })
  assert.equal(host.nodeId, 7)
  assert.equal(host.health().source, 'hostname')
  // 10.1.7.9 in a /22: the low 10 bits, (7 & 3) * 256 + 9.
  const ip = Snowflake.fromIpv4('10.1.7.9', 22, { clock: new ManualClock(1_737_747_358_021) })
  assert.equal(ip.nodeId, 3 * 256 + 9)
  assert.equal(ip.health().source, 'ipv4')
  // 12 node bits take a /20.
  assert.equal(Snowflake.fromIpv4('10.1.7.9', 20, { layout: 'big_fleet', clock: new ManualClock(1_737_747_358_021) }).nodeId, 7 * 256 + 9)
  delete process.env.POLYFLAKE_NODE_TEST_ID
})

const clock = () => new ManualClock(1_737_747_358_021)
const NOPE = 'http://127.0.0.1:1'
// [what, call, error class, code]
const BAD = [
  ['fromFileLease()', () => Snowflake.fromFileLease(), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromFileLease("dir")', () => Snowflake.fromFileLease('/tmp/x'), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromFileLease([])', () => Snowflake.fromFileLease([]), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['dir missing', () => Snowflake.fromFileLease({ slots: 2 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['dir a Number', () => Snowflake.fromFileLease({ dir: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['nodeId with a lease', (d) => Snowflake.fromFileLease({ dir: d, nodeId: 3 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['unknown option', (d) => Snowflake.fromFileLease({ dir: d, slot: 3 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['maxLeadMs on a strict lease', (d) => Snowflake.fromFileLease({ dir: d, maxLeadMs: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['slots 0', (d) => Snowflake.fromFileLease({ dir: d, slots: 0 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['slots 1025', (d) => Snowflake.fromFileLease({ dir: d, slots: 1025 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['slots 4097 big_fleet', (d) => Snowflake.fromFileLease({ dir: d, slots: 4097, layout: 'big_fleet' }), RangeError, 'INVALID_NODE_SOURCE'],
  ['slots -1', (d) => Snowflake.fromFileLease({ dir: d, slots: -1 }), RangeError, 'ERR_OUT_OF_RANGE'],
  ['slots 1.5', (d) => Snowflake.fromFileLease({ dir: d, slots: 1.5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['slots "2"', (d) => Snowflake.fromFileLease({ dir: d, slots: '2' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['slots 2 ** 53', (d) => Snowflake.fromFileLease({ dir: d, slots: 2 ** 53 }), RangeError, 'ERR_OUT_OF_RANGE'],
  ['identity ""', (d) => Snowflake.fromFileLease({ dir: d, identity: '' }), RangeError, 'INVALID_NODE_SOURCE'],
  ['identity "a/b"', (d) => Snowflake.fromFileLease({ dir: d, identity: 'a/b' }), RangeError, 'INVALID_NODE_SOURCE'],
  ['identity 5', (d) => Snowflake.fromFileLease({ dir: d, identity: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['reserveMs 5', (d) => Snowflake.fromFileLease({ dir: d, reserveMs: 5 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['reserveMs -1', (d) => Snowflake.fromFileLease({ dir: d, reserveMs: -1 }), RangeError, 'ERR_OUT_OF_RANGE'],
  ['reserveMs "5000"', (d) => Snowflake.fromFileLease({ dir: d, reserveMs: '5000' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['a function clock with a lease', (d) => Snowflake.fromFileLease({ dir: d, clock: () => 1_737_747_358_021 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['epochMs -1', (d) => Snowflake.fromFileLease({ dir: d, epochMs: -1 }), RangeError, 'INVALID_EPOCH'],
  ['layout "nope"', (d) => MonotonicSnowflake.fromFileLease({ dir: d, layout: 'nope' }), RangeError, 'UNKNOWN_LAYOUT'],
  ['maxWaitMs NaN', (d) => Snowflake.fromFileLease({ dir: d, maxWaitMs: NaN }), RangeError, 'INVALID_ARGUMENT'],
  ['dir is a file', (d) => Snowflake.fromFileLease({ dir: path.join(d, 'file', 'sub') }), Error, 'LEASE_STORE'],

  ['fromEtcd()', () => Snowflake.fromEtcd(), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['endpoints missing', () => Snowflake.fromEtcd({ prefix: '/x' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['endpoints 5', () => Snowflake.fromEtcd({ endpoints: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['endpoints [5]', () => Snowflake.fromEtcd({ endpoints: [5] }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['endpoints []', () => Snowflake.fromEtcd({ endpoints: [] }), RangeError, 'INVALID_NODE_SOURCE'],
  ['ttlS 0', () => Snowflake.fromEtcd({ endpoints: NOPE, ttlS: 0 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['ttlS 1.5', () => Snowflake.fromEtcd({ endpoints: NOPE, ttlS: 1.5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['connectTimeoutMs 0', () => Snowflake.fromEtcd({ endpoints: NOPE, connectTimeoutMs: 0 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['connectTimeoutMs -1', () => Snowflake.fromEtcd({ endpoints: NOPE, connectTimeoutMs: -1 }), RangeError, 'ERR_OUT_OF_RANGE'],
  ['prefix "x"', () => Snowflake.fromEtcd({ endpoints: NOPE, prefix: 'x' }), RangeError, 'INVALID_NODE_SOURCE'],
  ['prefix 5', () => Snowflake.fromEtcd({ endpoints: NOPE, prefix: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['etcd slots 0', () => MonotonicSnowflake.fromEtcd({ endpoints: NOPE, slots: 0 }), RangeError, 'INVALID_NODE_SOURCE'],
  ['etcd dir option', () => Snowflake.fromEtcd({ endpoints: NOPE, dir: '/tmp' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['etcd unreachable', () => Snowflake.fromEtcd({ endpoints: NOPE, connectTimeoutMs: 300 }), Error, 'LEASE_STORE'],

  ['fromEnv(5)', () => Snowflake.fromEnv(5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromEnv() no name', () => Snowflake.fromEnv(), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromEnv unset', () => Snowflake.fromEnv('POLYFLAKE_NODE_TEST_UNSET'), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromEnv options 5', () => Snowflake.fromEnv('PATH', 5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromEnv nodeId option', () => Snowflake.fromEnv('PATH', { nodeId: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromEnv not a number', () => Snowflake.fromEnv('PATH', { clock: clock() }), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromHostname no ordinal', () => Snowflake.fromHostname('ids', { clock: clock() }), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromHostname ordinal 1024', () => Snowflake.fromHostname('ids-1024', { clock: clock() }), RangeError, 'INVALID_NODE_ID'],
  ['fromHostname(5)', () => Snowflake.fromHostname(5), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromIpv4 short address', () => Snowflake.fromIpv4('10.1.7', 22), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 /21', () => Snowflake.fromIpv4('10.1.7.9', 21), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 /33', () => Snowflake.fromIpv4('10.1.7.9', 33), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 /300', () => Snowflake.fromIpv4('10.1.7.9', 300), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 /-1', () => Snowflake.fromIpv4('10.1.7.9', -1), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 /2 ** 53', () => Snowflake.fromIpv4('10.1.7.9', 2 ** 53), RangeError, 'ERR_OUT_OF_RANGE'],
  ['fromIpv4 /2n ** 70n', () => Snowflake.fromIpv4('10.1.7.9', 2n ** 70n), RangeError, 'INVALID_NODE_SOURCE'],
  ['fromIpv4 prefix "22"', () => Snowflake.fromIpv4('10.1.7.9', '22'), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromIpv4 address 5', () => Snowflake.fromIpv4(5, 22), TypeError, 'ERR_INVALID_ARG_TYPE'],
  ['fromIpv4 maxLeadMs on strict', () => Snowflake.fromIpv4('10.1.7.9', 22, { maxLeadMs: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
]

test('bad lease and source options: the right class and code, and no slot left behind', () => {
  const dir = tempDir('bad')
  fs.writeFileSync(path.join(dir, 'file'), '')
  try {
    for (const [what, call, cls, code] of BAD) {
      try {
        throwsCode(assert, () => call(dir), cls, code)
      } catch (e) {
        e.message = `${what}: ${e.message}`
        throw e
      }
    }
    // Not one of those calls kept a slot: a single slot is still free.
    const g = Snowflake.fromFileLease({ dir, slots: 1 })
    assert.equal(g.nodeId, 0)
    g.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// --- etcd: a real server on 127.0.0.1 with free ports and a temporary data dir ------------

const ETCD = '/usr/bin/etcd'
const ETCDCTL = '/usr/bin/etcdctl'

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

async function startEtcd() {
  for (const bin of [ETCD, ETCDCTL]) {
    assert.ok(fs.existsSync(bin), `${bin} is missing: \`make deps-apt\` installs Debian's etcd-server and etcd-client`)
  }
  const data = tempDir('etcd')
  const client = `http://127.0.0.1:${await freePort()}`
  const peer = `http://127.0.0.1:${await freePort()}`
  const log = fs.openSync(path.join(data, 'etcd.log'), 'w')
  const child = spawn(ETCD, [
    '--name', 'polyflake-node-test', '--data-dir', path.join(data, 'data'),
    '--listen-client-urls', client, '--advertise-client-urls', client,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `polyflake-node-test=${peer}`,
  ], { stdio: ['ignore', log, log] })
  fs.closeSync(log)
  const etcdctl = (...args) => spawnSync(ETCDCTL, [`--endpoints=${client}`, '--dial-timeout=1s', '--command-timeout=2s', ...args], {
    env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'utf8',
  })
  const stop = () => {
    child.kill('SIGKILL')
    fs.rmSync(data, { recursive: true, force: true })
  }
  const until = Date.now() + 30_000
  while (etcdctl('endpoint', 'health').status !== 0) {
    if (Date.now() > until || child.exitCode !== null) {
      const text = fs.readFileSync(path.join(data, 'etcd.log'), 'utf8')
      stop()
      assert.fail(`etcd did not become healthy within 30 s; log:\n${text}`)
    }
    await sleep(50)
  }
  return { client, etcdctl, stop, exited: () => child.exitCode !== null || child.signalCode !== null }
}

test('an etcd lease from Node: distinct slots, lease state in health(), NO_FREE_SLOT, close() frees the key', async () => {
  const etcd = await startEtcd()
  const gens = []
  try {
    const opts = { endpoints: [etcd.client], prefix: '/polyflake-node', slots: 2, ttlS: 2, reserveMs: 500, connectTimeoutMs: 1000 }
    const a = Snowflake.fromEtcd({ ...opts, identity: 'node-a' })
    gens.push(a)
    const b = MonotonicSnowflake.fromEtcd({ ...opts, identity: 'node-b', maxLeadMs: 100 })
    gens.push(b)
    a.waitReady()
    b.waitReady()
    assert.notEqual(a.nodeId, b.nodeId)
    for (const g of [a, b]) {
      const ids = g.nextIds(1000)
      assert.equal(g.decode(ids[999]).nodeId, g.nodeId)
      assert.equal(g.decode(g.nextId()).nodeId, g.nodeId)
      const h = g.health()
      assert.equal(h.ok, true, h.reason)
      assert.equal(h.source, 'etcd')
      assert.equal(h.lease.kind, 'etcd')
      assert.equal(h.lease.slot, g.nodeId)
      assert.match(h.lease.store, /prefix \/polyflake-node/)
      assert.ok(h.lease.highWaterMs >= h.lastIssuedMs)
    }
    // The slot keys are really in etcd.
    const keys = etcd.etcdctl('get', '--prefix', '--keys-only', '/polyflake-node/slot/')
    assert.equal(keys.status, 0, keys.stderr)
    assert.equal(keys.stdout.split('\n').filter(Boolean).length, 2)

    throwsCode(assert, () => Snowflake.fromEtcd(opts), Error, 'NO_FREE_SLOT')
    const slot = a.nodeId
    a.close()
    const c = Snowflake.fromEtcd({ ...opts, identity: 'node-c' })
    gens.push(c)
    assert.equal(c.nodeId, slot)
    // The successor waits past what `a` issued (the restart guard), then issues.
    c.waitReady(10_000)
    const id = c.nextId()
    assert.equal(c.decode(id).nodeId, slot)
  } finally {
    for (const g of gens) g.close()
    etcd.stop()
  }
})

test('an etcd lease revoked under a live holder with heal: a new slot by itself, nothing repeats, the counters go on', async () => {
  const etcd = await startEtcd()
  const g = Snowflake.fromEtcd({
    endpoints: etcd.client, prefix: '/polyflake-node-heal', slots: 2, ttlS: 2, reserveMs: 500,
    connectTimeoutMs: 1000, identity: 'node-heal', heal: true,
  })
  try {
    g.waitReady(10_000)
    const ids = Array.from(g.nextIds(5000))
    const issuedBefore = g.health().idsIssued
    // The slot key's etcd lease (an int64: read as text, not as a JSON Number), revoked.
    const got = etcd.etcdctl('get', `/polyflake-node-heal/slot/${String(g.nodeId).padStart(4, '0')}`, '-w', 'json')
    const lease = /"lease":(\d+)/.exec(got.stdout)
    assert.ok(lease, got.stdout + got.stderr)
    const revoked = etcd.etcdctl('lease', 'revoke', BigInt(lease[1]).toString(16))
    assert.equal(revoked.status, 0, revoked.stderr)
    const statuses = new Set()
    const until = Date.now() + 10_000
    while (Date.now() < until && !statuses.has('lease_lost') && !statuses.has('restart_guard')) {
      statuses.add(g.health().status)
      try {
        ids.push(g.nextId())
      } catch (e) {
        assert.ok(e.code === 'LEASE_LOST' || e.code === 'LEASE_NOT_READY', e.message)
        await sleep(5)
      }
    }
    assert.ok(statuses.has('lease_lost') || statuses.has('restart_guard'), [...statuses].join())
    g.waitReady(15_000) // waits through the heal
    const h = g.health()
    assert.equal(h.status, 'ok', h.reason)
    assert.equal(h.lease.kind, 'etcd')
    assert.equal(h.lease.slot, g.nodeId)
    ids.push(...g.nextIds(5000))
    assert.equal(new Set(ids).size, ids.length, 'an ID repeated across the heal')
    assert.ok(g.health().idsIssued >= ids.length && ids.length > issuedBefore)
    const keys = etcd.etcdctl('get', '--prefix', '--keys-only', '/polyflake-node-heal/slot/')
    assert.ok(keys.stdout.includes(`/polyflake-node-heal/slot/${String(g.nodeId).padStart(4, '0')}`), keys.stdout)
  } finally {
    g.close()
    etcd.stop()
  }
})
