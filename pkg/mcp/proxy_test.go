//lint:file-ignore SA1019 the relay must carry roots, sampling and logging while clients and servers still use them (protocol 2026-07-28 deprecates them), so these tests exercise them
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retval/retval/pkg/retain"
)

// relayed is a client session connected through a Proxy to a server.
type relayed struct {
	cs    *mcp.ClientSession
	proxy *Proxy
	done  chan error // Relay's return
	notes *notes
}

// notes are the notifications the client received.
type notes struct {
	mu       sync.Mutex
	progress []string
	logs     []string
	changed  int
}

func (n *notes) add(f func()) { n.mu.Lock(); f(); n.mu.Unlock() }

// relayTo connects a client to srv through a proxy on store st (run r1).
func relayTo(t *testing.T, st *retain.Store, srv *mcp.Server, session string) *relayed {
	return relayVersion(t, st, srv, session, "")
}

// relayVersion is relayTo with the protocol version the client asks for
// ("" the latest).
func relayVersion(t *testing.T, st *retain.Store, srv *mcp.Server, session, version string) *relayed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	p2sR, p2sW := io.Pipe()
	s2pR, s2pW := io.Pipe()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: p2sR, Writer: s2pW, MaxLineLength: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: session, Log: io.Discard}
	r := &relayed{proxy: p, done: make(chan error, 1), notes: &notes{}}
	go func() { r.done <- p.Relay(c2pR, p2cW, s2pR, p2sW) }()
	n := r.notes
	client := mcp.NewClient(&mcp.Implementation{Name: "client"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "a sample"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			n.add(func() { n.progress = append(n.progress, req.Params.Message) })
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			n.add(func() { n.logs = append(n.logs, req.Params.Data.(string)) })
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.add(func() { n.changed++ }) },
	})
	client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p2cR, Writer: c2pW, MaxLineLength: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// First of all (cleanups run last first), end the proxy's side of the
	// pipes, so that nothing closing after the relay ended blocks writing.
	t.Cleanup(func() { c2pR.Close(); p2cW.Close(); p2sW.Close(); s2pR.Close() })
	r.cs = cs
	return r
}

func (r *relayed) call(t *testing.T, name string) *mcp.CallToolResult {
	t.Helper()
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

var stubHeader = regexp.MustCompile(`^\[retained #([a-z0-9]+-\d+(?:-\d+|-s)?)\] (\d+) bytes, (\d+) lines, sha256:[0-9a-f]{64}, complete\n`)

// stubID checks that text is a stub and returns its value id.
func stubID(t *testing.T, text string) string {
	t.Helper()
	m := stubHeader.FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "[read more: peek "+m[1]+" --lines ") || len(text) > 2048 {
		t.Fatalf("not a stub (%d bytes): %q", len(text), text)
	}
	return m[1]
}

// stored returns the bytes of value id of run r1.
func stored(t *testing.T, st *retain.Store, id string) string {
	t.Helper()
	v, err := st.OpenValue("r1", id)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.NewSectionReader(v, 0, v.Desc.Size)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestProxyInitialize(t *testing.T) {
	// initialize, and server/discover from 2026-07-28 on.
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testInitialize(t, version) })
	}
}

func testInitialize(t *testing.T, version string) {
	st, _ := newStore(t)
	r := relayVersion(t, st, upstream(nil), "sess1", version)
	init := r.cs.InitializeResult()
	if init.ProtocolVersion != version {
		t.Errorf("protocol version %q, want the %q client and server agree on", init.ProtocolVersion, version)
	}
	if init.Capabilities.Tools == nil || init.Capabilities.Logging == nil {
		t.Errorf("capabilities = %+v", init.Capabilities)
	}
	if init.Instructions != "upstream's own instructions\n\n"+ProxyInstructions {
		t.Errorf("instructions = %q", init.Instructions)
	}
	if init.ServerInfo.Name != "upstream" {
		t.Errorf("server = %+v", init.ServerInfo)
	}
}

func TestProxyToolsList(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	var names []string
	pages := 0
	var cursor string
	for {
		res, err := r.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			if tl.OutputSchema != nil {
				t.Errorf("%s keeps its outputSchema", tl.Name)
			}
		}
		if res.NextCursor == "" {
			break
		}
		for _, tl := range res.Tools {
			if IsOwnTool(tl.Name) {
				t.Errorf("retval's tool %s on page %d, before the last", tl.Name, pages)
			}
		}
		cursor = res.NextCursor
	}
	if pages < 3 {
		t.Errorf("%d pages: the cursors were not relayed", pages)
	}
	got := strings.Join(names, ",")
	if !strings.HasSuffix(got, ",retval_peek,retval_resolve,retval_list") || strings.Count(got, "retval_") != 3 || !strings.Contains(got, "read,") {
		t.Errorf("tools = %s", got)
	}
}

