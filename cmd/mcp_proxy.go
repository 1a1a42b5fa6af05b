package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/retval/retval/internal/config"
	"github.com/retval/retval/pkg/hook"
	rmcp "github.com/retval/retval/pkg/mcp"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v2"
)

func init() {
	mcpVerbs["serve"] = mcpVerb{
		usage: "retval mcp serve [--run R]",
		run:   runMCPServe,
	}
	mcpFlags = append(mcpFlags, flags("threshold", "preview-bytes", "peek-lines", "peek-bytes", "compress",
		"max-value-size", "max-run-bytes", "max-run-values", "max-lookups", "max-lookup-bytes", "max-step-bytes", "off")...)
}

// mcpRunsDir is the store of the proxy and the server: the configured one,
// else the hook's default (an MCP client starts its servers with a bare
// environment, in whatever directory it likes, so ./runs would be a
// different store every time).
func mcpRunsDir(r *config.Resolved) (string, error) {
	dir := r.RunsDir
	if r.Values["runs-dir"].Source == config.FromDefault {
		dir = hook.DefaultRunsDir()
	}
	if dir == "" {
		return "", usageErr("no store: set runs_dir in the config file, or pass --runs-dir DIR")
	}
	return dir, nil
}

// runMCPServe offers retval's tools over stdio until stdin ends.
func runMCPServe(c *cli.Context, e *env, args []string) error {
	if len(args) > 0 {
		return usageErr("retval mcp serve takes no arguments: retval mcp serve [--run R]")
	}
	r, err := settings(c)
	if err != nil {
		return err
	}
	dir, err := mcpRunsDir(r)
	if err != nil {
		return err
	}
	tools := &rmcp.Tools{Store: retain.Open(dir), Run: r.Run, Limits: r.Limits,
		PeekBytesSet: r.Values["peek-bytes"].Source != config.FromDefault}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rmcp.Serve(ctx, tools, Version, readCloser{e.stdin}, writeCloser{e.stdout})
}

// readCloser and writeCloser give the process's streams the Close a
// transport wants, without closing them.
type (
	readCloser struct {
		r interface{ Read([]byte) (int, error) }
	}
	writeCloser struct {
		w interface{ Write([]byte) (int, error) }
	}
)

func (r readCloser) Read(p []byte) (int, error)   { return r.r.Read(p) }
func (readCloser) Close() error                   { return nil }
func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (writeCloser) Close() error                  { return nil }
