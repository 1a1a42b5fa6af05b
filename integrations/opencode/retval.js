// retval for opencode: keeps big tool results out of the model's context.
//
// Install: copy this file into ~/.config/opencode/plugins/ (or a project's
// .opencode/plugins/), with retval on PATH (or RETVAL_BIN naming it).
//
// After every tool call (the tool.execute.after hook) the whole result is
// piped through `retval retain`; when retval keeps it, the model sees the
// stub instead: size, SHA-256, head and tail, and a `retval peek` command
// that the model runs with its bash tool to read more. A result within the
// threshold is left as it is. Nothing here may fail a tool call: on any
// error the result stays exactly as opencode made it.
//
// - Built-in tools (bash, read, grep, ...): the value is the whole output,
//   read from metadata.outputPath when opencode has cut output.output and
//   saved the rest there, else output.output itself. The stub replaces
//   output.output.
// - MCP tools: the hook sees the server's raw result, {content,
//   structuredContent}. The value is the result's text (its text blocks and
//   embedded text resources joined by newlines, as the hook and the proxy join them,
//   before opencode cuts it); the stub replaces those blocks, and images and
//   other blocks stay.
//
// The run is the opencode session id, the call id is opencode's tool call
// id (retval makes both safe to use as names). The store is retval's
// configured runs-dir, or, where none is configured, the same default as
// retval's hooks and MCP proxy: $XDG_STATE_HOME/retval/runs (by default
// ~/.local/state/retval/runs), never ./runs in the project.
import { spawn } from "node:child_process"
import os from "node:os"
import path from "node:path"

const bin = process.env.RETVAL_BIN || "retval"
// Generous: retain streams and takes milliseconds; this only stops a hang.
const timeoutMs = 30000

// run runs retval with args, writing input (a string, or nothing) to its
// stdin, and resolves to its exit code and output. It never rejects.
function run(args, input) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"] })
    } catch (err) {
      resolve({ code: -1, stdout: "", stderr: String(err) })
      return
    }
    const out = []
    const errs = []
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (b) => out.push(b))
    child.stderr.on("data", (b) => errs.push(b))
    child.stdin.on("error", () => {})
    child.on("error", (err) => {
      clearTimeout(timer)
      resolve({ code: -1, stdout: "", stderr: String(err) })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errs).toString("utf8") })
    })
    child.stdin.end(input ?? "")
  })
}

// defaultRunsDir is $XDG_STATE_HOME/retval/runs (an absolute
// XDG_STATE_HOME only), else ~/.local/state/retval/runs.
function defaultRunsDir() {
  const state = process.env.XDG_STATE_HOME
  if (state && path.isAbsolute(state)) return path.join(state, "retval", "runs")
  return path.join(process.env.HOME || os.homedir(), ".local", "state", "retval", "runs")
}

// storeArgs resolves, once, the --runs-dir retain needs: none when the
// user configured one (flag, env or config file), the default otherwise.
let storeArgsOnce
function storeArgs() {
  storeArgsOnce ??= run(["config", "--json"]).then((r) => {
    try {
      const s = JSON.parse(r.stdout).settings.find((x) => x.setting === "runs-dir")
      if (s && s.source !== "default") return []
    } catch {}
    return ["--runs-dir", defaultRunsDir()]
  })
  return storeArgsOnce
}

// retain keeps the value (a string on stdin, or {file}) as call's value
// and resolves to its stub, or to undefined when retval shows the result
// as it is or anything fails.
async function retain(input, value) {
  const args = ["retain", ...(await storeArgs()), "--run", String(input.sessionID), "--call", String(input.callID),
    "--tool", String(input.tool), "--read-more", "shell", "--json"]
  let stdin = value
  if (typeof value === "object") {
    args.push("--", value.file)
    stdin = ""
  }
  const r = await run(args, stdin)
  if (r.code !== 0) return undefined
  try {
    const d = JSON.parse(r.stdout)
    return d.retained === true && typeof d.stub === "string" ? d.stub : undefined
  } catch {
    return undefined
  }
}

// The metadata block opencode's shell tool adds after the output (exit
// reasons, timeouts): kept after the stub, since it is not the output.
const shellMetadata = /\n\n<shell_metadata>\n[\s\S]*<\/shell_metadata>$/

async function builtin(input, output) {
  if (typeof output.output !== "string") return
  const saved = output.metadata && output.metadata.outputPath
  const trailer = output.output.match(shellMetadata)?.[0] ?? ""
  let value
  if (typeof saved === "string" && path.isAbsolute(saved)) value = { file: saved }
  else value = trailer ? output.output.slice(0, -trailer.length) : output.output
  const stub = await retain(input, value)
  if (stub !== undefined) output.output = stub + trailer
}

async function mcp(input, output) {
  const texts = []
  const rest = []
  for (const block of output.content) {
    if (block && block.type === "text" && typeof block.text === "string") texts.push(block.text)
    else if (block && block.type === "resource" && block.resource && typeof block.resource.text === "string" && !block.resource.blob)
      texts.push(block.resource.text)
    else rest.push(block)
  }
  if (texts.length === 0) return
  // Joined as the hook and the MCP proxy join them, by newlines.
  let stub = await retain(input, texts.join("\n"))
  if (stub === undefined) return
  if (texts.length > 1) stub += `[the value is the result's ${texts.length} text blocks joined by newlines]\n`
  output.content = [{ type: "text", text: stub }, ...rest]
}

export const RetvalPlugin = async () => ({
  "tool.execute.after": async (input, output) => {
    try {
      if (!input || !output || input.sessionID == null || input.callID == null) return
      if (Array.isArray(output.content)) await mcp(input, output)
      else await builtin(input, output)
    } catch {
      // Never fail the tool call: the result stays as opencode made it.
    }
  },
})
