//go:build ignore

// efficiency turns the measures the end-to-end sessions wrote (one JSON
// object a line, see internal/e2e/e2etest.Measure) into the worked table
// of docs/EFFICIENCY.md, replacing what lies between its markers.
//
//	go run bench/efficiency.go MEASURES.jsonl docs/EFFICIENCY.md
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type ledger struct {
	Key           string `json:"key"`
	RetainedBytes int64  `json:"retained_bytes"`
	StubBytes     int64  `json:"stub_bytes"`
	Calls         int64  `json:"calls"`
	LookupBytes   int64  `json:"lookup_bytes"`
	OverheadBytes int64  `json:"overhead_bytes"`
	KeptOut       int64  `json:"kept_out_bytes"`
}

type measure struct {
	Client  string `json:"client"`
	Result  string `json:"result"`
	Bytes   int64  `json:"bytes"`
	Without int64  `json:"without"`
	Stub    int64  `json:"stub"`
	Lookups int64  `json:"lookups"`
	Calls   int64  `json:"calls"`
	Value   string `json:"value"`
	Ledger  struct {
		CallOverhead int64    `json:"call_overhead"`
		Rows         []ledger `json:"rows"`
	} `json:"ledger"`
}

const (
	begin = "<!-- worked table: bench/efficiency.sh writes from here -->"
	end   = "<!-- worked table: to here -->"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run bench/efficiency.go MEASURES.jsonl EFFICIENCY.md")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	check(err)
	var ms []measure
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m measure
		check(json.Unmarshal(sc.Bytes(), &m))
		ms = append(ms, m)
	}
	check(sc.Err())
	if len(ms) == 0 {
		fail("no measures in %s: did the end-to-end tests run (or skip)?", os.Args[1])
	}

	var b bytes.Buffer
	b.WriteString(begin + "\n\n")
	b.WriteString("| client | tool result | its bytes | without retval: the model received | with retval: stub + lookups (calls) | with retval, measured | ledger: stub + lookups + overhead | ledger: kept out | measured: without − with |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var sumWithout, sumWith, sumBytes, sumLedgerCost, sumKept int64
	for _, m := range ms {
		l, ok := row(m)
		with := m.Stub + m.Lookups
		ledgerCost, kept := "—", "—"
		if ok {
			c := l.StubBytes + l.LookupBytes + l.OverheadBytes
			ledgerCost = fmt.Sprintf("%s + %s + %s = %s", comma(l.StubBytes), comma(l.LookupBytes), comma(l.OverheadBytes), comma(c))
			kept = comma(l.KeptOut)
			sumLedgerCost += c
			sumKept += l.KeptOut
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s + %s (%d) | %s | %s | %s | %s |\n", m.Client, m.Result, comma(m.Bytes), comma(m.Without),
			comma(m.Stub), comma(m.Lookups), m.Calls, comma(with), ledgerCost, kept, comma(m.Without-with))
		sumWithout += m.Without
		sumWith += with
		sumBytes += m.Bytes
	}
	fmt.Fprintf(&b, "| **all** | | **%s** | **%s** | | **%s** | **%s** | **%s** | **%s** |\n\n", comma(sumBytes), comma(sumWithout), comma(sumWith), comma(sumLedgerCost), comma(sumKept), comma(sumWithout-sumWith))
	fmt.Fprintf(&b, "Call overhead in the ledger: %d bytes a call. Measured: the bytes of the tool results the mock model API received in the request that carried them; ledger: `retval stats --by value --json` of the same session.\n\n", ms[0].Ledger.CallOverhead)
	b.WriteString(end)

	doc, err := os.ReadFile(os.Args[2])
	check(err)
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		fail("%s has no markers %q … %q", os.Args[2], begin, end)
	}
	out := append(append(append([]byte{}, doc[:i]...), b.Bytes()...), doc[j+len(end):]...)
	check(os.WriteFile(os.Args[2], out, 0o644))
}

// row is the ledger's row for the measured value.
func row(m measure) (ledger, bool) {
	for _, l := range m.Ledger.Rows {
		if m.Value != "" && (l.Key == m.Value || strings.HasSuffix(l.Key, "/"+m.Value)) {
			return l, true
		}
	}
	return ledger{}, false
}

func comma(n int64) string {
	if n < 0 {
		return "−" + comma(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "efficiency: "+format+"\n", args...)
	os.Exit(1)
}
