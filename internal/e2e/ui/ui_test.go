// Package ui_test drives `retval ui` in a real browser (Chromium from the
// distribution's packages, through chromedp) against a store made by real
// retval commands, and takes the screenshots docs/ui.md shows.
package ui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

var update = flag.Bool("update", false, "write the screenshots into docs/")

// bigMiB is the size of the value the viewer scrolls through: 200 MiB in
// CI (1 GiB takes minutes to write on a CI machine; bench/ui.sh measures
// a 1 GiB one), RETVAL_UI_BIG_MIB to change it.
func bigMiB() int {
	if n, err := strconv.Atoi(os.Getenv("RETVAL_UI_BIG_MIB")); err == nil && n > 0 {
		return n
	}
	return 200
}

// chromium is the browser's path; the test skips without one, but not
// under CI=true, where .ci/run installs it.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium: .ci/run installs the distribution's package")
	}
	t.Skip("no chromium (apt-get install chromium)")
	return ""
}

// fixture is the store the test browses, made by the retval under test.
type fixture struct {
	t       *testing.T
	bin     string
	dir     string // runs-dir
	env     []string
	stubBig string // what retain printed for the big value
	lastBig string // the big value's last line
	bigN    int64  // its lines
}

func (f *fixture) rv(stdin io.Reader, args ...string) string {
	f.t.Helper()
	cmd := exec.Command(f.bin, args...)
	cmd.Env = f.env
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		f.t.Fatalf("retval %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func bigLine(n int64) string {
	return fmt.Sprintf("%09d GET /api/items?page=%d status=200 bytes=%d\n", n, n%977, n*7%100003)
}

func newFixture(t *testing.T) *fixture {
	tmp := t.TempDir()
	f := &fixture{t: t, bin: e2etest.BuildRetval(t, tmp), dir: filepath.Join(tmp, "runs")}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	f.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_STATE_HOME="+home+"/.state",
		"RETVAL_RUNS_DIR="+f.dir, "RETVAL_CONFIG=", "RETVAL_RUN=", "RETVAL_JSON=", "RETVAL_THRESHOLD=", "RETVAL_OFF=",
		"PATH="+tmp+string(os.PathListSeparator)+os.Getenv("PATH"))
	lift := []string{"--threshold", "0", "--max-value-size", "0", "--max-run-bytes", "0"}

	// The big value, streamed into retain.
	pr, pw := io.Pipe()
	size := int64(bigMiB()) << 20
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		var n, written int64
		for written < size {
			n++
			l := bigLine(n)
			w.WriteString(l)
			written += int64(len(l))
			f.lastBig, f.bigN = strings.TrimSuffix(l, "\n"), n
		}
		w.Flush()
		pw.Close()
	}()
	f.stubBig = f.rv(pr, append([]string{"retain", "--run", "agent-1", "--call", "big", "--tool", "Bash"}, lift...)...)
	cfg := `{"config": {"servers": [{"name": "alpha", "port": 8080, "weight": 1.00000000000000000001},
  {"name": "beta", "port": 8081}], "owner": "ops"}, "ok": true}
`
	f.rv(strings.NewReader(cfg), append([]string{"retain", "--run", "agent-1", "--call", "cfg", "--tool", "mcp__config__get"}, lift...)...)
	f.rv(strings.NewReader("<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n"),
		append([]string{"retain", "--run", "agent-1", "--call", "xss", "--tool", "<b>tool</b>"}, lift...)...)
	// What the model read back, by the real commands.
	f.rv(nil, "peek", "--run", "agent-1", "big", "--lines", "100-104")
	f.rv(nil, "peek", "--run", "agent-1", "big", "--lines", "-3")
	f.rv(nil, "resolve", "--run", "agent-1", "big", "--lines", "2000-2001")
	f.rv(nil, "peek", "--run", "agent-1", "big", "--lines", "1-5000", "--query", "page=7 ")
	f.rv(nil, "resolve", "--run", "agent-1", "cfg", "--pointer", "/config/owner")
	// Runs of different sizes, for the list.
	for i, n := range []int{6000, 90000, 20000} {
		var b strings.Builder
		for k := 1; k <= n; k++ {
			fmt.Fprintf(&b, "%d\n", k)
		}
		f.rv(strings.NewReader(b.String()), "retain", "--run", "run-"+string(rune('a'+i)), "--call", "out", "--tool", "Read")
	}
	return f
}

