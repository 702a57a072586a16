#!/usr/bin/env node
// `npm install` of a checkout builds the addon from source with cargo (the published package,
// staged by tests/dist/stage_npm.js, has no install script: its addon comes prebuilt).
//
// Inside node/ (a development checkout) the devDependency @napi-rs/cli is present: run its
// `napi build --platform --release`, which also regenerates index.js and index.d.ts. Installed
// as a dependency of another project (`npm install <path>/node`), devDependencies are not
// installed, so run the same cargo build directly and copy the library to the file name the
// checked-in index.js loads. The crate lives in the polyflake Cargo workspace, so the package
// must be installed from a checkout (npm links a local folder by default).
'use strict'

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const here = path.resolve(__dirname, '..')

function run(cmd, args, opts = {}) {
  console.log(`polyflake: ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: here, stdio: opts.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.error) {
    console.error(`polyflake: could not run ${cmd}: ${r.error.message}` +
      (cmd === 'cargo' ? ' (install Rust from https://rustup.rs to build the addon)' : ''))
    process.exit(1)
  }
  if (r.status !== 0) {
    console.error(`polyflake: ${cmd} failed with exit code ${r.status}`)
    process.exit(r.status || 1)
  }
  return r.stdout
}

// The file name napi-rs's generated index.js looks for first, next to itself.
function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const glibc = process.report && process.report.getReport().header.glibcVersionRuntime
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
  }
  if (platform === 'darwin') return `darwin-${arch}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

let cli = null
try {
  cli = require.resolve('@napi-rs/cli/package.json', { paths: [here] })
} catch {}

if (cli) {
  const bin = path.join(here, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi')
  run(bin, ['build', '--platform', '--release'])
} else {
  const out = run('cargo', ['build', '--release', '--lib', '--manifest-path', path.join(here, 'Cargo.toml'), '--message-format=json-render-diagnostics'], { capture: true })
  let lib = null
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue
    const msg = JSON.parse(line)
    if (msg.reason === 'compiler-artifact' && msg.target && msg.target.name === 'polyflake_node' && msg.target.kind.includes('cdylib')) {
      lib = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f))
    }
  }
  if (!lib) {
    console.error('polyflake: cargo built no cdylib for polyflake-node')
    process.exit(1)
  }
  const dest = path.join(here, `polyflake.${platformSuffix()}.node`)
  fs.copyFileSync(lib, dest)
  console.log(`polyflake: built ${dest}`)
}
