'use strict'
// Metrics in a service: collectMetrics() for prom-client scraped and parsed back (the service's
// metric names, from the core's table), and the Express example (node/examples/express.js)
// started as its own process on a file lease, hit with a real HTTP client (fetch), made unhealthy
// (its slot file deleted: 503), shut down with SIGTERM, and its slot free again afterwards.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const client = require('prom-client')
const { NODE_DIR, polyflake, tempDir, lines, throwsCode } = require('./helpers')
const { collectMetrics } = require('../prometheus')

const { Snowflake, Uuid7Generator, ManualClock, healthMetrics } = polyflake

// Prometheus text -> { families: Map(name -> {type, help}), samples: [{name, labels, value}] }.
function parseExposition(text) {
  const families = new Map()
  const samples = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    let m
    if ((m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line))) {
      const f = families.get(m[2]) ?? {}
      f[m[1] === 'HELP' ? 'help' : 'type'] = m[3]
      families.set(m[2], f)
      continue
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(m, `not a Prometheus sample line: ${JSON.stringify(line)}`)
    const labels = {}
    for (const part of (m[2] ?? '').split(',').filter(Boolean)) {
      const kv = /^([a-zA-Z_][a-zA-Z0-9_]*)="(.*)"$/.exec(part)
      assert.ok(kv, `bad label ${part}`)
      labels[kv[1]] = kv[2]
    }
    const value = Number(m[3])
    assert.ok(!Number.isNaN(value), `bad value in ${line}`)
    samples.push({ name: m[1], labels, value })
  }
  return { families, samples }
}

// The exposed name of a metric of the core's table.
const exposed = (m) => (m.kind === 'counter' ? `${m.name}_total` : m.name)

test('healthMetrics() is the core table: the service\'s names, kinds, help texts', () => {
  const table = healthMetrics()
  assert.ok(table.length >= 10)
  const names = table.map((m) => m.name)
  assert.equal(new Set(names).size, names.length)
  for (const m of table) {
    assert.match(m.name, /^polyflake_[a-z_]+$/)
    assert.ok(['counter', 'gauge'].includes(m.kind))
    assert.ok(m.help.length > 0 && Array.isArray(m.labels))
  }
  // The service has always exposed these.
  assert.ok(names.includes('polyflake_ids_issued'))
  assert.equal(table.find((m) => m.name === 'polyflake_ids_issued').kind, 'counter')
})

test('collectMetrics: a scrape parses as Prometheus text with the core table\'s names and values', async () => {
  const clock = new ManualClock(1737747358021)
  const g = new Snowflake({ nodeId: 9, clock, maxWaitMs: 0 })
  const registry = new client.Registry()
  const made = collectMetrics(g, registry)
  assert.equal(made.length, healthMetrics().length)
  g.nextIds(1234)
  clock.advance(-100)
  throwsCode(assert, () => g.nextId(), Error, 'CLOCK_MOVED_BACKWARDS')
  const { families, samples } = parseExposition(await registry.metrics())
  for (const m of healthMetrics()) {
    const f = families.get(exposed(m))
    assert.ok(f, `${exposed(m)} missing from the scrape`)
    assert.equal(f.type, m.kind)
    assert.equal(f.help, m.help)
  }
  const value = (name) => samples.find((s) => s.name === name)?.value
  assert.equal(value('polyflake_ids_issued_total'), 1234)
  assert.equal(value('polyflake_rewinds_refused_total'), 1)
  // The same values as healthSamples() of the same state.
  for (const s of g.healthSamples()) {
    const m = healthMetrics().find((x) => x.name === s.name)
    const got = samples.find((x) => x.name === exposed(m) && JSON.stringify(x.labels) === JSON.stringify(s.labels))
    assert.ok(got, `${s.name} ${JSON.stringify(s.labels)} missing`)
    assert.equal(got.value, s.value, s.name)
  }
  // A later scrape sees later state.
  clock.advance(200)
  g.nextIds(10)
  assert.equal(parseExposition(await registry.metrics()).samples.find((s) => s.name === 'polyflake_ids_issued_total').value, 1244)
  // One generator per registry: the names are taken.
  assert.throws(() => collectMetrics(g, registry), /already been registered/)
  g.close()
})

test('collectMetrics: the UUIDv7 generator, the default registry, bad arguments', async () => {
  const g = new Uuid7Generator()
  g.nextIds(7)
  collectMetrics(g)
  try {
    const { samples } = parseExposition(await client.register.metrics())
    assert.equal(samples.find((s) => s.name === 'polyflake_ids_issued_total').value, 7)
  } finally {
    client.register.clear()
  }
  assert.throws(() => collectMetrics({}), TypeError)
  assert.throws(() => collectMetrics(null), TypeError)
  assert.throws(() => collectMetrics(g, {}), TypeError)
  g.close()
})