// logged are the records of run's read log for value id: "via sel" of
// each lookup, and the line ranges of the successful ones.
func (f *fixture) logged(run, id string, lines int64) ([]string, [][2]int64) {
	f.t.Helper()
	var recs []string
	var ranges [][2]int64
	_, err := retain.Open(f.dir).ScanReads(retain.ID(run), func(r *retain.Read) {
		if string(r.Value) != id || r.Op != retain.OpRead {
			return
		}
		recs = append(recs, r.Via+" "+r.Sel)
		if rng, ok := strings.CutPrefix(r.Sel, "--lines "); ok && r.Code == "" && !strings.Contains(rng, " ") {
			ra, err := peek.ParseLines(rng)
			if err != nil {
				f.t.Fatalf("the read log's %q: %v", r.Sel, err)
			}
			a, b := ra.LinesOf(lines)
			ranges = append(ranges, [2]int64{a, b})
		}
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return recs, ranges
}

// serve starts `retval ui` and returns the address it printed; the
// server is interrupted at the end of the test and must exit 0.
func (f *fixture) serve() string {
	t := f.t
	cmd := exec.Command(f.bin, "ui", "--runs-dir", f.dir)
	cmd.Env = f.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("retval ui, interrupted: %v\n%s", err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("retval ui printed no address: %v\n%s", err, stderr.String())
	}
	u := strings.TrimSpace(line)
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/?token=") {
		t.Fatalf("retval ui printed %q", u)
	}
	return u
}

// TestUIInBrowser is the proof of issue 35 in a real browser.
func TestUIInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds retval, writes a large value and drives a browser")
	}
	chrome := chromium(t)
	f := newFixture(t)
	pageURL := f.serve()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	origin := "http://" + u.Host

	refusedOutsideTheBrowser(t, origin, token)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	actx, cancelA := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *page.EventJavascriptDialogOpening:
			problems = append(problems, "a dialog opened: "+ev.Message)
		}
	}); err != nil {
		t.Fatal(err)
	}
	dialogs := chromedp.Events(bctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	wait := func(cond string) {
		t.Helper()
		if _, err := chromedp.Run(bctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(time.Minute))); err != nil {
			page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("waiting for %s: %v\nthe page:\n%s\nproblems: %q", cond, err, page, problems)
		}
	}
	shots := map[string][]byte{}
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		shots[name] = b
	}

	// The runs list renders, and sorts from the keyboard.
	do("open the page", chromedp.Navigate(pageURL))
	if strings.Contains(eval(`location.href`), "token=") {
		t.Error("the token stays in the address bar")
	}
	wait(`document.querySelector('#runs') && document.querySelector('#runs').dataset.scanning === '0' && document.querySelectorAll('#runs tbody tr').length === 4`)
	byBytes := runsBy(t, f)
	do("sort by bytes from the keyboard", chromedp.Focus(chromedp.CSS(`th button[data-sort="bytes"]`)), chromedp.KeyEvent(kb.Enter))
	wait(`document.querySelector('#runs').dataset.sort === 'bytes' && document.querySelector('#runs').dataset.scanning === '0'`)
	if got := eval(`[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.run).join(' ')`); got != strings.Join(byBytes, " ") {
		t.Errorf("by bytes, descending: %s, want %s", got, strings.Join(byBytes, " "))
	}
	if eval(`document.querySelector('th[aria-sort]').getAttribute('aria-sort')`) != "descending" {
		t.Error("the sorted column does not say so (aria-sort)")
	}
	do("sort ascending", chromedp.Click(chromedp.CSS(`th button[data-sort="bytes"]`)))
	wait(`document.querySelector('#runs').dataset.desc === '0' && document.querySelector('#runs').dataset.scanning === '0'`)
	slices.Reverse(byBytes)
	if got := eval(`[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.run).join(' ')`); got != strings.Join(byBytes, " ") {
		t.Errorf("by bytes, ascending: %s, want %s", got, strings.Join(byBytes, " "))
	}
	do("filter", chromedp.SendKeys(chromedp.CSS(`#runs-filter`), "run-"))
	wait(`document.querySelectorAll('#runs tbody tr').length === 3 && document.querySelector('#runs').dataset.scanning === '0'`)
	do("back to every run", chromedp.Navigate(origin+"/#/?sort=activity&desc=1"))
	wait(`document.querySelector('#runs') && document.querySelector('#runs').dataset.scanning === '0' && document.querySelectorAll('#runs tbody tr').length === 4 && document.querySelector('#runs').dataset.sort === 'activity'`)
	shot("ui-runs")

	// A run's timeline: the calls, and the reads the real peek and
	// resolve commands recorded.
	do("open the run", chromedp.Click(chromedp.CSS(`tr[data-run="agent-1"] a`)))
	wait(`document.querySelector('#timeline li.call[data-value="big"]')`)
	recs, ranges := f.logged("agent-1", "big", f.bigN)
	if len(recs) != 4 {
		t.Fatalf("the read log of big: %q", recs)
	}
	got := eval(`[...document.querySelectorAll('#timeline li.call[data-value="big"] li.read')].map(li => li.dataset.via + ' ' + li.dataset.sel).join('\n')`)
	if got != strings.Join(recs, "\n") {
		t.Errorf("the timeline's reads of big:\n%s\nthe read log's:\n%s", got, strings.Join(recs, "\n"))
	}
	for _, want := range []string{"peek --lines 100-104", fmt.Sprintf("peek --lines %d-%d", f.bigN-2, f.bigN), "resolve --lines 2000-2001", "peek --lines 1-5000 --query page=7 "} {
		if !slices.Contains(recs, want) {
			t.Errorf("the read log lacks %q: %q", want, recs)
		}
	}
	if got := eval(`[...document.querySelectorAll('#timeline li.call')].map(li => li.dataset.value + ':' + li.dataset.op).join(' ')`); got != "big:stub cfg:stub xss:stub" {
		t.Errorf("calls: %s", got)
	}
	if eval(`document.querySelector('li.call[data-value="xss"] .tool').textContent`) != "<b>tool</b>" || eval(`String(document.querySelectorAll('#main b, #main script, #main img').length)`) != "0" {
		t.Error("a tool name holding markup is not shown as text")
	}
	wait(`document.querySelector('.chart canvas')`)
	shot("ui-run")

	// A value: the stub the model saw, and a viewer that scrolls to the
	// last line, the lines read back highlighted as the read log says.
	do("open the value", chromedp.Click(chromedp.CSS(`li.call[data-value="big"] a.id`)))
	wait(`document.querySelector('#rows') && document.querySelector('#rows').dataset.loading === '0'`)
	if got := eval(`document.querySelector('#stub').textContent`); got != f.stubBig {
		t.Errorf("the stub shown:\n%s\nretain printed:\n%s", got, f.stubBig)
	}
	do("scroll to the end", chromedp.Focus(chromedp.CSS(`#viewer`)), chromedp.KeyEvent(kb.End))
	last := strconv.FormatInt(f.bigN, 10)
	wait(`document.querySelector('#rows').dataset.loading === '0' && document.querySelector('#rows').dataset.last === '` + last + `'`)
	if got := eval(`document.querySelector('#rows .row[data-n="` + last + `"] .tx').textContent`); got != f.lastBig {
		t.Errorf("the last line shown: %q, want %q", got, f.lastBig)
	}
	checkHighlights(t, eval, ranges)
	shot("ui-value")
	do("go to line 98", chromedp.SetValue(chromedp.CSS(`#goto`), "98"), chromedp.Click(chromedp.CSS(`form.viewer-bar button[type=submit]`)))
	wait(`document.querySelector('#rows').dataset.loading === '0' && document.querySelector('#rows').dataset.first === '98'`)
	checkHighlights(t, eval, ranges)
	if n := eval(`String(document.querySelectorAll('#rows .row').length)`); n == "0" || len(n) > 3 {
		t.Errorf("%s rows in the page: only those in view belong there", n)
	}

	// The page is usable on a narrow window: nothing wider than it.
	do("narrow", chromedp.EmulateViewport(390, 844))
	wait(`document.documentElement.scrollWidth <= window.innerWidth`)
	do("wide again", chromedp.EmulateViewport(1280, 900))

	// The JSON tree: three levels opened, and the command its button
	// copies prints, in a shell, the lexeme the node shows.
	if _, err := chromedp.CallBrowser(bctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: "granted", Origin: origin}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(bctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-write"}, Setting: "granted", Origin: origin}); err != nil {
		t.Fatal(err)
	}
	do("open the JSON value", chromedp.Navigate(origin+"/#/run/agent-1/value/cfg"))
	for _, p := range []string{"/config", "/config/servers", "/config/servers/0"} {
		wait(`document.querySelector('#tree li[data-pointer="` + p + `"] > .node > .toggle')`)
		do("open "+p, chromedp.Click(chromedp.CSS(`#tree li[data-pointer="`+p+`"] > .node > .toggle`)))
	}
	node := `#tree li[data-pointer="/config/servers/0/weight"]`
	wait(`document.querySelector('` + node + `')`)
	if lvl := eval(`document.querySelector('` + node + `').getAttribute('aria-level')`); lvl != "5" {
		t.Errorf("the node is at level %s of the tree, want 5 (the document, then three opened)", lvl)
	}
	shot("ui-json") // before the copy: the command names this machine's temporary directory
	do("copy its command", chromedp.Click(chromedp.CSS(node+` > .node > button.copy`)))
	wait(`document.querySelector('#copied').dataset.copied === '1'`)
	copied := eval(`navigator.clipboard.readText()`)
	lexeme := eval(`document.querySelector('` + node + ` > .node > .preview').textContent`)
	if lexeme != "1.00000000000000000001" {
		t.Errorf("the node shows %q", lexeme)
	}
	sh := exec.Command("sh", "-c", copied)
	sh.Env = f.env
	out, err := sh.CombinedOutput()
	if err != nil || string(out) != lexeme {
		t.Errorf("the copied command %q printed %q (%v), the node shows %q", copied, out, err, lexeme)
	}
	if shown := eval(`document.querySelector('#copied').textContent`); shown != copied {
		t.Errorf("the page shows %q as copied, the clipboard holds %q", shown, copied)
	}

	// A value holding markup shows as text, and no dialog opens.
	do("open the markup value", chromedp.Navigate(origin+"/#/run/agent-1/value/xss"))
	wait(`document.querySelector('h1').textContent === 'Value #xss' && document.querySelector('#rows').dataset.loading === '0' && document.querySelector('#rows .row[data-n="2"]')`)
	if got := eval(`document.querySelector('#rows .row[data-n="1"] .tx').textContent`); got != "<script>alert(1)</script>" {
		t.Errorf("line 1 shows %q", got)
	}
	if got := eval(`document.querySelector('#rows .row[data-n="2"] .tx').textContent`); got != "<img src=x onerror=alert(2)>" {
		t.Errorf("line 2 shows %q", got)
	}
	if !strings.Contains(eval(`document.querySelector('#stub').textContent`), "<script>alert(1)</script>") {
		t.Error("the stub does not show the markup as text")
	}
	if n := eval(`String(document.querySelectorAll('#main script, #main img').length)`); n != "0" {
		t.Errorf("%s script or img elements came from the value", n)
	}

	// Savings: stats --all as charts, grouped as stats groups them.
	do("open the savings", chromedp.Navigate(origin+"/#/savings"))
	wait(`document.querySelector('#by-tool tbody tr') && document.querySelector('.chart canvas')`)
	var byTool struct{ Rows []struct{ Key string } }
	if err := json.Unmarshal([]byte(f.rv(nil, "stats", "--all", "--by", "tool", "--json")), &byTool); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range byTool.Rows {
		keys = append(keys, r.Key)
	}
	if got := eval(`[...document.querySelectorAll('#by-tool tbody tr')].map(r => r.dataset.key).join(' ')`); got != strings.Join(keys, " ") {
		t.Errorf("savings by tool: %s; stats --by tool: %s", got, strings.Join(keys, " "))
	}
	shot("ui-savings")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	writeShots(t, shots)
}

