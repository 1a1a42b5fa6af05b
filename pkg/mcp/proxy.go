package mcp

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/internal/mcpresult"
	"github.com/retval/retval/pkg/retain"
)

// Proxy relays JSON-RPC messages between an MCP client and an MCP server,
// as they are, except for what retention changes:
//
//   - a tools/call result whose text (text blocks and embedded text
//     resources) is over the threshold is retained: each big block
//     becomes its stub, small blocks stay, structuredContent goes with
//     what else it held kept as text (internal/mcpresult);
//   - a tools/list result loses every outputSchema, and its last page
//     gains retval's tools;
//   - an initialize result (server/discover, from protocol 2026-07-28 on)
//     gains the tools capability and instructions (ProxyInstructions);
//   - a tools/call of one of retval's tools is answered here and never
//     reaches the server;
//   - a tools/call of the server's tools whose arguments hold references
//     ("$expand:" strings, bare {"$ref": …} and {"$concat": …} objects)
//     reaches the server with them expanded, and its result gains a last
//     text block, the bytes and SHA-256 of each expanded argument; a call
//     whose references fail is answered here, an error result naming
//     each failure, and never reaches the server.
//
// Everything else — other requests and their responses, notifications,
// progress, cancellation, cursors, the server's own requests (roots/list,
// sampling) and the client's answers, methods the proxy does not know —
// is relayed byte for byte, a frame of any size.
type Proxy struct {
	// Tools answers retval's tools; its Store, Run and Limits are where
	// and how results are retained.
	Tools *Tools
	// Compress is how values are stored: none (""), zstd or auto.
	Compress string
	// Off relays results unchanged and stores nothing (retval's tools are
	// still offered).
	Off bool
	// Session prefixes the call ids of the values this proxy retains, so
	// that they never collide with another session's in the same run
	// (JSON-RPC ids restart with every session). NewSession makes one.
	Session string
	// Log receives one line for each result that could not be retained
	// (it is then relayed unchanged).
	Log io.Writer

	calls   atomic.Int64
	mu      sync.Mutex // guards pending and batches
	pending map[string]watched
	// batches holds the answers the proxy gave itself to part of a batch
	// (calls of retval's tools) until the server answers the rest, keyed
	// by the ids of the requests it was sent: JSON-RPC answers a batch
	// with one array.
	batches map[string]*heldBatch
	// inflight are the requests sent to the server and not yet answered,
	// by id key: the client must not wait for ever when the server goes.
	inflight map[string]json.RawMessage
	outMu    sync.Mutex // serializes writes to the client
}

// watched is a request whose result the proxy rewrites: what it was
// ("initialize", "tools/list", "tools/call TOOL") and, for a call whose
// references the proxy expanded, the summary line the result gains.
type watched struct {
	what, summary string
}

// heldBatch is the proxy's own answers to part of a batch.
type heldBatch struct {
	answers [][]byte
	ids     []string // the requests of the batch sent to the server
}

// NewSession returns a short random session token: 6 lowercase letters
// and digits (30 bits), prefixing the call ids of one proxy process.
func NewSession() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [6]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b[:])
}

// ErrCollision is the error of an upstream server that already has a tool
// named as one of retval's.
var ErrCollision = errors.New("tool name collision")

// Relay relays messages from the client (clientIn) to the server
// (serverOut) and from the server (serverIn) to the client (clientOut)
// until one side ends. It returns nil when clientIn ended (the client is
// done: the caller shuts the server down), io.EOF when serverIn ended
// first, and an error wrapping ErrCollision or the I/O error otherwise.
func (p *Proxy) Relay(clientIn io.Reader, clientOut io.Writer, serverIn io.Reader, serverOut io.Writer) error {
	done := make(chan error, 2)
	go func() { done <- p.fromClient(clientIn, clientOut, serverOut) }()
	go func() {
		err := p.fromServer(serverIn, clientOut)
		if err == nil {
			err = io.EOF
		}
		done <- err
	}()
	return <-done
}

