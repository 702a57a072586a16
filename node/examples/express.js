'use strict'
// An Express service that mints IDs per request (docs/node.md "In an async service").
//
//   node examples/express.js LEASE_DIR [PORT] [RESERVE_MS]
//
// The generator leases its node id from a directory of slot files, waits out the restart guard
// once at startup (blocking is fine before listening), then serves:
//   GET /id          one ID as a decimal string (nextIdAsync: never blocks the event loop)
//   GET /ids?count=N N IDs as decimal strings (nextIdsAsync: a batch that must wait for the next
//                    milliseconds is filled on the libuv thread pool)
//   POST /orders     a new record's ID (an ID per row: the usual use) with the JSON body sent and
//                    the ID's time (gen.decode(id).time, a Date) as createdAt: 201
//   GET /healthz     the generator's health; 503 when it cannot issue (for a load balancer)
//   GET /metrics     Prometheus text: the generator's health metrics (polyflake/prometheus)
// It prints `listening PORT` once ready. SIGTERM or SIGINT closes the server and then the
// generator, which frees the slot at once for the next process.
const express = require('express')
const client = require('prom-client')
const { Snowflake, idsToStrings, isPolyflakeError } = require('polyflake')
const { collectMetrics } = require('polyflake/prometheus')

const [dir, port = '0', reserveMs = '5000'] = process.argv.slice(2)
if (!dir) {
  process.stderr.write('usage: node examples/express.js LEASE_DIR [PORT] [RESERVE_MS]\n')
  process.exit(2)
}

const gen = Snowflake.fromFileLease({ dir, reserveMs: Number(reserveMs) })
gen.waitReady()
const registry = new client.Registry()
collectMetrics(gen, registry)

const app = express()

// A refusal (a rewind past maxWaitMs, a lost lease) is a 503 with the core's code.
function refused(res, err) {
  res.status(503).json({ error: isPolyflakeError(err) ? err.code : 'INTERNAL', message: err.message })
}

app.get('/id', async (req, res) => {
  try {
    res.json({ id: (await gen.nextIdAsync()).toString() })
  } catch (err) {
    refused(res, err)
  }
})

app.get('/ids', async (req, res) => {
  const count = Number(req.query.count ?? 1)
  if (!Number.isSafeInteger(count) || count < 1) {
    res.status(400).json({ error: 'BAD_COUNT', message: 'count must be a positive integer' })
    return
  }
  try {
    res.json({ ids: idsToStrings(await gen.nextIdsAsync(count)) })
  } catch (err) {
    // RangeError: a count above MAX_BATCH.
    if (err instanceof RangeError) res.status(400).json({ error: err.code, message: err.message })
    else refused(res, err)
  }
})

app.post('/orders', express.json(), async (req, res) => {
  try {
    const id = await gen.nextIdAsync()
    const createdAt = gen.decode(id).time.toISOString()
    res.status(201).json({ id: id.toString(), createdAt, order: req.body ?? {} })
  } catch (err) {
    refused(res, err)
  }
})

app.get('/healthz', (req, res) => {
  const h = gen.health()
  res.status(h.ok ? 200 : 503).json({ ok: h.ok, status: h.status, reason: h.reason, nodeId: h.nodeId })
})

app.get('/metrics', async (req, res) => {
  res.type(registry.contentType).send(await registry.metrics())
})

const server = app.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`)
})

function shutdown() {
  server.close(() => {
    gen.close() // frees the slot now
    process.exit(0)
  })
  server.closeAllConnections()
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
