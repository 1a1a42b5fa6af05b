package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/hook"
	rmcp "github.com/retval/retval/pkg/mcp"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() {
	mcpVerbs["serve"] = mcpVerb{
		usage: "retval mcp serve [--run R]",
		run:   runMCPServe,
	}
	mcpVerbs["proxy"] = mcpVerb{
		usage: "retval mcp proxy [--run R] [retain flags] (-- CMD ARGS... | --url URL)",
		run:   runMCPProxy,
	}
	mcpFlags = append(mcpFlags, func(o *mcpOptions) []cli.Flag {
		return append(flags("threshold", "preview-bytes", "peek-lines", "peek-bytes", "compress",
			"max-value-size", "max-run-bytes", "max-run-values", "max-lookups", "max-lookup-bytes", "max-step-bytes", "off"),
			&cli.StringFlag{Name: "url", Usage: "proxy: the Streamable HTTP MCP server to relay to, instead of -- CMD ARGS...", Action: setTo(&o.proxy.url)})
	})
}

// proxyOptions are the flags of mcp proxy.
type proxyOptions struct {
	url *string
}

// agentRunsDir is the store of the hook, the proxy and the server: the
// configured one, else the hook's default (an agent runs them with a bare
// environment, in whatever directory it likes, so ./runs would be a
// different store every time).
func agentRunsDir(r *config.Resolved) (string, error) {
	if r.Store != "" {
		return r.Store, nil
	}
	dir := r.RunsDir
	if r.Values["runs-dir"].Source == config.FromDefault {
		dir = hook.DefaultRunsDir()
	}
	if dir == "" {
		return "", usageErr("no store: HOME is not set, so there is no default; set runs_dir in ~/.config/retval/config.toml, RETVAL_RUNS_DIR, or pass --runs-dir DIR")
	}
	return dir, nil
}

// runMCPServe offers retval's tools over stdio until stdin ends.
func runMCPServe(e *env, o *mcpOptions, args []string) error {
	if len(args) > 0 {
		return usageErr("retval mcp serve takes no arguments: retval mcp serve [--run R]")
	}
	r, err := o.settings(e)
	if err != nil {
		return err
	}
	dir, err := agentRunsDir(r)
	if err != nil {
		return err
	}
	tools := &rmcp.Tools{Store: serverStore(dir, e, "mcp serve"), Run: r.Run, Limits: r.Limits,
		PeekBytesSet: r.Values["peek-bytes"].Source != config.FromDefault}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rmcp.Serve(ctx, tools, buildVersion(), e.stdin, e.stdout)
}

// serverStore is the store of a long-running server: it keeps the small
// values it has read, checked, for the next call that reads them.
func serverStore(dir string, e *env, cmd string) *retain.Store {
	st := logStore(dir, e, cmd)
	st.Cache = retain.NewValueCache(retain.DefaultValueCacheBytes)
	return st
}

// runMCPProxy starts the server and relays between it and the client on
// stdin and stdout until either ends.
func runMCPProxy(e *env, o *mcpOptions, args []string) error {
	url := deref(o.proxy.url)
	switch {
	case url != "" && len(args) > 0:
		return usageErr("--url and a server command exclude each other: give one")
	case o.proxy.url != nil && url == "":
		return usageErr("--url needs the server's address, e.g. --url https://example.com/mcp")
	case url == "" && len(args) == 0:
		return usageErr("name the server to proxy: retval mcp proxy [--run R] -- CMD ARGS...")
	}
	r, err := o.settings(e)
	if err != nil {
		return err
	}
	dir, err := agentRunsDir(r)
	if err != nil {
		return err
	}
	session := rmcp.NewSession()
	run := r.Run
	if run == "" {
		// A run of its own for this proxy process, named on stderr so
		// that its values can be found (and collected) later.
		run = "mcp-" + time.Now().UTC().Format("20060102-150405") + "-" + session
		fmt.Fprintf(e.stderr, "retval: mcp proxy: run %s in %s\n", run, dir)
	}
	if _, err := retain.Sanitize(run); err != nil {
		return usageErr("run id: %v", err)
	}
	tools := &rmcp.Tools{Store: serverStore(dir, e, "mcp proxy"), Run: run, Limits: r.Limits,
		PeekBytesSet: r.Values["peek-bytes"].Source != config.FromDefault}
	p := &rmcp.Proxy{Tools: tools, Compress: r.Compress, Off: r.Off, Session: session, Log: e.stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A client that closed stdout must not end the proxy by SIGPIPE,
	// leaving what the server started running: writing then fails, the
	// server is shut down with its group, and that is said. Caught, not
	// ignored, so that the server does not inherit it ignored.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	if url != "" {
		return rmcp.RunRemote(ctx, p, url, nil, e.stdin, e.stdout)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = e.stderr
	err = rmcp.RunCommand(ctx, p, cmd, e.stdin, e.stdout, rmcp.Waits{})
	var ee *rmcp.ExitError
	if errors.As(err, &ee) {
		return &serverExit{ee}
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return usageErr("%v: check the command after --", err)
	}
	return err
}

// serverExit is the proxy's server ending with a non-zero status, which
// is the proxy's own.
type serverExit struct{ *rmcp.ExitError }