func TestProxyRetainsBigText(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")

	// Text and a structuredContent copying it: one stub, no structure.
	res := r.call(t, "read")
	if len(res.Content) != 1 || res.StructuredContent != nil || res.IsError {
		t.Fatalf("read: %d blocks, structured %v", len(res.Content), res.StructuredContent)
	}
	id := stubID(t, res.Content[0].(*mcp.TextContent).Text)
	if got := stored(t, st, id); got != bigLines {
		t.Errorf("stored %d bytes, want the %d of the text", len(got), len(bigLines))
	}
	// The model reads it back through the proxy, which answers itself.
	res = r.call(t, "read")
	id2 := stubID(t, res.Content[0].(*mcp.TextContent).Text)
	if id2 == id {
		t.Errorf("two calls share the value id %s", id)
	}
	pres, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolPeek, Arguments: map[string]any{"id": id, "lines": "2999-3000"}})
	if err != nil || pres.IsError || pres.Content[0].(*mcp.TextContent).Text != "2999: line 2999 xxxxxxxxxxxxxxxxxxxx\n3000: line 3000 xxxxxxxxxxxxxxxxxxxx\n" {
		t.Errorf("peek through the proxy: %v %+v", err, pres)
	}

	// Structured content that is not a copy: a value of its own, shown.
	res = r.call(t, "stats")
	if len(res.Content) != 2 || res.StructuredContent != nil {
		t.Fatalf("stats: %d blocks, structured %v", len(res.Content), res.StructuredContent)
	}
	stubID(t, res.Content[0].(*mcp.TextContent).Text)
	if got := res.Content[1].(*mcp.TextContent).Text; got != `{"kind":"numbers","lines":3000}` {
		t.Errorf("stats structured block = %q", got)
	}

	// Images, audio and resource links stay, in their places; the text
	// block and the embedded text resource, each big, become a stub each,
	// the resource keeping its uri (it stands before the link).
	res = r.call(t, "mixed")
	if len(res.Content) != 5 {
		t.Fatalf("mixed: %d blocks", len(res.Content))
	}
	id = stubID(t, res.Content[0].(*mcp.TextContent).Text)
	if got := stored(t, st, id); got != bigLines[:len(bigLines)/2] {
		t.Errorf("mixed stored %d bytes", len(got))
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || string(img.Data) != "PNG..." {
		t.Errorf("image block = %#v", res.Content[1])
	}
	if l, ok := res.Content[3].(*mcp.ResourceLink); !ok || l.URI != "file:///c" {
		t.Errorf("link block = %#v", res.Content[3])
	}
	if e, ok := res.Content[2].(*mcp.EmbeddedResource); !ok || e.Resource == nil || !strings.Contains(e.Resource.Text, "[the value is the text of resource ") {
		t.Errorf("resource block = %#v", res.Content[2])
	} else if got := stored(t, st, stubID(t, e.Resource.Text)); got != bigLines[len(bigLines)/2:] {
		t.Errorf("resource stored %d bytes", len(got))
	}
	if a, ok := res.Content[4].(*mcp.AudioContent); !ok || string(a.Data) != "RIFF" {
		t.Errorf("audio block = %#v", res.Content[4])
	}

	// An error result is retained too, and stays an error.
	res = r.call(t, "fail")
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("fail: isError %v, %d blocks", res.IsError, len(res.Content))
	}
	stubID(t, res.Content[0].(*mcp.TextContent).Text)
}

// A structuredContent member that is not the retained text reaches the
// model (it was dropped with the copy); a small block stays as it is
// beside the big one's stub, which keeps its annotations.
func TestProxyKeepsWhatIsNotTheText(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	res := r.call(t, "exit")
	if len(res.Content) != 2 || res.StructuredContent != nil {
		t.Fatalf("exit: %d blocks, structured %v", len(res.Content), res.StructuredContent)
	}
	if got := stored(t, st, stubID(t, res.Content[0].(*mcp.TextContent).Text)); got != bigLines {
		t.Errorf("stored %d bytes", len(got))
	}
	if got := res.Content[1].(*mcp.TextContent).Text; got != `{"exit_code":3}` {
		t.Errorf("the member beside the text: %q", got)
	}
	res = r.call(t, "annotated")
	if len(res.Content) != 2 || res.Content[0].(*mcp.TextContent).Text != "exit status 0" {
		t.Fatalf("annotated: %+v", res.Content)
	}
	big := res.Content[1].(*mcp.TextContent)
	stubID(t, big.Text)
	if big.Annotations == nil || len(big.Annotations.Audience) != 1 || big.Annotations.Priority != 0.5 {
		t.Errorf("annotations %+v", big.Annotations)
	}
}

