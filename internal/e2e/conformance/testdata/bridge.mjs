// A Streamable HTTP endpoint in front of a stdio MCP server, made of the
// MCP TypeScript SDK's own transports: each HTTP session starts the
// command (a StdioClientTransport) and every message crosses unchanged
// both ways. The conformance suite drives an HTTP URL; this lets it drive
// a server that speaks stdio (retval mcp proxy) with nothing but the
// SDK's transports between them.
//
//   MCP_SDK_DIR=…/@modelcontextprotocol/sdk PORT=N node bridge.mjs CMD ARGS…
import http from "node:http"
import { randomUUID } from "node:crypto"
import { pathToFileURL } from "node:url"

const sdk = process.env.MCP_SDK_DIR
const { StreamableHTTPServerTransport } = await import(pathToFileURL(sdk + "/dist/esm/server/streamableHttp.js"))
const { StdioClientTransport } = await import(pathToFileURL(sdk + "/dist/esm/client/stdio.js"))
const [command, ...args] = process.argv.slice(2)
const sessions = new Map()

const isInitialize = (m) => m && !Array.isArray(m) && m.method === "initialize"
const isResponse = (m) => m && "id" in m && ("result" in m || "error" in m)

async function newSession() {
  const up = new StdioClientTransport({ command, args, stderr: "inherit" })
  const down = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, down),
  })
  // The client's requests in flight, oldest first, and progress tokens:
  // a message of the server's own (a notification, a request) goes on the
  // stream of the request it belongs to.
  const inflight = []
  const tokens = new Map()
  down.onmessage = (m) => {
    if (m.method && "id" in m) {
      inflight.push(m.id)
      const tok = m.params?._meta?.progressToken
      if (tok !== undefined) tokens.set(tok, m.id)
    }
    up.send(m).catch(() => {})
  }
  up.onmessage = (m) => {
    if (isResponse(m)) {
      const i = inflight.indexOf(m.id)
      if (i >= 0) inflight.splice(i, 1)
      forward(m)
      return
    }
    let related = inflight[inflight.length - 1]
    const tok = m.params?.progressToken
    if (tok !== undefined && tokens.has(tok)) related = tokens.get(tok)
    forward(m, related === undefined ? undefined : { relatedRequestId: related })
  }
  // A message for a stream the client has closed (a scenario that drops
  // its connections) is not a failure of the bridge.
  const forward = (m, opts) => down.send(m, opts).catch(() => {})
  down.onclose = () => up.close()
  up.onclose = () => down.close()
  await up.start()
  return down
}

const server = http.createServer(async (req, res) => {
  try {
    let body
    if (req.method === "POST") {
      const chunks = []
      for await (const c of req) chunks.push(c)
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    }
    let t = sessions.get(req.headers["mcp-session-id"])
    if (!t) {
      if (req.method !== "POST" || !isInitialize(body)) {
        res.writeHead(400, { "Content-Type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } }))
        return
      }
      t = await newSession()
    }
    await t.handleRequest(req, res, body)
  } catch (e) {
    if (!res.headersSent) res.writeHead(500)
    res.end(String(e))
  }
})
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.error("bridge listening"))
