// Package inspector proves retval's MCP proxy with a real MCP client, the
// MCP inspector in CLI mode, against real MCP servers from npm:
// server-filesystem (whose read_text_file answers with the file as text
// AND as structuredContent, and whose every tool declares an outputSchema)
// and server-everything (images, progress, roots, resource links), and its
// expansion of references in a tool call's arguments, driven by a client
// that never heard of retval. It runs inside a network namespace that has
// only loopback.
package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache.
const (
	inspectorPackage  = "@modelcontextprotocol/inspector@2.12.0"
	fsPackage         = "@modelcontextprotocol/server-filesystem@2026.8.31"
	everythingPackage = "@modelcontextprotocol/server-everything@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envInspector  = "RETVAL_E2E_INSPECTOR"
	envFS         = "RETVAL_E2E_MCP_FILESYSTEM"
	envEverything = "RETVAL_E2E_MCP_EVERYTHING"
	envRetval     = "RETVAL_E2E_RETVAL"
)

// fileSize is the size of the file read: server-filesystem answers it as
// a text block and again as structuredContent.
const fileSize = 102424

func TestInspector(t *testing.T) {
	if e2etest.Isolated() {
		t.Run("filesystem", filesystem)
		t.Run("everything", everything)
		return
	}
	insp := e2etest.Bin(t, inspectorPackage, "mcp-inspector")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	ev := e2etest.Bin(t, everythingPackage, "mcp-server-everything")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envInspector+"="+insp, envFS+"="+fs, envEverything+"="+ev, envRetval+"="+retval)
}

// client runs the inspector CLI in a clean session.
type client struct {
	t *testing.T
	s *e2etest.Session
}

func newClient(t *testing.T) *client {
	return &client{t: t, s: e2etest.NewSession(t, os.Getenv(envRetval))}
}

// inspect runs the inspector with its options, then "--" and the server
// command, and returns what it printed on stdout, decoded.
func (c *client) inspect(opts []string, server ...string) map[string]any {
	c.t.Helper()
	out := c.inspectRaw(opts, server...)
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		c.t.Fatalf("inspector output is not JSON: %v\n%.2000s", err, out)
	}
	return v
}

func (c *client) inspectRaw(opts []string, server ...string) []byte {
	c.t.Helper()
	out, stderr, err := c.run(opts, server...)
	if err != nil {
		c.t.Fatalf("inspector %q: %v\nstdout: %.2000s\nstderr: %.2000s", opts, err, out, stderr)
	}
	return out
}

// inspectError is inspect for a call whose result is an error: the
// inspector prints it, then fails.
func (c *client) inspectError(opts []string, server ...string) map[string]any {
	c.t.Helper()
	out, stderr, err := c.run(opts, server...)
	var v map[string]any
	if err == nil || json.Unmarshal(out, &v) != nil {
		c.t.Fatalf("inspector %q did not fail with a result: %v\nstdout: %.2000s\nstderr: %.2000s", opts, err, out, stderr)
	}
	return v
}

func (c *client) run(opts []string, server ...string) (stdout, stderr []byte, err error) {
	args := append(append([]string{"--cli"}, opts...), "--")
	cmd := exec.Command(os.Getenv(envInspector), append(args, server...)...)
	cmd.Dir = c.s.Proj
	cmd.Env = c.s.Env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// proxy is the server command through retval mcp proxy in run R.
func (c *client) proxy(server ...string) []string {
	return append([]string{c.s.Retval, "mcp", "proxy", "--run", "insp", "--"}, server...)
}

func call(tool string, args ...string) []string {
	opts := []string{"--method", "tools/call", "--tool-name", tool}
	for _, a := range args {
		opts = append(opts, "--tool-arg", a)
	}
	return opts
}

// texts returns the text of each text block of a tools/call result.
func texts(t *testing.T, res map[string]any) []string {
	t.Helper()
	var out []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		b, _ := c.(map[string]any)
		if b["type"] == "text" {
			out = append(out, b["text"].(string))
		}
	}
	return out
}

