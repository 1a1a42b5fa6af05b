package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/retval/retval/internal/jsonstr"
)

// Instructions is the line of instructions a client gets from retval's
// server and from the proxy.
const Instructions = `Big tool results are retained and shown as a stub ending "[read more: peek ID ...]": read them with retval_peek (id, lines, query, bytes), quote exact parts with retval_resolve, list them with retval_list.`

// serveVersions are the protocol versions Serve speaks, newest first. A
// client that asks for another gets the newest; one that starts with
// server/discover (2026-07-28) is told the method is unknown, and falls
// back to initialize.
var serveVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Serve offers t's tools over in and out (newline-delimited JSON-RPC, as on
// stdio) until in ends or ctx is done. It answers each request in turn, as
// it reads it (a call takes well under a millisecond), so a client that
// writes its requests and closes its end still gets every answer.
func Serve(ctx context.Context, t *Tools, version string, in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	errc := make(chan error, 1)
	go func() { errc <- serveFrames(t, version, in, w) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil // a read of in may still be waiting: it is left to exit
	}
}

func serveFrames(t *Tools, version string, in io.Reader, w *bufio.Writer) error {
	return readFrames(in, func(frame []byte) error {
		msgs, batch := splitBatch(frame)
		var answers [][]byte
		for _, m := range msgs {
			if a := t.answer(m, version); a != nil {
				answers = append(answers, a)
			}
		}
		switch {
		case len(answers) == 0:
			return nil
		case batch:
			if err := writeFrame(w, joinBatch(answers)); err != nil {
				return err
			}
		default:
			if err := writeFrame(w, answers[0]); err != nil {
				return err
			}
		}
		return w.Flush()
	})
}

// answer returns the response to one message, or nil for a notification
// or a response.
func (t *Tools) answer(m json.RawMessage, version string) []byte {
	var e envelope
	if err := json.Unmarshal(m, &e); err != nil {
		return errorResponse(json.RawMessage("null"), -32700, "parse error: "+err.Error())
	}
	if !e.isRequest() {
		return nil
	}
	if id := bytes.TrimSpace(e.ID); id[0] != '"' && !isInteger(id) {
		// JSON-RPC 2.0: an id is a string or a number; MCP: a string or an
		// integer, never null.
		return errorResponse(json.RawMessage("null"), -32600, "invalid request: the id is "+jsonKind(id)+", not a string or an integer")
	}
	switch e.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(e.Params, &p)
		v := serveVersions[0]
		if slices.Contains(serveVersions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		return response(e.ID, map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": "retval", "version": version},
			"instructions":    Instructions,
		})
	case "ping":
		return response(e.ID, struct{}{})
	case "tools/list":
		return response(e.ID, map[string]any{"tools": t.Defs()})
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(e.Params, &p) != nil || !IsOwnTool(p.Name) {
			return errorResponse(e.ID, -32602, "unknown tool "+strconvQuote(p.Name)+": the tools are retval_peek, retval_resolve and retval_list")
		}
		return response(e.ID, t.Call(p.Name, p.Arguments))
	}
	return errorResponse(e.ID, -32601, "method not found: "+e.Method)
}

// isInteger reports whether a JSON number is an integer (no fraction, no
// exponent).
func isInteger(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(v []byte) string {
	if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
		return "a number with a fraction or an exponent"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "not JSON"
}

func strconvQuote(s string) string {
	b, _ := jsonstr.Marshal(s)
	return string(b)
}
