package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// UploadOptions say how Upload writes.
type UploadOptions struct {
	// IfAbsent makes the upload fail with ErrExists when the key exists
	// (If-None-Match: * on the PUT, or on the multipart completion).
	IfAbsent bool
}

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
		in := &s3.PutObjectInput{}
		if opt.IfAbsent {
			in.IfNoneMatch = aws.String("*")
		}
		if _, err := b.put(ctx, key, first[:n], in); err != nil {
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
	created, err := b.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:            aws.String(b.loc.Bucket),
		Key:               aws.String(b.key(key)),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
	})
	if err != nil {
		return 0, b.classify("upload", key, err)
	}
	id := created.UploadId
	defer func() {
		if err != nil {
			// A fresh context: the caller's may be what was cancelled.
			b.client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{
				Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key)), UploadId: id,
			})
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
		done    []types.CompletedPart
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
					out, err := b.client.UploadPart(ctx, &s3.UploadPartInput{
						Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key)), UploadId: id,
						PartNumber:        aws.Int32(p.num),
						Body:              bytes.NewReader(p.data),
						ContentLength:     aws.Int64(int64(len(p.data))),
						ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
						ChecksumSHA256:    checksum(p.data),
					})
					mu.Lock()
					if err == nil {
						done = append(done, types.CompletedPart{PartNumber: aws.Int32(p.num), ETag: out.ETag, ChecksumSHA256: out.ChecksumSHA256})
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
		return 0, b.classify("upload", key, sendErr)
	}
	// Parts finish in any order; the completion lists them in order.
	slices.SortFunc(done, func(x, y types.CompletedPart) int { return int(aws.ToInt32(x.PartNumber) - aws.ToInt32(y.PartNumber)) })
	if readErr != nil {
		return 0, &Error{Op: "upload", Key: key, Err: readErr}
	}
	in := &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key)), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	}
	if opt.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := b.client.CompleteMultipartUpload(ctx, in); err != nil {
		err = b.classify("upload", key, err)
		if errors.Is(err, ErrChanged) {
			err = &Error{Op: "upload", Key: key, Err: ErrExists}
		}
		return 0, err
	}
	return total, nil
}

// AbortUploads aborts every unfinished multipart upload whose key starts
// with prefix: the parts of a writer that died, which would otherwise stay
// on the server (and be billed) until its own expiry of incomplete uploads
// removed them. It returns how many it aborted.
func (b *Bucket) AbortUploads(ctx context.Context, prefix string) (int, error) {
	p := s3.NewListMultipartUploadsPaginator(b.client, &s3.ListMultipartUploadsInput{
		Bucket: aws.String(b.loc.Bucket),
		Prefix: aws.String(b.key(prefix)),
	})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, b.classify("list uploads", prefix, err)
		}
		for _, u := range page.Uploads {
			_, err := b.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(b.loc.Bucket), Key: u.Key, UploadId: u.UploadId,
			})
			if err != nil && !errors.Is(b.classify("abort", b.unkey(aws.ToString(u.Key)), err), ErrNotFound) {
				return n, b.classify("abort", b.unkey(aws.ToString(u.Key)), err)
			}
			n++
		}
	}
	return n, nil
}
