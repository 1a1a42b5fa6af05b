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
// and Kilo, through @ai-sdk/openai-compatible; Qwen Code; Cline): POST
// /v1/chat/completions, streamed when the request asks for it; any other
// path fails the test. A request that offers no tools (the session's
// title) gets a short text.
//
// The prompt is the last user message, without the quotes opencode run
// puts around it and the <environment_details> block Kilo adds after it.
type ChatCompletions struct {
	// JoinUserMessages makes the prompt every user message of the
	// request, joined by newlines, as sent: for a client that sends its
	// own context as user messages beside the user's words (Qwen Code,
	// Cline), with a Script that picks its prompt by PromptContains.
	JoinUserMessages bool
}

func (ChatCompletions) Prefix() string { return "/v1" }

func (cc ChatCompletions) Read(_ http.ResponseWriter, r *http.Request, body []byte) (Request, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		return Request{}, errUnexpected
	}
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
		return Request{}, err
	}
	out := Request{Stream: req.Stream}
	c := &out.Conversation
	for _, tl := range req.Tools {
		c.Tools = append(c.Tools, tl.Function.Name)
	}
	var user []string
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			user = append(user, ContentText(msg.Content))
		case "tool":
			c.Results = append(c.Results, ToolResult{ID: msg.ToolCallID, Text: ContentText(msg.Content)})
		}
	}
	switch {
	case cc.JoinUserMessages:
		c.Prompt = strings.Join(user, "\n")
	case len(user) > 0:
		text, _, _ := strings.Cut(user[len(user)-1], "\n\n<environment_details>")
		c.Prompt = strings.Trim(text, `"`)
	}
	if len(c.Tools) == 0 {
		out.Side = &Reply{Text: "Mock title"}
	}
	return out, nil
}

func (ChatCompletions) Write(w http.ResponseWriter, req Request, rep Reply, _ int) {
	msg, finish := chatMessage(rep)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(chatUsage(map[string]any{"id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": "mock-model",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}}))
		return
	}
	// The stream ends with [DONE] and the response with it: the handler
	// returns and the server closes the chunked body.
	sse := StartSSE(w)
	sse.Event("", chatChunk(msg, nil))
	sse.Event("", chatUsage(chatChunk(map[string]any{}, finish)))
	sse.Event("", "[DONE]")
}

// chatMessage is rep as an assistant message (a stream's one delta) and
// the reason the completion finished.
func chatMessage(rep Reply) (map[string]any, string) {
	if rep.Name != "" {
		args, _ := json.Marshal(rep.Args)
		return map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": rep.ID, "type": "function",
			"function": map[string]any{"name": rep.Name, "arguments": string(args)}}}}, "tool_calls"
	}
	return map[string]any{"role": "assistant", "content": rep.Text}, "stop"
}

func chatChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func chatUsage(c map[string]any) map[string]any {
	c["usage"] = map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	return c
}
