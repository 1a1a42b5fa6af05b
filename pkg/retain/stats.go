package retain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"unicode/utf8"

	simdutf8 "github.com/segmentio/asm/utf8"

	"github.com/retval/retval/internal/jsonvalid"
)

// stats is what retain learns of a value as it streams past: everything the
// descriptor and the stub need, in memory bounded by the preview budget.
type stats struct {
	size     int64
	newlines int64
	last     byte
	// firstNL is the offset of the first newline; lastNL and prevNL those
	// of the last two (-1: none yet). A stub needs them for a first or
	// last line longer than its excerpt.
	firstNL, lastNL, prevNL int64
	sha                     hash.Hash
	utf8                    bool
	carry                   []byte // an incomplete UTF-8 sequence at the end of the last chunk
	json                    jsonvalid.Validator
	// nd checks for NDJSON from the end of the first non-empty line on:
	// until then the lines are json's bytes (ndStarted false).
	nd        jsonvalid.Lines
	ndStarted bool
	keep      int    // bytes of head and tail to keep (the preview budget)
	head      []byte // first keep bytes
	tail      []byte // ring of the last keep bytes
	tailPos   int
	index     *indexBuilder // nil when no index is built
}

func newStats(keep int64, index bool) *stats {
	s := &stats{sha: sha256.New(), utf8: true, keep: int(max(keep, 0)), firstNL: -1, lastNL: -1, prevNL: -1}
	s.tail = make([]byte, 0, s.keep)
	if index {
		s.index = newIndexBuilder()
	}
	return s
}

// add accounts for p, except for the SHA-256, which the caller feeds
// (possibly on another goroutine) through s.sha.
func (s *stats) add(p []byte) {
	if len(p) == 0 {
		return
	}
	at := s.size
	s.size += int64(len(p))
	if c := bytes.Count(p, nl); c > 0 {
		s.newlines += int64(c)
		if s.firstNL < 0 {
			s.firstNL = at + int64(bytes.IndexByte(p, '\n'))
		}
		i := bytes.LastIndexByte(p, '\n')
		if c == 1 {
			s.prevNL = s.lastNL
		} else {
			s.prevNL = at + int64(bytes.LastIndexByte(p[:i], '\n'))
		}
		s.lastNL = at + int64(i)
	}
	s.last = p[len(p)-1]
	if s.utf8 {
		s.checkUTF8(p)
	}
	s.addJSON(p)
	if n := s.keep - len(s.head); n > 0 {
		s.head = append(s.head, p[:min(n, len(p))]...)
	}
	s.addTail(p)
	if s.index != nil {
		s.index.Write(p)
	}
}

// addJSON feeds the JSON checks. The first line is checked once, by the
// whole-document validator: at its end, that validator says whether it was
// one document; NDJSON checking goes on from there line by line.
func (s *stats) addJSON(p []byte) {
	for !s.ndStarted && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		s.json.Write(p[:i+1])
		p = p[i+1:]
		switch {
		case s.json.Failed():
			s.nd.Fail()
			s.ndStarted = true
		case s.json.Valid() && s.json.Container():
			s.nd.StartAfterLine()
			s.ndStarted = true
		case s.json.Started():
			// A scalar line, or a document that goes on past its first
			// line (one JSON document at most): not NDJSON.
			s.nd.Fail()
			s.ndStarted = true
		}
	}
	if !s.json.Failed() {
		s.json.Write(p)
	}
	if s.ndStarted && !s.nd.Failed() {
		s.nd.Write(p)
	}
}

func (s *stats) checkUTF8(p []byte) {
	if len(s.carry) > 0 {
		// Complete the sequence split by the last chunk boundary.
		buf := append(append([]byte(nil), s.carry...), p[:min(len(p), utf8.UTFMax)]...)
		if !utf8.FullRune(buf) { // p was too short to complete it
			s.carry = buf
			return
		}
		r, size := utf8.DecodeRune(buf)
		if r == utf8.RuneError && size == 1 {
			s.utf8 = false
			return
		}
		p = p[size-len(s.carry):]
		s.carry = nil
	}
	// Hold back an incomplete sequence at the end.
	cut := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if !isCont(p[k]) {
			if !utf8.FullRune(p[k:]) {
				cut = k
			}
			break
		}
	}
	// The vectorised validator (AVX2 where the CPU has it) checks ≈4× as
	// fast as unicode/utf8 on mixed text; FuzzValidUTF8 holds it to
	// unicode/utf8's answer.
	if !simdutf8.Valid(p[:cut]) {
		s.utf8 = false
		return
	}
	s.carry = append([]byte(nil), p[cut:]...)
}

func (s *stats) addTail(p []byte) {
	if s.keep == 0 {
		return
	}
	if len(p) >= s.keep {
		s.tail = append(s.tail[:0], p[len(p)-s.keep:]...)
		s.tailPos = 0
		return
	}
	for len(p) > 0 {
		if len(s.tail) < s.keep {
			n := min(len(p), s.keep-len(s.tail))
			s.tail = append(s.tail, p[:n]...)
			p = p[n:]
			continue
		}
		n := copy(s.tail[s.tailPos:], p)
		s.tailPos = (s.tailPos + n) % s.keep
		p = p[n:]
	}
}

// tailBytes returns the last min(keep, size) bytes in order.
func (s *stats) tailBytes() []byte {
	out := make([]byte, 0, len(s.tail))
	out = append(out, s.tail[s.tailPos:]...)
	return append(out, s.tail[:s.tailPos]...)
}

func (s *stats) lines() int64 {
	if s.size > 0 && s.last != '\n' {
		return s.newlines + 1
	}
	return s.newlines
}

// lineEnds returns the offset of the first newline (-1: none) and the
// offset at which the last line starts, as StubInput wants them.
func (s *stats) lineEnds() (firstNewline, lastLineStart int64) {
	nl := s.lastNL
	if s.size > 0 && s.last == '\n' {
		nl = s.prevNL // the newline ending the last line starts nothing
	}
	return s.firstNL, nl + 1
}

func (s *stats) validUTF8() bool { return s.utf8 && len(s.carry) == 0 }

// descriptor fills the fields the bytes decide.
func (s *stats) descriptor(d *Descriptor) {
	d.Size = s.size
	d.Lines = s.lines()
	d.SHA256 = hex.EncodeToString(s.sha.Sum(nil))
	d.UTF8 = s.validUTF8()
	d.JSON = d.UTF8 && s.json.Valid()
	d.NDJSON = d.UTF8 && s.ndStarted && s.nd.Valid()
}

var nl = []byte{'\n'}
