package gemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// mockAPI is a scripted stand-in for the Gemini API's generateContent and
// streamGenerateContent. Each streamed request (a turn of the agent) is
// answered by decide, which sees the conversation so far and never how
// many requests came before; a request for a whole answer (Gemini's side
// questions, as whether the model should speak next) gets "{}".
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

// reply is one model turn: text, or one function call.
type reply struct {
	Text   string
	CallID string
	Name   string
	Args   map[string]any
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
	_, method, _ := strings.Cut(r.URL.Path, ":")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") ||
		method != "generateContent" && method != "streamGenerateContent" {
		http.NotFound(w, r)
		return
	}
	c, err := parseRequest(body)
	if err != nil {
		m.t.Errorf("mock: unreadable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.Body = string(body)
	m.Record(c)
	if method == "generateContent" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(response(reply{Text: "{}"}))
		return
	}
	e2etest.StartSSE(w).Event("", response(m.decide(c)))
}

// parseRequest reads the conversation out of a generateContent request:
// the user's text (the prompt, after Gemini's session context) and every
// function response, its id without the "TOOL__" Gemini puts before the
// model's id.
func parseRequest(body []byte) (conversation, error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					ID       string `json:"id"`
					Name     string `json:"name"`
					Response struct {
						Output *string `json:"output"`
						Error  *string `json:"error"`
					} `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, err
	}
	var c conversation
	for _, tl := range req.Tools {
		for _, f := range tl.FunctionDeclarations {
			c.Tools = append(c.Tools, f.Name)
		}
	}
	for i, msg := range req.Contents {
		for _, p := range msg.Parts {
			if i == 0 && msg.Role == "user" {
				c.Prompt += p.Text
			}
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			res := toolResult{ID: strings.TrimPrefix(fr.ID, fr.Name+"__")}
			switch {
			case fr.Response.Output != nil:
				res.Text = *fr.Response.Output
			case fr.Response.Error != nil:
				res.Text, res.IsError = *fr.Response.Error, true
			default:
				return c, fmt.Errorf("function response %s has neither output nor error", fr.ID)
			}
			c.Results = append(c.Results, res)
		}
	}
	return c, nil
}

// response is rep as a generateContent response.
func response(rep reply) map[string]any {
	part := map[string]any{"text": rep.Text}
	if rep.Name != "" {
		part = map[string]any{"functionCall": map[string]any{"id": rep.CallID, "name": rep.Name, "args": rep.Args}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  model,
	}
}
