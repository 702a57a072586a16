'use strict'
// Every scenario file in tests/vectors/scenarios/ (and the UUIDv7/ULID files of formats/) run
// through the Node binding, each on the precise clock source and again on the coarse one (a
// test clock's coarse reading is its wall reading, as in core/tests/scenarios.rs). The
// schema is in tests/vectors/scenarios/README.md; an unknown op or key fails the test, as does a
// file that is not run.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ROOT, VECTORS, polyflake, readJson } = require('./helpers')

const { Snowflake, MonotonicSnowflake, ManualClock, ScriptedClock, Uuid7Generator, UlidGenerator } = polyflake
const DIR = path.join(VECTORS, 'scenarios')
const FORMATS_DIR = path.join(DIR, 'formats')
const SOURCES = ['precise', 'coarse']

// The 128-bit formats: the class, an ID's text as a bigint (for the order and uniqueness checks)
// and its Unix ms.
const FORMATS = {
  uuidv7: {
    cls: Uuid7Generator,
    value: (text) => BigInt(`0x${text.replaceAll('-', '')}`),
    ms: (id) => polyflake.uuid7TimestampMs(id),
  },
  ulid: {
    cls: UlidGenerator,
    value: (text) => BigInt(`0x${polyflake.parseUlid(text).toString('hex')}`),
    ms: (id) => polyflake.ulidTimestampMs(id),
  },
}

function onlyKeys(obj, allowed, where) {
  for (const k of Object.keys(obj)) {
    assert.ok(allowed.includes(k), `unknown key ${JSON.stringify(k)} in ${where}`)
  }
}

// Scripted clock values: plain numbers, or run objects {start, count, step, each}.
function expandValues(values, where) {
  const out = []
  for (const v of values) {
    if (typeof v === 'number') {
      out.push(v)
      continue
    }
    onlyKeys(v, ['start', 'count', 'step', 'each'], `${where} run`)
    const step = v.step ?? 0
    const each = v.each ?? 1
    for (let i = 0; i < v.count; i++) out.push(v.start + step * Math.floor(i / each))
  }
  return out
}

// What Node cannot offer (see `needs` in the schema): no fork() in Node.js.
const NOT_APPLICABLE = { fork: 'no fork() in Node.js' }
const NEEDS = ['fork']

// A generator spec from a scenario file -> [generator, its manual clock or null]. File-lease
// generators lease from `leaseDir`, the scenario's one temporary directory.
function make(spec, where, leaseDir, clockSource) {
  onlyKeys(spec, ['mode', 'node_id', 'layout', 'epoch_ms', 'max_wait_ms', 'max_lead_ms', 'max_forward_step_ms',
    'forward_confirm_ms', 'clock', 'source', 'deferred', 'format'], where)
  const opts = {}
  const format = spec.format === undefined ? null : FORMATS[spec.format]
  if (spec.format !== undefined) {
    assert.ok(format, `unknown format ${JSON.stringify(spec.format)} in ${where}`)
    for (const k of ['node_id', 'layout', 'epoch_ms', 'source']) assert.ok(!(k in spec), `${where}: ${k} with a format`)
    opts.mode = spec.mode
  } else if ('source' in spec) {
    onlyKeys(spec.source, ['kind', 'slots', 'reserve_ms'], `${where}.source`)
    assert.equal(spec.source.kind, 'file_lease', `${where}.source.kind`)
    opts.dir = leaseDir
    if ('slots' in spec.source) opts.slots = spec.source.slots
    if ('reserve_ms' in spec.source) opts.reserveMs = spec.source.reserve_ms
  } else {
    opts.nodeId = spec.node_id
  }
  if ('layout' in spec) {
    opts.layout = Array.isArray(spec.layout)
      ? { timestampBits: spec.layout[0], nodeBits: spec.layout[1], sequenceBits: spec.layout[2] }
      : spec.layout
  }
  if ('epoch_ms' in spec) opts.epochMs = spec.epoch_ms
  if ('max_wait_ms' in spec) opts.maxWaitMs = spec.max_wait_ms
  if ('max_lead_ms' in spec) opts.maxLeadMs = spec.max_lead_ms
  // null turns the forward-step check off.
  if ('max_forward_step_ms' in spec) opts.maxForwardStepMs = spec.max_forward_step_ms
  if ('forward_confirm_ms' in spec) opts.forwardConfirmMs = spec.forward_confirm_ms
  let manual = null
  // The system clock by name; a test clock's reading is chosen by clockSource.
  if (!('clock' in spec)) opts.clock = clockSource
  else opts.clockSource = clockSource
  if ('clock' in spec) {
    const c = spec.clock
    if (c.kind === 'manual') {
      onlyKeys(c, ['kind', 'start_ms'], `${where}.clock`)
      manual = new ManualClock(c.start_ms)
      opts.clock = manual
    } else if (c.kind === 'scripted') {
      onlyKeys(c, ['kind', 'values'], `${where}.clock`)
      opts.clock = new ScriptedClock(expandValues(c.values, `${where}.clock`))
    } else {
      assert.fail(`unknown clock kind ${JSON.stringify(c.kind)} in ${where}`)
    }
  }
  if (format) return [new format.cls(opts), manual]
  const cls = { strict: Snowflake, monotonic: MonotonicSnowflake }[spec.mode]
  if (!cls) assert.fail(`unknown mode ${JSON.stringify(spec.mode)} in ${where}`)
  return ['source' in spec ? cls.fromFileLease(opts) : new cls(opts), manual]
}

