//go:build agents

package agents

import (
	"fmt"
	"slices"
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

// mockAPI is the shared scripted mock of an OpenAI-compatible chat
// completions API, playing a scenario's steps. Qwen Code and Cline send
// their own context as user messages beside the prompt, so the prompt is
// every user message and the scenario's are those that hold its marker.
// The nth step is the call call_N, made when the request answers the
// step before with its result and offers the step's tool; any other
// request gets a short text, which ends the client's turn.
type mockAPI struct {
	*e2etest.Mock
	t      testing.TB
	marker string
}

func startMock(t testing.TB, marker string, steps ...step) *mockAPI {
	done := e2etest.Reply{Text: "Done."}
	s := e2etest.Script{Prompt: e2etest.PromptContains(marker), End: done, Other: done}
	for n, st := range steps {
		after := ""
		if n > 0 {
			after = callID(n - 1)
		}
		s.Turns = append(s.Turns, e2etest.Turn{After: after, Then: func(c conversation) (e2etest.Reply, bool) {
			if !slices.Contains(c.Tools, st.tool) {
				return e2etest.Reply{}, false
			}
			return e2etest.Reply{ID: callID(n), Name: st.tool, Args: st.args(c)}, true
		}})
	}
	return &mockAPI{Mock: e2etest.StartMock(t, e2etest.ChatCompletions{JoinUserMessages: true}, s), t: t, marker: marker}
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
