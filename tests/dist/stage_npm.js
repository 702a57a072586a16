#!/usr/bin/env node
// Stages the npm packages the napi-rs v3 way, ready for `npm pack`:
//   OUT/polyflake              the main package: node/package.json's `exports` map and every
//                              file it (or `main`/`types`) names: the generated loader
//                              (index.js) and types (index.d.ts), polyflake/prometheus
//                              (prometheus.js, .d.ts); its peer dependency (prom-client), README,
//                              licenses, and one optionalDependency per platform package, pinned
//                              to the same version; no install script and no Rust sources
//                              (node/package.json's `install` builds from source, which is for a
//                              checkout, not for users)
//   OUT/polyflake-PLATFORM     one per addon: package.json from node/npm/linux-x64-gnu/ (the
//                              template, checked in) with that platform's name, os, cpu and libc,
//                              plus the prebuilt .node
// make dist passes the one addon built here; the release workflow passes every platform's.
//
//   node tests/dist/stage_npm.js ROOT OUT polyflake.PLATFORM.node...   (PLATFORM: linux-x64-gnu, ...)
'use strict'

const fs = require('node:fs')
const path = require('node:path')

const [root, out, ...addons] = process.argv.slice(2)
if (!addons.length) {
  console.error('usage: stage_npm.js ROOT OUT polyflake.PLATFORM.node...')
  process.exit(2)
}
const read = (p) => JSON.parse(fs.readFileSync(p, 'utf8'))
const write = (p, obj) => fs.writeFileSync(p, JSON.stringify(obj, null, 2) + '\n')
const copy = (from, toDir, name) => fs.copyFileSync(from, path.join(toDir, name || path.basename(from)))
const licenses = ['LICENSE-MIT', 'LICENSE-APACHE']

const dev = read(path.join(root, 'node/package.json'))
const templateDir = path.join(root, 'node/npm/linux-x64-gnu')
const template = read(path.join(templateDir, 'package.json'))
if (template.version !== dev.version) {
  console.error(`version drift: node/package.json ${dev.version}, ${template.name} ${template.version}`)
  process.exit(1)
}

// "linux-x64-gnu" -> os linux, cpu x64, libc glibc; "darwin-arm64" -> no libc; "win32-x64-msvc".
function platformPackage(platform) {
  const [os, cpu, abi] = platform.split('-')
  const file = `${dev.napi.binaryName}.${platform}.node`
  const pkg = { ...template, name: `${dev.name}-${platform}`, main: file, files: [file, 'README.md', ...licenses], os: [os], cpu: [cpu] }
  pkg.description = template.description.replace('Linux x86_64 (glibc)', platform)
  if (os === 'linux') pkg.libc = [abi === 'musl' ? 'musl' : 'glibc']
  else delete pkg.libc
  return pkg
}

fs.rmSync(out, { recursive: true, force: true })
const optional = {}
for (const addon of addons) {
  const m = /\.([a-z0-9]+-[a-z0-9]+(?:-[a-z]+)?)\.node$/.exec(path.basename(addon))
  if (!m) {
    console.error(`${addon}: not named ${dev.napi.binaryName}.PLATFORM.node`)
    process.exit(2)
  }
  const pkg = platformPackage(m[1])
  const dir = path.join(out, pkg.name)
  fs.mkdirSync(dir, { recursive: true })
  write(path.join(dir, 'package.json'), pkg)
  copy(addon, dir, pkg.main)
  fs.writeFileSync(path.join(dir, 'README.md'),
    fs.readFileSync(path.join(templateDir, 'README.md'), 'utf8').replaceAll('linux-x64-gnu', m[1]))
  for (const l of licenses) copy(path.join(root, l), dir)
  optional[pkg.name] = pkg.version
  console.log(`staged ${pkg.name}@${pkg.version}`)
}

// Every file the exports map, `main` and `types` name (a condition's target, nested or not), as
// paths relative to node/; package.json is npm's own.
function exported(value) {
  if (typeof value === 'string') return [value]
  if (value && typeof value === 'object') return Object.values(value).flatMap(exported)
  return []
}
const shipped = [...new Set([dev.main, dev.types, ...exported(dev.exports)].map((f) => path.normalize(f)))]
  .filter((f) => f !== 'package.json')
for (const f of shipped) {
  if (f.startsWith('..') || f.includes('*') || !fs.existsSync(path.join(root, 'node', f))) {
    console.error(`node/package.json names ${f}, which is not a file in node/`)
    process.exit(1)
  }
}

const main = path.join(out, dev.name)
fs.mkdirSync(main, { recursive: true })
write(path.join(main, 'package.json'), {
  name: dev.name,
  version: dev.version,
  description: dev.description,
  license: dev.license,
  main: dev.main,
  types: dev.types,
  exports: dev.exports,
  files: [...shipped, 'README.md', ...licenses],
  engines: dev.engines,
  peerDependencies: dev.peerDependencies,
  peerDependenciesMeta: dev.peerDependenciesMeta,
  optionalDependencies: optional,
})
for (const f of shipped) {
  fs.mkdirSync(path.dirname(path.join(main, f)), { recursive: true })
  fs.copyFileSync(path.join(root, 'node', f), path.join(main, f))
}
copy(path.join(root, 'node/npm/README.md'), main)
for (const l of licenses) copy(path.join(root, l), main)
console.log(`staged ${dev.name}@${dev.version} (${shipped.join(', ')}) with optionalDependencies ${Object.keys(optional).join(', ')}`)
