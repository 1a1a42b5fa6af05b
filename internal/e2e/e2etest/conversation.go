package e2etest

import (
	"encoding/json"
	"strings"
	"sync"
)

// Conversation is what a mock model API learned from one request: the
// prompt, the tools offered, and the tool results so far, oldest first.
type Conversation struct {
	Prompt  string
	Tools   []string
	Results []ToolResult
	// Body is the request as the client sent it: what a test checks the
	// model's history for.
	Body string
}

// Last is the newest tool result, or nil.
func (c Conversation) Last() *ToolResult {
	if len(c.Results) == 0 {
		return nil
	}
	return &c.Results[len(c.Results)-1]
}

// ToolResult is one tool result the model received: the call it answers
// and its text.
type ToolResult struct {
	ID      string
	Text    string
	IsError bool
}

// Log is a mock's record of every request, safe for concurrent use.
type Log struct {
	mu  sync.Mutex
	log []Conversation
}

// Record adds c and returns how many requests there were.
func (l *Log) Record(c Conversation) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, c)
	return len(l.log)
}

// Requests returns every request, in order.
func (l *Log) Requests() []Conversation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Conversation(nil), l.log...)
}

// Result is the text the model received for tool call id.
func (l *Log) Result(id string) (string, bool) {
	for _, c := range l.Requests() {
		for _, r := range c.Results {
			if r.ID == id {
				return r.Text, true
			}
		}
	}
	return "", false
}

// Tools returns every tool any request offered.
func (l *Log) Tools() []string {
	var all []string
	for _, c := range l.Requests() {
		all = append(all, c.Tools...)
	}
	return all
}

// Result is the result the model received for call id in this request.
func (c Conversation) Result(id string) (ToolResult, bool) {
	for _, r := range c.Results {
		if r.ID == id {
			return r, true
		}
	}
	return ToolResult{}, false
}

// ContentText is the text of a message's content: a string, or a list of
// parts whose texts are joined.
func ContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
