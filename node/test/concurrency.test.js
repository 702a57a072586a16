'use strict'
// Real threads and processes on the system clock: one generator in a tight loop, 4
// worker_threads with their own node ids, and child processes with distinct node ids. No ID
// may repeat, and each generator's IDs strictly increase.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const { NODE_DIR, polyflake } = require('./helpers')

const { Snowflake, MonotonicSnowflake } = polyflake
const PER_WORKER = 100_000

function assertIncreasing(ids, who) {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i] > ids[i - 1])) assert.fail(`${who}: ID ${i} (${ids[i]}) does not increase past ${ids[i - 1]}`)
  }
}

function assertUnique(all) {
  const seen = new Set()
  for (const id of all) {
    if (seen.has(id)) assert.fail(`duplicate ID ${id}`)
    seen.add(id)
  }
  return seen.size
}

test('a tight loop on one strict generator: 200,000 IDs, strictly increasing, no duplicate', () => {
  const g = new Snowflake({ nodeId: 901 })
  const ids = new Array(200_000)
  for (let i = 0; i < ids.length; i++) ids[i] = g.nextId()
  assertIncreasing(ids, 'strict')
  assert.equal(assertUnique(ids), ids.length)
  assert.equal(g.health().idsIssued, ids.length)
  for (const id of [ids[0], ids[ids.length - 1]]) assert.equal(g.decode(id).nodeId, 901)
})

test('a tight loop on one monotonic generator, mixing nextId and nextIds', () => {
  const g = new MonotonicSnowflake({ nodeId: 902 })
  const ids = []
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 2000; i++) ids.push(g.nextId())
    ids.push(...g.nextIds(2000))
  }
  assertIncreasing(ids, 'monotonic')
  assert.equal(assertUnique(ids), 200_000)
})

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { Snowflake, MonotonicSnowflake } = require(workerData.dir)
const Gen = workerData.monotonic ? MonotonicSnowflake : Snowflake
const g = new Gen({ nodeId: workerData.nodeId })
const out = new BigInt64Array(workerData.count)
for (let i = 0; i < out.length; i++) out[i] = g.nextId()
parentPort.postMessage(out, [out.buffer])
`

function runWorker(nodeId, monotonic) {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER, { eval: true, workerData: { dir: NODE_DIR, nodeId, count: PER_WORKER, monotonic } })
    w.once('message', resolve)
    w.once('error', reject)
    w.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
  })
}

test('4 worker_threads, each with its own node id, and the main thread at once: no duplicate', async () => {
  const main = new Snowflake({ nodeId: 910 })
  const pending = [911, 912, 913, 914].map((n, i) => runWorker(n, i % 2 === 1))
  const mine = []
  for (let i = 0; i < PER_WORKER; i++) mine.push(main.nextId())
  const results = await Promise.all(pending)
  const all = [...mine]
  results.forEach((ids, i) => {
    assert.equal(ids.length, PER_WORKER)
    const list = Array.from(ids)
    assertIncreasing(list, `worker ${i}`)
    for (const id of [list[0], list[list.length - 1]]) assert.equal(Snowflake.decode(id).nodeId, 911 + i)
    all.push(...list)
  })
  assert.equal(assertUnique(all), 5 * PER_WORKER)
})

const CHILD = `
const { Snowflake } = require(process.argv[1])
const g = new Snowflake({ nodeId: Number(process.argv[2]) })
const ids = g.nextIds(Number(process.argv[3]))
process.stdout.write(JSON.stringify(require(process.argv[1]).idsToStrings(ids)))
`

function runChild(nodeId, count) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', CHILD, NODE_DIR, String(nodeId), String(count)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    p.stdout.setEncoding('utf8')
    p.stdout.on('data', (d) => { out += d })
    p.on('error', reject)
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child ${nodeId} exited with ${code}`))))
  })
}

test('4 child processes with distinct node ids: no duplicate in the union', async () => {
  const nodes = [920, 921, 922, 923]
  const results = await Promise.all(nodes.map((n) => runChild(n, 50_000)))
  const all = []
  results.forEach((strings, i) => {
    const ids = strings.map(BigInt)
    assert.equal(ids.length, 50_000)
    assertIncreasing(ids, `child ${nodes[i]}`)
    assert.equal(Snowflake.decode(ids[0]).nodeId, nodes[i])
    all.push(...ids)
  })
  assert.equal(assertUnique(all), 200_000)
})
