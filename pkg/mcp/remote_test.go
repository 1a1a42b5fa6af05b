package mcp

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
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
	var mu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
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
	c2pW.Close()
	if err := <-done; err != nil {
		t.Errorf("RunRemote = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 3 {
		t.Errorf("progress over SSE = %q", progress)
	}
}
