package iox

import (
	"bufio"
	"io"
	"syscall"
)

// reserve is the address space a long line is gathered in: only the pages
// written are ever backed by memory. A longer line is finished in the Go
// heap, as ReadBytes would.
const reserve = 1 << 31

// releaseStep is how much of the gathered line is copied out before those
// pages are given back.
const releaseStep = 1 << 20

func readLong(br *bufio.Reader, chunk []byte) ([]byte, error) {
	region, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return readRest(br, append([]byte(nil), chunk...))
	}
	defer syscall.Munmap(region)
	n := copy(region, chunk)
	err = bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		chunk, err = br.ReadSlice('\n')
		if n+len(chunk) > len(region) {
			head := make([]byte, n, n+len(chunk))
			copy(head, region[:n])
			head = append(head, chunk...)
			if err != bufio.ErrBufferFull {
				return head, err
			}
			return readRest(br, head)
		}
		n += copy(region[n:], chunk)
	}
	return copyOut(region, n), err
}

// readAll gathers r's bytes in a reserved region, then copies them out.
func readAll(r io.Reader) ([]byte, error) {
	region, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return io.ReadAll(r)
	}
	defer syscall.Munmap(region)
	n := 0
	for {
		if n == len(region) {
			rest, err := io.ReadAll(r)
			return append(copyOut(region, n), rest...), err
		}
		m, err := r.Read(region[n:])
		n += m
		if err == io.EOF {
			return copyOut(region, n), nil
		}
		if err != nil {
			return copyOut(region, n), err
		}
	}
}

// copyOut returns region[:n] as a slice of the Go heap, built a step at a
// time; each step's pages are given back as soon as they are copied, so
// the two never both hold the whole.
func copyOut(region []byte, n int) []byte {
	out := make([]byte, n)
	for off := 0; off < n; off += releaseStep {
		end := min(off+releaseStep, n)
		copy(out[off:end], region[off:end])
		syscall.Madvise(region[off:end], syscall.MADV_DONTNEED)
	}
	return out
}