// The decoded fields in the scenario files' names (Node's timestampMs).
function fields(d) {
  return { timestamp_ms: d.timestampMs, node_id: d.nodeId, sequence: d.sequence }
}

const ID_EXPECT = ['error', 'ids', 'sequences', 'max_sequence', 'first', 'last', 'increasing']
const HEALTH_EXPECT = ['ok', 'status', 'lead_ms', 'ids_issued', 'rewinds_waited', 'rewinds_refused',
  'sequence_exhaustions', 'wait_sleeps', 'ms_borrowed', 'lead_refused', 'clock_ahead_ms', 'forward_refused']
const HEALTH_JS = {
  ok: 'ok', status: 'status', lead_ms: 'leadMs', ids_issued: 'idsIssued', rewinds_waited: 'rewindsWaited',
  rewinds_refused: 'rewindsRefused', sequence_exhaustions: 'sequenceExhaustions', wait_sleeps: 'waitSleeps',
  ms_borrowed: 'msBorrowed', lead_refused: 'leadRefused', clock_ahead_ms: 'clockAheadMs', forward_refused: 'forwardRefused',
}

function expectError(fn, code, where) {
  let err = null
  try {
    fn()
  } catch (e) {
    err = e
  }
  assert.ok(err, `${where}: expected ${code}, but the call succeeded`)
  assert.ok(err instanceof Error, `${where}: not an Error`)
  assert.equal(err.code, code, `${where}: ${err.message}`)
}

// Runs one scenario file on `clockSource`; returns its coverage line.
function runScenario(sc, file, clockSource) {
  onlyKeys(sc, ['name', 'description', 'source', 'needs', 'generators', 'steps'], file)
  assert.equal(sc.name, path.basename(file, '.json'), 'name = file name')
  for (const need of sc.needs ?? []) {
    assert.ok(NEEDS.includes(need), `${file}: unknown need ${JSON.stringify(need)}`)
    if (NOT_APPLICABLE[need]) return `${sc.name} not-applicable: ${NOT_APPLICABLE[need]}`
  }
  const leaseDir = fs.mkdtempSync(path.join(os.tmpdir(), `polyflake-scenario-${sc.name}-`))
  const gens = {}
  try {
    runSteps(sc, gens, leaseDir, clockSource)
  } finally {
    for (const g of Object.values(gens)) g.gen?.close() // null: its making failed
    fs.rmSync(leaseDir, { recursive: true, force: true })
  }
  return `${sc.name} ok`
}

