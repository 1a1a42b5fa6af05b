package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/stats"
	"github.com/retval/retval/pkg/ui"
	"github.com/urfave/cli/v3"
)

func init() { register("ui", uiCommand) }

// uiOptions are ui's flags.
type uiOptions struct {
	opts
	listen string
	open   bool
}

func uiCommand() *cli.Command {
	var o uiOptions
	return &cli.Command{
		Name:      "ui",
		Usage:     "a read-only web page over the store: runs, reads, values, savings",
		UsageText: "retval ui [--runs-dir D | --store URL] [--listen ADDR] [--open]",
		Description: `Serves a page, from the binary itself (nothing is loaded from elsewhere),
for an engineer inspecting what an agent saw:

   runs     every run with its values, bytes, what the model was shown,
            its lookups and what gc would do with it (and why); sortable,
            filterable, a page at a time
   a run    its calls in order, each with the reads that followed, and a
            chart of bytes kept out of context against bytes read back
   a value  the stub the model saw beside the content, paged through the
            line index at any size, the lines read back highlighted;
            search (as peek --query); for JSON a tree whose nodes copy
            the retval resolve command that prints them; the raw bytes
   savings  stats --all as charts: by tool, by run, over time

It changes nothing in the store: no activity stamp, no read-log record,
no gc. It prints the page's address, holding a random token, on stdout
and serves until interrupted. Every request must carry the token (then a
cookie), name the server's address as its Host and come from no other
origin (403 otherwise). --listen ADDR serves on another address than
127.0.0.1 with a free port; an address other hosts can reach is allowed
only when named (not 0.0.0.0), with a warning. --open also opens the
page in the desktop's browser. See docs/ui.md.

Example:
   retval ui --runs-dir ./runs
   retval ui --store s3://bucket/agent-runs --listen 127.0.0.1:8765 --open

Exit status: 0 stopped by a signal, 1 could not serve, 2 usage.`,
		Flags: append(globalFlags("grace", "max-age", "max-bytes", "keep-runs", "policy", "read-more", "preview-bytes", "peek-lines"),
			&cli.StringFlag{Name: "listen", Usage: "address to serve on", Value: "127.0.0.1:0", Destination: &o.listen},
			&cli.BoolFlag{Name: "open", Usage: "open the page in the desktop's browser", Destination: &o.open},
		),
		Action: action(&o.opts, func(e *env) error { return runUI(e, &o) }),
	}
}

func runUI(e *env, uo *uiOptions) error {
	r, err := uo.settings(e)
	if err != nil {
		return err
	}
	if len(uo.args) > 0 {
		return usageErr("ui takes no arguments, got %q", uo.args[0])
	}
	addr := uo.listen
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--listen %q: want HOST:PORT, such as 127.0.0.1:8765 (port 0: any free one)", addr)
	}
	ip := net.ParseIP(host)
	if host == "" || ip != nil && ip.IsUnspecified() {
		return usageErr("--listen %q would serve on every interface: name the one address to serve on (the page's Host is checked against it)", addr)
	}
	now, err := clock()
	if err != nil {
		return err
	}
	o := ui.Options{Store: openStore(r.Location(), now), CallOverhead: stats.DefaultCallOverhead}
	// gc's policy as gc reads its settings (0: the rule is off).
	o.GC = gc.Options{Grace: r.Limits.Grace, KeepRuns: int(r.KeepRuns), MaxAge: r.MaxAge, MaxBytes: r.MaxBytes}
	if o.GC.MaxAge == 0 {
		o.GC.MaxAge = gc.Unlimited
	}
	o.Stub = r.Limits.StubSettings(r.Policy)
	o.Stub.ReadMore = r.ReadMore
	if r.Store != "" {
		o.StoreArgs = []string{"--store", r.Store}
	} else {
		dir, err := filepath.Abs(r.RunsDir)
		if err != nil {
			return err
		}
		o.StoreArgs = []string{"--runs-dir", dir}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot serve on %s: %w", addr, err)
	}
	o.Addr = ln.Addr().String()
	srv, err := ui.New(o)
	if err != nil {
		ln.Close()
		return err
	}
	defer srv.Close()
	if ip == nil && host != "localhost" || ip != nil && !ip.IsLoopback() {
		fmt.Fprintf(e.stderr, "retval: ui: warning: %s can be reached from other hosts: anyone holding the address's token can read the store\n", o.Addr)
	}
	fmt.Fprintln(e.stdout, srv.URL())
	fmt.Fprintf(e.stderr, "retval: ui: serving %s read-only; interrupt (Ctrl-C) to stop\n", r.Location())
	if uo.open {
		if err := openBrowser(srv.URL()); err != nil {
			fmt.Fprintf(e.stderr, "retval: ui: warning: could not open a browser (%v): open the address above\n", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