// The Express example as its own process: `{ child, port, next }` once it listens.
async function startApp(dir) {
  const child = spawn(process.execPath, [path.join(NODE_DIR, 'examples', 'express.js'), dir, '0', '1000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const next = lines(child)
  const line = await next()
  const m = /^listening (\d+)$/.exec(line)
  assert.ok(m, `the app said ${JSON.stringify(line)}`)
  return { child, base: `http://127.0.0.1:${m[1]}` }
}

function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode })
    else child.on('exit', (code, signal) => resolve({ code, signal }))
  })
}

test('the Express example: IDs per request, health, metrics, 503 when unhealthy, lease freed on SIGTERM', async () => {
  const dir = tempDir('express')
  let app = null
  try {
    app = await startApp(dir)
    const get = async (p) => {
      const res = await fetch(app.base + p)
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
    }
    const seen = new Set()
    let last = -1n
    for (let i = 0; i < 50; i++) {
      const r = await get('/id')
      assert.equal(r.status, 200)
      const id = BigInt(JSON.parse(r.body).id)
      assert.ok(id > last && !seen.has(id))
      seen.add(id)
      last = id
    }
    // Concurrent requests, batches among them (one large enough to wait on the pool).
    const batches = await Promise.all([10, 5000, 20000, 1, 300].map((n) => get(`/ids?count=${n}`)))
    for (const r of batches) {
      assert.equal(r.status, 200)
      for (const s of JSON.parse(r.body).ids) {
        assert.equal(typeof s, 'string')
        const id = BigInt(s)
        assert.ok(!seen.has(id), `duplicate ${s}`)
        seen.add(id)
      }
    }
    assert.equal(seen.size, 50 + 10 + 5000 + 20000 + 1 + 300)
    // POST: a record's ID, the body echoed, the ID's time as createdAt.
    const posted = await fetch(`${app.base}/orders`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'book', qty: 2 }),
    })
    assert.equal(posted.status, 201)
    const order = await posted.json()
    assert.deepEqual(order.order, { item: 'book', qty: 2 })
    const orderId = BigInt(order.id)
    assert.ok(!seen.has(orderId))
    seen.add(orderId)
    assert.equal(Date.parse(order.createdAt), Snowflake.decode(orderId).timestampMs)
    assert.equal((await get('/ids?count=0')).status, 400)
    assert.equal((await get(`/ids?count=${polyflake.MAX_BATCH + 1}`)).status, 400)
    const h = await get('/healthz')
    assert.equal(h.status, 200, h.body)
    const health = JSON.parse(h.body)
    assert.equal(health.ok, true)
    const nodeId = health.nodeId
    const metrics = await get('/metrics')
    assert.equal(metrics.status, 200)
    assert.match(metrics.type, /^text\/plain/)
    const scraped = parseExposition(metrics.body)
    assert.equal(scraped.samples.find((s) => s.name === 'polyflake_ids_issued_total').value, seen.size)

    // SIGTERM: the server closes, then the generator frees its slot.
    app.child.kill('SIGTERM')
    assert.deepEqual(await exited(app.child), { code: 0, signal: null })
    app = null
    // The slot is free: a one-slot lease of this directory takes that very node id.
    const again = Snowflake.fromFileLease({ dir, slots: nodeId + 1, identity: 'after', reserveMs: 200 })
    try {
      assert.equal(again.nodeId, nodeId)
    } finally {
      again.close()
    }

    // Unhealthy: the slot file deleted under the live holder loses the lease -> 503.
    app = await startApp(dir)
    assert.equal((await get('/healthz')).status, 200)
    for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('slot-'))) fs.unlinkSync(path.join(dir, f))
    let status = 200
    const deadline = Date.now() + 10_000
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      status = (await get('/healthz')).status
    }
    assert.equal(status, 503, 'health stays 200 after the slot file was deleted')
    const refused = await get('/id')
    assert.equal(refused.status, 503)
    assert.equal(JSON.parse(refused.body).error, 'LEASE_LOST')
    app.child.kill('SIGTERM')
    assert.deepEqual(await exited(app.child), { code: 0, signal: null })
    app = null
  } finally {
    if (app) {
      app.child.kill('SIGKILL')
      await exited(app.child)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
