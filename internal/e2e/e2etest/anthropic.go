package e2etest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Anthropic is the Anthropic Messages API (Claude Code): POST
// /v1/messages, streamed or whole, and its token count, answered by the
// wire alone.
type Anthropic struct{}

func (Anthropic) Prefix() string { return "" }

func (Anthropic) Read(w http.ResponseWriter, r *http.Request, body []byte) (Request, error) {
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
		return Request{}, errAnswered
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		return Request{}, errNotFound
	}
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
		return Request{}, err
	}
	out := Request{Stream: req.Stream}
	c := &out.Conversation
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
			return Request{}, fmt.Errorf("message %d: %v", i, err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if i == 0 && !strings.HasPrefix(b.Text, "<system-reminder>") {
					c.Prompt += b.Text
				}
			case "tool_result":
				c.Results = append(c.Results, ToolResult{ID: b.ToolUseID, Text: ContentText(b.Content), IsError: b.IsError})
			}
		}
	}
	return out, nil
}

func (Anthropic) Write(w http.ResponseWriter, req Request, rep Reply, _ int) {
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(anthropicMessage(rep))
		return
	}
	sse := StartSSE(w)
	for _, ev := range anthropicEvents(rep) {
		sse.Event(ev["type"].(string), ev)
	}
}

func anthropicUsage() map[string]any { return map[string]any{"input_tokens": 100, "output_tokens": 10} }

// anthropicMessage is rep as a whole (non-streaming) response.
func anthropicMessage(rep Reply) map[string]any {
	content, stop := anthropicBlocks(rep)
	return map[string]any{"id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-mock",
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage()}
}

func anthropicBlocks(rep Reply) ([]map[string]any, string) {
	if rep.Name != "" {
		return []map[string]any{{"type": "tool_use", "id": rep.ID, "name": rep.Name, "input": rep.Args}}, "tool_use"
	}
	return []map[string]any{{"type": "text", "text": rep.Text}}, "end_turn"
}

// anthropicEvents is rep as the server-sent events of a streamed response.
func anthropicEvents(rep Reply) []map[string]any {
	_, stop := anthropicBlocks(rep)
	evs := []map[string]any{{"type": "message_start", "message": map[string]any{"id": "msg_mock", "type": "message",
		"role": "assistant", "model": "claude-mock", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage()}}}
	if rep.Name != "" {
		input, _ := json.Marshal(rep.Args)
		evs = append(evs,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": rep.ID, "name": rep.Name, "input": map[string]any{}}},
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
