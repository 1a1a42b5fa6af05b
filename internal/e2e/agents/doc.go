// Package agents measures the figures docs/agents.md gives for the agents
// retval has no integration of its own for yet, Qwen Code and Cline: what
// their model receives for one big tool result, seq 1 100000 (588,895
// bytes), run through the agent's shell tool and read through an MCP
// server, without retval and with it (retval exec in the shell, retval mcp
// proxy in front of the server), and what their hooks and plugins can and
// cannot do with a result. Each client is the pinned npm package, run
// inside a network namespace that has only loopback against a scripted
// mock of an OpenAI-compatible chat completions API.
//
// Each client run takes tens of seconds and a client needs several, too
// long for every CI run: its tests are built only with -tags agents, and
// bench/agents.sh runs them (go test -tags agents ./internal/e2e/agents
// -v). The clients are installed on first use into the cache
// .ci/clients.sh fills (they are not among its pins); a test is skipped
// only where its client cannot be installed.
package agents
