package e2etest

import (
	"encoding/json"
	"os"
	"testing"
)

// EnvLedger names a file to which the scenarios append what the model
// received, one JSON object a line (a Measure), for bench/efficiency.sh,
// which turns them into the worked table of docs/EFFICIENCY.md.
const EnvLedger = "RETVAL_E2E_LEDGER"

// Measure is what the model received for one big tool result, in a
// session without retval and in one with it.
type Measure struct {
	Client string `json:"client"`
	Result string `json:"result"` // the call, e.g. "Bash: seq 1 20000"
	Bytes  int    `json:"bytes"`  // the result's own size
	// Without is what the model received for the result without retval
	// (the client's own cut, if it makes one).
	Without int `json:"without"`
	// Stub is what it received instead with retval; Lookups the bytes of
	// the calls it made to read the value back, Calls how many.
	Stub    int `json:"stub"`
	Lookups int `json:"lookups"`
	Calls   int `json:"calls"`
	// Ledger is retval stats --json for the session's run, grouped by
	// value: what retval's own read log says of it.
	Ledger json.RawMessage `json:"ledger,omitempty"`
	// Value is the value's id in the ledger.
	Value string `json:"value,omitempty"`
}

// WriteMeasure appends m to the file EnvLedger names; without it, it
// does nothing.
func WriteMeasure(t testing.TB, m Measure) {
	t.Helper()
	p := os.Getenv(EnvLedger)
	if p == "" {
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// Ledger runs retval stats for run (every run of the session's store when
// run is "") grouped by value, and returns its JSON.
func (s *Session) Ledger(run string) json.RawMessage {
	s.T.Helper()
	args := []string{"stats", "--runs-dir", s.StoreDir(), "--by", "value", "--json"}
	if run == "" {
		args = append(args, "--all")
	} else {
		args = append(args, "--run", run)
	}
	return json.RawMessage(s.RunRetval(args...))
}
