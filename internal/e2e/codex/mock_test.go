package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// mockAPI is a scripted stand-in for the OpenAI Responses API. Each
// request is answered by decide, which sees the conversation so far and
// never how many requests came before.
type mockAPI struct {
	t      testing.TB
	decide func(c conversation) reply
	url    string
	// onBody, when set, sees every request body as sent.
	onBody func([]byte)

	e2etest.Log // every request, in order
}

// conversation is what one request told the mock.
type conversation = e2etest.Conversation

// toolResult is one tool result the model received.
type toolResult = e2etest.ToolResult

// reply is one assistant turn: text, or one function call (Namespace set
// for an MCP tool).
type reply struct {
	Text      string
	CallID    string
	Namespace string
	Name      string
	Args      any
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
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	c, err := parseRequest(body)
	if err != nil {
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.onBody != nil {
		m.onBody(body)
	}
	c.Body = string(body)
	n := m.Record(c)
	rep := m.decide(c)
	id := fmt.Sprintf("resp_%d", n)
	sse := e2etest.StartSSE(w)
	sse.Event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	sse.Event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item(rep, n)})
	sse.Event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}})
}

// item is rep as one output item of a response.
func item(rep reply, n int) map[string]any {
	if rep.Name != "" {
		args, _ := json.Marshal(rep.Args)
		it := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": rep.CallID,
			"name": rep.Name, "arguments": string(args)}
		if rep.Namespace != "" {
			it["namespace"] = rep.Namespace
		}
		return it
	}
	return map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n),
		"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}}
}

func parseRequest(body []byte) (conversation, error) {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			CallID  string          `json:"call_id"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, err
	}
	var c conversation
	for _, tl := range req.Tools {
		if tl.Type == "namespace" {
			for _, sub := range tl.Tools {
				c.Tools = append(c.Tools, tl.Name+"/"+sub.Name)
			}
			continue
		}
		c.Tools = append(c.Tools, tl.Name)
	}
	for _, in := range req.Input {
		switch {
		case in.Type == "message" && in.Role == "user":
			if t := contentText(in.Content); !strings.HasPrefix(t, "<") {
				c.Prompt = t
			}
		case in.Type == "function_call_output":
			c.Results = append(c.Results, toolResult{ID: in.CallID, Text: contentText(in.Output)})
		}
	}
	return c, nil
}

// contentText is a string, or the text of content items joined.
func contentText(raw json.RawMessage) string {
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
