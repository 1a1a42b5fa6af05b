// Package ui is retval ui: a read-only web page over a store, served by
// the binary itself, for the engineer who inspects what an agent saw. It
// shows the runs (with what gc would do to each), a run as a timeline of
// its calls and the reads that followed them, a value with the stub the
// model saw beside its content (a viewer that pages through any size via
// the line index, the lines read back highlighted, search, a JSON tree),
// and the store's savings as charts.
//
// Everything is read through pkg/retain, pkg/peek, pkg/expand, pkg/stats
// and pkg/gc; nothing is written to the store (no activity stamp, no read
// log record). Every request must carry the server's random token (in the
// address first, then a cookie), name the server's own address as its
// Host and come from no other origin; responses forbid every script,
// style and connection but the page's own, and value bytes reach the page
// only as JSON strings it shows as text.
//
// The package does nothing when imported: the page's assets are embedded
// data, read when served, and nothing is compiled or built before New.
package ui
