//go:build agents

package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// conversation is what one request told the mock.
type conversation = e2etest.Conversation

// step is one tool call of a scripted session: the tool the model calls
// and its arguments, decided from the conversation so far (a read-more
// call is made from the stub the model received).
type step struct {
	tool string
	args func(c conversation) any
}

// call is a step whose arguments do not depend on the conversation.
func call(tool string, args any) step {
	return step{tool: tool, args: func(conversation) any { return args }}
}

// mockAPI is a scripted stand-in for an OpenAI-compatible chat completions
// API (streamed). A request whose prompt holds the scenario's marker and
// that offers the next step's tool gets that call, with the id call_N (N
// the number of tool results so far); any other request gets a short
// text, which ends the client's turn. It decides from what a request
// holds, never from how many came before.
type mockAPI struct {
	t      testing.TB
	marker string
	steps  []step
	url    string

	e2etest.Log // every request, in order
}

func startMock(t testing.TB, marker string, steps ...step) *mockAPI {
	m := &mockAPI{t: t, marker: marker, steps: steps}
	m.url = e2etest.Serve(t, m) + "/v1"
	return m
}

// callID is the id of the mock's nth tool call.
func callID(n int) string { return fmt.Sprintf("call_%d", n) }

// result is the text the model received for the mock's nth tool call.
func (m *mockAPI) result(n int) string {
	m.t.Helper()
	text, ok := m.Result(callID(n))
	if !ok {
		m.t.Fatalf("the model never received the result of %s (%d requests)", callID(n), len(m.Requests()))
	}
	return text
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
	c, stream, err := parseRequest(body)
	if err != nil {
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !stream {
		m.t.Errorf("mock: a request that does not stream")
		http.Error(w, "only streamed completions are mocked", http.StatusBadRequest)
		return
	}
	m.Record(c)
	delta, finish := map[string]any{"role": "assistant", "content": "Done."}, "stop"
	if n := len(c.Results); n < len(m.steps) && strings.Contains(c.Prompt, m.marker) && offers(c, m.steps[n].tool) {
		args, _ := json.Marshal(m.steps[n].args(c))
		delta = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": callID(n), "type": "function",
			"function": map[string]any{"name": m.steps[n].tool, "arguments": string(args)}}}}
		finish = "tool_calls"
	}
	sse := e2etest.StartSSE(w)
	sse.Event("", chunk(delta, nil))
	end := chunk(map[string]any{}, finish)
	end["usage"] = map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	sse.Event("", end)
	sse.Event("", "[DONE]")
}

func offers(c conversation, tool string) bool {
	for _, name := range c.Tools {
		if name == tool {
			return true
		}
	}
	return false
}

func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// parseRequest reads a chat completions request: its user messages
// joined as the prompt, the tools it offers, the tool results in it, and
// whether it asks for a stream.
func parseRequest(body []byte) (conversation, bool, error) {
	var req struct {
		Stream   bool `json:"stream"`
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
		return conversation{}, false, err
	}
	c := conversation{Body: string(body)}
	for _, tl := range req.Tools {
		c.Tools = append(c.Tools, tl.Function.Name)
	}
	var prompt []string
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			prompt = append(prompt, e2etest.ContentText(msg.Content))
		case "tool":
			c.Results = append(c.Results, e2etest.ToolResult{ID: msg.ToolCallID, Text: e2etest.ContentText(msg.Content)})
		}
	}
	c.Prompt = strings.Join(prompt, "\n")
	return c, req.Stream, nil
}
