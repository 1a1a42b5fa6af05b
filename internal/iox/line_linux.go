package iox

import (
	"bufio"
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
	// The line, built a step at a time; each step's pages are given back
	// as soon as they are copied, so the two never both hold the line.
	line := make([]byte, n)
	for off := 0; off < n; off += releaseStep {
		end := min(off+releaseStep, n)
		copy(line[off:end], region[off:end])
		syscall.Madvise(region[off:end], syscall.MADV_DONTNEED)
	}
	return line, err
}
