package e2etest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Mock is a scripted stand-in for a model API, served on 127.0.0.1 until
// the test ends. Every request is logged; each model turn is answered by
// the Script, from what the request holds, and never from how many
// requests came before, so a client's retries and side requests change
// nothing. A Wire speaks one API's format (Anthropic Messages, OpenAI
// Responses, OpenAI chat completions, Gemini generateContent).
type Mock struct {
	// URL is the API's base URL, to give the client.
	URL string

	Log // every model turn's request, in order

	t      testing.TB
	wire   Wire
	script Script

	mu     sync.Mutex
	onBody func([]byte)
}

// StartMock serves wire's API on a free port of 127.0.0.1, answering
// each model turn by script.
func StartMock(t testing.TB, wire Wire, script Script) *Mock {
	m := &Mock{t: t, wire: wire, script: script}
	m.URL = Serve(t, m) + wire.Prefix()
	return m
}

// OnBody has f see the body of every model turn's request, as sent, from
// then on.
func (m *Mock) OnBody(f func(body []byte)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onBody = f
}

// Saw reports whether any request the model received held s anywhere.
func (m *Mock) Saw(s string) bool {
	for _, c := range m.Requests() {
		if strings.Contains(c.Body, s) {
			return true
		}
	}
	return false
}

// A Wire is one model API's wire format: how a request reads, and how a
// reply is written. It is the only part of a Mock that knows the API.
type Wire interface {
	// Prefix is the path the API's base URL has ("/v1", or "").
	Prefix() string
	// Read reads a request: the model turn it asks for. It answers by
	// itself a request that is not a model turn (a token count) and
	// returns errAnswered; errNotFound for a path the API does not
	// have, which is answered 404, and errUnexpected for one the
	// client should never ask for (the test fails).
	Read(w http.ResponseWriter, r *http.Request, body []byte) (Request, error)
	// Write answers a model turn with rep; n counts the turns so far,
	// this one included (for the ids of a response).
	Write(w http.ResponseWriter, req Request, rep Reply, n int)
}

var (
	errAnswered   = errors.New("answered by the wire")
	errNotFound   = errors.New("not a path of the API")
	errUnexpected = errors.New("a path the client should not ask for")
)

// Request is a model turn as a Wire read it.
type Request struct {
	Conversation
	// Stream: the client asked for server-sent events.
	Stream bool
	// Side, when set, is the reply to a side request no scenario is
	// about (a session's title, whether the model should speak next):
	// the Script is not asked.
	Side *Reply
}

// Reply is one assistant turn: Text, or a tool call when Name is set.
type Reply struct {
	Text string
	// ID is the call's id; Namespace, for the Responses API, the MCP
	// server's namespace of the tool Name; Args its arguments.
	ID, Namespace, Name string
	Args                any
}

func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := m.wire.Read(w, r, body)
	switch {
	case errors.Is(err, errAnswered):
		return
	case errors.Is(err, errUnexpected):
		m.t.Errorf("mock: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	case errors.Is(err, errNotFound):
		http.NotFound(w, r)
		return
	case err != nil:
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	onBody := m.onBody
	m.mu.Unlock()
	if onBody != nil {
		onBody(body)
	}
	req.Body = string(body)
	n := m.Record(req.Conversation)
	var rep Reply
	if req.Side != nil {
		rep = *req.Side
	} else {
		rep = m.script.Decide(req.Conversation)
	}
	m.wire.Write(w, req, rep, n)
}

// A Script is the model's side of a scenario: a prompt and its turns.
// Each request is answered from its content alone.
type Script struct {
	// Prompt picks the conversations the script plays, by their prompt
	// (PromptIs, PromptPrefix, PromptContains); a request of any other
	// prompt is answered Other. Nil plays every conversation.
	Prompt func(prompt string) bool
	// Turns answer by the newest tool result: the first turn whose After
	// names its call ("" before any tool ran) gives the reply.
	Turns []Turn
	// End is the reply when no turn follows (the model's last word),
	// Other the reply to a request of another prompt; both are the text
	// "done" when left empty.
	End, Other Reply
}

// A Turn is one step of a Script.
type Turn struct {
	// After is the id of the call whose result this turn answers; "" for
	// the conversation's first turn.
	After string
	// Reply is the turn's reply, or Then decides it from the
	// conversation (a command copied out of a stub); Then's false ends
	// the script there, with End.
	Reply Reply
	Then  func(c Conversation) (Reply, bool)
}

// Decide is the script's reply to a request that holds c.
func (s Script) Decide(c Conversation) Reply {
	or := func(r Reply) Reply {
		if r.Text == "" && r.Name == "" {
			return Reply{Text: "done"}
		}
		return r
	}
	if s.Prompt != nil && !s.Prompt(c.Prompt) {
		return or(s.Other)
	}
	after := ""
	if last := c.Last(); last != nil {
		after = last.ID
	}
	for _, t := range s.Turns {
		if t.After != after {
			continue
		}
		if t.Then == nil {
			return t.Reply
		}
		if rep, ok := t.Then(c); ok {
			return rep
		}
		break
	}
	return or(s.End)
}

// PromptIs picks the conversations whose prompt is p.
func PromptIs(p string) func(string) bool { return func(s string) bool { return s == p } }

// PromptPrefix picks the conversations whose prompt begins with p.
func PromptPrefix(p string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, p) }
}

// PromptContains picks the conversations whose prompt holds p (a client
// that puts its own context before the user's words).
func PromptContains(p string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, p) }
}
