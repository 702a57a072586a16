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
