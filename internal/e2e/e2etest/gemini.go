package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Gemini is the Gemini API (Gemini CLI, through GOOGLE_GEMINI_BASE_URL):
// POST /v1beta/models/MODEL:streamGenerateContent is a turn of the agent;
// :generateContent, a request for a whole answer, is one of Gemini CLI's
// side questions (whether the model should speak next) and gets "{}".
// Model is the model the responses name.
type Gemini struct{ Model string }

func (Gemini) Prefix() string { return "" }

// Read reads the conversation out of a generateContent request: the
// user's text (the prompt, after Gemini's session context) and every
// function response, its id without the "TOOL__" Gemini puts before the
// model's id.
func (Gemini) Read(_ http.ResponseWriter, r *http.Request, body []byte) (Request, error) {
	_, method, _ := strings.Cut(r.URL.Path, ":")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") ||
		method != "generateContent" && method != "streamGenerateContent" {
		return Request{}, errNotFound
	}
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
		return Request{}, err
	}
	out := Request{Stream: method == "streamGenerateContent"}
	if !out.Stream {
		out.Side = &Reply{Text: "{}"}
	}
	c := &out.Conversation
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
			res := ToolResult{ID: strings.TrimPrefix(fr.ID, fr.Name+"__")}
			switch {
			case fr.Response.Output != nil:
				res.Text = *fr.Response.Output
			case fr.Response.Error != nil:
				res.Text, res.IsError = *fr.Response.Error, true
			default:
				return Request{}, fmt.Errorf("function response %s has neither output nor error", fr.ID)
			}
			c.Results = append(c.Results, res)
		}
	}
	return out, nil
}

func (g Gemini) Write(w http.ResponseWriter, req Request, rep Reply, _ int) {
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(g.response(rep))
		return
	}
	StartSSE(w).Event("", g.response(rep))
}

// response is rep as a generateContent response.
func (g Gemini) response(rep Reply) map[string]any {
	part := map[string]any{"text": rep.Text}
	if rep.Name != "" {
		part = map[string]any{"functionCall": map[string]any{"id": rep.ID, "name": rep.Name, "args": rep.Args}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  g.Model,
	}
}
