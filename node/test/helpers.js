'use strict'
// Shared by the tests: where the repository's shared vectors are, and the built addon.
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawn } = require('node:child_process')

const NODE_DIR = path.resolve(__dirname, '..')
const ROOT = path.resolve(NODE_DIR, '..')
const VECTORS = path.join(ROOT, 'tests', 'vectors')

// A node id on the system clock is claimed host-wide whatever the epoch, by a static id and a
// lease's slot alike, and a fixed one keeps a mark in a state directory. `node --test` runs the
// files side by side (and `make` runs the other languages' suites beside this one, each in a
// scope of its own): each test file is a service of its own here, in a host scope of its own
// (the suite's, POLYFLAKE_HOST_SCOPE, with the file's name added) and with a fresh state
// directory, both set before any generator is made and inherited by every process it spawns. So
// a lease in one file never skips a slot another file holds as a static id, and no run waits for
// the marks an earlier run left. Tests of the scope and the directory pass `hostScope`/`stateDir`.
const { isMainThread } = require('node:worker_threads')
if (isMainThread && !process.env.POLYFLAKE_NODE_TEST_FILE) {
  const file = path.basename(process.argv[1] || 'node', '.js').replace(/\.test$/, '')
  const scope = `${process.env.POLYFLAKE_HOST_SCOPE || 'node'}-${file}`.replace(/[^A-Za-z0-9._-]/g, '-')
  const state = fs.mkdtempSync(path.join(os.tmpdir(), `polyflake-node-state-${file}-`))
  process.env.POLYFLAKE_NODE_TEST_FILE = file
  process.env.POLYFLAKE_HOST_SCOPE = scope.slice(-40)
  process.env.POLYFLAKE_STATE_DIR = state
  process.on('exit', () => fs.rmSync(state, { recursive: true, force: true }))
}

// The package itself, through its generated index.js (what `require('polyflake')` loads).
const polyflake = require(NODE_DIR)

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

// Assert that `fn` throws an instance of `cls` whose `code` is `code`.
function throwsCode(assert, fn, cls, code) {
  let thrown = null
  try {
    fn()
  } catch (e) {
    thrown = e
  }
  assert.ok(thrown, `expected ${cls.name} ${code}, but nothing was thrown`)
  assert.ok(thrown instanceof cls, `expected ${cls.name}, got ${thrown && thrown.constructor.name}: ${thrown && thrown.message}`)
  assert.strictEqual(thrown.code, code, `wrong code; message: ${thrown.message}`)
  return thrown
}

function tempDir(tag) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `polyflake-node-${tag}-`))
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

// Run a command to its end: { code, signal, out, err }.
function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts })
    let out = ''
    let err = ''
    p.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    p.stderr.setEncoding('utf8').on('data', (d) => { err += d })
    p.on('error', reject)
    p.on('close', (code, signal) => resolve({ code, signal, out, err }))
  })
}

// A running child's stdout, line by line: `await next()` is the next line (rejects if the
// child ends first).
function lines(child) {
  let buf = ''
  const ready = []
  const waiting = []
  let ended = null
  child.stdout.setEncoding('utf8').on('data', (d) => {
    buf += d
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) ready.push(buf.slice(0, i))
    while (ready.length && waiting.length) waiting.shift().resolve(ready.shift())
  })
  child.on('close', (code) => {
    ended = new Error(`the child ended (exit ${code}) before printing the line`)
    while (waiting.length) waiting.shift().reject(ended)
  })
  return () => new Promise((resolve, reject) => {
    if (ready.length) resolve(ready.shift())
    else if (ended) reject(ended)
    else waiting.push({ resolve, reject })
  })
}

// IDs written as raw little-endian u64.
function readIds(file) {
  const buf = fs.readFileSync(file)
  assert.equal(buf.length % 8, 0)
  const ids = new BigUint64Array(buf.length / 8)
  for (let i = 0; i < ids.length; i++) ids[i] = buf.readBigUInt64LE(i * 8)
  return ids
}

module.exports = { NODE_DIR, ROOT, VECTORS, polyflake, readJson, throwsCode, tempDir, sleep, run, lines, readIds }