// readFrames calls f with each newline-delimited frame of r, however long
// (the line is grown as it comes: no line limit), until r ends. A last
// line without its newline is a frame, unless r was cut short
// (iox.PipeReader.Cut): then it is half of one, and dropped.
func readFrames(r io.Reader, f func(frame []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if c, ok := r.(interface{ Cut() bool }); ok && err == io.EOF && c.Cut() {
			return nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := f(line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// writeFrame writes one frame, ending it with a newline.
func writeFrame(w io.Writer, frame []byte) error {
	if len(frame) > 0 && frame[len(frame)-1] == '\n' {
		_, err := w.Write(frame)
		return err
	}
	_, err := w.Write(append(frame[:len(frame):len(frame)], '\n'))
	return err
}

func (p *Proxy) toClient(w io.Writer, frame []byte) error {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return writeFrame(w, frame)
}

// envelope is what the relay reads of a JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (e *envelope) isRequest() bool { return e.Method != "" && len(e.ID) > 0 }

// idKey is a message id as the pending map keys it.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// splitBatch returns the messages of a frame and whether it is a batch.
func splitBatch(frame []byte) ([]json.RawMessage, bool) {
	t := bytes.TrimSpace(frame)
	if len(t) > 0 && t[0] == '[' {
		var msgs []json.RawMessage
		if json.Unmarshal(t, &msgs) == nil {
			return msgs, true
		}
	}
	return []json.RawMessage{t}, false
}

// fromClient relays the client's messages to the server, answering calls
// of retval's tools itself and expanding the references in the arguments
// of the others'.
func (p *Proxy) fromClient(in io.Reader, clientOut, serverOut io.Writer) error {
	return readFrames(in, func(frame []byte) error {
		msgs, batch := splitBatch(frame)
		var forward [][]byte
		var local [][]byte
		var forwardIDs []string // the requests forwarded: answers will come
		rewritten := false      // a message of forward is not the client's
		for _, m := range msgs {
			var e envelope
			if json.Unmarshal(m, &e) != nil || !e.isRequest() {
				forward = append(forward, m)
				continue
			}
			switch e.Method {
			case "tools/call":
				var params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				}
				json.Unmarshal(e.Params, &params)
				if IsOwnTool(params.Name) {
					local = append(local, response(e.ID, p.Tools.Call(params.Name, params.Arguments)))
					continue
				}
				x := p.expandCall(m, params.Name, params.Arguments)
				if x.refused != nil {
					local = append(local, response(e.ID, x.refused))
					continue
				}
				if !bytes.Equal(x.msg, m) {
					m, rewritten = x.msg, true
				}
				p.expect(e.ID, watched{what: "tools/call " + params.Name, summary: x.summary})
			case "tools/list", "initialize", "server/discover":
				p.expect(e.ID, watched{what: e.Method})
			}
			forwardIDs = append(forwardIDs, idKey(e.ID))
			p.track(e.ID)
			forward = append(forward, m)
		}
		if batch && len(local) > 0 && len(forwardIDs) > 0 {
			// The server answers the rest of the batch: the proxy's own
			// answers go into that array.
			p.hold(&heldBatch{answers: local, ids: forwardIDs})
			local = nil
		}
		var err error
		switch {
		case len(forward) == 0:
		case len(forward) == len(msgs) && !rewritten:
			err = writeFrame(serverOut, frame)
		case !batch:
			err = writeFrame(serverOut, forward[0])
		default:
			err = writeFrame(serverOut, joinBatch(forward))
		}
		if err != nil || len(local) == 0 {
			return err
		}
		out := local[0]
		if batch {
			out = joinBatch(local)
		}
		return p.toClient(clientOut, out)
	})
}

func (p *Proxy) track(id json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight == nil {
		p.inflight = map[string]json.RawMessage{}
	}
	p.inflight[idKey(id)] = append(json.RawMessage(nil), bytes.TrimSpace(id)...)
}

func (p *Proxy) untrack(id json.RawMessage) {
	p.mu.Lock()
	delete(p.inflight, idKey(id))
	p.mu.Unlock()
}

// AnswerPending answers every request the server was sent and did not
// answer with a JSON-RPC error (-32603) saying why, and sends the
// proxy's own answers it held for their batches: a client must not wait
// for ever on a server that is gone.
func (p *Proxy) AnswerPending(clientOut io.Writer, why string) {
	p.mu.Lock()
	ids := p.inflight
	p.inflight = nil
	batches := map[*heldBatch][][]byte{}
	var single [][]byte
	for k, id := range ids {
		e := errorResponse(id, -32603, "retval: "+why)
		if b := p.batches[k]; b != nil {
			batches[b] = append(batches[b], e)
			continue
		}
		single = append(single, e)
	}
	for _, b := range p.batches {
		if _, ok := batches[b]; !ok {
			batches[b] = nil
		}
	}
	p.batches, p.pending = nil, nil
	p.mu.Unlock()
	for _, e := range single {
		p.toClient(clientOut, e)
	}
	for b, errs := range batches {
		p.toClient(clientOut, joinBatch(append(errs, b.answers...)))
	}
	if len(ids) > 0 {
		p.logf("answered %d request(s) the server did not: %s", len(ids), why)
	}
}

func (p *Proxy) hold(b *heldBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.batches == nil {
		p.batches = map[string]*heldBatch{}
	}
	for _, id := range b.ids {
		p.batches[id] = b
	}
}

// held returns, once, the proxy's own answers of the batch whose request
// id answers, nil when there are none.
func (p *Proxy) held(id json.RawMessage) [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.batches[idKey(id)]
	if b == nil {
		return nil
	}
	for _, k := range b.ids {
		delete(p.batches, k)
	}
	return b.answers
}

func (p *Proxy) expect(id json.RawMessage, w watched) {
	p.mu.Lock()
	if p.pending == nil {
		p.pending = map[string]watched{}
	}
	p.pending[idKey(id)] = w
	p.mu.Unlock()
}

// answered returns, once, what the request id answers was; what is ""
// for a request the proxy does not watch.
func (p *Proxy) answered(id json.RawMessage) watched {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := idKey(id)
	w := p.pending[k]
	delete(p.pending, k)
	return w
}

func joinBatch(msgs [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(msgs, []byte{','})...), ']')
}

// response renders a JSON-RPC response with result v.
func response(id json.RawMessage, v any) []byte {
	res, err := jsonstr.Marshal(v)
	if err != nil {
		return errorResponse(id, -32603, err.Error())
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(bytes.TrimSpace(id)) + `,"result":` + string(res) + `}`)
}

func errorResponse(id json.RawMessage, code int, msg string) []byte {
	m, _ := jsonstr.Marshal(msg)
	return []byte(`{"jsonrpc":"2.0","id":` + string(bytes.TrimSpace(id)) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + string(m) + `}}`)
}

// fromServer relays the server's messages to the client, rewriting the
// results of the requests the proxy watches.
func (p *Proxy) fromServer(in io.Reader, clientOut io.Writer) error {
	return readFrames(in, func(frame []byte) error {
		msgs, batch := splitBatch(frame)
		changed := false
		out := make([][]byte, len(msgs))
		var extra [][]byte // the proxy's own answers to the same batch
		for i, m := range msgs {
			out[i] = m
			// The id and method first: the result is decoded (copied) only
			// for the requests the proxy watches.
			var h struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(m, &h); err != nil {
				// stdout carries only JSON-RPC: a line of the server's that
				// is not (a log line, half a frame) never reaches the client.
				p.logf("the server wrote a line that is not a JSON-RPC message, dropped: %.80q", m)
				out[i] = nil
				changed = true
				continue
			}
			if h.Method != "" || len(h.ID) == 0 {
				continue
			}
			p.untrack(h.ID)
			if own := p.held(h.ID); own != nil {
				extra = append(extra, own...)
			}
			w := p.answered(h.ID)
			if w.what == "" {
				continue
			}
			var e envelope
			if json.Unmarshal(m, &e) != nil || len(e.Result) == 0 {
				continue
			}
			res, err := p.rewrite(w, e.Result)
			if err != nil {
				// The client must not wait for an answer that will not
				// come: it gets the reason, and the relay ends.
				p.toClient(clientOut, errorResponse(e.ID, -32603, "retval: "+err.Error()))
				return err
			}
			if res != nil {
				out[i] = []byte(`{"jsonrpc":"2.0","id":` + string(bytes.TrimSpace(e.ID)) + `,"result":` + string(res) + `}`)
				changed = true
			}
		}
		out = slices.DeleteFunc(out, func(m []byte) bool { return m == nil })
		switch {
		case len(out) == 0 && len(extra) == 0:
			return nil
		case len(extra) > 0:
			return p.toClient(clientOut, joinBatch(append(out, extra...)))
		case !changed:
			return p.toClient(clientOut, frame)
		case batch:
			return p.toClient(clientOut, joinBatch(out))
		}
		return p.toClient(clientOut, out[0])
	})
}

// rewrite returns the new result of a watched request, or nil to relay it
// unchanged.
func (p *Proxy) rewrite(w watched, result json.RawMessage) (json.RawMessage, error) {
	switch {
	case w.what == "initialize" || w.what == "server/discover":
		return rewriteInitialize(result), nil
	case w.what == "tools/list":
		return p.rewriteToolsList(result)
	case strings.HasPrefix(w.what, "tools/call "):
		var res json.RawMessage
		if !p.Off {
			res = p.retainResult(strings.TrimPrefix(w.what, "tools/call "), result)
		}
		if w.summary == "" {
			return res, nil
		}
		// The summary goes after retention: the value holds what the
		// server answered and nothing else, and the line is never hidden
		// behind a stub.
		base := res
		if base == nil {
			base = result
		}
		if s := withSummary(base, w.summary); s != nil {
			return s, nil
		}
		return res, nil
	}
	return nil, nil
}

// object decodes a JSON object into its members, or returns nil.
func object(b json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// rewriteInitialize adds the tools capability, when missing, and
// ProxyInstructions (after the server's own) to the result of initialize
// or server/discover.
func rewriteInitialize(result json.RawMessage) json.RawMessage {
	m := object(result)
	if m == nil {
		return nil
	}
	caps := object(m["capabilities"])
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	if _, ok := caps["tools"]; !ok {
		caps["tools"] = json.RawMessage(`{}`)
	}
	m["capabilities"], _ = jsonstr.Marshal(caps)
	instr := ProxyInstructions
	var old string
	if json.Unmarshal(m["instructions"], &old) == nil && old != "" {
		instr = old + "\n\n" + ProxyInstructions
	}
	m["instructions"], _ = jsonstr.Marshal(instr)
	b, _ := jsonstr.Marshal(m)
	return b
}

// rewriteToolsList removes every outputSchema (the proxy may remove the
// structured content it describes, and a client checks what is left
// against it) and appends retval's tools to the last page.
func (p *Proxy) rewriteToolsList(result json.RawMessage) (json.RawMessage, error) {
	m := object(result)
	if m == nil {
		return nil, nil
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(m["tools"], &tools) != nil {
		return nil, nil
	}
	for _, t := range tools {
		delete(t, "outputSchema")
		var name string
		json.Unmarshal(t["name"], &name)
		if IsOwnTool(name) {
			return nil, fmt.Errorf("%w: the server already has a tool named %q, one of retval's own (%s, %s, %s): proxy a server without it, or read its values with retval mcp serve as a server of its own", ErrCollision, name, ToolPeek, ToolResolve, ToolList)
		}
	}
	all := make([]any, 0, len(tools)+3)
	for _, t := range tools {
		all = append(all, t)
	}
	var cursor string
	json.Unmarshal(m["nextCursor"], &cursor)
	if cursor == "" {
		for _, d := range p.Tools.Defs() {
			all = append(all, d)
		}
	}
	var err error
	if m["tools"], err = jsonstr.Marshal(all); err != nil {
		return nil, err
	}
	return jsonstr.Marshal(m)
}

// retainResult retains what is big in a tools/call result and returns
// the result showing stubs instead, or nil to relay it unchanged (small,
// or not stored). The rule — which blocks become stubs, what becomes of
// structuredContent — is internal/mcpresult's, shared with the hooks.
func (p *Proxy) retainResult(tool string, result json.RawMessage) json.RawMessage {
	call := ""
	return mcpresult.Rewrite(result, p.Tools.Limits.Effective().Threshold, tool, func(text, suffix, tool, note string) (string, bool) {
		if call == "" {
			call = p.callID()
		}
		return p.retain(strings.NewReader(text), call+suffix, tool, note)
	})
}

// callID is the call id of the next value: the session and a counter.
func (p *Proxy) callID() string {
	return p.Session + "-" + strconv.FormatInt(p.calls.Add(1), 10)
}

// retain keeps r as the value of call and returns its stub, with note
// after it; false when it is within the threshold or could not be stored
// (the reason is logged).
func (p *Proxy) retain(r io.Reader, call, tool, note string) (string, bool) {
	res, err := p.Tools.Store.Retain(r, io.Discard, retain.RetainOptions{
		Run: p.Tools.Run, Call: call, Meta: retain.Meta{Tool: tool}, Limits: p.Tools.Limits, Note: note,
		// legacy: at capacity the result passes whole (bounded would
		// show a header pointing at nothing).
		Policy: retain.PolicyLegacy, Compress: p.Compress, ReadMore: retain.ReadMorePeek, Via: "proxy",
	})
	switch {
	case err != nil:
		p.logf("the result of %s was not retained and is relayed as it is: %v", tool, err)
	case res.Warning != nil:
		p.logf("the result of %s was not retained and is relayed as it is: %v", tool, res.Warning)
	case res.Verbatim:
	case !res.Retained:
		p.logf("the result of %s was not retained (%s) and is relayed as it is", tool, res.NotRetained)
	default:
		return res.Stub + note, true
	}
	return "", false
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, "retval: mcp proxy: "+format+"\n", args...)
	}
}