function runSteps(sc, gens, leaseDir, clockSource) {
  const create = (name) => {
    const spec = sc.generators[name]
    gens[name] = { name, gen: null, clock: null, last: -1n, format: FORMATS[spec.format] ?? null }
    ;[gens[name].gen, gens[name].clock] = make(spec, `generators.${name}`, leaseDir, clockSource)
    // Coarse on a test clock whose coarse reading is its wall reading reads that one reading
    // (as in the core's own run); on the system clock it is coarse unless the tick is too long.
    if (!gens[name].format && clockSource === 'precise') assert.equal(gens[name].gen.clockSource, 'precise')
  }
  for (const [name, spec] of Object.entries(sc.generators)) {
    if (!spec.deferred) create(name)
  }
  const seen = new Set()
  const issued = (g, ids, where) => {
    for (const id of ids) {
      assert.equal(typeof id, 'bigint')
      assert.ok(!seen.has(id), `${where}: duplicate ID ${id}`)
      seen.add(id)
      assert.ok(id > g.last, `${where}: ${id} does not increase past ${g.last}`)
      g.last = id
    }
  }
  sc.steps.forEach((step, i) => {
    const where = `${sc.name} step ${i} (${step.op})`
    onlyKeys(step, ['op', 'gen', 'count', 'id', 'ms', 'config', 'expect', 'within_ms'], where)
    const expect = step.expect ?? {}
    const g = step.gen !== undefined ? gens[step.gen] : null
    if (step.gen !== undefined && step.op !== 'create') assert.ok(g, `${where}: unknown generator ${step.gen}`)
    const t0 = process.hrtime.bigint()
    switch (step.op) {
      case 'next_id':
      case 'next_ids': {
        onlyKeys(expect, ID_EXPECT, `${where} expect`)
        const count = step.count ?? 1
        let ids = []
        if (step.op === 'next_id') {
          const calls = expect.error ? count - 1 : count
          for (let k = 0; k < calls; k++) ids.push(g.gen.nextId())
          if (expect.error) expectError(() => g.gen.nextId(), expect.error, where)
        } else if (expect.error) {
          expectError(() => g.gen.nextIds(count), expect.error, where)
        } else if (g.format) {
          const batch = g.gen.nextIds(count)
          assert.ok(Buffer.isBuffer(batch), `${where}: nextIds returns a Buffer`)
          assert.equal(batch.length, 16 * count)
          for (let k = 0; k < count; k++) ids.push(batch.subarray(16 * k, 16 * (k + 1)))
        } else {
          const batch = g.gen.nextIds(count)
          assert.ok(batch instanceof BigInt64Array, `${where}: nextIds returns a BigInt64Array`)
          assert.equal(batch.length, count)
          ids = Array.from(batch)
        }
        if (g.format) {
          // Strings from nextId, 16-byte Buffers from nextIds: both checked as 128-bit integers.
          const ms = ids.map((id) => g.format.ms(id))
          const values = ids.map((id) => (typeof id === 'string' ? g.format.value(id) : BigInt(`0x${id.toString('hex')}`)))
          onlyKeys(expect, ['error', 'first', 'last', 'increasing'], `${where} expect (a format)`)
          issued(g, values, where)
          if (expect.first) assert.deepEqual({ timestamp_ms: ms[0] }, expect.first, `${where}: first`)
          if (expect.last) assert.deepEqual({ timestamp_ms: ms[ms.length - 1] }, expect.last, `${where}: last`)
          break
        }
        issued(g, ids, where)
        if (expect.ids) assert.deepEqual(ids, expect.ids.map(BigInt), `${where}: ids`)
        const decoded = ids.map((id) => g.gen.decode(id))
        if (expect.sequences) assert.deepEqual(decoded.map((d) => d.sequence), expect.sequences, `${where}: sequences`)
        if (expect.max_sequence !== undefined) {
          assert.equal(Math.max(...decoded.map((d) => d.sequence)), expect.max_sequence, `${where}: max_sequence`)
        }
        if (expect.first) assert.deepEqual(fields(decoded[0]), expect.first, `${where}: first`)
        if (expect.last) assert.deepEqual(fields(decoded[decoded.length - 1]), expect.last, `${where}: last`)
        if (expect.increasing !== undefined) {
          assert.equal(expect.increasing, true, `${where}: only increasing: true is defined`)
          for (let k = 1; k < ids.length; k++) assert.ok(ids[k] > ids[k - 1], `${where}: not increasing at ${k}`)
        }
        break
      }
      case 'decode': {
        onlyKeys(expect, ['decoded'], `${where} expect`)
        // Both spellings of an ID: the decimal string and the bigint.
        assert.deepEqual(fields(g.gen.decode(step.id)), expect.decoded, where)
        assert.deepEqual(fields(g.gen.decode(BigInt(step.id))), expect.decoded, where)
        break
      }
      case 'health': {
        onlyKeys(expect, HEALTH_EXPECT, `${where} expect`)
        const h = g.gen.health()
        for (const [k, want] of Object.entries(expect)) {
          const got = h[HEALTH_JS[k]]
          if (want !== null && typeof want === 'object') {
            onlyKeys(want, ['min', 'max'], `${where} ${k}`)
            if (want.min !== undefined) assert.ok(got >= want.min, `${where}: ${k} = ${got} < ${want.min}`)
            if (want.max !== undefined) assert.ok(got <= want.max, `${where}: ${k} = ${got} > ${want.max}`)
          } else {
            assert.equal(got, want, `${where}: health.${HEALTH_JS[k]} (${JSON.stringify(h)})`)
          }
        }
        break
      }
      case 'clock_set':
      case 'clock_advance':
      case 'clock_elapse': {
        assert.ok(g.clock, `${where}: ${step.gen} has no manual clock`)
        if (step.op === 'clock_set') g.clock.set(step.ms)
        else if (step.op === 'clock_advance') g.clock.advance(step.ms)
        else g.clock.elapse(step.ms)
        break
      }
      case 'construct': {
        onlyKeys(expect, ['error', 'ok'], `${where} expect`)
        if (expect.error) {
          expectError(() => make(step.config, where, leaseDir, clockSource), expect.error, where)
        } else {
          assert.equal(expect.ok, true, `${where}: expect ok: true or an error`)
          make(step.config, where, leaseDir, clockSource)[0].close()
        }
        break
      }
      case 'create': {
        onlyKeys(expect, ['error'], `${where} expect`)
        assert.ok(sc.generators[step.gen]?.deferred && !g, `${where}: ${step.gen} is not a deferred generator yet to make`)
        if (expect.error) expectError(() => create(step.gen), expect.error, where)
        else create(step.gen)
        break
      }
      case 'close': {
        // The generator stays: later calls on it fail with GENERATOR_CLOSED.
        assert.equal(step.expect, undefined, `${where}: close expects nothing`)
        g.gen.close()
        if (!g.format) assert.equal(g.gen.closed, true, `${where}: closed`)
        break
      }
      default:
        assert.fail(`${where}: unknown op ${JSON.stringify(step.op)}`)
    }
    if (step.within_ms !== undefined) {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      assert.ok(ms <= step.within_ms, `${where}: took ${ms.toFixed(1)} ms, more than ${step.within_ms} ms`)
    }
  })
}

