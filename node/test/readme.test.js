'use strict'
// Every Node snippet of README.md and docs/node.md (each ```ts block between
// <!-- snippet:NAME --> and <!-- /snippet -->), type-checked with tsc against the checked-in
// index.d.ts (and prometheus.d.ts, prom-client's own types), then transpiled and run: the test
// fails if a snippet breaks, in its types or at run time. docs/node.md's copy of each example
// file (<!-- file:PATH --> ... <!-- /file -->) must equal that file, which its own test runs.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const ts = require('typescript')
const { NODE_DIR, ROOT } = require('./helpers')

const DOCS = ['README.md', 'docs/node.md']
// The modules a snippet may import besides node:*: types for tsc, the file to run.
const MODULES = {
  polyflake: { types: path.join(NODE_DIR, 'index.d.ts'), run: NODE_DIR },
  'polyflake/prometheus': { types: path.join(NODE_DIR, 'prometheus.d.ts'), run: path.join(NODE_DIR, 'prometheus.js') },
  'prom-client': { types: path.join(NODE_DIR, 'node_modules', 'prom-client', 'index.d.ts'), run: require.resolve('prom-client') },
}

function snippets(doc) {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8')
  const found = [...text.matchAll(/<!-- snippet:(node-[a-z0-9-]+) -->\n```ts\n([\s\S]*?)```\n<!-- \/snippet -->/g)]
  // A Node marker whose block does not parse must not be silently dropped.
  assert.equal(found.length, (text.match(/<!-- snippet:node-/g) ?? []).length, `${doc}: a node- snippet marker without a well-formed ts block`)
  return found.map((m) => ({ doc, name: m[1], code: m[2] }))
}

const all = DOCS.flatMap(snippets)

test('the docs hold the Node snippets', () => {
  const names = all.map((s) => s.name)
  assert.equal(new Set(names).size, names.length, 'snippet names are unique')
  for (const name of ['node-quickstart', 'node-guide-snowflake', 'node-formats', 'node-coarse', 'node-lease',
    'node-zookeeper', 'node-restart-guard', 'node-clock-sync', 'node-async', 'node-metrics', 'node-errors']) {
    assert.ok(names.includes(name), `missing snippet ${name}`)
  }
})

for (const { doc, name, code } of all) {
  test(`${doc} ${name} type-checks against index.d.ts`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-docs-'))
    const file = path.join(dir, `${name}.ts`)
    fs.writeFileSync(file, code)
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2020,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      baseUrl: dir,
      paths: Object.fromEntries(Object.entries(MODULES).map(([m, { types }]) => [m, [types]])),
      typeRoots: [path.join(NODE_DIR, 'node_modules', '@types')],
      types: ['node'],
    })
    const diags = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    fs.rmSync(dir, { recursive: true, force: true })
    assert.deepEqual(diags, [])
  })

  test(`${doc} ${name} runs`, () => {
    let js = ts.transpileModule(code, {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, esModuleInterop: true },
    }).outputText
    assert.equal(js.split('require("polyflake")').length, 2, 'the snippet imports polyflake once')
    for (const [m, { run }] of Object.entries(MODULES)) js = js.replaceAll(`require("${m}")`, `require(${JSON.stringify(run)})`)
    // The snippet's temporary files (a lease directory) go to a directory removed afterwards; a
    // ZooKeeper snippet reaches the test's server (POLYFLAKE_TEST_ZOOKEEPER, as ZOOKEEPER).
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-docs-run-'))
    const env = { ...process.env, TMPDIR: tmp }
    if (code.includes('fromZooKeeper')) {
      assert.ok(process.env.POLYFLAKE_TEST_ZOOKEEPER, 'run under tests/stores/with_zookeeper.sh (make test-node)')
      env.ZOOKEEPER = process.env.POLYFLAKE_TEST_ZOOKEEPER
    }
    const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', env })
    fs.rmSync(tmp, { recursive: true, force: true })
    assert.equal(r.status, 0, `the snippet failed:\n${r.stderr}`)
  })
}

test('docs/node.md\'s example files are the files the tests run', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'node.md'), 'utf8')
  const copies = [...text.matchAll(/<!-- file:([^ ]+) -->\n```js\n([\s\S]*?)```\n<!-- \/file -->/g)]
  assert.ok(copies.length >= 1, 'docs/node.md shows the Express example')
  for (const [, file, body] of copies) {
    assert.equal(body, fs.readFileSync(path.join(ROOT, file), 'utf8'), `docs/node.md's copy of ${file} differs from it`)
  }
})

// tests/dist/node_guide.sh runs every JavaScript/TypeScript block of docs/node.md against the
// installed packages: each must be a snippet, a copy of an example file, or say why it cannot
// run on its own (<!-- not-standalone: REASON --> right before it).
test('every JavaScript/TypeScript block of docs/node.md runs somewhere or says why not', () => {
  const lines = fs.readFileSync(path.join(ROOT, 'docs', 'node.md'), 'utf8').split('\n')
  let fenced = false
  const unmarked = []
  lines.forEach((line, i) => {
    if (!line.startsWith('```')) return
    if (fenced) {
      fenced = false
      return
    }
    fenced = true
    if (!/^```(js|ts|javascript|typescript|mjs|cjs)$/.test(line)) return
    const before = lines[i - 1] ?? ''
    if (!/^<!-- (snippet:[a-z0-9-]+|file:\S+|not-standalone: .+) -->$/.test(before)) unmarked.push(`line ${i + 1}`)
  })
  assert.deepEqual(unmarked, [], 'docs/node.md: a code block neither marked as a snippet or file nor as not standalone')
})
