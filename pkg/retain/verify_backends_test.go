package retain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
)

// Verify is written once over the store's backend: the same damage to a
// value is the same problem, word for word, in a runs-dir and on object
// storage. Each backend only puts the damage in place (a file rewritten
// or removed; an object put again or deleted).
func TestVerifyIsOneCheckOnEitherBackend(t *testing.T) {
	data := toolOutput("c1", 50000) // over IndexMinSize: it has a line index
	damages := []struct {
		name string
		// file is the value's file the damage is made to, content its new
		// bytes (nil: the file is removed).
		file    string
		content func(old []byte) []byte
		kind    string
		message string
	}{
		{"content shorter", "c1.txt", func(old []byte) []byte { return old[:len(old)-10] },
			ProblemCorrupt, fmt.Sprintf("content file holds %d bytes, descriptor says %d", len(data)-10, len(data))},
		{"content missing", "c1.txt", nil,
			ProblemMissing, "content file missing: c1.meta.json has no c1.txt"},
		{"a byte changed", "c1.txt", func(old []byte) []byte { b := bytes.Clone(old); b[100] ^= 1; return b },
			ProblemCorrupt, "sha256 does not match the descriptor"},
		{"index damaged", "c1.lines", func(old []byte) []byte { b := bytes.Clone(old); b[len(b)/2] ^= 1; return b },
			ProblemCorrupt, "line index unusable: line index does not match its value"},
	}
	type damaged struct{ kind, file, message string }
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			var got []damaged
			check := func(t *testing.T, s *Store) {
				rep, err := s.Verify(VerifyOptions{Grace: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Values != 1 || len(rep.Problems) != 1 {
					t.Fatalf("report %+v, want one value with one problem", rep)
				}
				p := rep.Problems[0]
				got = append(got, damaged{p.Kind, p.File, p.Message})
			}
			t.Run("local", func(t *testing.T) {
				s := Open(t.TempDir())
				retainAll(t, s, "r", "c1", data)
				p := filepath.Join(s.RunDir("r"), dm.file)
				if dm.content == nil {
					os.Remove(p)
				} else {
					old, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					os.Chmod(p, 0o600)
					if err := os.WriteFile(p, dm.content(old), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				check(t, s)
			})
			t.Run("s3", func(t *testing.T) {
				s3test.Each(t, func(t *testing.T, srv *s3test.Server) {
					s, o, _ := s3Store(t, srv)
					retainAll(t, s, "r", "c1", data)
					key := objKey("r", dm.file)
					if dm.content == nil {
						if err := o.b.Delete(o.ctx, key); err != nil {
							t.Fatal(err)
						}
					} else {
						old, _, err := o.b.Get(o.ctx, key, 1<<30)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := o.b.Put(o.ctx, key, dm.content(old)); err != nil {
							t.Fatal(err)
						}
					}
					check(t, s)
				})
			})
			want := damaged{dm.kind, dm.file, dm.message}
			for i, g := range got {
				if g != want {
					t.Errorf("backend %d: %+v, want %+v", i, g, want)
				}
			}
			if len(got) < 2 {
				t.Fatalf("checked on %d backends, want both", len(got))
			}
		})
	}
}
