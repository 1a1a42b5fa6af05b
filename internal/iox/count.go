// Package iox holds small io helpers several packages share.
package iox

import "io"

// CountingWriter passes writes to W and counts the bytes W accepted: what
// a command showed, for the read log.
type CountingWriter struct {
	W io.Writer
	N int64
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
