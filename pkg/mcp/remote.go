package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RunRemote relays between the client (clientIn, clientOut) and the
// Streamable HTTP MCP server at url, through p, until the client is done
// or ctx is. It speaks the transport itself (MCP 2025-03-26 and later):
// each message the client sends is POSTed as it is; the server's answer,
// one JSON message or an SSE stream of them, reaches the client message
// by message; the session id the server gives at initialize goes with
// every later request, and so does the protocol version it agreed; a GET
// stream carries the server's own messages where it offers one; a DELETE
// ends the session. Messages cross unchanged but for insignificant
// whitespace. httpClient nil is http.DefaultClient.
func RunRemote(ctx context.Context, p *Proxy, url string, httpClient *http.Client, clientIn io.Reader, clientOut io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	defer toServerR.Close()
	defer fromServerR.Close()
	s := &streamable{ctx: ctx, url: url, hc: httpClient, out: fromServerW, log: p.logf}
	defer s.close()
	sendErr := make(chan error, 1)
	go func() {
		sendErr <- readFrames(toServerR, func(frame []byte) error {
			msgs, _ := splitBatch(frame)
			for _, m := range msgs {
				if err := s.send(m); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	relayErr := make(chan error, 1)
	go func() { relayErr <- p.Relay(clientIn, clientOut, fromServerR, toServerW) }()
	select {
	case err := <-relayErr:
		return err // nil: the client is done
	case err := <-sendErr:
		if err != nil {
			return fmt.Errorf("sending to %s: %w", url, err)
		}
		return nil
	case <-ctx.Done():
		return nil
	}
}

// streamable is the client side of one Streamable HTTP session.
type streamable struct {
	ctx context.Context
	url string
	hc  *http.Client
	out io.Writer // frames for the relay, one message each
	log func(format string, args ...any)

	outMu    sync.Mutex // one message at a time to out
	mu       sync.Mutex // guards what follows
	session  string     // Mcp-Session-Id, once the server gave one
	version  string     // the protocol version initialize agreed
	initID   string     // the id of the initialize request, until answered
	listened bool       // the GET stream was asked for
	wg       sync.WaitGroup
}

// send POSTs one message and hands the answer to a reader of its own, so
// that a long answer (a stream of progress, then the result) does not
// hold up the messages after it. A server that fails a request (an HTTP
// error, a body that is not JSON, a stream cut before the answer) gets
// that request answered with a JSON-RPC error (-32603) naming what went
// wrong, and the session goes on; send fails only when ctx is done.
func (s *streamable) send(m json.RawMessage) error {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(m, &head)
	if head.Method == "initialize" {
		s.mu.Lock()
		s.initID = string(head.ID)
		s.mu.Unlock()
	}
	var id json.RawMessage // the answer owed, if any
	if len(head.ID) > 0 && head.Method != "" {
		id = head.ID
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.url, bytes.NewReader(m))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		s.failed(id, fmt.Sprintf("could not reach the server at %s: %v", s.url, err))
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		msg := fmt.Sprintf("the server at %s answered %s", s.url, resp.Status)
		if t := strings.TrimSpace(string(b)); t != "" {
			msg += ": " + t
		}
		s.failed(id, msg)
		return nil
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.mu.Lock()
		s.session = sid
		s.mu.Unlock()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer resp.Body.Close()
		s.answer(resp, id)
	}()
	if head.Method == "notifications/initialized" {
		s.listen()
	}
	return nil
}

// failed answers the request id (nil: a notification, nothing owed) with
// a JSON-RPC error, and says what went wrong on the proxy's log.
func (s *streamable) failed(id json.RawMessage, msg string) {
	s.logf("%s", msg)
	if id == nil {
		return
	}
	s.deliverRaw(errorResponse(id, -32603, "retval: "+msg))
}

func (s *streamable) logf(format string, args ...any) {
	if s.log != nil {
		s.log(format, args...)
	}
}

func (s *streamable) headers(req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	if s.version != "" {
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
}

// listen opens the GET stream of the server's own messages, where the
// server offers one (405 says it does not), and resumes it where the
// server gave event ids.
func (s *streamable) listen() {
	s.mu.Lock()
	if s.listened {
		s.mu.Unlock()
		return
	}
	s.listened = true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		st := &sseState{}
		for s.ctx.Err() == nil {
			resp, err := s.get(st.lastID)
			if err != nil || resp.StatusCode != http.StatusOK {
				if resp != nil {
					resp.Body.Close()
				}
				return
			}
			err = s.readStream(resp.Body, st, nil)
			resp.Body.Close()
			if st.lastID == "" || err == errNotJSON || !st.wait(s.ctx) {
				return
			}
		}
	}()
}

// get opens a GET stream, resuming after lastID when there is one.
func (s *streamable) get(lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	s.headers(req)
	return s.hc.Do(req)
}

// answer passes on the answer to one POST, owed for request id (nil for
// a notification): a JSON body is one message (or a batch), an SSE body a
// message per event; an empty one (202) none. An SSE stream that ends
// before the answer — the server's polling pattern, or a cut — is resumed
// with GET and Last-Event-ID where the server gave event ids, after the
// retry delay it asked for; otherwise, or when resuming fails, the request
// is answered with an error.
func (s *streamable) answer(resp *http.Response, id json.RawMessage) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		switch {
		case err != nil:
			s.failed(id, fmt.Sprintf("reading the answer of the server at %s: %v", s.url, err))
		case len(bytes.TrimSpace(b)) == 0:
			if id != nil {
				s.failed(id, fmt.Sprintf("the server at %s answered a request with an empty body", s.url))
			}
		case !json.Valid(b):
			s.failed(id, fmt.Sprintf("the answer of the server at %s is not JSON: %.80q", s.url, b))
		default:
			s.deliver(b)
		}
		return
	case "text/event-stream":
	default:
		if id != nil {
			s.failed(id, fmt.Sprintf("the server at %s answered with content type %q, not JSON or an event stream", s.url, ct))
		}
		return
	}
	st := &sseState{owed: id}
	body := resp.Body
	for {
		err := s.readStream(body, st, id)
		if st.answered || id == nil {
			return
		}
		if err == errNotJSON {
			s.failed(id, fmt.Sprintf("an event from the server at %s is not JSON", s.url))
			return
		}
		if st.lastID == "" {
			why := "ended"
			if err != nil {
				why = "broke (" + err.Error() + ")"
			}
			s.failed(id, fmt.Sprintf("the event stream of the server at %s %s before it answered", s.url, why))
			return
		}
		if !st.wait(s.ctx) {
			return
		}
		r, err := s.get(st.lastID)
		if err != nil || r.StatusCode != http.StatusOK {
			status := "no answer"
			if err != nil {
				status = err.Error()
			} else {
				status = r.Status
				r.Body.Close()
			}
			s.failed(id, fmt.Sprintf("the event stream of the server at %s ended before it answered, and resuming it after event %q failed: %s", s.url, st.lastID, status))
			return
		}
		body = r.Body
		defer r.Body.Close()
	}
}

// sseState is what one stream (and its resumptions) has seen.
type sseState struct {
	owed     json.RawMessage // the request whose answer the stream carries
	answered bool
	lastID   string        // the id of the last event, for Last-Event-ID
	retry    time.Duration // the delay the server asked for before resuming
}

// wait waits the retry delay (1 s unless the server said otherwise),
// false when ctx ended first.
func (st *sseState) wait(ctx context.Context) bool {
	d := st.retry
	if d <= 0 {
		d = time.Second
	}
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

var errNotJSON = errors.New("an event is not JSON")

// readStream delivers the messages of an SSE body, noting event ids, the
// retry delay and whether the answer to st.owed came.
func (s *streamable) readStream(r io.Reader, st *sseState, owed json.RawMessage) error {
	return readEvents(r, func(ev event) error {
		if ev.id != "" {
			st.lastID = ev.id
		}
		if ev.retry > 0 {
			st.retry = ev.retry
		}
		if len(bytes.TrimSpace(ev.data)) == 0 {
			return nil // a priming event, or one of ids and retry alone
		}
		if !json.Valid(ev.data) {
			return errNotJSON
		}
		if owed != nil && answers(ev.data, owed) {
			st.answered = true
		}
		return s.deliver(ev.data)
	})
}

// answers reports whether message m (or a batch) is the answer to id.
func answers(m []byte, id json.RawMessage) bool {
	msgs, _ := splitBatch(m)
	for _, x := range msgs {
		var h struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(x, &h) == nil && h.Method == "" && idKey(h.ID) == idKey(id) {
			return true
		}
	}
	return false
}

// deliver writes one message (or batch) from the server for the relay,
// as one line, noting the protocol version initialize agreed.
func (s *streamable) deliver(b []byte) error {
	var line bytes.Buffer
	if err := json.Compact(&line, b); err != nil {
		return fmt.Errorf("a message from the server is not JSON: %w", err)
	}
	s.mu.Lock()
	if s.initID != "" {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(line.Bytes(), &r) == nil && string(r.ID) == s.initID {
			s.version, s.initID = r.Result.ProtocolVersion, ""
		}
	}
	s.mu.Unlock()
	return s.deliverRaw(line.Bytes())
}

func (s *streamable) deliverRaw(line []byte) error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, err := s.out.Write(append(line[:len(line):len(line)], '\n'))
	return err
}

// close ends the session (DELETE, as the transport asks) and waits for
// the readers.
func (s *streamable) close() {
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	if session != "" {
		if req, err := http.NewRequest(http.MethodDelete, s.url, nil); err == nil {
			req.Header.Set("Mcp-Session-Id", session)
			if resp, err := s.hc.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	s.wg.Wait()
}

// event is one SSE event: its id (empty when it named none), the retry
// delay it set, and its data (the lines of a multi-line data field joined
// by newlines).
type event struct {
	id    string
	retry time.Duration
	data  []byte
}

// readEvents calls f with each event of an SSE stream until it ends, as
// the SSE format defines events: comments (":…") are skipped, an event
// is dispatched at a blank line, and an event with no data (a priming
// event, an id or retry alone) is handed over with empty data for its
// id and retry. A stream that ends in the middle of an event drops it.
func readEvents(r io.Reader, f func(event) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var ev event
	seen := false
	for {
		line, err := br.ReadBytes('\n')
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case complete && len(line) == 0:
			if seen {
				ev.data = bytes.TrimSuffix(ev.data, []byte{'\n'})
				if ferr := f(ev); ferr != nil {
					return ferr
				}
			}
			ev, seen = event{}, false
		case !complete:
			// The last bytes of a stream cut short: not a line.
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				ev.data = append(append(ev.data, value...), '\n')
			case "id":
				if !bytes.ContainsRune(value, 0) {
					ev.id = string(value)
				}
			case "retry":
				if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
					ev.retry = time.Duration(ms) * time.Millisecond
				}
			}
			seen = true
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
