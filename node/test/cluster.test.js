'use strict'
// A static node id is held host-wide: a second process asking for one that a live
// process holds gets NODE_ID_IN_USE naming the holder's pid (message and `holderPid`), and gets
// it once the holder exits. Node's `cluster` with 4 workers, the pre-fork recipe: each worker
// leases its node id from a file lease in one shared directory (distinct node ids, zero
// duplicates over 20,000 IDs served over HTTP); with one static node id in every worker, exactly
// one worker gets it and the other three are refused.
//
// Node ids 705-707 (each test file claims in a host scope of its own: helpers.js).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { NODE_DIR, polyflake, throwsCode, tempDir, lines } = require('./helpers')

const { Snowflake } = polyflake

test('in this process the refusal has holderPid null', () => {
  const a = new Snowflake({ nodeId: 707 })
  try {
    const e = throwsCode(assert, () => new Snowflake({ nodeId: 707 }), Error, 'NODE_ID_IN_USE')
    assert.ok('holderPid' in e, 'holderPid is a property even when null')
    assert.equal(e.holderPid, null)
    assert.equal(e.nodeId, 707)
    assert.match(e.message, /in this process/)
  } finally {
    a.close()
  }
})

const HOLDER = `
const { Snowflake } = require(process.argv[1])
const g = new Snowflake({ nodeId: Number(process.argv[2]) })
g.nextId()
process.stdout.write('HELD ' + process.pid + '\\n')
setInterval(() => g.nextId(), 5)
`

test('a static node id held by another live process: NODE_ID_IN_USE with its pid; free once it exits', async () => {
  const child = spawn(process.execPath, ['-e', HOLDER, NODE_DIR, '706'], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const next = lines(child)
    assert.equal(await next(), `HELD ${child.pid}`)
    const e = throwsCode(assert, () => new Snowflake({ nodeId: 706 }), Error, 'NODE_ID_IN_USE')
    assert.ok(!(e instanceof RangeError), 'a held node id is a conflict, not a bad argument')
    assert.equal(e.holderPid, child.pid)
    assert.equal(e.nodeId, 706)
    assert.ok(e.message.includes(`process ${child.pid}`), e.message)
    assert.match(e.message, /give each process its own node id, or take one from a lease/)
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await gone
    // The kernel freed the name with the process: no cleanup. The first ID waits for the killed
    // holder's mark (its restart guard, up to one reserve: static-guard.test.js).
    const g = new Snowflake({ nodeId: 706 })
    try {
      assert.equal(g.decode(g.nextId()).nodeId, 706)
    } finally {
      g.close()
    }
  } finally {
    child.kill('SIGKILL')
  }
})

// The cluster app: argv = [addon dir, 'lease' | 'static', lease dir | node id]. The primary
// forks 4 workers and prints one JSON line per event: {port}, then {workers: [...]} once all 4
// have reported (a node id, or the error they got). Each worker serves GET /ids?n=N with N IDs
// as decimal strings. Closing the primary's stdin ends everything.
const APP = `
'use strict'
const cluster = require('node:cluster')
const http = require('node:http')
const [addon, mode, arg] = process.argv.slice(2)
const { Snowflake, idsToStrings } = require(addon)
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n')
if (cluster.isPrimary) {
  const reports = []
  for (let i = 0; i < 4; i++) cluster.fork()
  cluster.on('message', (w, m) => {
    reports.push(m)
    if (reports.length === 4) say({ workers: reports })
  })
  let port = null
  cluster.on('listening', (w, address) => {
    if (port === null) say({ port: (port = address.port) })
  })
  process.stdin.resume().on('end', () => {
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL')
    process.exit(0)
  })
} else {
  let gen
  try {
    // The pre-fork recipe: each worker leases its own node id after the fork.
    gen = mode === 'lease'
      ? Snowflake.fromFileLease({ dir: arg, reserveMs: 300 })
      : new Snowflake({ nodeId: Number(arg) })
    gen.waitReady(10000)
  } catch (e) {
    process.send({ pid: process.pid, code: e.code, holderPid: e.holderPid, message: e.message })
    return
  }
  http.createServer((req, res) => {
    const n = Number(new URL(req.url, 'http://x').searchParams.get('n'))
    const ids = idsToStrings(gen.nextIds(n))
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ pid: process.pid, nodeId: gen.nodeId, ids }))
  }).listen(0, '127.0.0.1', () => process.send({ pid: process.pid, nodeId: gen.nodeId }))
}
`

