package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/iox"
)

// rawRelay runs a Relay whose client and server are the test: it returns
// writers to the proxy (as the client, as the server) and readers of what
// the proxy sends each.
type rawRelay struct {
	client, server     io.WriteCloser
	toClient, toServer *bufio.Reader
	done               chan error
	p                  *Proxy
}

func newRawRelay(t *testing.T) *rawRelay {
	st, _ := newStore(t)
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	p2sR, p2sW := io.Pipe()
	s2pR, s2pW := io.Pipe()
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "raw", Log: io.Discard}
	r := &rawRelay{client: c2pW, server: s2pW, toClient: bufio.NewReader(p2cR), toServer: bufio.NewReader(p2sR), done: make(chan error, 1), p: p}
	go func() { r.done <- p.Relay(c2pR, p2cW, s2pR, p2sW) }()
	t.Cleanup(func() { c2pW.Close(); s2pW.Close(); p2cR.Close(); p2sR.Close() })
	return r
}

func send(t *testing.T, w io.Writer, frame string) {
	t.Helper()
	if _, err := io.WriteString(w, frame+"\n"); err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\n")
}

// Whatever the proxy does not rewrite arrives byte for byte: requests
// and notifications of methods it does not know, the server's requests
// and the client's answers, odd spacing, key order and escapes.
func TestRelayUnchanged(t *testing.T) {
	r := newRawRelay(t)
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"x/unknown","params":{"b":1,"a":"\u003c"}}`,
		`{ "method" : "notifications/cancelled", "jsonrpc":"2.0", "params":{"requestId":7,"reason":"r"} }`,
		`{"jsonrpc":"2.0","id":"s1","result":{"roots":[{"uri":"file:///x"}]}}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{"cursor":"abc=="}}`,
		`[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`not json at all`,
	} {
		send(t, r.client, f)
		if got := recv(t, r.toServer); got != f {
			t.Errorf("to server: %s\nwant %s", got, f)
		}
	}
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"resources":[],"nextCursor":"def=="}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method"}}`,
		`[{"jsonrpc":"2.0","id":10,"result":{}}]`,
	} {
		send(t, r.server, f)
		if got := recv(t, r.toClient); got != f {
			t.Errorf("to client: %s\nwant %s", got, f)
		}
	}
	// A small tools/call result is relayed as it came.
	send(t, r.client, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"up","arguments":{}}}`)
	recv(t, r.toServer)
	small := `{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"<b>ok</b>"}],"structuredContent":{"z":1,"a":2}}}`
	send(t, r.server, small)
	if got := recv(t, r.toClient); got != small {
		t.Errorf("small result: %s", got)
	}
}

// A batch of the client: retval's calls are answered by the proxy, the
// rest goes on as a batch, and the client gets one array of every answer
// once the server has answered; results in a server's batch are retained.
func TestRelayBatch(t *testing.T) {
	r := newRawRelay(t)
	send(t, r.client, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"retval_list","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}]`)
	if got := recv(t, r.toServer); got != `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}]` {
		t.Errorf("forwarded: %s", got)
	}
	text, _ := json.Marshal(bigLines)
	send(t, r.server, `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":`+string(text)+`}],"_meta":{"k":"v"}}}]`)
	var out []json.RawMessage
	got := recv(t, r.toClient)
	if json.Unmarshal([]byte(got), &out) != nil || len(out) != 3 || string(out[0]) != `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` {
		t.Fatalf("batch: %.300s", got)
	}
	var resp struct {
		Result struct {
			Content []struct{ Text string }
			Meta    map[string]string `json:"_meta"`
		}
	}
	json.Unmarshal(out[1], &resp)
	if len(resp.Result.Content) != 1 || resp.Result.Meta["k"] != "v" {
		t.Fatalf("batch result: %.300s", out[1])
	}
	stubID(t, resp.Result.Content[0].Text)
	var local struct {
		ID     int
		Result struct{ Content []struct{ Text string } }
	}
	if json.Unmarshal(out[2], &local) != nil || local.ID != 1 || !strings.Contains(local.Result.Content[0].Text, `"total":1`) {
		t.Errorf("the proxy's own answer: %s", out[2])
	}
}

