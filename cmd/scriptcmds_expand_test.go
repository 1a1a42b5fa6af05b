package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// jsontext FILE POINTER OUT: write the text of the JSON string at
	// POINTER (RFC 6901) of the document in FILE to OUT, decoded.
	scriptCmds["jsontext"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: jsontext FILE POINTER OUT")
		}
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		p, err := expand.ParsePointer(args[1])
		ts.Check(err)
		sp, err := expand.FindPointer(bytes.NewReader(data), int64(len(data)), p)
		ts.Check(err)
		var s string
		if err := json.Unmarshal(data[sp.Start:sp.End], &s); err != nil {
			ts.Fatalf("%s at %q is not a string: %v", args[0], args[1], err)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(s), 0o644))
	}
	// catlines OUT PIECE...: write to OUT the pieces in order, each
	// FILE:A-B (lines A to B of FILE, newlines kept) or FILE (all of it).
	scriptCmds["catlines"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: catlines OUT FILE[:A-B]...")
		}
		var out []byte
		for _, piece := range args[1:] {
			name, rng, cut := strings.Cut(piece, ":")
			data, err := os.ReadFile(ts.MkAbs(name))
			ts.Check(err)
			if !cut {
				out = append(out, data...)
				continue
			}
			a, b, ok := strings.Cut(rng, "-")
			first, err1 := strconv.Atoi(a)
			last, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil {
				ts.Fatalf("bad range %q", rng)
			}
			lines := strings.SplitAfter(string(data), "\n")
			out = append(out, strings.Join(lines[first-1:last], "")...)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), out, 0o644))
	}
	// filesize FILE N: FILE holds exactly N bytes.
	scriptCmds["filesize"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: filesize FILE N")
		}
		fi, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		want, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		if (fi.Size() == want) == neg {
			ts.Fatalf("%s holds %d bytes; want %s%d", args[0], fi.Size(), map[bool]string{true: "not ", false: ""}[neg], want)
		}
	}
}