// runsBy are the runs, most bytes first, as catalogue --all says.
func runsBy(t *testing.T, f *fixture) []string {
	out := f.rv(nil, "catalogue", "--all", "--json")
	type run struct {
		Run   string
		Bytes int64
	}
	var all struct{ Runs []run }
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all.Runs, func(a, b run) int {
		if a.Bytes != b.Bytes {
			return int(b.Bytes - a.Bytes)
		}
		return strings.Compare(b.Run, a.Run)
	})
	var ids []string
	for _, r := range all.Runs {
		ids = append(ids, r.Run)
	}
	return ids
}

// checkHighlights compares the rows in view with the read log: a row is
// highlighted exactly when a successful lookup read its line.
func checkHighlights(t *testing.T, eval func(string) string, ranges [][2]int64) {
	t.Helper()
	rows := eval(`[...document.querySelectorAll('#rows .row')].map(r => r.dataset.n + (r.classList.contains('read') ? '+' : '-')).join(' ')`)
	var read int
	for _, r := range strings.Fields(rows) {
		n, _ := strconv.ParseInt(r[:len(r)-1], 10, 64)
		want := slices.ContainsFunc(ranges, func(rg [2]int64) bool { return rg[0] <= n && n <= rg[1] })
		if got := r[len(r)-1] == '+'; got != want {
			t.Errorf("line %d: highlighted %v, but the read log says read %v (%v)", n, got, want, ranges)
		}
		if want {
			read++
		}
	}
	if read == 0 {
		t.Errorf("no line in view was read back (%s): this check checks nothing", rows)
	}
}

