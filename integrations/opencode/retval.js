// retval for opencode: keeps big tool results out of the model's context.
//
// Install: copy this file into ~/.config/opencode/plugins/ (or a project's
// .opencode/plugins/), with retval on PATH (or RETVAL_BIN naming it).
//
// After every tool call (the tool.execute.after hook) the plugin hands the
// call to `retval hook opencode`, which decides everything — whether the
// result is big enough to retain, what the value is (a built-in tool's
// whole output, read from the file opencode saved it to when it cut it; an
// MCP result's text blocks), the store, the run (the opencode session) and
// the call id — and answers with what replaces the result: the stub (size,
// SHA-256, head and tail, and a `retval peek` command that the model runs
// with its bash tool to read more). The plugin only passes the call over
// and applies the answer. Nothing here may fail a tool call: when retval
// answers nothing, or anything goes wrong, the result stays exactly as
// opencode made it.
import { spawn } from "node:child_process"

const bin = process.env.RETVAL_BIN || "retval"
// Generous: the hook streams and takes milliseconds; this only stops a hang.
const timeoutMs = 30000

// run runs retval with args, writing input to its stdin, and resolves to
// its exit code and stdout. It never rejects.
function run(args, input) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(bin, args, { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      resolve({ code: -1, stdout: "" })
      return
    }
    const out = []
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (b) => out.push(b))
    child.stdin.on("error", () => {})
    child.on("error", () => {
      clearTimeout(timer)
      resolve({ code: -1, stdout: "" })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString("utf8") })
    })
    child.stdin.end(input)
  })
}

export const RetvalPlugin = async () => ({
  "tool.execute.after": async (input, output) => {
    try {
      if (!input || !output) return
      const call = { tool: input.tool, sessionID: input.sessionID, callID: input.callID }
      const r = await run(["hook", "opencode"], JSON.stringify({ input: call, output }))
      if (r.code !== 0 || r.stdout === "") return
      const answer = JSON.parse(r.stdout)
      if (typeof answer.output === "string") output.output = answer.output
      if (Array.isArray(answer.content)) output.content = answer.content
    } catch {
      // Never fail the tool call: the result stays as opencode made it.
    }
  },
})
