package cmd

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// zstdbomb RUNDIR ID: replace the content of zstd value ID with one
	// frame that inflates to 64 MiB of zeros, behind a seek table that
	// claims the descriptor's size; the descriptor's stored_bytes is made
	// to match, so only decoding can tell.
	scriptCmds["zstdbomb"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: zstdbomb RUNDIR ID")
		}
		dir := ts.MkAbs(args[0])
		meta := filepath.Join(dir, args[1]+".meta.json")
		b, err := os.ReadFile(meta)
		ts.Check(err)
		var d map[string]any
		ts.Check(json.Unmarshal(b, &d))
		size, _ := d["size"].(float64)
		enc, err := zstd.NewWriter(nil)
		ts.Check(err)
		bomb := enc.EncodeAll(make([]byte, 64<<20), nil)
		le := binary.LittleEndian
		var table []byte
		table = le.AppendUint32(table, 0x184D2A5E) // skippable frame
		table = le.AppendUint32(table, 8+9)
		table = le.AppendUint32(table, uint32(len(bomb)))
		table = le.AppendUint32(table, uint32(size))
		table = le.AppendUint32(table, 1) // frames
		table = append(table, 0)          // no checksums
		table = le.AppendUint32(table, 0x8F92EAB1)
		forged := append(bomb, table...)
		content := filepath.Join(dir, args[1]+".txt.zst")
		os.Chmod(content, 0o600)
		ts.Check(os.WriteFile(content, forged, 0o600))
		d["stored_bytes"] = len(forged)
		b, err = json.Marshal(d)
		ts.Check(err)
		os.Chmod(meta, 0o600)
		ts.Check(os.WriteFile(meta, b, 0o600))
	}
	// sizemax FILE N: FILE holds at most N bytes (output stays bounded).
	scriptCmds["sizemax"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: sizemax FILE N")
		}
		fi, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		max, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		if fi.Size() > max {
			ts.Fatalf("%s holds %d bytes, more than %d", args[0], fi.Size(), max)
		}
	}
}
