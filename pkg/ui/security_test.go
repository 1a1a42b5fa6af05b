package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every request is checked: the token (in the address, then a cookie or
// a bearer header), the Host (the server's address or a loopback name
// with its port: no DNS rebinding) and the Origin (none other); the page
// changes nothing, so only GET and HEAD are served; every answer carries
// a strict CSP.
func TestRequestsAreChecked(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "c", "Bash", numbered(10))
	srv := newServer(t, s)
	for _, tc := range []struct {
		name   string
		method string
		target string
		header map[string]string
		cookie bool
		want   int
	}{
		{"no token", "GET", "/api/runs", nil, false, 403},
		{"no token, the page", "GET", "/", nil, false, 403},
		{"no token, an asset", "GET", "/assets/app.js", nil, false, 403},
		{"a wrong token", "GET", "/?token=nope", nil, false, 403},
		{"a wrong cookie", "GET", "/api/runs", map[string]string{"Cookie": srv.cookie + "=nope"}, false, 403},
		{"a wrong bearer", "GET", "/api/runs", map[string]string{"Authorization": "Bearer nope"}, false, 403},
		{"the cookie", "GET", "/api/runs", nil, true, 200},
		{"the bearer token", "GET", "/api/runs", map[string]string{"Authorization": "Bearer tok"}, false, 200},
		{"the token in the address", "GET", "/api/runs?token=tok", nil, false, 200},
		{"the page with the token: to a cookie", "GET", "/?token=tok", nil, false, 303},
		{"localhost", "GET", "/api/runs", map[string]string{"Host": "localhost:8765"}, true, 200},
		{"[::1]", "GET", "/api/runs", map[string]string{"Host": "[::1]:8765"}, true, 200},
		{"another host name", "GET", "/api/runs", map[string]string{"Host": "evil.example:8765"}, true, 403},
		{"another port", "GET", "/api/runs", map[string]string{"Host": "127.0.0.1:9999"}, true, 403},
		{"no port", "GET", "/api/runs", map[string]string{"Host": "127.0.0.1"}, true, 403},
		{"its own origin", "GET", "/api/runs", map[string]string{"Origin": "http://127.0.0.1:8765"}, true, 200},
		{"a foreign origin", "GET", "/api/runs", map[string]string{"Origin": "http://evil.example"}, true, 403},
		{"another local origin", "GET", "/api/runs", map[string]string{"Origin": "http://127.0.0.1:9999"}, true, 403},
		{"a null origin", "GET", "/api/runs", map[string]string{"Origin": "null"}, true, 403},
		{"cross-site", "GET", "/api/runs", map[string]string{"Sec-Fetch-Site": "cross-site"}, true, 403},
		{"POST", "POST", "/api/runs", nil, true, 405},
		{"DELETE", "DELETE", "/api/runs/r", nil, true, 405},
		{"HEAD", "HEAD", "/", nil, true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://"+testAddr+tc.target, nil)
			for k, v := range tc.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			if tc.cookie {
				req.AddCookie(&http.Cookie{Name: srv.cookie, Value: "tok"})
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code != tc.want {
				t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.target, w.Code, tc.want, w.Body)
			}
			csp := w.Header().Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q", csp)
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no nosniff")
			}
			if tc.want == 303 {
				c := w.Result().Cookies()
				if len(c) != 1 || c[0].Value != "tok" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
					t.Errorf("cookie %+v", c)
				}
				if loc := w.Header().Get("Location"); strings.Contains(loc, "tok") {
					t.Errorf("the redirect keeps the token in the address: %s", loc)
				}
			}
		})
	}
}

// A server listening on another address than loopback answers to that
// address only, not to loopback names.
func TestHostOfANamedAddress(t *testing.T) {
	srv, err := New(Options{Store: newStore(t), Addr: "192.0.2.7:8080", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"192.0.2.7:8080": 200, "127.0.0.1:8080": 403, "localhost:8080": 403} {
		req := httptest.NewRequest("GET", "http://"+host+"/api/runs?token=tok&wait=1", nil)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
	srv.Close()
}

// Ids in the API go through the CLI's sanitizer: a path cannot leave
// the store, and what is not an id is refused.
func TestIDsAreSanitized(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "c", "Bash", numbered(10))
	srv := newServer(t, s)
	for _, path := range []string{
		"/api/runs/..%2F..%2Fetc",
		"/api/runs/r/values/..%2F..%2F..%2Fetc%2Fpasswd",
		"/api/runs/r/values/..%2Fr.values%2Fc/lines",
	} {
		code, body := get(t, srv, path)
		if code != 404 && code != 400 {
			t.Errorf("%s: %d %s", path, code, body)
		}
		var e struct{ Error struct{ Code string } }
		if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
			t.Errorf("%s: not an error object: %s", path, body)
		}
	}
}
