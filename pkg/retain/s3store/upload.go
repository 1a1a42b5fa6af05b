package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// UploadOptions say how Upload writes.
type UploadOptions struct {
	// IfAbsent makes the upload fail with ErrExists when the key exists
	// (If-None-Match: * on the PUT, or on the multipart completion).
	IfAbsent bool
}

func (o UploadOptions) cond() Cond { return Cond{IfNoneMatch: o.IfAbsent} }

// Upload streams r to key: one PUT when r holds at most PartSize bytes,
// a multipart upload otherwise, with at most four parts in memory whatever
// the size. An upload that fails is aborted: no object appears, and no
// parts are left behind (if the abort itself fails, the server's own
// expiry of incomplete uploads removes them). It returns the bytes
// written.
func (b *Bucket) Upload(ctx context.Context, key string, r io.Reader, opt UploadOptions) (int64, error) {
	size := b.PartSize
	if size <= 0 {
		size = DefaultPartSize
	}
	first := make([]byte, size)
	n, err := io.ReadFull(r, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if _, err := b.put(ctx, key, first[:n], opt.cond()); err != nil {
			return 0, err
		}
		return int64(n), nil
	case err != nil:
		return 0, &Error{Op: "upload", Key: key, Err: err}
	}
	return b.multipart(ctx, key, first, r, opt)
}

// uploadSenders is how many parts of a multipart upload are sent at once.
const uploadSenders = 3

// part is one filled buffer on its way to the server.
type part struct {
	num  int32
	data []byte
}

func (b *Bucket) multipart(ctx context.Context, key string, first []byte, r io.Reader, opt UploadOptions) (total int64, err error) {
	id, err := b.api.CreateUpload(ctx, b.key(key))
	if err != nil {
		return 0, b.classify("upload", key, err, Cond{})
	}
	defer func() {
		if err != nil {
			// A fresh context: the caller's may be what was cancelled.
			b.api.AbortUpload(context.WithoutCancel(ctx), b.key(key), id)
		}
	}()

	// Senders send parts while this goroutine fills the next buffer:
	// senders+1 buffers in all, handed back and forth, so memory stays at
	// a few parts whatever the size, and a part's round trip does not
	// wait for the one before.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan part, 1)
	// Room for every buffer: a sender never waits to hand one back.
	free := make(chan []byte, uploadSenders+1)
	for range uploadSenders {
		free <- make([]byte, len(first))
	}
	var (
		mu      sync.Mutex
		done    []Part
		sendErr error
		wg      sync.WaitGroup
	)
	for range uploadSenders {
		wg.Go(func() {
			for p := range full {
				mu.Lock()
				failed := sendErr != nil
				mu.Unlock()
				if !failed {
					sent, err := b.api.UploadPart(ctx, b.key(key), id, p.num, p.data)
					mu.Lock()
					if err == nil {
						done = append(done, sent)
					} else if sendErr == nil {
						sendErr = err
						cancel()
					}
					mu.Unlock()
				}
				free <- p.data[:cap(p.data)]
			}
		})
	}

	buf := first
	var readErr error
	for num := int32(1); ; num++ {
		if num > 10000 {
			readErr = fmt.Errorf("more than 10,000 parts of %d bytes", len(first))
			break
		}
		full <- part{num: num, data: buf}
		total += int64(len(buf))
		if len(buf) < len(first) {
			break
		}
		buf = <-free
		n, err := io.ReadFull(r, buf)
		if err == io.EOF {
			break
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			readErr = err
			break
		}
		buf = buf[:n]
		if ctx.Err() != nil {
			break
		}
	}
	close(full)
	wg.Wait()
	if sendErr != nil {
		return 0, b.classify("upload", key, sendErr, Cond{})
	}
	// Parts finish in any order; the completion lists them in order.
	slices.SortFunc(done, func(x, y Part) int { return int(x.Num - y.Num) })
	if readErr != nil {
		return 0, &Error{Op: "upload", Key: key, Err: readErr}
	}
	if _, err := b.api.CompleteUpload(ctx, b.key(key), id, done, opt.cond()); err != nil {
		return 0, b.classify("upload", key, err, opt.cond())
	}
	return total, nil
}

// AbortUploads aborts every unfinished multipart upload whose key starts
// with prefix: the parts of a writer that died, which would otherwise stay
// on the server (and be billed) until its own expiry of incomplete uploads
// removed them. It returns how many it aborted.
func (b *Bucket) AbortUploads(ctx context.Context, prefix string) (int, error) {
	in := ListUploadsInput{Prefix: b.key(prefix)}
	n := 0
	for {
		page, err := b.api.ListUploads(ctx, in)
		if err != nil {
			return n, b.classify("list uploads", prefix, err, Cond{})
		}
		for _, u := range page.Uploads {
			if err := b.api.AbortUpload(ctx, u.Key, u.ID); err != nil {
				if err := b.classify("abort", b.unkey(u.Key), err, Cond{}); !errors.Is(err, ErrNotFound) {
					return n, err
				}
			}
			n++
		}
		if !page.Truncated {
			return n, nil
		}
		if page.NextKeyMarker == in.KeyMarker && page.NextUploadIDMarker == in.UploadIDMarker {
			return n, &Error{Op: "list uploads", Key: prefix, Err: errors.New("the server's listing of uploads does not move on")}
		}
		in.KeyMarker, in.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
}
