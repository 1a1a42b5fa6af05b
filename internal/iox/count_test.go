package iox

import (
	"bytes"
	"errors"
	"testing"
)

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, errors.New("short") }

func TestCountingWriter(t *testing.T) {
	var b bytes.Buffer
	c := &CountingWriter{W: &b}
	c.Write([]byte("abc"))
	c.Write([]byte("de"))
	if c.N != 5 || b.String() != "abcde" {
		t.Fatalf("counted %d, wrote %q", c.N, b.String())
	}
	// Only what the writer accepted is counted.
	s := &CountingWriter{W: shortWriter{}}
	if _, err := s.Write([]byte("abcd")); err == nil || s.N != 2 {
		t.Fatalf("short write counted %d, err %v", s.N, err)
	}
}