const jsonIn = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
const files = jsonIn(DIR)
const formatFiles = jsonIn(FORMATS_DIR)
let ran = 0
const coverage = []

test('the scenario directories have scenario files', () => {
  assert.ok(files.length > 0, `no *.json in ${DIR}`)
  assert.ok(formatFiles.length > 0, `no *.json in ${FORMATS_DIR}`)
})

for (const f of files) {
  test(`scenario ${f}`, () => {
    const lines = SOURCES.map((source) => runScenario(readJson(path.join(DIR, f)), f, source))
    assert.equal(new Set(lines).size, 1, `${f}: the two clock sources disagree: ${lines.join(' / ')}`)
    coverage.push(lines[0])
    ran++
  })
}

// The formats' files wait in formats/ until every runner runs them (not in the coverage record).
for (const f of formatFiles) {
  test(`format scenario ${f}`, () => {
    for (const source of SOURCES) assert.match(runScenario(readJson(path.join(FORMATS_DIR, f)), f, source), / ok$/)
    ran++
  })
}

test('every scenario file ran (none skipped)', () => {
  assert.equal(ran, files.length + formatFiles.length)
  // The record `make test` checks (tests/vectors/check_coverage.py).
  const out = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'scenario-coverage')
  fs.mkdirSync(out, { recursive: true })
  fs.writeFileSync(path.join(out, 'node.txt'), coverage.map((l) => `${l}\n`).join(''))
})
