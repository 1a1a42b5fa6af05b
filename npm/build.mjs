#!/usr/bin/env node
// Writes retval's npm packages from built binaries, the way esbuild's and
// Claude Code's are made: one package per platform carrying the native
// binary, and the retval package, which lists them all as optional
// dependencies (npm installs the one whose os and cpu match) and runs the
// binary through a small launcher (retval/bin/retval.js).
//
//   node npm/build.mjs --version 1.2.3 --out dist/npm \
//     linux-x64=dist/linux_amd64/retval linux-arm64=… darwin-x64=… \
//     darwin-arm64=… win32-x64=…/retval.exe win32-arm64=…/retval.exe
//
// writes dist/npm/retval and dist/npm/PLATFORM (each a directory to pass
// to npm pack or npm publish; publish the platform packages first). Every
// platform needs its binary unless --some is given (tests build one). A
// binary is checked to be an executable of its platform's kind and
// architecture before it is packed. Nothing binary is kept in the
// repository: the binaries come from the release build. See docs/npm.md.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)
const repository = { type: 'git', url: 'git+https://github.com/retval/retval.git' }
const homepage = 'https://github.com/retval/retval'

// The platforms, named as Node names them (process.platform-process.arch),
// with the executable format and machine their binary must have.
const platforms = {
  'linux-x64': { os: 'linux', cpu: 'x64', format: 'elf', machine: 62, label: 'Linux x64' },
  'linux-arm64': { os: 'linux', cpu: 'arm64', format: 'elf', machine: 183, label: 'Linux arm64' },
  'darwin-x64': { os: 'darwin', cpu: 'x64', format: 'macho', machine: 0x01000007, label: 'macOS x64' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64', format: 'macho', machine: 0x0100000c, label: 'macOS arm64' },
  'win32-x64': { os: 'win32', cpu: 'x64', format: 'pe', machine: 0x8664, label: 'Windows x64' },
  'win32-arm64': { os: 'win32', cpu: 'arm64', format: 'pe', machine: 0xaa64, label: 'Windows arm64' },
}
const scope = '@retval/'

function usage(message) {
  process.stderr.write(`retval: npm build: ${message}\nusage: node npm/build.mjs --version VERSION --out DIR [--some] PLATFORM=BINARY...\nplatforms: ${Object.keys(platforms).join(' ')}\n`)
  process.exit(2)
}

function fail(message) {
  process.stderr.write(`retval: npm build: ${message}\n`)
  process.exit(1)
}

// machineOf reads which executable format and machine the file at file
// is built for, from its header.
function machineOf(file) {
  const fd = fs.openSync(file, 'r')
  const b = Buffer.alloc(4096)
  const n = fs.readSync(fd, b, 0, b.length, 0)
  fs.closeSync(fd)
  if (n >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    const read16 = b[5] === 2 ? b.readUInt16BE.bind(b) : b.readUInt16LE.bind(b)
    return { format: 'elf', machine: read16(18) }
  }
  if (n >= 8 && b.readUInt32LE(0) === 0xfeedfacf) return { format: 'macho', machine: b.readUInt32LE(4) }
  if (n >= 64 && b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(60)
    if (pe + 6 <= n && b.toString('latin1', pe, pe + 4) === 'PE\0\0') return { format: 'pe', machine: b.readUInt16LE(pe + 4) }
  }
  return { format: 'unknown', machine: 0 }
}

function writeJSON(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
}

// license copies the repository's LICENSE into dir and returns the
// package.json members that name it (the MIT licence, as an SPDX id).
function license(dir) {
  fs.copyFileSync(path.join(root, 'LICENSE'), path.join(dir, 'LICENSE'))
  return { files: ['LICENSE'], fields: { license: 'MIT' } }
}

function main() {
  const args = process.argv.slice(2)
  let version = ''
  let out = ''
  let some = false
  const binaries = new Map()
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--version' || a === '--out') {
      if (i + 1 >= args.length) usage(`${a} needs a value`)
      if (a === '--version') version = args[++i]
      else out = args[++i]
    } else if (a === '--some') {
      some = true
    } else if (a.includes('=') && !a.startsWith('-')) {
      const [platform, ...rest] = a.split('=')
      if (!platforms[platform]) usage(`unknown platform ${JSON.stringify(platform)}`)
      if (binaries.has(platform)) usage(`${platform} is given twice`)
      binaries.set(platform, rest.join('='))
    } else {
      usage(`unexpected argument ${JSON.stringify(a)}`)
    }
  }
  // npm's own rule for a version: semver, without a leading v.
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version)) usage(`--version needs a semantic version such as 1.2.3, not ${JSON.stringify(version)}`)
  if (!out) usage('--out needs a directory')
  const missing = Object.keys(platforms).filter((p) => !binaries.has(p))
  if (missing.length > 0 && !some) usage(`no binary for ${missing.join(', ')} (--some packs only those given)`)
  if (binaries.size === 0) usage('no binary given')

  for (const [platform, file] of binaries) {
    const want = platforms[platform]
    let got
    try {
      got = machineOf(file)
    } catch (err) {
      fail(`${platform}: cannot read ${file}: ${err.message}`)
    }
    if (got.format !== want.format || got.machine !== want.machine) {
      fail(`${platform}: ${file} is not a ${want.label} executable (${got.format}, machine 0x${got.machine.toString(16)})`)
    }
  }

  if (!fs.existsSync(path.join(root, 'LICENSE'))) fail(`no LICENSE in ${root}: every package carries it`)

  fs.mkdirSync(out, { recursive: true })
  const written = []
  for (const [platform, file] of binaries) {
    const p = platforms[platform]
    const dir = path.join(out, platform)
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true })
    const exe = p.os === 'win32' ? 'retval.exe' : 'retval'
    fs.copyFileSync(file, path.join(dir, 'bin', exe))
    fs.chmodSync(path.join(dir, 'bin', exe), 0o755)
    const lic = license(dir)
    fs.writeFileSync(path.join(dir, 'README.md'), `# ${scope}${platform}\n\nThe retval binary for ${p.label}. Install the \`retval\` package, which\nruns it: \`npm install -g retval\` or \`npx -y retval --help\`.\nSee ${homepage}.\n`)
    writeJSON(path.join(dir, 'package.json'), {
      name: scope + platform,
      version,
      description: `The retval binary for ${p.label}`,
      homepage,
      repository,
      ...lic.fields,
      os: [p.os],
      cpu: [p.cpu],
      files: ['bin/' + exe, ...lic.files],
      preferUnplugged: true,
    })
    written.push(dir)
  }

  const dir = path.join(out, 'retval')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true })
  fs.copyFileSync(path.join(here, 'retval', 'bin', 'retval.js'), path.join(dir, 'bin', 'retval.js'))
  fs.chmodSync(path.join(dir, 'bin', 'retval.js'), 0o755)
  fs.copyFileSync(path.join(here, 'retval', 'README.md'), path.join(dir, 'README.md'))
  const lic = license(dir)
  writeJSON(path.join(dir, 'package.json'), {
    name: 'retval',
    version,
    description: "Keeps big tool results out of an LLM agent's context: the model sees a small stub and reads the slices it needs",
    keywords: ['llm', 'agent', 'mcp', 'claude-code', 'codex', 'context'],
    homepage,
    repository,
    ...lic.fields,
    bin: { retval: 'bin/retval.js' },
    files: ['bin/retval.js', ...lic.files],
    engines: { node: '>=18' },
    optionalDependencies: Object.fromEntries(Object.keys(platforms).map((p) => [scope + p, version])),
  })
  written.push(dir)
  for (const d of written) process.stdout.write(d + '\n')
}

main()
