//go:build !linux

package iox

import "bufio"

func readLong(br *bufio.Reader, chunk []byte) ([]byte, error) {
	return readRest(br, append([]byte(nil), chunk...))
}
