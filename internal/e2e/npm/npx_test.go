package npm

import (
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/internal/installdoc"
)

// registry serves packages the way the npm registry does, enough for npm
// and npx to install them: a package's document (packument) at /NAME,
// its tarball at /-/FILE; anything else is not found, as the other
// platforms' packages are.
type registry struct {
	url        string
	packuments map[string][]byte
	tarballs   map[string][]byte

	mu      sync.Mutex
	fetched []string // the tarballs served, in order
}

// serveRegistry serves the packages written in dirs, packed as tarballs.
func serveRegistry(t *testing.T, dirs, tarballs []string) *registry {
	r := &registry{packuments: map[string][]byte{}, tarballs: map[string][]byte{}}
	r.url = e2etest.Serve(t, r)
	for i, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		var manifest map[string]any
		if err := json.Unmarshal(b, &manifest); err != nil {
			t.Fatal(err)
		}
		tgz, err := os.ReadFile(tarballs[i])
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Base(tarballs[i])
		r.tarballs["-/"+file] = tgz
		sum1, sum512 := sha1.Sum(tgz), sha512.Sum512(tgz)
		manifest["dist"] = map[string]any{"tarball": r.url + "/-/" + file, "shasum": hex.EncodeToString(sum1[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:])}
		name, ver := manifest["name"].(string), manifest["version"].(string)
		doc, _ := json.Marshal(map[string]any{"name": name, "dist-tags": map[string]any{"latest": ver},
			"versions": map[string]any{ver: manifest}})
		r.packuments[name] = doc
	}
	return r
}

func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	// A scoped name arrives as /@scope%2fname, which URL.Path decodes.
	name := strings.TrimPrefix(req.URL.Path, "/")
	if tgz, ok := r.tarballs[name]; ok && req.Method == http.MethodGet {
		r.mu.Lock()
		r.fetched = append(r.fetched, name)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(tgz)
		return
	}
	if doc, ok := r.packuments[name]; ok && req.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
		return
	}
	http.NotFound(w, req)
}

func (r *registry) served() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.fetched...)
}

// npx runs the README's npx lines (docs/npm.md has the same) against the
// registry, with an empty npm cache: npx -y retval@VERSION --version, mcp
// serve, and hook claude-code install --user, which must name the stable
// copy, not npx's cache.
func npx(t *testing.T, p *packs) {
	reg := serveRegistry(t, []string{p.mainDir, p.platDir}, []string{p.main, p.native})
	s := e2etest.NewSession(t, p.retval)
	cache := filepath.Join(s.Root, "npx-cache")
	e := env(s, "", "npm_config_registry="+reg.url+"/", "npm_config_cache="+cache,
		"npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
	// The README's lines, run by sh as a user's shell would.
	line := installdoc.Command(t, "npx -y retval@VERSION --version", version)
	if got := run(t, e, "sh", "-c", line); got != p.versionLine {
		t.Errorf("%s printed %q, the binary %q", line, got, p.versionLine)
	}
	want := []string{"-/" + filepath.Base(p.native), "-/" + filepath.Base(p.main)}
	if got := reg.served(); len(got) != 2 || !(got[0] == want[0] && got[1] == want[1] || got[0] == want[1] && got[1] == want[0]) {
		t.Errorf("npx fetched %q from the registry, want the two tarballs", got)
	}

	// mcp serve over stdio: an MCP client's first requests.
	requests := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"npm-test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`
	line = installdoc.Command(t, "npx -y retval@VERSION mcp serve", version)
	out, stderr, err := try(e, requests, "sh", "-c", line)
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s", line, err, stderr)
	}
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.ID == 2 {
			for _, tl := range msg.Result.Tools {
				tools = append(tools, tl.Name)
			}
		}
	}
	if strings.Join(tools, " ") != "retval_peek retval_resolve retval_list" {
		t.Errorf("%s listed the tools %q\nstdout: %s\nstderr: %s", line, tools, out, stderr)
	}

	line = installdoc.Command(t, "npx -y retval@VERSION hook claude-code install --user", version)
	install := run(t, e, "sh", "-c", line)
	stable := filepath.Join(s.Home, ".local", "share", "retval", "bin", version, "retval")
	checkHook(t, s, p, stable, install)
	if strings.Contains(install, cache) {
		t.Errorf("install names npx's cache: %s", install)
	}
}
