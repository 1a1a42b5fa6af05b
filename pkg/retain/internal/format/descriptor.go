package format

import (
	"encoding/json"
	"time"
)

// Compression names how a value's content file is stored.
type Compression string

const (
	CompressNone Compression = "none"
	CompressZstd Compression = "zstd-seekable"
)

// Descriptor is a value's metadata, kept as <id>.meta.json. It is written
// last: its presence (with a matching content file) is what makes a value
// exist. Unknown fields are ignored on read.
type Descriptor struct {
	ID     ID     `json:"id"`
	CallID string `json:"call_id"`
	// CallIDXXH3 is the XXH3-64 (16 hex digits) of a call id longer than
	// MaxCallIDBytes, of which CallID then keeps the first bytes.
	CallIDXXH3 string `json:"call_id_xxh3,omitempty"`
	Run        ID     `json:"run"`
	Tool       string `json:"tool,omitempty"`
	Size       int64  `json:"size"`
	Lines      int64  `json:"lines"`
	SHA256     string `json:"sha256"`
	UTF8       bool   `json:"utf8"`
	JSON       bool   `json:"json"`
	// NDJSON: every non-empty line is one valid JSON document, and there
	// are at least two.
	NDJSON       bool   `json:"ndjson,omitempty"`
	Complete     bool   `json:"complete"`
	OmittedBytes *int64 `json:"omitted_bytes,omitempty"`
	ExitCode     *int   `json:"exit_code,omitempty"`
	TimedOut     bool   `json:"timed_out"`
	// Stopped: the producer was stopped once its output reached
	// max-value-size, so the value is the first Size bytes of an output
	// that went on (retval exec); Complete is then false.
	Stopped bool `json:"stopped,omitempty"`
	// KeptTail: retval itself kept the last Size bytes of a longer output
	// (retval exec --tail), where a partial value is otherwise the tail a
	// producer upstream kept; Complete is then false.
	KeptTail bool `json:"kept_tail,omitempty"`
	// Stderr is the value holding the producer's stderr, kept apart
	// (retval exec --stderr separate); the stub names it.
	Stderr      ID          `json:"stderr,omitempty"`
	Created     time.Time   `json:"created"`
	Compression Compression `json:"compression"`
	StoredBytes int64       `json:"stored_bytes"`
}

func MarshalDescriptor(d *Descriptor) ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// The bounds on what a descriptor keeps of a caller's strings, so that
// every descriptor retain commits stays far below MaxDescriptorSize
// (JSON escaping makes a byte at most 6).
const (
	MaxCallIDBytes = 1024
	MaxToolBytes   = 256
)

// MaxDescriptorSize bounds a descriptor file: retain never writes a larger
// one (it bounds the call id and tool name it keeps), and a reader refuses
// one as corrupt rather than read it whole.
const MaxDescriptorSize = 1 << 20

// EmptySHA256 is the SHA-256 of no bytes.
const EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
