package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/retain/s3store"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

func init() {
	// objflip KEY OFFSET: flip the byte at OFFSET of the object KEY of the
	// script's S3 store (what flipbyte does to a local file).
	scriptCmds["objflip"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: objflip KEY OFFSET")
		}
		off, err := strconv.Atoi(args[1])
		ts.Check(err)
		b := scriptBucket(ts)
		data, _, err := b.Get(context.Background(), args[0], 1<<30)
		ts.Check(err)
		data[off] ^= 0xff
		_, err = b.Put(context.Background(), args[0], data)
		ts.Check(err)
	}
	// puttombstone RUN FILE: on the script's S3 store, leave FILE as the
	// tombstone gc leaves of RUN (what the local scripts do with cp).
	scriptCmds["puttombstone"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: puttombstone RUN FILE")
		}
		putObject(ts, ".retval/tombstones/"+args[0]+".json", args[1])
	}
	// objput KEY FILE: put FILE's bytes as the object KEY of the script's
	// S3 store.
	scriptCmds["objput"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: objput KEY FILE")
		}
		putObject(ts, args[0], args[1])
	}
}

func putObject(ts *testscript.TestScript, key, file string) {
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	_, err = scriptBucket(ts).Put(context.Background(), key, data)
	ts.Check(err)
}

// scriptBucket opens the script's S3 store ($RETVAL_STORE) with the
// script's AWS variables.
func scriptBucket(ts *testscript.TestScript) *s3store.Bucket {
	loc, err := s3store.ParseURL(ts.Getenv("RETVAL_STORE"))
	ts.Check(err)
	return s3store.Open(loc, s3store.Config{
		Endpoint: ts.Getenv("AWS_ENDPOINT_URL_S3"), Region: ts.Getenv("AWS_REGION"),
		AccessKey: ts.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: ts.Getenv("AWS_SECRET_ACCESS_KEY"), PathStyle: true,
	})
}

// s3Scripts are the scripts that TestScriptS3 runs again on object
// storage: every one that works through retval's commands alone. The
// others look at the runs-dir's files themselves (permissions, symlinks,
// FIFOs, debris), which object storage does not have.
var s3Scripts = []string{
	"peek_*.txtar", "resolve_*.txtar", "expand_*.txtar", "json_outline.txtar", "range_as_typed.txtar",
	"retain_basic.txtar", "retain_capacity.txtar", "retain_ids.txtar", "retain_meta.txtar",
	"retain_readmore.txtar", "retain_zstd.txtar", "replay.txtar", "catalogue_basic.txtar",
	"exec.txtar", "stats.txtar", "retain_race.txtar", "hook_claude_code.txtar", "mcp_serve.txtar", "mcp_proxy.txtar",
	"gc_s3.txtar", "gc_s3_race.txtar", "gc_generation.txtar", "retain_longline.txtar",
}

// s3Skip are scripts the patterns above match that are about the local
// store's files alone.
var s3Skip = []string{"resolve_ledger.txtar"}

// objectStorageOnly reports whether the script at path is about object
// storage alone: it begins its commands by skipping itself without it
// ("[!s3] skip"). TestScript leaves such a script to TestScriptS3, which
// must then run it.
func objectStorageOnly(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := txtar.Parse(b)
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if strings.HasPrefix(line, "[!s3] skip") {
			if !slices.ContainsFunc(s3Scripts, func(pat string) bool {
				ok, _ := filepath.Match(pat, filepath.Base(path))
				return ok
			}) {
				t.Errorf("%s is about object storage alone, and TestScriptS3 does not run it (add it to s3Scripts)", filepath.Base(path))
			}
			return true
		}
	}
	return false
}

// TestScriptS3 runs the contract scripts again with the store on object
// storage — the in-memory fake and a real S3-compatible server (versitygw),
// each on loopback: their output must not change with the backend. Each
// script gets a prefix of its own in one bucket. Where a script looks at
// what only a local store has, it says so with the condition [s3].
func TestScriptS3(t *testing.T) { s3test.Each(t, testScriptS3) }

func testScriptS3(t *testing.T, srv *s3test.Server) {
	bucket := srv.NewBucket(t)
	var files []string
	for _, pat := range s3Scripts {
		m, err := filepath.Glob(filepath.Join("../testdata/script", pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !slices.Contains(s3Skip, filepath.Base(f)) {
				files = append(files, f)
			}
		}
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(e *testscript.Env) error {
			var b [6]byte
			rand.Read(b[:])
			store := "s3://" + bucket + "/" + hex.EncodeToString(b[:])
			e.Setenv("RETVAL_RUNS_DIR", e.WorkDir+"/runs")
			e.Setenv("RETVAL_STORE", store)
			e.Setenv("STORE", store)
			e.Setenv("LONGID", strings.Repeat("a", 10000))
			for _, kv := range srv.Env() {
				k, v, _ := strings.Cut(kv, "=")
				e.Setenv(k, v)
			}
			return nil
		},
		Cmds: scriptCmds,
		Condition: func(cond string) (bool, error) {
			if cond == "s3" {
				return true, nil
			}
			return scriptCondition(cond)
		},
	})
}

// collectObjects does to run on the script's S3 store what the script
// command collect does locally: every key of the run deleted, descriptors
// first, and a tombstone left.
func collectObjects(ts *testscript.TestScript, run retain.ID) {
	b := scriptBucket(ts)
	ctx := context.Background()
	var descs, rest []string
	ts.Check(b.List(ctx, string(run)+".values/", func(o s3store.Object) error {
		if strings.HasSuffix(o.Key, ".meta.json") {
			descs = append(descs, o.Key)
		} else {
			rest = append(rest, o.Key)
		}
		return nil
	}))
	ts.Check(b.Delete(ctx, descs...))
	ts.Check(b.Delete(ctx, rest...))
	_, err := b.Put(ctx, ".retval/tombstones/"+string(run)+".json", []byte(`{"run":"`+string(run)+`","collected":"2025-01-02T03:04:05Z","values":0,"bytes":0}`+"\n"))
	ts.Check(err)
}
