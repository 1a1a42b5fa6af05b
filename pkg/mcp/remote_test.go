package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
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
	if !strings.HasSuffix(cs.InitializeResult().Instructions, ProxyInstructions) {
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

// scriptedHTTP is a Streamable HTTP server whose tools/call answers are
// scripted by tool name, to fail in each way a server can.
type scriptedHTTP struct {
	mu         sync.Mutex
	lastEvents []string // the Last-Event-ID of each GET
}

func (h *scriptedHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		id := r.Header.Get("Last-Event-ID")
		h.mu.Lock()
		h.lastEvents = append(h.lastEvents, id)
		h.mu.Unlock()
		if id != "resume-1" {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: resume-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n")
		return
	}
	if r.Method == http.MethodDelete {
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	id := string(req.ID)
	switch {
	case req.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`)
	case req.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case req.Params.Name == "primed":
		// 2025-11-25: a stream opens with a priming event (an id, a
		// retry, empty data), and a comment may come anywhere.
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: p-0\nretry: 10\ndata:\n\n: a comment\n\nid: p-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\n")
		io.WriteString(w, "data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"primed\"}]}}\n\n")
	case req.Params.Name == "fail500":
		http.Error(w, "boom", http.StatusInternalServerError)
	case req.Params.Name == "notjson":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<html>oops</html>")
	case req.Params.Name == "cut":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"res")
	case req.Params.Name == "resume":
		// The polling pattern: the priming event, then the stream closes;
		// the answer comes on a GET resuming after it.
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: resume-1\nretry: 10\ndata:\n\n")
	}
}

// A Streamable HTTP server that fails a request — a 500, a body that is
// not JSON, a stream cut mid-message — gets that request answered with
// -32603 naming what went wrong, and the session goes on; a priming event
// is not a message; a stream closed before its answer is resumed with GET
// and Last-Event-ID. Before, each of these ended the proxy or left the
// request unanswered for ever.
func TestRunRemoteServerFailures(t *testing.T) {
	st, _ := newStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &scriptedHTTP{}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	var log syncBuffer
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "http", Log: &log}
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- RunRemote(ctx, p, "http://"+ln.Addr().String()+"/mcp", nil, c2pR, p2cW) }()
	out := bufio.NewReader(p2cR)
	ask := func(id int, tool string) string {
		t.Helper()
		fmt.Fprintf(c2pW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", id, tool)
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	io.WriteString(c2pW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	if line, _ := out.ReadString('\n'); !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize: %s", line)
	}
	io.WriteString(c2pW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, tc := range []struct {
		id         int
		tool, want string
	}{
		{1, "primed", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"primed"}]}}`},
		{2, "fail500", `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"retval: the server at http://ADDR/mcp answered 500 Internal Server Error: boom"}}`},
		{3, "notjson", `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"retval: the answer of the server at http://ADDR/mcp is not JSON: \"<html>oops</html>\""}}`},
		{4, "cut", `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"retval: the event stream of the server at http://ADDR/mcp ended before it answered"}}`},
		{6, "resume", `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"resumed"}]}}`},
	} {
		got := strings.TrimSuffix(ask(tc.id, tc.tool), "\n")
		if want := strings.ReplaceAll(tc.want, "ADDR", ln.Addr().String()); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.tool, got, want)
		}
	}
	h.mu.Lock()
	resumed := slices.Contains(h.lastEvents, "resume-1")
	h.mu.Unlock()
	if !resumed {
		t.Errorf("no GET resumed with Last-Event-ID resume-1: %q", h.lastEvents)
	}
	c2pW.Close()
	if err := <-done; err != nil {
		t.Errorf("RunRemote = %v", err)
	}
}