// A frame of 20 MB (a line far over any line reader's default) is
// relayed and retained.
func TestRelayHugeFrame(t *testing.T) {
	r := newRawRelay(t)
	r.p.Tools.Limits.MaxValueSize = 64 << 20 // over the default 16 MiB
	send(t, r.client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"huge","arguments":{}}}`)
	recv(t, r.toServer)
	text := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 20<<20/64)
	go func() {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}}})
		r.server.Write(append(b, '\n'))
	}()
	var resp struct {
		Result struct{ Content []struct{ Text string } }
	}
	got := recv(t, r.toClient)
	if json.Unmarshal([]byte(got), &resp) != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("huge: %.300s", got)
	}
	stubID(t, resp.Result.Content[0].Text)
	// And an unrelated frame of 20 MB passes whole.
	big := `{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"` + strings.Repeat("y", 20<<20) + `"}}`
	go io.WriteString(r.server, big+"\n")
	if got := recv(t, r.toClient); !bytes.Equal([]byte(got), []byte(big)) {
		t.Errorf("a 20 MB notification arrived as %d bytes", len(got))
	}
}

// cutReader is a reader whose end was a deadline's cut (iox.PipeReader).
type cutReader struct{ io.Reader }

func (cutReader) Cut() bool { return true }

// A last line without its newline is a frame at the end of a server's
// output, and half of one where the drain cut a pipe a child held open.
func TestReadFramesDropsHalfAFrameAtACut(t *testing.T) {
	const in = "{\"a\":1}\n{\"b\":2}\n{\"c\":"
	for _, tc := range []struct {
		r    io.Reader
		want []string
	}{
		{strings.NewReader(in), []string{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":"}},
		{cutReader{strings.NewReader(in)}, []string{"{\"a\":1}\n", "{\"b\":2}\n"}},
	} {
		var got []string
		if err := readFrames(tc.r, func(f []byte) error { got = append(got, string(f)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%T: frames %q, want %q", tc.r, got, tc.want)
		}
	}
}

// A server that exited has written all it will: its last frame, without
// its newline, is relayed even when the relay came to it only after the
// drain deadline (busy with what came before).
func TestReadFramesLastFrameAfterTheDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	io.WriteString(w, "{\"a\":1}\n{\"b\":2}")
	w.Close() // the server exited
	r.SetReadDeadline(time.Now().Add(-time.Second))
	var got []string
	if err := readFrames(iox.NewPipeReader(r), func(f []byte) error { got = append(got, string(f)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"{\"a\":1}\n", "{\"b\":2}"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("frames %q, want %q", got, want)
	}
}

// A batch that holds a call of retval's tools and a request for the
// server gets one array of answers (JSON-RPC 2.0), not the proxy's and the
// server's apart.
func TestRelayOneArrayPerBatch(t *testing.T) {
	r := newRawRelay(t)
	send(t, r.client, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"retval_list","arguments":{"run":"r1"}}},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]`)
	if got := recv(t, r.toServer); got != `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]` {
		t.Fatalf("to server: %s", got)
	}
	send(t, r.server, `[{"jsonrpc":"2.0","id":2,"result":{}}]`)
	got := recv(t, r.toClient)
	var answers []struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(got), &answers); err != nil || len(answers) != 2 || string(answers[0].ID) != "2" || string(answers[1].ID) != "1" {
		t.Fatalf("to client: %s", got)
	}
	// Only notifications forwarded: the proxy's answers go at once.
	send(t, r.client, `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"retval_list","arguments":{"run":"r1"}}},{"jsonrpc":"2.0","method":"notifications/y"}]`)
	recv(t, r.toServer)
	if got := recv(t, r.toClient); !strings.HasPrefix(got, `[{"jsonrpc":"2.0","id":3,`) {
		t.Fatalf("to client: %s", got)
	}
}
