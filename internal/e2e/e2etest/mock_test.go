package e2etest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestScriptDecide(t *testing.T) {
	s := Script{
		Prompt: PromptPrefix("go "),
		Other:  Reply{Text: "ok"},
		Turns: []Turn{
			{Reply: Reply{ID: "a", Name: "Bash"}},
			{After: "a", Then: func(c Conversation) (Reply, bool) {
				return Reply{ID: "b", Name: "Bash", Args: c.Last().Text}, c.Last().Text != ""
			}},
		},
	}
	for _, tc := range []struct {
		name string
		c    Conversation
		want Reply
	}{
		{"another prompt", Conversation{Prompt: "title?"}, Reply{Text: "ok"}},
		{"the first turn", Conversation{Prompt: "go now"}, Reply{ID: "a", Name: "Bash"}},
		{"a turn from the result", Conversation{Prompt: "go now", Results: []ToolResult{{ID: "a", Text: "x"}}}, Reply{ID: "b", Name: "Bash", Args: "x"}},
		{"a turn that ends the script", Conversation{Prompt: "go now", Results: []ToolResult{{ID: "a"}}}, Reply{Text: "done"}},
		{"after the last turn", Conversation{Prompt: "go now", Results: []ToolResult{{ID: "a", Text: "x"}, {ID: "b"}}}, Reply{Text: "done"}},
	} {
		if got := s.Decide(tc.c); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// post sends body to the mock at path and returns the answer's body.
func post(t *testing.T, m *Mock, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(strings.TrimSuffix(m.URL, "/v1")+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMockWires(t *testing.T) {
	script := Script{Turns: []Turn{{Reply: Reply{ID: "c1", Name: "shell", Args: map[string]any{"command": "seq 1 3"}}}}}
	for _, tc := range []struct {
		name       string
		wire       Wire
		path, body string
		want       string // in the answer
		turns      int    // requests logged
	}{
		{"anthropic", Anthropic{}, "/v1/messages", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			`"partial_json":"{\"command\":\"seq 1 3\"}"`, 1},
		{"anthropic token count", Anthropic{}, "/v1/messages/count_tokens", `{}`, `{"input_tokens":100}`, 0},
		{"responses", Responses{}, "/v1/responses", `{"input":[{"type":"message","role":"user","content":"hi"}]}`,
			`"call_id":"c1"`, 1},
		{"chat", ChatCompletions{}, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"function":{"name":"shell"}}]}`,
			`data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"command\":\"seq 1 3\"}","name":"shell"},"id":"c1"`, 1},
		{"chat not streamed", ChatCompletions{}, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"function":{"name":"shell"}}]}`,
			`{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"command\":\"seq 1 3\"}","name":"shell"},"id":"c1"`, 1},
		{"chat title", ChatCompletions{}, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`, `"content":"Mock title"`, 1},
		{"gemini", Gemini{Model: "m"}, "/v1beta/models/m:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			`"functionCall":{"args":{"command":"seq 1 3"},"id":"c1","name":"shell"}`, 1},
		{"gemini side question", Gemini{Model: "m"}, "/v1beta/models/m:generateContent", `{"contents":[]}`, `"text":"{}"`, 1},
	} {
		m := StartMock(t, tc.wire, script)
		code, got := post(t, m, tc.path, tc.body)
		if code != http.StatusOK || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %d %q, want %q in it", tc.name, code, got, tc.want)
		}
		if n := len(m.Requests()); n != tc.turns {
			t.Errorf("%s: %d requests logged, want %d", tc.name, n, tc.turns)
		}
		if _, strict := tc.wire.(ChatCompletions); strict {
			continue // any other path fails the test
		}
		if code, _ := post(t, m, "/nowhere", `{}`); code != http.StatusNotFound {
			t.Errorf("%s: a path the API does not have answered %d", tc.name, code)
		}
	}
}

func TestChatCompletionsPrompt(t *testing.T) {
	const body = `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"<context/>"}]},` +
		`{"role":"user","content":"\"go now\"\n\n<environment_details>cwd</environment_details>"},{"role":"tool","tool_call_id":"c1","content":"1"}]}`
	for _, tc := range []struct {
		wire ChatCompletions
		want string
	}{
		{ChatCompletions{}, "go now"},
		{ChatCompletions{JoinUserMessages: true}, "<context/>\n\"go now\"\n\n<environment_details>cwd</environment_details>"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		req, err := tc.wire.Read(nil, r, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if req.Prompt != tc.want {
			t.Errorf("%+v: the prompt is %q, want %q", tc.wire, req.Prompt, tc.want)
		}
		if len(req.Results) != 1 || req.Results[0] != (ToolResult{ID: "c1", Text: "1"}) {
			t.Errorf("%+v: the results are %+v", tc.wire, req.Results)
		}
	}
}
