package cmd

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

func init() { register("mcp", mcpCommand) }

// mcpVerb is one of "retval mcp VERB": its usage line and what it does
// with the arguments after the verb.
type mcpVerb struct {
	usage string
	run   func(e *env, o *mcpOptions, args []string) error
}

// mcpOptions are the flags of every verb: each verb's file declares its
// own part.
type mcpOptions struct {
	opts
	proxy proxyOptions
	wrap  wrapOptions
}

// mcpVerbs and mcpFlags are filled by the init functions of the files of
// each verb (proxy and serve, wrap and unwrap). mcpFlags makes the flags
// anew for each command line, as every other command's constructor does.
var (
	mcpVerbs = map[string]mcpVerb{}
	mcpFlags []func(o *mcpOptions) []cli.Flag
)

func mcpCommand() *cli.Command {
	var o mcpOptions
	return &cli.Command{
		Name:  "mcp",
		Usage: "retention for MCP clients: proxy an MCP server, serve retval's tools, wrap a client's server entry",
		UsageText: `retval mcp proxy [--run R] [retain flags] (-- CMD ARGS... | --url URL)
retval mcp serve [--run R]
retval mcp wrap (--codex | --claude-code FILE) [--server NAME] [--dry-run]
retval mcp unwrap (--codex | --claude-code FILE) [--server NAME] [--dry-run]`,
		Description: `retval mcp proxy relays an MCP server losslessly between a client (on
stdin and stdout) and the server (started as CMD, or at --url), retaining
big tools/call results: the model sees the stub, and reads more with the
tools the proxy adds, retval_peek, retval_resolve and retval_list (a
page of retval_peek is at most 8 KiB unless peek-bytes is set: clients
cut longer tool results). The store is runs_dir from the config file,
else $XDG_STATE_HOME/retval/runs (~/.local/state/retval/runs), as for the
hook; without --run each proxy process gets a run of its own, named on
stderr. retval mcp serve [--run R] answers those three tools alone over
stdio, for values retained by other means.

retval mcp wrap rewrites a client's server entries to start the server
through the proxy: --codex edits the [mcp_servers.NAME] tables of
$CODEX_HOME/config.toml (~/.codex/config.toml), --claude-code FILE the
mcpServers of a .mcp.json or ~/.claude.json (its projects' too). The
command becomes this retval, the args "mcp", "proxy", "--" and the old
command line; every other byte stays. Without --server every server
started as a command is wrapped, each one listed; servers at a URL are
left alone. Wrapping again changes nothing; --dry-run prints the diff;
the file as it was is kept as FILE.retval.bak. unwrap gives each wrapped
entry its command and args back, byte for byte. A file that does not
decode, or an entry in a form only edited by hand (a multi-line args, an
inline table), is refused and left untouched.

Example:
   retval mcp proxy -- npx -y @modelcontextprotocol/server-filesystem .
   retval mcp proxy --url https://example.com/mcp
   retval mcp wrap --codex --dry-run
   retval mcp unwrap --claude-code .mcp.json --server fs

Exit status: 0 done, 1 failed (a file could not be read, parsed or
written), 2 usage; proxy exits with the server's status.`,
		Flags:  mcpCommandFlags(&o),
		Action: action(&o.opts, func(e *env) error { return runMCP(e, &o) }),
	}
}

func mcpCommandFlags(o *mcpOptions) []cli.Flag {
	fs := globalFlags()
	for _, f := range mcpFlags {
		fs = append(fs, f(o)...)
	}
	return fs
}

func runMCP(e *env, o *mcpOptions) error {
	args := o.args
	names := make([]string, 0, len(mcpVerbs))
	for n := range mcpVerbs {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(args) == 0 {
		return usageErr("name what to do: retval mcp %s", strings.Join(names, "|"))
	}
	v, ok := mcpVerbs[args[0]]
	if !ok {
		return usageErr("unknown mcp command %q: want %s", args[0], strings.Join(names, ", "))
	}
	return v.run(e, o, args[1:])
}