func filesystem(t *testing.T) {
	c := newClient(t)
	dir := filepath.Join(c.s.Proj, "files")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := e2etest.FileText(fileSize)[:fileSize]
	text = text[:strings.LastIndexByte(text[:fileSize-1], '\n')+1]
	text += strings.Repeat("z", fileSize-len(text)-1) + "\n"
	file := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := []string{os.Getenv(envFS), dir}

	// Directly, the model would get the file twice over.
	direct := c.inspect(call("read_text_file", "path="+file), fs...)
	if got := texts(t, direct); len(got) != 1 || got[0] != text {
		t.Fatalf("direct read: %d text blocks", len(got))
	}
	if sc, _ := direct["structuredContent"].(map[string]any); sc["content"] != text {
		t.Fatalf("direct read has no structuredContent copy of the file")
	}
	list := c.inspect([]string{"--method", "tools/list"}, fs...)
	tools, _ := list["tools"].([]any)
	for _, tl := range tools {
		if _, ok := tl.(map[string]any)["outputSchema"]; !ok {
			t.Errorf("direct: %v declares no outputSchema", tl.(map[string]any)["name"])
		}
	}

	// Through the proxy: one text block, the stub; no structuredContent.
	res := c.inspect(call("read_text_file", "path="+file), c.proxy(fs...)...)
	got := texts(t, res)
	if len(got) != 1 || len(got[0]) > 2048 || !strings.HasPrefix(got[0], "[retained #") {
		t.Fatalf("proxied read: %q", got)
	}
	if _, ok := res["structuredContent"]; ok {
		t.Errorf("proxied read keeps structuredContent")
	}
	stub := got[0]
	t.Logf("the model sees:\n%s", stub)
	id := strings.TrimPrefix(strings.Fields(stub)[1], "#")
	id = strings.TrimSuffix(id, "]")
	if v := c.s.StoredValue("insp", id); string(v) != text {
		t.Errorf("stored value is %d bytes, want the file's %d", len(v), len(text))
	}

	// tools/list: no outputSchema, retval's tools at the end.
	list = c.inspect([]string{"--method", "tools/list"}, c.proxy(fs...)...)
	tools, _ = list["tools"].([]any)
	var names []string
	for _, tl := range tools {
		m := tl.(map[string]any)
		names = append(names, m["name"].(string))
		if _, ok := m["outputSchema"]; ok {
			t.Errorf("proxied: %v keeps its outputSchema", m["name"])
		}
	}
	if n := strings.Join(names, ","); len(tools) != 17 || !strings.HasSuffix(n, ",retval_peek,retval_resolve,retval_list") {
		t.Errorf("proxied tools (%d) = %s", len(tools), n)
	}

	// The model reads on with retval_peek, as the stub says.
	more := stub[strings.LastIndex(stub, "[read more: peek "):]
	var a, b int
	if _, err := fmt.Sscanf(more, "[read more: peek "+id+" --lines %d-%d", &a, &b); err != nil {
		t.Fatalf("read-more line %q: %v", more, err)
	}
	peek := c.inspect(call("retval_peek", "id="+id, "lines="+strconv.Itoa(a)+"-"+strconv.Itoa(b)), c.proxy(fs...)...)
	pt := texts(t, peek)
	if len(pt) != 1 {
		t.Fatalf("peek: %v", peek)
	}
	e2etest.CheckPeek(t, pt[0], e2etest.Lines(text), a, b)
	// The model reuses what it read by reference: server-filesystem's
	// write_file receives the expanded text, in the string form and in
	// the bare object form, and the result says what it expanded to.
	lines := strings.SplitAfter(text, "\n")
	head := "// moved from big.txt\n"
	want := head + strings.Join(lines[1:301], "")
	for i, content := range []string{
		`$expand:{"$concat":[` + strconv.Quote(head) + `,{"$ref":"` + id + `","lines":[2,301]}]}`,
		`{"$concat":[` + strconv.Quote(head) + `,{"$ref":"` + id + `","lines":[2,301]}]}`,
	} {
		moved := filepath.Join(dir, fmt.Sprintf("moved%d.txt", i))
		res := c.inspect(call("write_file", "path="+moved, "content="+content), c.proxy(fs...)...)
		if b, err := os.ReadFile(moved); err != nil || string(b) != want {
			t.Errorf("form %d: the written file is %d bytes, want %d: %v", i, len(b), len(want), err)
		}
		got := texts(t, res)
		sum := fmt.Sprintf("%d bytes, sha256:%s", len(want), e2etest.SHA([]byte(want)))
		if len(got) == 0 || !strings.Contains(got[len(got)-1], sum) {
			t.Errorf("form %d: the result does not end with the expansion's summary %q: %q", i, sum, got)
		}
	}
	// A bad reference: the call is refused, the reference named, nothing
	// written.
	bad := filepath.Join(dir, "bad.txt")
	res = c.inspectError(call("write_file", "path="+bad, `content=$expand:{"$ref":"`+id+`","lines":[1,999999]}`), c.proxy(fs...)...)
	if got := texts(t, res); res["isError"] != true || len(got) != 1 || !strings.Contains(got[0], `at "/content"`) {
		t.Errorf("a bad reference: %v", res)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Errorf("a call with a bad reference wrote %s", bad)
	}
	// And retval_resolve quotes exact lines.
	res = c.inspect(call("retval_resolve", `ref={"$ref":"`+id+`","lines":[2,3]}`), c.proxy(fs...)...)
	if got := texts(t, res); len(got) != 1 || got[0] != strings.Join(strings.SplitAfter(text, "\n")[1:3], "") {
		t.Errorf("resolve lines 2-3 = %q", got)
	}
}

// everything: what retention does not touch arrives as the server sent
// it — an image, a small text, progress of a long operation, resource
// links, the server's roots/list request — the same through the proxy as
// directly.
func everything(t *testing.T) {
	c := newClient(t)
	ev := []string{os.Getenv(envEverything)}
	for _, opts := range [][]string{
		call("get-tiny-image"),
		call("echo", "message=hello <world>"),
		call("get-annotated-message", "messageType=error", "includeImage=true"),
		call("get-resource-links", "count=3"),
		call("get-structured-content", "location=New York"),
		call("trigger-long-running-operation", "duration=1", "steps=2"),
		call("get-roots-list"),
		{"--method", "resources/list"},
		{"--method", "prompts/list"},
	} {
		direct := c.inspectRaw(opts, ev...)
		proxied := c.inspectRaw(opts, c.proxy(ev...)...)
		if !bytes.Equal(direct, proxied) {
			t.Errorf("%q differs through the proxy:\ndirect:  %.1500s\nproxied: %.1500s", opts, direct, proxied)
		}
	}
	// Its structured tool loses its outputSchema; its tools gain ours.
	list := c.inspect([]string{"--method", "tools/list"}, c.proxy(ev...)...)
	tools, _ := list["tools"].([]any)
	n := 0
	for _, tl := range tools {
		m := tl.(map[string]any)
		if _, ok := m["outputSchema"]; ok {
			t.Errorf("%v keeps its outputSchema", m["name"])
		}
		if strings.HasPrefix(m["name"].(string), "retval_") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d of retval's tools listed, want 3", n)
	}
}
