package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// mockAPI is a scripted stand-in for the Anthropic Messages API. Each
// request is answered by decide, which sees the conversation so far (the
// prompt and the last tool result) and never how many requests came
// before, so retries and side requests change nothing.
type mockAPI struct {
	t      testing.TB
	decide func(c conversation) reply
	url    string

	e2etest.Log // every request, in order
}

// conversation is what one request told the mock.
type conversation = e2etest.Conversation

// toolResult is one tool result the model received.
type toolResult = e2etest.ToolResult

// reply is one assistant turn: text, or a tool call (then the turn stops
// for the tool).
type reply struct {
	Text      string
	ToolID    string
	ToolName  string
	ToolInput any
}

func startMock(t testing.TB, decide func(conversation) reply) *mockAPI {
	m := &mockAPI{t: t, decide: decide}
	m.url = e2etest.Serve(t, m)
	return m
}

func (m *mockAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		http.NotFound(w, r)
		return
	}
	c, stream, err := parseRequest(body)
	if err != nil {
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.Body = string(body)
	m.Record(c)
	rep := m.decide(c)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(message(rep))
		return
	}
	sse := e2etest.StartSSE(w)
	for _, ev := range events(rep) {
		sse.Event(ev["type"].(string), ev)
	}
}

// parseRequest reads the conversation out of a Messages API request.
func parseRequest(body []byte) (conversation, bool, error) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, false, err
	}
	var c conversation
	for _, tl := range req.Tools {
		c.Tools = append(c.Tools, tl.Name)
	}
	for i, msg := range req.Messages {
		if msg.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			if i == 0 {
				c.Prompt = s
			}
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if err := json.Unmarshal(msg.Content, &blocks); err != nil {
			return c, false, fmt.Errorf("message %d: %v", i, err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if i == 0 && !strings.HasPrefix(b.Text, "<system-reminder>") {
					c.Prompt += b.Text
				}
			case "tool_result":
				c.Results = append(c.Results, toolResult{ID: b.ToolUseID, Text: resultText(b.Content), IsError: b.IsError})
			}
		}
	}
	return c, req.Stream, nil
}

// resultText is the text of a tool_result's content: a string, or text
// blocks joined.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

func usage() map[string]any { return map[string]any{"input_tokens": 100, "output_tokens": 10} }

// message is rep as a whole (non-streaming) Messages API response.
func message(rep reply) map[string]any {
	content, stop := blocks(rep)
	return map[string]any{"id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-mock",
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage()}
}

func blocks(rep reply) ([]map[string]any, string) {
	if rep.ToolName != "" {
		return []map[string]any{{"type": "tool_use", "id": rep.ToolID, "name": rep.ToolName, "input": rep.ToolInput}}, "tool_use"
	}
	return []map[string]any{{"type": "text", "text": rep.Text}}, "end_turn"
}

// events is rep as the server-sent events of a streamed response.
func events(rep reply) []map[string]any {
	_, stop := blocks(rep)
	evs := []map[string]any{{"type": "message_start", "message": map[string]any{"id": "msg_mock", "type": "message",
		"role": "assistant", "model": "claude-mock", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage()}}}
	if rep.ToolName != "" {
		input, _ := json.Marshal(rep.ToolInput)
		evs = append(evs,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": rep.ToolID, "name": rep.ToolName, "input": map[string]any{}}},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		evs = append(evs,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": rep.Text}})
	}
	return append(evs,
		map[string]any{"type": "content_block_stop", "index": 0},
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}},
		map[string]any{"type": "message_stop"})
}
