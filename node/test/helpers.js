'use strict'
// Shared by the tests: where the repository's shared vectors are, and the built addon.
const path = require('node:path')
const fs = require('node:fs')

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

module.exports = { NODE_DIR, ROOT, VECTORS, polyflake, readJson, throwsCode }
