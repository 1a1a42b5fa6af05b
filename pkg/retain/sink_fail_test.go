package retain

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A zstd sink whose file write fails keeps every accepted byte for the
// verbatim fallback, whichever way Finish learns of the failure: the
// compressor may have died before the last frame was queued, and that
// frame must still be read back. The file here is read-only, so the first
// frame write fails (as on a full disk).
func TestZstdSinkFailureReadsBackEverything(t *testing.T) {
	data := bigValue(2*FrameSize + 90000)
	dir := t.TempDir()
	for i := range 100 {
		p := filepath.Join(dir, "v")
		os.WriteFile(p, nil, 0o600)
		f, err := os.Open(p) // read-only: every write fails
		if err != nil {
			t.Fatal(err)
		}
		z, err := newZstdSink(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := z.Write(data[:2*FrameSize]); n != 2*FrameSize {
			t.Fatalf("write: %d, %v", n, err)
		}
		// Give the compressor time to fail and exit before the last frame
		// is queued (it may also still be waiting for a frame).
		for deadline := time.Now().Add(20 * time.Millisecond); len(z.done) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		z.Write(data[2*FrameSize:])
		if _, err := z.Finish(); err == nil {
			t.Fatal("finish on a read-only file succeeded")
		}
		var out bytes.Buffer
		if err := z.ReadBack(&out); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("trial %d: read back %d bytes of the %d accepted", i, out.Len(), len(data))
		}
	}
}
