package opencode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// hookHarness calls the plugin's tool.execute.after hook the way opencode
// does, with the input and output objects read from the JSON files named
// in argv, and
// prints the output object after the hook as JSON (or "threw: ..." if
// the hook threw).
const hookHarness = `
import fs from "node:fs"
const plugin = await import(process.argv[2])
const hooks = await plugin.RetvalPlugin({})
const input = JSON.parse(fs.readFileSync(process.argv[3], "utf8"))
const output = JSON.parse(fs.readFileSync(process.argv[4], "utf8"))
try {
  await hooks["tool.execute.after"](input, output)
  process.stdout.write(JSON.stringify(output))
} catch (err) {
  process.stdout.write("threw: " + err)
}
`

// callHook runs the plugin's hook under node with RETVAL_BIN=bin and
// returns the output object after it.
func callHook(t *testing.T, home, bin string, input, output any) map[string]any {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is not installed: %v", err)
		}
		t.Skipf("node is not installed: %v", err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(e2etest.ModuleRoot(t), "integrations", "opencode", "retval.js"))
	if err != nil {
		t.Fatal(err)
	}
	// opencode loads plugins as ES modules; node needs the .mjs name.
	js := filepath.Join(dir, "retval.mjs")
	if err := os.WriteFile(js, src, 0o644); err != nil {
		t.Fatal(err)
	}
	harness := filepath.Join(dir, "harness.mjs")
	if err := os.WriteFile(harness, []byte(hookHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(input)
	out, _ := json.Marshal(output)
	inFile, outFile := filepath.Join(dir, "input.json"), filepath.Join(dir, "output.json")
	if os.WriteFile(inFile, in, 0o644) != nil || os.WriteFile(outFile, out, 0o644) != nil {
		t.Fatal("cannot write the hook's arguments")
	}
	cmd := exec.Command(node, harness, js, inFile, outFile)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "RETVAL_BIN=" + bin}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, b)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the hook did not return normally: %s", b)
	}
	return got
}

// The plugin never fails a tool call: whatever goes wrong with retval, the
// output stays exactly as opencode made it.
func TestPluginLeavesOutputWhenRetvalFails(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := strings.Repeat("x\n", 20000)
	input := map[string]any{"tool": "bash", "sessionID": "ses_1", "callID": "call_1", "args": map[string]any{}}
	output := map[string]any{"title": "t", "output": big, "metadata": map[string]any{}}
	mcpOutput := map[string]any{"content": []any{map[string]any{"type": "text", "text": big}}}
	for name, bin := range map[string]string{
		"missing":  filepath.Join(dir, "no-such-retval"),
		"fails":    script("fails", "cat >/dev/null; echo broken >&2; exit 1"),
		"garbage":  script("garbage", "cat >/dev/null; echo '{not json'"),
		"no stub":  script("nostub", `cat >/dev/null; echo '{"output":5,"content":"x"}'`),
		"killed":   script("killed", "kill -9 $$"),
		"no stdin": script("nostdin", `exec 0<&-; echo '{"output":"x"}'; exit 1`),
	} {
		t.Run(name, func(t *testing.T) {
			got := callHook(t, dir, bin, input, output)
			if got["output"] != big {
				t.Errorf("retval %s: the built-in output changed", name)
			}
			got = callHook(t, dir, bin, input, mcpOutput)
			if c, _ := got["content"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != big {
				t.Errorf("retval %s: the MCP content changed: %.200v", name, got["content"])
			}
		})
	}
	// Whatever the output, the plugin hands it to retval as it is and
	// applies only what retval answers.
	echo := script("echo", `cat > "$0.in"; echo '{"output":"STUB"}'`)
	got := callHook(t, dir, echo, input, output)
	if got["output"] != "STUB" {
		t.Errorf("the answer was not applied: %.200v", got["output"])
	}
	var handed struct {
		Input  map[string]any `json:"input"`
		Output map[string]any `json:"output"`
	}
	if b, err := os.ReadFile(echo + ".in"); err != nil || json.Unmarshal(b, &handed) != nil {
		t.Fatalf("what the plugin handed retval: %s %v", b, err)
	}
	if handed.Input["callID"] != "call_1" || handed.Input["sessionID"] != "ses_1" || handed.Input["tool"] != "bash" || handed.Output["output"] != big {
		t.Errorf("the plugin handed retval %.300v", handed)
	}
}

// With the real retval: each text block over the threshold becomes its
// own value and its stub, in its place; the image between them stays.
// structuredContent is left as it is: opencode never shows it to the model
// (see integrations/opencode/README.md). The store is the hook's default.
func TestPluginMCPBlocks(t *testing.T) {
	home := t.TempDir()
	retval := e2etest.BuildRetval(t, t.TempDir())
	a, b := strings.Repeat("a\n", 15000), strings.Repeat("b\n", 15000)
	image := map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}
	input := map[string]any{"tool": "fs_read", "sessionID": "ses_x", "callID": "call_7", "args": map[string]any{}}
	got := callHook(t, home, retval, input, map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": a}, image, map[string]any{"type": "text", "text": b}},
		"structuredContent": map[string]any{"content": a + b},
	})
	if sc, _ := got["structuredContent"].(map[string]any); sc["content"] != a+b {
		t.Errorf("structuredContent changed: %.200v", got["structuredContent"])
	}
	content, _ := got["content"].([]any)
	if len(content) != 3 {
		t.Fatalf("content after the hook: %.300v", got["content"])
	}
	values := filepath.Join(home, ".local", "state", "retval", "runs", "ses_x.values")
	for i, want := range []struct{ id, text string }{{"call_7", a}, {"call_7-2", b}} {
		stub, _ := content[2*i].(map[string]any)["text"].(string)
		if !strings.HasPrefix(stub, "[retained #"+want.id+"] 30000 bytes, 15000 lines, sha256:"+e2etest.SHA([]byte(want.text))) {
			t.Errorf("block %d's stub: %.200q", 2*i, stub)
		}
		stored, err := os.ReadFile(filepath.Join(values, want.id+".txt"))
		if err != nil || string(stored) != want.text {
			t.Errorf("the stored value %s (%d bytes): %v", want.id, len(stored), err)
		}
	}
	if img, _ := json.Marshal(content[1]); string(img) != `{"data":"AAAA","mimeType":"image/png","type":"image"}` {
		t.Errorf("the image became %s", img)
	}
	// A small result is left as it is.
	small := callHook(t, home, retval, map[string]any{"tool": "bash", "sessionID": "ses_x", "callID": "call_8"}, map[string]any{"output": "hi\n", "metadata": map[string]any{}})
	if small["output"] != "hi\n" {
		t.Errorf("a small output became %q", small["output"])
	}
}