func TestProxyKeepsSmallAndImages(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	res := r.call(t, "small")
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "small <result> & more" {
		t.Errorf("small = %+v", res.Content)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"n":1}` {
		t.Errorf("small structured = %s", sc)
	}
	res = r.call(t, "image")
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || len(img.Data) != 100<<10 {
		t.Errorf("a big image is not text: it passes, got %#v", res.Content[0])
	}
	vals, _ := st.Values("r1")
	if len(vals) != 1 { // c1 of newStore
		t.Errorf("%d values stored, want none new", len(vals)-1)
	}
}

func TestProxyServerMessages(t *testing.T) {
	st, _ := newStore(t)
	state := &upstreamState{slowStarted: make(chan struct{})}
	// Before 2026-07-28 the server sends requests of its own (roots/list,
	// sampling) and logs at the level the client set.
	r := relayVersion(t, st, upstream(state), "sess1", "2025-11-25")
	if err := r.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// Progress (the token the client chose) and logging.
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	if _, err := r.cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	// roots/list and sampling, requests of the server to the client.
	if got := r.call(t, "roots").Content[0].(*mcp.TextContent).Text; got != "file:///work" {
		t.Errorf("roots = %q", got)
	}
	if got := r.call(t, "sample").Content[0].(*mcp.TextContent).Text; got != "sampled: a sample" {
		t.Errorf("sample = %q", got)
	}
	// list_changed.
	r.call(t, "grow")
	// Cancellation reaches the server.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		errc <- err
	}()
	<-state.slowStarted // the server has the call: now cancel it
	cancel()
	<-errc
	deadline := time.Now().Add(30 * time.Second)
	for {
		r.notes.mu.Lock()
		ok := len(r.notes.progress) == 3 && len(r.notes.logs) == 1 && r.notes.changed >= 1 && state.cancelled.Load()
		r.notes.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			r.notes.mu.Lock()
			t.Fatalf("progress %q, logs %q, list_changed %d, cancelled %v", r.notes.progress, r.notes.logs, r.notes.changed, state.cancelled.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Join(r.notes.progress, ",") != "step 1,step 2,step 3" {
		t.Errorf("progress = %q", r.notes.progress)
	}
	if err := r.cs.Ping(context.Background(), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// Value ids stay distinct across sessions sharing a run, though JSON-RPC
// ids restart with each.
func TestProxySessionsShareARun(t *testing.T) {
	st, _ := newStore(t)
	a := relayTo(t, st, upstream(nil), NewSession())
	b := relayTo(t, st, upstream(nil), NewSession())
	idA := stubID(t, a.call(t, "read").Content[0].(*mcp.TextContent).Text)
	idB := stubID(t, b.call(t, "fail").Content[0].(*mcp.TextContent).Text)
	if idA == idB {
		t.Fatalf("both sessions retained %s", idA)
	}
	if stored(t, st, idA) != bigLines || stored(t, st, idB) != "error: "+bigLines {
		t.Errorf("values mixed up")
	}
	if len(idA) > 12 {
		t.Errorf("value id %q is not short", idA)
	}
}

func TestProxyRefusesCollision(t *testing.T) {
	st, _ := newStore(t)
	srv := upstream(nil)
	srv.AddTool(&mcp.Tool{Name: ToolPeek, InputSchema: json.RawMessage(`{"type":"object"}`)}, nil)
	r := relayTo(t, st, srv, "sess1")
	var err error
	for c := ""; err == nil; {
		var res *mcp.ListToolsResult
		res, err = r.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: c})
		if err == nil && res.NextCursor == "" {
			t.Fatal("tools/list answered though upstream has retval_peek")
		}
		if res != nil {
			c = res.NextCursor
		}
	}
	if !strings.Contains(err.Error(), `already has a tool named "retval_peek"`) {
		t.Errorf("client got %v", err)
	}
	if err := <-r.done; !errors.Is(err, ErrCollision) {
		t.Errorf("Relay = %v, want ErrCollision", err)
	}
}

// A result the store cannot take passes unchanged: never a stub pointing
// at nothing.
func TestProxyUnstorablePasses(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	r.proxy.Tools.Limits.MaxValueSize = 1000
	res := r.call(t, "read")
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != bigLines || res.StructuredContent == nil {
		t.Errorf("an unstorable result was changed: %d blocks", len(res.Content))
	}
}

// Off relays results as they are and stores nothing; retval's tools stay.
func TestProxyOff(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	r.proxy.Off = true
	res := r.call(t, "read")
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != bigLines || res.StructuredContent == nil {
		t.Errorf("off changed the result: %d blocks", len(res.Content))
	}
	if vals, _ := st.Values("r1"); len(vals) != 1 {
		t.Errorf("off stored %d values", len(vals)-1)
	}
	if got := r.call(t, ToolList).Content[0].(*mcp.TextContent).Text; !strings.Contains(got, `"total":1`) {
		t.Errorf("retval_list with off = %s", got)
	}
}