// Start the app; resolves to { next, stop }: `next()` is its next JSON line.
function startApp(dir, mode, arg) {
  const file = path.join(dir, 'app.js')
  fs.writeFileSync(file, APP)
  const primary = spawn(process.execPath, [file, NODE_DIR, mode, String(arg)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const next = lines(primary)
  return {
    next: async () => JSON.parse(await next()),
    stop: () => new Promise((resolve) => {
      if (primary.exitCode !== null || primary.signalCode !== null) return resolve()
      primary.once('exit', resolve)
      primary.stdin.end()
      setTimeout(() => primary.kill('SIGKILL'), 3000).unref()
    }),
  }
}

// One request on a connection of its own (so the primary deals requests round-robin).
function get(port, n) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: `/ids?n=${n}`, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (d) => { body += d })
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${body}`))
        else resolve(JSON.parse(body))
      })
    }).on('error', reject)
  })
}

test('cluster, 4 workers, a file lease each (the pre-fork recipe): 4 node ids, 20,000 IDs, no duplicate', async () => {
  const dir = tempDir('cluster')
  const leases = path.join(dir, 'leases')
  const app = startApp(dir, 'lease', leases)
  try {
    const first = await app.next()
    const { port } = first.port ? first : await app.next()
    const { workers } = first.workers ? first : await app.next()
    assert.equal(workers.length, 4)
    for (const w of workers) assert.equal(w.code, undefined, `a worker failed: ${w.message}`)
    const leased = new Set(workers.map((w) => w.nodeId))
    assert.equal(leased.size, 4, `4 distinct node ids, got ${[...leased]}`)

    // 20,000 IDs: 200 requests of 100, from 8 concurrent clients.
    const BATCH = 100
    let left = 200
    const replies = []
    const client = async () => {
      while (left > 0) {
        left--
        replies.push(await get(port, BATCH))
      }
    }
    await Promise.all(Array.from({ length: 8 }, client))
    const seen = new Set()
    const served = new Set()
    for (const r of replies) {
      assert.equal(r.ids.length, BATCH)
      assert.ok(leased.has(r.nodeId), `node ${r.nodeId} is one a worker reported`)
      served.add(r.nodeId)
      for (const id of r.ids) {
        seen.add(id)
        assert.equal(Snowflake.decode(id).nodeId, r.nodeId)
      }
    }
    assert.equal(seen.size, 200 * BATCH, `${200 * BATCH - seen.size} duplicate IDs`)
    assert.equal(served.size, 4, `every worker served (round-robin): ${[...served]}`)
  } finally {
    await app.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('cluster, 4 workers, one static node id in each: exactly one gets it, three get NODE_ID_IN_USE', async () => {
  const dir = tempDir('cluster-static')
  const app = startApp(dir, 'static', 705)
  try {
    let msg = await app.next()
    while (!msg.workers) msg = await app.next()
    const won = msg.workers.filter((w) => w.code === undefined)
    const lost = msg.workers.filter((w) => w.code !== undefined)
    assert.equal(won.length, 1, JSON.stringify(msg.workers))
    assert.equal(won[0].nodeId, 705)
    assert.equal(lost.length, 3)
    for (const w of lost) {
      assert.equal(w.code, 'NODE_ID_IN_USE', w.message)
      // The holder's pid (SO_PEERCRED), or 0 when the winner had bound the name but was not yet
      // listening on it at that instant (the message then says "another process").
      assert.ok(w.holderPid === won[0].pid || w.holderPid === 0, `holderPid ${w.holderPid}, winner ${won[0].pid}`)
      if (w.holderPid) assert.ok(w.message.includes(`process ${won[0].pid}`), w.message)
    }
  } finally {
    await app.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
