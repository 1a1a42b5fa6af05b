package local

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/format"
)

func (b *Backend) LogRead(run format.ID, r format.Read) error {
	s := b
	dir := s.runDir(run)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no run: nothing to account for in it
	}
	if err != nil {
		return err
	}
	if checkRunDir(dir, fi) != nil {
		return nil // refused: the read that used it said so already
	}
	f, err := fsx.OpenFile(filepath.Join(dir, format.ReadsName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, format.FileMode)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the run went away meanwhile (collected)
	}
	if err != nil && readOnly(err) {
		return nil // a read-only store is read without logging
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() >= format.MaxReadLog {
		return fmt.Errorf("%s is full (%d bytes)", f.Name(), format.MaxReadLog)
	}
	var buf [format.MaxReadRecord]byte
	line := format.AppendRecord(buf[:0], r)
	// One write: O_APPEND puts it at the end whole.
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if errors.Is(err, syscall.EROFS) {
		return nil
	}
	return err
}

func (b *Backend) ScanReads(run format.ID, f func(*format.Read)) (format.ReadLogInfo, error) {
	s := b
	var info format.ReadLogInfo
	dir, err := s.lookupRun(run)
	if err != nil {
		return info, err
	}
	fh, err := openStoreFile(filepath.Join(dir, format.ReadsName), os.O_RDONLY, "read log")
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return info, err
	}
	info.Bytes = fi.Size()
	if fi.Size() > format.MaxReadLog+format.MaxReadRecord {
		return info, format.Errorf(format.CodeCorrupt, "read log %s holds %d bytes, over its %d-byte bound: retval never writes one this big (remove it; only stats reads it)", fh.Name(), fi.Size(), format.MaxReadLog)
	}
	// A buffer the size of a small log (most are), at most 64 KiB.
	br := bufio.NewReaderSize(io.LimitReader(fh, format.MaxReadLog+format.MaxReadRecord), int(min(max(fi.Size()+1, 2*format.MaxReadRecord), 64<<10)))
	var rec format.Read
	var lineNo int64
	in := format.Interner{}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Far longer than a record: skip to the end of the line.
			lineNo++
			info.NoteMalformed(lineNo)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return info, err
			}
			continue
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		lineNo++
		if err == io.EOF || len(line) > format.MaxReadRecord || !format.ParseRecord(line[:len(line)-1], &rec, in) {
			// (A last line without its newline is a torn write.)
			info.NoteMalformed(lineNo)
		} else {
			info.Records++
			f(&rec)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return info, err
		}
	}
	return info, nil
}
