package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/retain"
)

// Options say what a Server shows and where it is served.
type Options struct {
	// Store is the store shown. The server writes nothing to it: values are
	// opened without stamping their run's activity, and reads are not
	// logged.
	Store *retain.Store
	// Addr is the address the page is served at (host:port, as the
	// listener has it). Requests must name it, or a loopback name with its
	// port, as their Host: any other is refused (DNS rebinding).
	Addr string
	// StoreArgs name the store on the command lines the page offers to
	// copy ("--runs-dir", "/abs/runs"); nil: none.
	StoreArgs []string
	// GC is the policy the runs list says gc would apply (the zero value
	// is gc's defaults).
	GC gc.Options
	// CallOverhead is stats' per-call overhead (0: its default).
	CallOverhead int64
	// Stub are the settings stubs are rendered with (as replay does).
	Stub retain.StubSettings
	// Token is the secret every request must carry; "" makes a random one.
	Token string
}

// Server is retval ui's HTTP handler: the page, its assets and a JSON API
// over the store, every request checked for its token, Host and Origin.
type Server struct {
	o        Options
	token    string
	cookie   string          // the name of the cookie holding the token
	hosts    map[string]bool // Host values accepted
	mux      *http.ServeMux
	runs     runsIndex
	heavy    chan struct{} // bounds the requests that read values at once
	closeMu  sync.Mutex
	closed   bool
	stop     chan struct{} // closed by Close: a scan under way gives up
	scanning sync.WaitGroup
	// beforeScan, when set (by tests), runs as a scan of the store starts.
	beforeScan func()
}

// New returns a server for o. It does no work on the store until the
// first request.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("ui: no store")
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: address %q: %v", o.Addr, err)
	}
	tok := o.Token
	if tok == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		tok = hex.EncodeToString(b[:])
	}
	sum := sha256.Sum256([]byte(tok))
	s := &Server{o: o, token: tok, cookie: "retval_ui_" + hex.EncodeToString(sum[:4]),
		hosts: map[string]bool{net.JoinHostPort(host, port): true}, heavy: make(chan struct{}, 4), stop: make(chan struct{})}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
			s.hosts[net.JoinHostPort(h, port)] = true
		}
	}
	s.runs.s = s
	s.mux = s.routes()
	return s, nil
}

// Token is the secret the page's first address carries.
func (s *Server) Token() string { return s.token }

// URL is the address to open: the page, with its token.
func (s *Server) URL() string {
	return "http://" + s.o.Addr + "/?token=" + url.QueryEscape(s.token)
}

// Close stops a scan of the store under way and waits for it to end; no
// scan starts after it.
func (s *Server) Close() {
	s.closeMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	s.closeMu.Unlock()
	s.scanning.Wait()
}

// csp lets the page load its own scripts, styles and data and nothing
// else: no inline script, no other origin, no frame, no form.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP checks the request (Host, Origin, token, method) and serves
// it: 403 for a request that fails a check, 405 for anything but GET or
// HEAD (the page changes nothing).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !s.hosts[strings.ToLower(r.Host)] {
		forbid(w, "this page answers only at "+s.o.Addr)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !s.hosts[strings.ToLower(strings.TrimPrefix(o, "http://"))] {
		forbid(w, "cross-origin requests are refused")
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		forbid(w, "cross-site requests are refused")
		return
	}
	if q := r.URL.Query().Get("token"); q != "" {
		if !s.tokenOK(q) {
			forbid(w, "wrong token: open the address retval ui printed")
			return
		}
		// The token moves to a cookie, and out of the address bar and
		// the history.
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
	} else if !s.authorized(r) {
		forbid(w, "no token: open the address retval ui printed")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "retval ui is read-only", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// authorized: the request carries the token in its cookie or as a bearer
// token (for scripts).
func (s *Server) authorized(r *http.Request) bool {
	if c, err := r.Cookie(s.cookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(b) {
		return true
	}
	return false
}

func forbid(w http.ResponseWriter, why string) {
	http.Error(w, "403 forbidden: "+why, http.StatusForbidden)
}

// routes are the page, its assets and the API.
func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", serveIndex)
	m.HandleFunc("GET /assets/{path...}", serveAsset)
	m.HandleFunc("GET /api/runs", api(s.apiRuns))
	m.HandleFunc("GET /api/runs/{run}", runAPI(s.apiRun))
	m.HandleFunc("GET /api/runs/{run}/timeline", runAPI(s.apiTimeline))
	m.HandleFunc("GET /api/runs/{run}/values/{id}", s.valueAPI(s.apiValue))
	m.HandleFunc("GET /api/runs/{run}/values/{id}/lines", s.heavyOnly(s.valueAPI(s.apiLines)))
	m.HandleFunc("GET /api/runs/{run}/values/{id}/query", s.heavyOnly(s.valueAPI(s.apiQuery)))
	m.HandleFunc("GET /api/runs/{run}/values/{id}/outline", s.heavyOnly(s.valueAPI(s.apiOutline)))
	m.HandleFunc("GET /api/runs/{run}/values/{id}/raw", s.heavyOnly(s.valueAPI(s.apiRaw)))
	m.HandleFunc("GET /api/stats", api(s.apiStats))
	m.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, retain.Errorf(retain.CodeUsage, "no such API: %s", r.URL.Path))
	})
	return m
}

// heavyOnly lets a few requests that read values run at once, so that
// the server's memory stays bounded however fast the page scrolls.
func (s *Server) heavyOnly(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.heavy <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-s.heavy }()
		f(w, r)
	}
}
