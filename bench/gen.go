//go:build ignore

// gen writes deterministic benchmark data.
//
//	go run bench/gen.go log SIZE > big.log     a log of mixed ASCII and multi-byte lines
//	go run bench/gen.go ascii SIZE > a.log     a pure-ASCII service log; its one ERROR line,
//	                                           "ERROR needle-in-haystack-7f3a", is the last
//	go run bench/gen.go lock SIZE > lock.json  a package-lock-shaped JSON document
//	go run bench/gen.go store DIR RUNS VALUES  a runs-dir of RUNS × VALUES 1 KiB values,
//	                                           half the runs idle 10 days, half 1 day
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) == 5 && os.Args[1] == "store" {
		runs, _ := strconv.Atoi(os.Args[3])
		values, _ := strconv.Atoi(os.Args[4])
		genStore(os.Args[2], runs, values)
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run bench/gen.go log|lock SIZE | store DIR RUNS VALUES")
		os.Exit(2)
	}
	size, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	r := rand.New(rand.NewPCG(42, 42))
	switch os.Args[1] {
	case "log":
		genLog(w, r, size)
	case "ascii":
		genASCII(w, r, size)
	case "lock":
		genLock(w, r, size)
	default:
		fmt.Fprintln(os.Stderr, "unknown kind", os.Args[1])
		os.Exit(2)
	}
}

var words = []string{"INFO", "WARN", "DEBUG", "ERROR", "naïve", "café", "日本語", "Ελληνικά",
	"worker", "request", "latency", "ok", "retry", "GET /api/v1/items", "user=42"}

func genLog(w *bufio.Writer, r *rand.Rand, size int64) {
	var n int64
	line := make([]byte, 0, 512)
	for i := 1; n < size; i++ {
		line = line[:0]
		line = fmt.Appendf(line, "2026-11-30T12:%02d:%02d.%06d", (i/60)%60, i%60, i%1000000)
		for k := 3 + r.IntN(12); k > 0; k-- {
			line = append(line, ' ')
			line = append(line, words[r.IntN(len(words))]...)
		}
		line = append(line, ' ')
		for k := r.IntN(41); k > 0; k-- {
			line = append(line, 'x')
		}
		line = append(line, '\n')
		if n+int64(len(line)) > size {
			line = line[:size-n]
		}
		w.Write(line)
		n += int64(len(line))
	}
}

// asciiNeedle is the ASCII log's one ERROR line. Neither y nor k occurs
// anywhere else, so a search for "needle-in-haystack" has a byte that never
// occurs, while "ERROR" is as rare but made of bytes on every line (INFO,
// WARN, DEBUG), and "INFO" or "status=200" are on most lines.
const asciiNeedle = "2026-11-30T23:59:59Z ERROR needle-in-haystack-7f3a\n"

// genASCII writes lines like
//
//	2026-11-30T05:00:00Z INFO req=000000000 path=/api/v1/items/0 status=200 dur_ms=0
//
// and the needle last.
func genASCII(w *bufio.Writer, r *rand.Rand, size int64) {
	levels := []string{"INFO", "INFO", "INFO", "WARN", "DEBUG"}
	statuses := []string{"200", "200", "200", "201", "304", "404", "500"}
	digits := func(b []byte, n int) []byte {
		for ; n > 0; n-- {
			b = append(b, '0'+byte(r.IntN(10)))
		}
		return b
	}
	var n int64
	rest := size - int64(len(asciiNeedle))
	line := make([]byte, 0, 128)
	for i := 0; n < rest; i++ {
		s := i % 86400
		line = fmt.Appendf(line[:0], "2026-11-30T%02d:%02d:%02dZ %s req=", s/3600, (s/60)%60, s%60, levels[r.IntN(len(levels))])
		line = digits(line, 9)
		line = append(line, " path=/api/v1/items/"...)
		line = digits(line, 1+r.IntN(5))
		line = append(line, " status="...)
		line = append(line, statuses[r.IntN(len(statuses))]...)
		line = append(line, " dur_ms="...)
		line = digits(line, 1+r.IntN(3))
		line = append(line, '\n')
		if n+int64(len(line)) > rest {
			line = append(bytes.Repeat([]byte{' '}, int(rest-n-1)), '\n')
		}
		w.Write(line)
		n += int64(len(line))
	}
	if size >= int64(len(asciiNeedle)) {
		w.WriteString(asciiNeedle)
	}
}

func genLock(w *bufio.Writer, r *rand.Rand, size int64) {
	w.WriteString("{\n  \"name\": \"bench\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n")
	n := int64(64)
	for i := 0; n < size; i++ {
		name := fmt.Sprintf("pkg-%d", i)
		if i == 0 {
			name = "x"
		}
		s := fmt.Sprintf("    \"node_modules/%s\": {\n      \"version\": \"%d.%d.%d\",\n      \"resolved\": \"https://registry.example/%s/-/%s-%d.tgz\",\n      \"integrity\": \"sha512-%016x%016x\",\n      \"dev\": true\n    },\n",
			name, r.IntN(20), r.IntN(50), r.IntN(100), name, name, i, r.Uint64(), r.Uint64())
		w.WriteString(s)
		n += int64(len(s))
	}
	w.WriteString("    \"node_modules/last\": {\"version\": \"1.0.0\"}\n  }\n}\n")
}

// genStore writes a store in retval's layout directly (100k retain
// processes would take longer than the benchmark), with old mtimes.
func genStore(dir string, runs, values int) {
	const size = 1024
	now := time.Now()
	line := []byte("0123456789 the quick brown fox jumps over the lazy dog 0123456789\n")
	for r := 0; r < runs; r++ {
		run := fmt.Sprintf("run-%04d", r)
		rd := filepath.Join(dir, run+".values")
		must(os.MkdirAll(rd, 0o700))
		idle := 24 * time.Hour
		if r%2 == 0 {
			idle = 10 * 24 * time.Hour
		}
		t := now.Add(-idle)
		for v := 0; v < values; v++ {
			body := make([]byte, 0, size)
			for len(body) < size {
				body = append(body, fmt.Sprintf("%s %d ", run, v)...)
				body = append(body, line...)
			}
			body = body[:size]
			id := fmt.Sprintf("call-%03d", v)
			sum := sha256.Sum256(body)
			d := map[string]any{"id": id, "call_id": id, "run": run, "tool": "bench", "size": size,
				"lines": size / len(line), "sha256": hex.EncodeToString(sum[:]), "utf8": true, "json": false,
				"complete": true, "timed_out": false, "created": t.UTC().Format(time.RFC3339),
				"compression": "none", "stored_bytes": size}
			meta, _ := json.MarshalIndent(d, "", "  ")
			must(os.WriteFile(filepath.Join(rd, id+".txt"), body, 0o600))
			must(os.WriteFile(filepath.Join(rd, id+".meta.json"), append(meta, '\n'), 0o600))
			must(os.Chtimes(filepath.Join(rd, id+".txt"), t, t))
			must(os.Chtimes(filepath.Join(rd, id+".meta.json"), t, t))
		}
		for _, f := range []string{".lock", ".activity"} {
			must(os.WriteFile(filepath.Join(rd, f), nil, 0o600))
			must(os.Chtimes(filepath.Join(rd, f), t, t))
		}
		must(os.Chtimes(rd, t, t))
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
