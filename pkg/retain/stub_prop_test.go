package retain

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var markerRE = regexp.MustCompile(`\n\[… (\d+) lines, (\d+) bytes not shown …\]\n`)
var readMoreRE = regexp.MustCompile(`\[read more: peek (\S+) --lines (\d+)-(\d+) \| --query TEXT\]\n$`)

// TestStubProperties checks, on random texts, that excerpts are verbatim
// prefix and suffix of the value, that the marker's counts are exact and
// that the read-more line names the first line the head did not show.
func TestStubProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", " ", "é", "日", "😀", "\n", "\n", "\r\n", "x"}
	for iter := 0; iter < 3000; iter++ {
		var b strings.Builder
		n := 1 + r.IntN(6000)
		for b.Len() < n {
			if r.IntN(20) == 0 {
				b.WriteString(strings.Repeat("w", r.IntN(700)))
			}
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		data := []byte(b.String())
		preview := int64(r.IntN(1216))
		peekLines := int64(1 + r.IntN(500))
		st := newStats(preview, false)
		st.add(data)
		d := &Descriptor{}
		st.descriptor(d)
		stub := RenderStub(StubInput{ID: "v", Size: d.Size, Lines: d.Lines, SHA256: d.SHA256,
			Head: st.head, Tail: st.tailBytes(), PreviewBytes: preview, PeekLines: peekLines})
		header, body, _ := strings.Cut(stub, "\n")
		// The alphabet has no backslash: the only escape is CR's.
		body = strings.ReplaceAll(body, `\x0d`, "\r")
		if !strings.HasPrefix(header, "[retained #v] "+strconv.Itoa(len(data))+" bytes, ") {
			t.Fatalf("header %q", header)
		}
		rm := readMoreRE.FindStringSubmatchIndex(body)
		if rm == nil {
			t.Fatalf("no read-more line in %q", body)
		}
		first, _ := strconv.ParseInt(body[rm[4]:rm[5]], 10, 64)
		last, _ := strconv.ParseInt(body[rm[6]:rm[7]], 10, 64)
		body = body[:rm[0]]
		m := markerRE.FindStringSubmatchIndex("\n" + body)
		if preview == 0 {
			if body != "" {
				t.Fatalf("preview 0 shows %q", body)
			}
			continue
		}
		if m == nil {
			if int64(len(data)) > preview {
				t.Fatalf("no marker for %d bytes > preview %d", len(data), preview)
			}
			if body != string(data) && body != string(data)+"\n" {
				t.Fatalf("small value not shown whole")
			}
			continue
		}
		head := ("\n" + body)[1 : m[0]+1]
		tail := ("\n" + body)[m[1]:]
		nLines, _ := strconv.ParseInt(("\n" + body)[m[2]:m[3]], 10, 64)
		nBytes, _ := strconv.ParseInt(("\n" + body)[m[4]:m[5]], 10, 64)
		// An excerpt that does not end in a newline got one added, so a
		// final newline may or may not be the value's: accept the reading
		// that is a true prefix (suffix) and agrees with the byte count.
		found := false
		for _, h := range []string{head, strings.TrimSuffix(head, "\n")} {
			for _, tl := range []string{tail, strings.TrimSuffix(tail, "\n")} {
				if found || !bytes.HasPrefix(data, []byte(h)) || !bytes.HasSuffix(data, []byte(tl)) {
					continue
				}
				if int64(len(data)-len(h)-len(tl)) == nBytes && int64(len(h)+len(tl)) <= preview {
					head, tail, found = h, tl, true
				}
			}
		}
		if !found {
			t.Fatalf("excerpts are not a verbatim prefix and suffix adding up to %d hidden bytes: head %q tail %q size %d preview %d", nBytes, head, tail, len(data), preview)
		}
		// Lines wholly hidden: those not touched by head nor tail.
		midStart, midEnd := len(head), len(data)-len(tail)
		lineOf := func(off int) int64 { return int64(bytes.Count(data[:off], []byte("\n"))) + 1 }
		var want int64
		if midEnd > midStart {
			firstHidden := lineOf(midStart)
			if midStart > 0 && data[midStart-1] != '\n' {
				firstHidden++
			}
			lastHidden := lineOf(midEnd) - 1
			if midEnd < len(data) && midEnd > 0 && data[midEnd-1] != '\n' {
				lastHidden = lineOf(midEnd) - 1
			}
			if midEnd == len(data) {
				lastHidden = d.Lines
			}
			want = max(0, lastHidden-firstHidden+1)
		}
		if nLines != want {
			t.Fatalf("marker says %d lines hidden, want %d (head %d bytes, tail %d, size %d)", nLines, want, len(head), len(tail), len(data))
		}
		if wantFirst := int64(strings.Count(head, "\n")) + 1; first != wantFirst {
			t.Fatalf("read-more starts at %d, want %d", first, wantFirst)
		}
		if last != min(d.Lines, first+peekLines-1) {
			t.Fatalf("read-more ends at %d", last)
		}
	}
}
