#!/usr/bin/env node
// The retval command of the retval npm package: it runs the native binary
// that this platform's package (@retval/linux-x64, @retval/darwin-arm64,
// …, installed as an optional dependency) carries, with the same
// arguments, standard streams and exit status.
//
// A command that writes this program's path into another program's
// settings (hook … install, mcp wrap) runs a copy of the binary kept at a
// stable path instead, $XDG_DATA_HOME/retval/bin/VERSION/retval
// (~/.local/share/retval/bin/VERSION/retval; on Windows
// %LOCALAPPDATA%\retval\bin\VERSION\retval.exe): npx runs packages from
// a cache it may clear at any time, and a hook pointing there would stop
// working. The copy is named retval, as retval recognises its own entries
// in those settings by the program's name. See docs/npm.md.
'use strict'

const { spawn } = require('child_process')
const fs = require('fs')
const os = require('os')
const path = require('path')

const self = require('../package.json')
// The platform packages' scope: @retval/PLATFORM-ARCH, as npm/build.mjs
// names them.
const scope = '@retval/'

function fail(message) {
  process.stderr.write(`retval: npm: ${message}\n`)
  process.exit(1)
}

// binary is the path of the platform package's retval binary.
function binary() {
  const platform = `${process.platform}-${process.arch}`
  const pkg = scope + platform
  const known = Object.keys(self.optionalDependencies || {})
  if (!known.includes(pkg)) {
    fail(`no retval binary is built for ${platform}: there are ${known.map((p) => p.slice(scope.length)).join(', ')} (go install github.com/retval/retval@v${self.version} builds one)`)
  }
  let dir
  try {
    dir = path.dirname(require.resolve(pkg + '/package.json'))
  } catch {
    fail(`the package ${pkg}, which carries the binary, is not installed: install ${self.name} again without --omit=optional (or --no-optional)`)
  }
  const version = require(path.join(dir, 'package.json')).version
  if (version !== self.version) {
    fail(`${pkg} is version ${version}, not ${self.version} like ${self.name}: install ${self.name} again`)
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'retval.exe' : 'retval')
}

// writesOwnPath reports whether retval, run with args, writes its own path
// into another program's settings: a hook install or mcp wrap. The test
// is loose (a flag's value could read "install" too): a loose match only
// costs a copy.
function writesOwnPath(args) {
  return (args.includes('hook') && args.includes('install')) || (args.includes('mcp') && args.includes('wrap'))
}

// stableDir is where copies of the binary are kept for settings that name
// them, one directory per version.
function stableDir() {
  if (process.platform === 'win32') {
    const local = process.env.LOCALAPPDATA || path.join(os.homedir(), 'AppData', 'Local')
    return path.join(local, 'retval', 'bin')
  }
  const data = process.env.XDG_DATA_HOME
  // The XDG base directory spec: a relative path is to be ignored.
  const base = data && path.isAbsolute(data) ? data : path.join(os.homedir(), '.local', 'share')
  return path.join(base, 'retval', 'bin')
}

// stableCopy makes sure the stable path holds exactly the bytes of bin and
// returns it. The copy is written beside it under a temporary name and
// renamed into place, so a hook running it never sees half a file.
function stableCopy(bin) {
  const dir = path.join(stableDir(), self.version)
  const dest = path.join(dir, process.platform === 'win32' ? 'retval.exe' : 'retval')
  const want = fs.readFileSync(bin)
  try {
    if (fs.readFileSync(dest).equals(want)) return dest
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
  }
  fs.mkdirSync(dir, { recursive: true })
  const tmp = path.join(dir, `.retval.${process.pid}.tmp`)
  try {
    const fd = fs.openSync(tmp, 'wx', 0o755)
    try {
      fs.writeSync(fd, want)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, dest)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw err
  }
  return dest
}

function main() {
  const args = process.argv.slice(2)
  let bin = binary()
  if (writesOwnPath(args)) {
    try {
      bin = stableCopy(bin)
    } catch (err) {
      fail(`cannot keep a copy of retval at ${stableDir()} for the settings to name: ${err.message}`)
    }
  }
  // SIGTERM and SIGHUP sent to this process go on to retval. SIGINT and
  // SIGQUIT are the terminal's, which sends them to retval too: this
  // process waits for retval to end instead of ending first. (Windows has
  // no SIGQUIT to listen for.) The handlers are in place before retval
  // starts: a signal sent once retval has answered must not find this
  // process still without them. (A handler runs once main has returned,
  // when child is set.)
  let child = null
  const handled = []
  const on = (sig, handler) => {
    try {
      process.on(sig, handler)
      handled.push(sig)
    } catch {}
  }
  for (const sig of ['SIGTERM', 'SIGHUP']) on(sig, () => child.kill(sig))
  for (const sig of ['SIGINT', 'SIGQUIT']) on(sig, () => {})
  child = spawn(bin, args, { stdio: 'inherit', windowsHide: true })
  child.on('error', (err) => fail(`cannot run ${bin}: ${err.message}`))
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code)
    // Die of the same signal, so a shell sees what retval's status was.
    for (const sig of handled) process.removeAllListeners(sig)
    try {
      process.kill(process.pid, signal)
    } catch {}
    process.exit(128 + (os.constants.signals[signal] || 0))
  })
}

main()
