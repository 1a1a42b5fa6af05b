package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

const testAddr = "127.0.0.1:8765"

var testNow = time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC)

// newStore is an empty store whose clock stands at testNow.
func newStore(t testing.TB) *retain.Store {
	t.Helper()
	s := retain.Open(t.TempDir())
	s.Now = func() time.Time { return testNow }
	return s
}

// put retains b as call of run, whatever its size.
func put(t testing.TB, s *retain.Store, run, call, tool string, b []byte) {
	t.Helper()
	l := retain.DefaultLimits()
	l.Threshold, l.MaxValueSize, l.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	if _, err := s.Retain(bytes.NewReader(b), io.Discard, retain.RetainOptions{Run: run, Call: call, Limits: l, Meta: retain.Meta{Tool: tool}}); err != nil {
		t.Fatal(err)
	}
}

// newServer serves s at testAddr; it is closed when the test ends.
func newServer(t testing.TB, s *retain.Store) *Server {
	t.Helper()
	srv, err := New(Options{Store: s, Addr: testAddr, Token: "tok", StoreArgs: []string{"--runs-dir", s.Dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// get asks srv for path as the page does (the token's cookie, the
// server's Host) and returns the status and body.
func get(t testing.TB, srv *Server, path string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest("GET", "http://"+testAddr+path, nil)
	req.AddCookie(&http.Cookie{Name: srv.cookie, Value: srv.Token()})
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w.Code, w.Body.Bytes()
}

// getJSON asks for path and decodes a 200 answer into v.
func getJSON(t testing.TB, srv *Server, path string, v any) {
	t.Helper()
	code, body := get(t, srv, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// numbered is n lines "line N of the value" (and a newline each).
func numbered(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" of the value\n")
	}
	return []byte(b.String())
}

func chtimes(path string, at time.Time) error { return os.Chtimes(path, at, at) }

// snapshot is every file under dir with its size, mode and time.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out[p] = fmt.Sprint(fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
