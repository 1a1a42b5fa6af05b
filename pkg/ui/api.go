package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/retval/retval/pkg/retain"
)

// What every API handler shares: the request with its query parsed, the
// run or the open value its path names, and its answer written as JSON or
// its error as {"error": …} with the status of the error's code. A
// handler says only what it answers.

// request is an API request as its handler reads it.
type request struct {
	*http.Request
	w     http.ResponseWriter // for a handler that answers itself
	query url.Values
}

// api serves f: what it returns is answered as JSON, an error with
// apiError. f returns nil and no error when it answered itself, or the
// client went away.
func api(f func(r *request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, hr *http.Request) {
		v, err := f(newRequest(w, hr))
		answer(w, v, err)
	}
}

// runAPI is api for a path that names a run: f gets its id, through the
// CLI's sanitizer.
func runAPI(f func(r *request, run retain.ID) (any, error)) http.HandlerFunc {
	return api(func(r *request) (any, error) {
		run, err := runID(r.Request)
		if err != nil {
			return nil, err
		}
		return f(r, run)
	})
}

// valueAPI is api for a path that names a value: f gets it open (without
// stamping its run's activity), and it is closed once f's answer is
// written.
func (s *Server) valueAPI(f func(r *request, v *retain.Value) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, hr *http.Request) {
		v, err := s.openValue(hr)
		if err != nil {
			apiError(w, err)
			return
		}
		defer v.Close()
		ans, err := f(newRequest(w, hr), v)
		answer(w, ans, err)
	}
}

// runID is the run named in the request's path, through the CLI's
// sanitizer.
func runID(r *http.Request) (retain.ID, error) {
	id, err := retain.Sanitize(r.PathValue("run"))
	if err != nil {
		return "", retain.Errorf(retain.CodeUsage, "run id: %v", err)
	}
	return id, nil
}

// openValue opens the value the request's path names (run and id through
// the CLI's sanitizer), without stamping the run's activity.
func (s *Server) openValue(r *http.Request) (*retain.Value, error) {
	run, err := runID(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if _, err := retain.Sanitize(id); err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "value id: %v", err)
	}
	return s.o.Store.OpenValueReadOnly(string(run), id)
}

func newRequest(w http.ResponseWriter, r *http.Request) *request {
	return &request{Request: r, w: w, query: r.URL.Query()}
}

// answer writes v as JSON, or err; neither when f answered itself.
func answer(w http.ResponseWriter, v any, err error) {
	switch {
	case err != nil:
		apiError(w, err)
	case v != nil:
		writeJSON(w, v)
	}
}

// number is query parameter name as a number, 0 when it is absent or not
// one: paging parameters fall back to their defaults.
func (r *request) number(name string) int64 {
	n, _ := strconv.ParseInt(r.query.Get(name), 10, 64)
	return n
}

// flag reports whether query parameter name is "1".
func (r *request) flag(name string) bool { return r.query.Get(name) == "1" }

// from is query parameter name as a number of at least least (want says
// what it counts), or nil when it is absent; anything else is a usage
// error.
func (r *request) from(name string, least int64, want string) (*int64, error) {
	a := r.query.Get(name)
	if a == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil || n < least {
		return nil, retain.Errorf(retain.CodeUsage, "%s %q: want %s from %d", name, a, want, least)
	}
	return &n, nil
}

// page is the page asked for by offset and limit: limit 50 unless it is
// between 1 and most, offset from 0.
func (r *request) page(most int) (offset, limit int) {
	offset, limit = int(max(r.number("offset"), 0)), int(r.number("limit"))
	if limit <= 0 || limit > most {
		limit = 50
	}
	return offset, limit
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true) // harmless in JSON, and one more wall around value bytes
	if err := enc.Encode(v); err != nil {
		// The status is sent; the page sees a truncated answer.
		return
	}
}

// apiError answers err as {"error": {"code", "message"}}, with the HTTP
// status of its code.
func apiError(w http.ResponseWriter, err error) {
	code := retain.CodeOf(err)
	status := http.StatusInternalServerError
	switch code {
	case retain.CodeUsage, retain.CodeBadReference, retain.CodeBadPointer, retain.CodeInvalidRange,
		retain.CodeNotJSON, retain.CodeAmbiguousJSON, retain.CodeNotUTF8, retain.CodeTooLarge:
		status = http.StatusBadRequest
	case retain.CodeUnknownReference:
		status = http.StatusNotFound
	case retain.CodeCollected:
		status = http.StatusGone
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": string(code), "message": err.Error()}})
}
