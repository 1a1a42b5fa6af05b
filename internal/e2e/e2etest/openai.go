package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Responses is the OpenAI Responses API (Codex): POST /v1/responses,
// streamed. An MCP tool is offered in a namespace, and is named
// NAMESPACE/TOOL in Conversation.Tools.
type Responses struct{}

func (Responses) Prefix() string { return "/v1" }

func (Responses) Read(_ http.ResponseWriter, r *http.Request, body []byte) (Request, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		return Request{}, errNotFound
	}
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
		return Request{}, err
	}
	var c Conversation
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
			// Codex sends its own context as user messages in tags.
			if t := ContentText(in.Content); !strings.HasPrefix(t, "<") {
				c.Prompt = t
			}
		case in.Type == "function_call_output":
			c.Results = append(c.Results, ToolResult{ID: in.CallID, Text: ContentText(in.Output)})
		}
	}
	return Request{Conversation: c, Stream: true}, nil
}

func (Responses) Write(w http.ResponseWriter, _ Request, rep Reply, n int) {
	id := fmt.Sprintf("resp_%d", n)
	sse := StartSSE(w)
	sse.Event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	sse.Event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": responsesItem(rep, n)})
	sse.Event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}})
}

// responsesItem is rep as one output item of a response.
func responsesItem(rep Reply, n int) map[string]any {
	if rep.Name != "" {
		args, _ := json.Marshal(rep.Args)
		it := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": rep.ID,
			"name": rep.Name, "arguments": string(args)}
		if rep.Namespace != "" {
			it["namespace"] = rep.Namespace
		}
		return it
	}
	return map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n),
		"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}}
}

// ChatCompletions is the OpenAI-compatible chat completions API (opencode
// and Kilo, through @ai-sdk/openai-compatible): POST
// /v1/chat/completions, streamed; any other path fails the test. A
// request that offers no tools (the session's title) gets a short text.
type ChatCompletions struct{}

func (ChatCompletions) Prefix() string { return "/v1" }

func (ChatCompletions) Read(_ http.ResponseWriter, r *http.Request, body []byte) (Request, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		return Request{}, errUnexpected
	}
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
		return Request{}, err
	}
	var out Request
	c := &out.Conversation
	for _, tl := range req.Tools {
		c.Tools = append(c.Tools, tl.Function.Name)
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			// opencode run quotes the message it was given; Kilo adds
			// an <environment_details> block after it.
			text, _, _ := strings.Cut(ContentText(msg.Content), "\n\n<environment_details>")
			c.Prompt = strings.Trim(text, `"`)
		case "tool":
			c.Results = append(c.Results, ToolResult{ID: msg.ToolCallID, Text: ContentText(msg.Content)})
		}
	}
	if len(c.Tools) == 0 {
		out.Side = &Reply{Text: "Mock title"}
	}
	out.Stream = true
	return out, nil
}

func (ChatCompletions) Write(w http.ResponseWriter, _ Request, rep Reply, _ int) {
	// The stream ends with [DONE] and the response with it: the handler
	// returns and the server closes the chunked body.
	sse := StartSSE(w)
	for _, ch := range chatChunks(rep) {
		sse.Event("", ch)
	}
	sse.Event("", "[DONE]")
}

func chatChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// chatChunks is rep as the chunks of a streamed chat completion.
func chatChunks(rep Reply) []map[string]any {
	if rep.Name != "" {
		args, _ := json.Marshal(rep.Args)
		return []map[string]any{
			chatChunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": rep.ID, "type": "function",
				"function": map[string]any{"name": rep.Name, "arguments": string(args)}}}}, nil),
			chatUsage(chatChunk(map[string]any{}, "tool_calls")),
		}
	}
	return []map[string]any{
		chatChunk(map[string]any{"role": "assistant", "content": rep.Text}, nil),
		chatUsage(chatChunk(map[string]any{}, "stop")),
	}
}

func chatUsage(c map[string]any) map[string]any {
	c["usage"] = map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	return c
}
