package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// assets are the page: index.html, app.js, app.css and the vendored
// chart library, served from the binary (no network, no CDN). Embedded
// files are data in the binary: nothing is read or decoded until served.
//
//go:embed assets
var assets embed.FS

// contentType is the type of an asset, by its extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "text/plain; charset=utf-8"
}

func serveIndex(w http.ResponseWriter, r *http.Request) { serveFile(w, r, "assets/index.html") }

func serveAsset(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	if !fs.ValidPath(p) || strings.HasSuffix(p, ".md") {
		http.NotFound(w, r)
		return
	}
	serveFile(w, r, "assets/"+p)
}

func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(b)
}
