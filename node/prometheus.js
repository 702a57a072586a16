'use strict'
// polyflake/prometheus: a generator's health as prom-client metrics.
//
//   const client = require('prom-client')
//   const { collectMetrics } = require('polyflake/prometheus')
//   collectMetrics(gen, client.register)
//
// The names, kinds, help texts and label names are the core's HEALTH_METRICS table, read through
// the addon (`healthMetrics()`), so they are the service's /metrics names: nothing is written
// here. Each scrape takes one health snapshot (`healthSamples()`), shared by every metric of that
// scrape. prom-client is a peer dependency: install it beside polyflake.
const polyflake = require('./index.js')

// prom-client, loaded on first use so that `require('polyflake')` never needs it.
function promClient() {
  try {
    return require('prom-client')
  } catch (e) {
    const err = new Error('polyflake/prometheus needs prom-client (a peer dependency): npm install prom-client')
    err.code = 'ERR_MODULE_NOT_FOUND'
    err.cause = e
    throw err
  }
}

/**
 * Register the health metrics of generator `gen` (a `Snowflake`, `MonotonicSnowflake`,
 * `Uuid7Generator` or `UlidGenerator`) in prom-client's `register` (default: prom-client's
 * global registry). Returns the prom-client metric objects, in the table's order; a name already
 * registered throws prom-client's own error (one generator per registry).
 */
function collectMetrics(gen, register) {
  if (gen === null || typeof gen !== 'object' || typeof gen.healthSamples !== 'function') {
    throw new TypeError(`collectMetrics takes a polyflake generator, got ${gen === null ? 'null' : typeof gen}`)
  }
  const client = promClient()
  const registry = register === undefined ? client.register : register
  if (!(registry instanceof client.Registry)) {
    throw new TypeError('collectMetrics: register must be a prom-client Registry')
  }
  // One snapshot per scrape: prom-client collects the metrics in registration order, so the
  // first metric takes a fresh snapshot and the others read it; a metric that already read the
  // current snapshot (collected alone, by getSingleMetric) takes a fresh one itself.
  let snapshot = null
  let generation = 0
  const take = () => {
    snapshot = new Map()
    for (const s of gen.healthSamples()) {
      if (!snapshot.has(s.name)) snapshot.set(s.name, [])
      snapshot.get(s.name).push(s)
    }
    generation++
  }
  return polyflake.healthMetrics().map((m, index) => {
    const counter = m.kind === 'counter'
    const Kind = counter ? client.Counter : client.Gauge
    let seen = -1
    return new Kind({
      // prom-client writes the name as given: a counter's exposed name ends in _total.
      name: counter ? `${m.name}_total` : m.name,
      help: m.help,
      labelNames: m.labels,
      registers: [registry],
      collect() {
        if (index === 0 || snapshot === null || seen === generation) take()
        seen = generation
        this.reset()
        for (const s of snapshot.get(m.name) ?? []) {
          if (counter) this.inc(s.labels, s.value)
          else this.set(s.labels, s.value)
        }
      },
    })
  })
}

module.exports = { collectMetrics }
