package e2etest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The worked move of docs/expand.md, which every client's reference
// scenario makes: a new file of NewLines new lines and lines
// MoveFrom-MoveTo of net/http/server.go, which the model read through the
// shell (retained: it saw only the stub) and writes back by reference.
const (
	MoveFrom, MoveTo = 2100, 2399
	NewLines         = 20
)

// NewText is the move's new lines, which the model writes out.
func NewText() string {
	var b strings.Builder
	for i := 1; i <= NewLines; i++ {
		fmt.Fprintf(&b, "// new line %d of the moved handler file\n", i)
	}
	return b.String()
}

// Expand is node (the grammar of retval expand) in the string form a
// model writes: "$expand:" and node's JSON.
func Expand(node any) string {
	b, _ := json.Marshal(node)
	return "$expand:" + string(b)
}

// MoveContent is the moved file's content as the model writes it: the new
// lines and the moved range of the value retained for call id.
func MoveContent(id string) string {
	return Expand(map[string]any{"$concat": []any{NewText(), map[string]any{"$ref": id, "lines": []int{MoveFrom, MoveTo}}}})
}

// Moved is what the moved file must hold: the new lines and the moved
// range of src, the source's lines (newlines kept).
func Moved(src []string) string {
	return NewText() + strings.Join(src[MoveFrom-1:MoveTo], "")
}

// MCPString and MCPObject are what the model writes through an MCP tool
// that takes a string: lines 1-50 of the value of call id in the string
// form, and lines 51-60 in the object form (which reaches the hook only
// where the client lets an object through to an MCP tool).
func MCPString(id string) string {
	return `$expand:{"$ref": "` + id + `", "lines": [1, 50]}`
}

func MCPObject(id string) map[string]any {
	return map[string]any{"$ref": id, "lines": []int{51, 60}}
}

// BadContent is a reference whose two parts fail: a range past the end
// of the value of call id (invalid_range), and a value that is not there
// (unknown_reference).
func BadContent(id, missing string) string {
	return `$expand:{"$concat": ["x", {"$ref": "` + id + `", "lines": [9000, 9001]}, {"$ref": "` + missing + `"}]}`
}

// CheckBad asserts that the call made of BadContent in the field
// "/content" was refused, result (what the model received) naming each
// failing part with its code, and that file was not written.
func CheckBad(t testing.TB, file, result string) {
	t.Helper()
	_, err := os.Stat(file)
	if err == nil || !strings.Contains(result, `"/content/$concat/1"`) || !strings.Contains(result, "(invalid_range)") ||
		!strings.Contains(result, `"/content/$concat/2"`) || !strings.Contains(result, "(unknown_reference)") {
		t.Errorf("the bad write: file written %v, result %q", err == nil, result)
	}
}

// CheckMCPWrites asserts that the MCP tool wrote into dir
// mcp_string.txt, lines 1-50 of src, and mcp_object.txt, lines 51-60.
func CheckMCPWrites(t testing.TB, dir string, src []string) {
	t.Helper()
	for name, lines := range map[string][2]int{"mcp_string.txt": {1, 50}, "mcp_object.txt": {51, 60}} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if w := strings.Join(src[lines[0]-1:lines[1]], ""); err != nil || string(got) != w {
			t.Errorf("%s: %q (%v), want lines %d-%d", name, got, err, lines[0], lines[1])
		}
	}
}

// MoveSource writes net/http/server.go of the Go that runs the test into
// the project as server.go, and returns its text and its lines, newlines
// kept. The test is skipped where there is no such source, or it is too
// short to move lines MoveFrom-MoveTo of.
func (s *Session) MoveSource() (string, []string) {
	s.T.Helper()
	b := GoSource(s.T, "src/net/http/server.go")
	if err := os.WriteFile(filepath.Join(s.Proj, "server.go"), b, 0o644); err != nil {
		s.T.Fatal(err)
	}
	src := strings.SplitAfter(string(b), "\n")
	if len(src) < MoveTo {
		s.T.Skipf("server.go has %d lines", len(src))
	}
	return string(b), src
}

// References is what retval stats says of a run's expansions: how many
// references were expanded, and the output bytes they saved the model.
func (s *Session) References(run string) (refs, saved int64) {
	s.T.Helper()
	var ledger struct {
		Total struct {
			References  int64 `json:"references"`
			OutputSaved int64 `json:"output_saved_bytes"`
		} `json:"total"`
	}
	if err := json.Unmarshal(s.Ledger(run), &ledger); err != nil {
		s.T.Fatalf("retval stats: %v", err)
	}
	return ledger.Total.References, ledger.Total.OutputSaved
}

// JSONText is s as it stands inside a JSON string written the way the
// clients write their requests (JavaScript's JSON.stringify, Rust's
// serde_json): no HTML escaping.
func JSONText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}
