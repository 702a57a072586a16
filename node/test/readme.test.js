'use strict'
// The README's Node snippets (the quickstart and the file lease), extracted from README.md
// between their snippet markers, type-checked with tsc against the checked-in index.d.ts, then
// transpiled and run: the test fails if a README snippet breaks, in its types or at run time.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const ts = require('typescript')
const { NODE_DIR, ROOT } = require('./helpers')

function snippet(name) {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
  const m = readme.match(new RegExp(`<!-- snippet:${name} -->\n\`\`\`ts\n([\\s\\S]*?)\`\`\`\n<!-- /snippet -->`))
  assert.ok(m, `README.md has a \`\`\`ts block between <!-- snippet:${name} --> and <!-- /snippet -->`)
  return m[1]
}

for (const [name, what] of [['node-quickstart', 'quickstart'], ['node-lease', 'file-lease example']]) {
  test(`the README ${what} type-checks against index.d.ts`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-readme-'))
    const file = path.join(dir, 'quickstart.ts')
    fs.writeFileSync(file, snippet(name))
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2020,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      baseUrl: dir,
      paths: { polyflake: [path.join(NODE_DIR, 'index.d.ts')] },
      typeRoots: [path.join(NODE_DIR, 'node_modules', '@types')],
      types: ['node'],
    })
    const diags = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    fs.rmSync(dir, { recursive: true, force: true })
    assert.deepEqual(diags, [])
  })

  test(`the README ${what} runs`, () => {
    const js = ts.transpileModule(snippet(name), {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, esModuleInterop: true },
    }).outputText
    const needle = 'require("polyflake")'
    assert.equal(js.split(needle).length, 2, 'the snippet imports polyflake once')
    const program = js.replace(needle, `require(${JSON.stringify(NODE_DIR)})`)
    // The snippet's temporary files (the lease directory) go to a directory removed afterwards.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'polyflake-readme-run-'))
    const r = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp } })
    fs.rmSync(tmp, { recursive: true, force: true })
    assert.equal(r.status, 0, `the snippet failed:\n${r.stderr}`)
  })
}
