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
	"strings"
	"sync"
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
	s := &streamable{ctx: ctx, url: url, hc: httpClient, out: fromServerW, errs: make(chan error, 1)}
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
	case err := <-s.errs:
		return fmt.Errorf("the server at %s: %w", url, err)
	case <-ctx.Done():
		return nil
	}
}

// streamable is the client side of one Streamable HTTP session.
type streamable struct {
	ctx  context.Context
	url  string
	hc   *http.Client
	out  io.Writer  // frames for the relay, one message each
	errs chan error // the first failure of a stream read on its own

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
// hold up the messages after it.
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
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.url, bytes.NewReader(m))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("%s answered %s: %s", s.url, resp.Status, strings.TrimSpace(string(b)))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.mu.Lock()
		s.session = id
		s.mu.Unlock()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer resp.Body.Close()
		if err := s.read(resp); err != nil && s.ctx.Err() == nil {
			s.fail(err)
		}
	}()
	if head.Method == "notifications/initialized" {
		s.listen()
	}
	return nil
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
// server offers one (405 says it does not).
func (s *streamable) listen() {
	s.mu.Lock()
	if s.listened {
		s.mu.Unlock()
		return
	}
	s.listened = true
	s.mu.Unlock()
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	s.headers(req)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		resp, err := s.hc.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			_ = s.read(resp)
		}
	}()
}

// read passes the messages of one answer on: a JSON body is one message
// (or a batch), an SSE body a message per event; an empty one (202) none.
func (s *streamable) read(resp *http.Response) error {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return err
		}
		return s.deliver(b)
	case "text/event-stream":
		return readEvents(resp.Body, s.deliver)
	}
	return nil
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
	line.WriteByte('\n')
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, err := s.out.Write(line.Bytes())
	return err
}

func (s *streamable) fail(err error) {
	select {
	case s.errs <- err:
	default:
	}
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

// readEvents calls f with the data of each event of an SSE stream (the
// lines of a multi-line data field joined by newlines), until the stream
// ends. Comments and the event's id and type are skipped: a Streamable
// HTTP server sends only messages.
func readEvents(r io.Reader, f func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	have := false
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && (err == nil || have):
			if have {
				if ferr := f(data); ferr != nil {
					return ferr
				}
			}
			data, have = data[:0], false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if have {
				data = append(data, '\n')
			}
			data, have = append(data, v...), true
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