// refusedOutsideTheBrowser: a request without the token, with a foreign
// Origin or with a Host of another name is refused with 403.
func refusedOutsideTheBrowser(t *testing.T, origin, token string) {
	for _, tc := range []struct {
		name  string
		token bool
		set   func(*http.Request)
		want  int
	}{
		{"with the token", true, func(*http.Request) {}, 200},
		{"without the token", false, func(*http.Request) {}, 403},
		{"a foreign Origin", true, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 403},
		{"a Host of another name", true, func(r *http.Request) { r.Host = "evil.example" + r.Host[strings.LastIndex(r.Host, ":"):] }, 403},
	} {
		req, err := http.NewRequest("GET", origin+"/api/runs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.token {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		tc.set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// writeShots checks each screenshot is a picture of the window and, with
// -update, writes it into docs/.
func writeShots(t *testing.T, shots map[string][]byte) {
	root := e2etest.ModuleRoot(t)
	for name, b := range shots {
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r := img.Bounds(); r.Dx() < 1000 || r.Dy() < 600 {
			t.Errorf("%s: %v", name, r)
		}
		if *update {
			if err := os.WriteFile(filepath.Join(root, "docs", name+".png"), b, 0o644); err != nil {
				t.Error(err)
			}
		} else if _, err := os.Stat(filepath.Join(root, "docs", name+".png")); errors.Is(err, os.ErrNotExist) {
			t.Errorf("docs/%s.png is missing: go test ./internal/e2e/ui -update", name)
		}
	}
}
