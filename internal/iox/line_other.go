//go:build !linux

package iox

import (
	"bufio"
	"io"
)

func readLong(br *bufio.Reader, chunk []byte) ([]byte, error) {
	return readRest(br, append([]byte(nil), chunk...))
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
