package opencode

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// mockAPI is a scripted stand-in for an OpenAI-compatible chat
// completions API. Each request is answered by decide, which sees the
// conversation so far (the prompt, the tools offered, the tool results)
// and never how many requests came before. Requests that offer no tools
// (opencode's title generation) get a short text.
type mockAPI struct {
	t      testing.TB
	decide func(c conversation) reply
	url    string

	e2etest.Log // every request, in order

	mu     sync.Mutex
	bodies [][]byte // every request's body
}

// Saw reports whether any request the model received held s anywhere.
func (m *mockAPI) Saw(s string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bodies {
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// conversation is what one request told the mock.
type conversation = e2etest.Conversation

// toolResult is one tool result the model received.
type toolResult = e2etest.ToolResult

// reply is one assistant turn: text, or one tool call.
type reply struct {
	Text     string
	ToolID   string
	ToolName string
	ToolArgs any
}

func startMock(t testing.TB, decide func(conversation) reply) *mockAPI {
	m := &mockAPI{t: t, decide: decide}
	m.url = e2etest.Serve(t, m) + "/v1"
	return m
}

func (m *mockAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		m.t.Errorf("mock: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	c, err := parseRequest(body)
	if err != nil {
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.Record(c)
	rep := reply{Text: "Mock title"}
	if len(c.Tools) > 0 {
		rep = m.decide(c)
	}
	// The stream ends with [DONE] and the response with it: the handler
	// returns and the server closes the chunked body.
	sse := e2etest.StartSSE(w)
	for _, ch := range chunks(rep) {
		sse.Event("", ch)
	}
	sse.Event("", "[DONE]")
}

func parseRequest(body []byte) (conversation, error) {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, err
	}
	var c conversation
	for _, tl := range req.Tools {
		c.Tools = append(c.Tools, tl.Function.Name)
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			// opencode run quotes the message it was given.
			c.Prompt = strings.Trim(contentText(msg.Content), `"`)
		case "tool":
			c.Results = append(c.Results, toolResult{ID: msg.ToolCallID, Text: contentText(msg.Content)})
		}
	}
	return c, nil
}

// contentText is a message's content: a string, or its text parts joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// chunks is rep as the chunks of a streamed chat completion.
func chunks(rep reply) []map[string]any {
	if rep.ToolName != "" {
		args, _ := json.Marshal(rep.ToolArgs)
		return []map[string]any{
			chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": rep.ToolID, "type": "function",
				"function": map[string]any{"name": rep.ToolName, "arguments": string(args)}}}}, nil),
			withUsage(chunk(map[string]any{}, "tool_calls")),
		}
	}
	return []map[string]any{
		chunk(map[string]any{"role": "assistant", "content": rep.Text}, nil),
		withUsage(chunk(map[string]any{}, "stop")),
	}
}

func withUsage(c map[string]any) map[string]any {
	c["usage"] = map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	return c
}
