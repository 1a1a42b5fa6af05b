package mcp

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The proxy relays to a Streamable HTTP server (on 127.0.0.1), with the
// same retention, tools/list rewrite and local tools.
func TestRunRemote(t *testing.T) {
	st, _ := newStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := upstream(nil)
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "http", Log: io.Discard}
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- RunRemote(ctx, p, "http://"+ln.Addr().String()+"/mcp", nil, c2pR, p2cW) }()
	// Notifications are handled on their own, and may come after the
	// call's answer: the test waits for all three, not for the answer.
	progress := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p2cR, Writer: c2pW, MaxLineLength: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cs.InitializeResult().Instructions, Instructions) {
		t.Errorf("instructions = %q", cs.InitializeResult().Instructions)
	}
	var names []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
		if tl.OutputSchema != nil {
			t.Errorf("%s keeps its outputSchema", tl.Name)
		}
	}
	if got := strings.Join(names, ","); !strings.HasSuffix(got, ",retval_peek,retval_resolve,retval_list") {
		t.Errorf("tools = %s", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	id := stubID(t, res.Content[0].(*mcp.TextContent).Text)
	if stored(t, st, id) != bigLines || res.StructuredContent != nil {
		t.Errorf("the remote result was not retained whole")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolPeek, Arguments: map[string]any{"id": id, "lines": "1-1"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "1: line 1 xxxxxxxxxxxxxxxxxxxx\n" {
		t.Errorf("peek: %v %+v", err, res)
	}
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("p1")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		select {
		case m := <-progress:
			got = append(got, m)
		case <-time.After(30 * time.Second): // a hang guard, not a window
			t.Fatalf("progress over SSE = %q, want 3 notifications", got)
		}
	}
	c2pW.Close()
	if err := <-done; err != nil {
		t.Errorf("RunRemote = %v", err)
	}
}
