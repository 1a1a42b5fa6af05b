// retval for opencode (and Kilo, which runs opencode plugins unchanged):
// keeps big tool results out of the model's context, and lets the model
// reuse what a kept result holds in a tool call's arguments by reference
// instead of typing it again.
//
// Install: copy this file into ~/.config/opencode/plugins/ (or a project's
// .opencode/plugins/; for Kilo ~/.config/kilo/plugins/), with retval on
// PATH (or RETVAL_BIN naming it).
//
// The plugin decides nothing itself: it hands what opencode's hooks
// receive to `retval hook opencode`, which decides everything — the
// store, the run (the opencode session), the call id, what is retained,
// what a reference stands for, what the model is told — and applies the
// answer:
//
// - experimental.chat.system.transform: the reference form
//   ($expand:{"$ref": …}), taught in the system prompt; retval is asked
//   for the text once per process.
// - tool.execute.before: arguments that may hold a reference go to retval,
//   which answers them expanded (put in place of the arguments' members:
//   opencode runs the tool with this very object, and checks it against
//   the tool's schema only afterwards) or refused, naming each failing
//   reference: the hook then throws, the call does not run, and the model
//   sees why. A call whose argument begins with $expand: is refused too
//   when retval does not expand it (cannot be run, is off, is older than
//   this file): run as written, the reference would be written into a
//   file or run as a command literally.
// - tool.execute.after: a big result is replaced by its stub (size,
//   SHA-256, head and tail, and a `retval peek` command the model runs
//   with its bash tool to read more); then the expanded call's summary
//   (bytes and SHA-256 of each expanded argument) and any note of
//   retval's (an argument that still begins with $expand:) are appended
//   to what the model sees, and the arguments as the model wrote them
//   are kept in the result's metadata, which opencode stores with the
//   call.
// - experimental.chat.messages.transform: each expanded call's arguments
//   are put back as the model wrote them (from this process's memory, or
//   for a resumed session from that metadata), so the model's history
//   holds its references, not the text they stood for.
//
// Apart from a refused reference, nothing here may fail a tool call: when
// retval answers nothing, or anything goes wrong, the call and its result
// stay exactly as opencode made them.
import { spawn } from "node:child_process"

const bin = process.env.RETVAL_BIN || "retval"
// Generous: the hook streams and takes milliseconds; this only stops a hang.
const timeoutMs = 30000

// run runs retval with args, writing input to its stdin, and resolves to
// its exit code, stdout and the start of its stderr. It never rejects.
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
    let stderr = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (b) => out.push(b))
    child.stderr.on("data", (b) => {
      if (stderr.length < 2000) stderr += b.toString("utf8")
    })
    child.stdin.on("error", () => {})
    child.on("error", (err) => {
      clearTimeout(timer)
      resolve({ code: -1, stdout: "", stderr: String(err) })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString("utf8"), stderr })
    })
    child.stdin.end(input)
  })
}

// answer is retval's answer to one hook input: the JSON object it
// printed, or null when it printed nothing or failed.
async function answer(input) {
  const r = await run(["hook", "opencode"], JSON.stringify(input))
  if (r.code !== 0 || r.stdout === "") return { answer: null, failed: r.code !== 0 ? r : null }
  try {
    const a = JSON.parse(r.stdout)
    return { answer: a && typeof a === "object" ? a : null, failed: null }
  } catch {
    return { answer: null, failed: { ...r, stderr: "an answer that is not JSON" } }
  }
}

// mayHoldReference tells, cheaply, whether retval need see the arguments:
// a string that begins with $expand:, or an object with a "$ref" or
// "$concat" member. A false alarm only costs a call of retval.
function mayHoldReference(args) {
  try {
    return /"\$(expand:|ref"|concat")/.test(JSON.stringify(args))
  } catch {
    return false
  }
}

// beginsWithExpand tells whether a string in v begins with $expand:.
function beginsWithExpand(v) {
  if (typeof v === "string") return v.startsWith("$expand:")
  if (v && typeof v === "object") return Object.values(v).some(beginsWithExpand)
  return false
}

// append adds text to what the model sees of a result: a text block of an
// MCP result, a paragraph of a built-in tool's output.
function append(output, text) {
  if (typeof text !== "string" || text === "") return
  if (Array.isArray(output.content)) {
    output.content.push({ type: "text", text })
  } else if (typeof output.output === "string") {
    const sep = output.output === "" ? "" : output.output.endsWith("\n") ? "\n" : "\n\n"
    output.output += sep + text
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

export const RetvalPlugin = async () => {
  // The calls this process expanded, by call id: the arguments as the
  // model wrote them, and the summary line of what they became.
  const expanded = new Map()
  let system // the promise of the instructions, asked once

  return {
    "experimental.chat.system.transform": async (_input, output) => {
      try {
        system ??= answer({ event: "system" }).then((r) => (typeof r.answer?.system === "string" ? r.answer.system : ""))
        const text = await system
        if (text && Array.isArray(output?.system)) output.system.push(text)
      } catch {
        // Nothing taught: the model writes its calls out in full.
      }
    },

    "tool.execute.before": async (input, output) => {
      if (!input || !isObject(output?.args) || !mayHoldReference(output.args)) return
      const args = output.args
      const written = JSON.parse(JSON.stringify(args))
      const call = { tool: input.tool, sessionID: input.sessionID, callID: input.callID }
      const { answer: a, failed } = await answer({ event: "tool.execute.before", input: call, output: { args } })
      if (typeof a?.refused === "string") throw new Error(a.refused)
      if (isObject(a?.args)) {
        for (const k of Object.keys(args)) delete args[k]
        Object.assign(args, a.args)
        expanded.set(input.callID, { written, summary: a.summary })
        return
      }
      if (beginsWithExpand(args)) {
        // retval expands every $expand: string or refuses the call; it
        // did neither.
        const why = failed
          ? `retval hook opencode failed (${(failed.stderr || "").trim().split("\n")[0] || `exit status ${failed.code}`}); check that retval is on PATH or RETVAL_BIN names it`
          : "retval hook opencode answered nothing (retval is off, or older than this plugin)"
        throw new Error(`retval could not expand the $expand: references of this call, so it did not run: ${why}`)
      }
    },

    "tool.execute.after": async (input, output) => {
      if (!input || !output) return
      const done = expanded.get(input.callID)
      try {
        const call = { tool: input.tool, sessionID: input.sessionID, callID: input.callID }
        // Arguments this process expanded need no second look.
        if (!done) call.args = input.args
        const { answer: a } = await answer({ input: call, output })
        if (a) {
          if (typeof a.output === "string") output.output = a.output
          if (Array.isArray(a.content)) output.content = a.content
          append(output, a.note)
        }
      } catch {
        // Never fail the tool call: the result stays as opencode made it.
      }
      if (done) {
        append(output, done.summary)
        output.metadata = { ...(isObject(output.metadata) ? output.metadata : {}), retval: { input: done.written } }
      }
    },

    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        for (const m of output?.messages ?? []) {
          for (const part of m?.parts ?? []) {
            if (part?.type !== "tool" || !isObject(part.state)) continue
            const written = expanded.get(part.callID)?.written ?? part.state.metadata?.retval?.input
            if (isObject(written)) part.state = { ...part.state, input: written }
          }
        }
      } catch {
        // The history stays as opencode stored it: the expanded text.
      }
    },
  }
}
