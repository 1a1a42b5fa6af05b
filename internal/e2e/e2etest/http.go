package e2etest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// Serve serves h on a free port of 127.0.0.1 until the test ends and
// returns its base URL, http://127.0.0.1:PORT.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// SSE writes a server-sent event stream. The stream ends, and the
// connection's response with it, when the handler returns.
type SSE struct {
	w http.ResponseWriter
}

// StartSSE sends the headers of an event stream.
func StartSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &SSE{w: w}
}

// Event sends one event: its name (none when empty) and data, which is
// sent as it is when a string and as JSON otherwise.
func (s *SSE) Event(name string, data any) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	var b []byte
	if str, ok := data.(string); ok {
		b = []byte(str)
	} else {
		b, _ = json.Marshal(data)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}
