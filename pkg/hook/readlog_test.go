package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// TestReadLog: the hook records the stub it shows for a big Bash result
// (with the value's size) and a small result it passes through, in the
// session's run.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	big := numbers(5000)
	if _, err := ClaudeCode(strings.NewReader(bashInput(t, "sess", "toolu_1", map[string]any{"stdout": big, "stderr": ""})), Options{RunsDir: dir}); err != nil {
		t.Fatal(err)
	}
	ans, err := ClaudeCode(strings.NewReader(bashInput(t, "sess", "toolu_2", map[string]any{"stdout": "small\n", "stderr": ""})), Options{RunsDir: dir})
	if err != nil || len(ans.Output) != 0 {
		t.Fatalf("small: %v %s", err, ans.Output)
	}
	var got []retain.Read
	if _, err := retain.Open(dir).ScanReads("sess", func(r *retain.Read) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("records %+v", got)
	}
	if g := got[0]; g.Op != retain.OpStub || g.Via != "hook" || g.Value != "toolu_1" || g.Size != int64(len(big)) || g.Tool != "Bash" || g.Bytes < 100 || g.Bytes > 2048 {
		t.Errorf("stub record %+v", g)
	}
	if g := got[1]; g.Op != retain.OpVerbatim || g.Via != "hook" || g.Value != "toolu_2" || g.Bytes != 6 {
		t.Errorf("verbatim record %+v", g)
	}
}

// TestReadLogMCPNote: the line the hook adds after an MCP result's stub is
// counted with the stub: the record holds what the model is shown.
func TestReadLogMCPNote(t *testing.T) {
	dir := t.TempDir()
	text := numbers(15000)
	result, _ := json.Marshal(map[string]string{"content": text})
	ans, err := ClaudeCode(strings.NewReader(mcpInput(t, "toolu_m", string(result))), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	shown := *decode(t, ans.Output).HookSpecificOutput.UpdatedMCPToolOutput
	var got []retain.Read
	if _, err := retain.Open(dir).ScanReads("sess", func(r *retain.Read) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Op != retain.OpStub || got[0].Bytes != int64(len(shown)) || got[0].Size != int64(len(text)) {
		t.Errorf("records %+v, want one stub of the %d bytes shown", got, len(shown))
	}
}
