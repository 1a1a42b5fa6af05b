package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// API is the S3 API of one bucket: the calls the store's protocol is
// built from, and nothing else. Keys are the bucket's own (the store's
// prefix is Bucket's business, not the API's). There are two
// implementations: the HTTP client (NewClient, Open), and an in-memory bucket
// with the same semantics that the tests run against, which can also
// inject faults around either (internal/s3fake).
//
// What an implementation promises is what S3 promises:
//   - Strong read-after-write: a call begun after another returned sees
//     its effect.
//   - PutObject and CompleteUpload honour Cond atomically: IfNoneMatch
//     succeeds for exactly one of any number of writers of an absent key,
//     IfMatch only while the object has that ETag; a condition that does
//     not hold is a *StatusError of 412 (or 409 for a conditional write
//     that met another in flight). DeleteObject honours IfMatch the same
//     way.
//   - An ETag is a digest of the content: the same bytes put again have
//     the same ETag.
//   - ListObjects pages through keys in lexicographic (byte) order.
//   - Modified is the server's clock, and Now reads that clock.
//   - A failure the server answered is a *StatusError; anything else (a
//     connection reset, a timeout) is some other error, after which the
//     call may or may not have taken effect.
type API interface {
	// PutObject writes body under key, if cond holds.
	PutObject(ctx context.Context, key string, body []byte, cond Cond) (etag string, err error)
	// GetObject reads key, or the bytes rng names of it (nil for all).
	// A range that starts at or past the object's end is a 416.
	GetObject(ctx context.Context, key string, rng *Range) (*GetOutput, error)
	// HeadObject says what the object at key is.
	HeadObject(ctx context.Context, key string) (Object, error)
	// ListObjects returns one page of the keys in.Prefix selects.
	ListObjects(ctx context.Context, in ListInput) (*ListPage, error)
	// DeleteObject removes key, if cond holds (only IfMatch is
	// meaningful); an absent key is not an error without a condition.
	DeleteObject(ctx context.Context, key string, cond Cond) error
	// DeleteObjects removes up to 1,000 keys in one request; absent keys
	// are not an error. Keys the server could not delete come back in
	// failed.
	DeleteObjects(ctx context.Context, keys []string) (failed []DeleteError, err error)
	// Now is the server's clock (the Date of a HEAD of the bucket).
	Now(ctx context.Context) (time.Time, error)

	// A multipart upload: created, sent in numbered parts (every part but
	// the last at least 5 MiB), then completed — when the object appears,
	// if cond holds — or aborted.
	CreateUpload(ctx context.Context, key string) (uploadID string, err error)
	UploadPart(ctx context.Context, key, uploadID string, num int32, body []byte) (Part, error)
	CompleteUpload(ctx context.Context, key, uploadID string, parts []Part, cond Cond) (etag string, err error)
	AbortUpload(ctx context.Context, key, uploadID string) error
	// ListUploads returns one page of the unfinished uploads under
	// in.Prefix.
	ListUploads(ctx context.Context, in ListUploadsInput) (*UploadsPage, error)
}

// Cond is a write's precondition: none, the key absent (If-None-Match: *)
// or the object there with ETag IfMatch (If-Match).
type Cond struct {
	IfNoneMatch bool
	IfMatch     string
}

// Range is bytes [Off, Off+Len) of an object; the server answers the part
// of it the object holds.
type Range struct {
	Off, Len int64
}

// Header is the Range header's value for r.
func (r Range) Header() string { return fmt.Sprintf("bytes=%d-%d", r.Off, r.Off+r.Len-1) }

// GetOutput is a GET's answer. The caller closes Body.
type GetOutput struct {
	Body io.ReadCloser
	// Object is the object read, its Size the bytes Body holds (the
	// response's Content-Length).
	Object
	// ContentRange is "bytes FIRST-LAST/TOTAL" for a ranged GET, "" for a
	// whole one.
	ContentRange string
}

// ListInput selects a page of keys: those starting with Prefix, after the
// page Token ended ("" for the first). With a Delimiter, keys with it
// after the prefix are rolled up into Prefixes. MaxKeys 0 is the server's
// default (1,000).
type ListInput struct {
	Prefix    string
	Delimiter string
	Token     string
	MaxKeys   int32
}

// ListPage is one page of a listing. Next is the token of the next page,
// "" when this is the last.
type ListPage struct {
	Objects  []Object
	Prefixes []string
	Next     string
}

// DeleteError is a key a batch delete did not remove.
type DeleteError struct {
	Key, Code, Message string
}

// Part is an uploaded part, as the completion lists it.
type Part struct {
	Num      int32
	ETag     string
	Checksum string // the part's SHA-256, base64, as the server kept it
}

// ListUploadsInput selects a page of unfinished uploads: those whose key
// starts with Prefix, after the markers the page before ended with.
type ListUploadsInput struct {
	Prefix         string
	KeyMarker      string
	UploadIDMarker string
}

// Upload is an unfinished multipart upload.
type Upload struct {
	Key, ID string
}

// UploadsPage is one page of unfinished uploads; Truncated says whether
// there are more after NextKeyMarker and NextUploadIDMarker.
type UploadsPage struct {
	Uploads            []Upload
	Truncated          bool
	NextKeyMarker      string
	NextUploadIDMarker string
}

// StatusError is a call the server answered with an error status.
type StatusError struct {
	Status  int    // the HTTP status: 404, 412, 503, ...
	Code    string // S3's error code: NoSuchKey, PreconditionFailed, SlowDown, ...
	Message string
	Err     error     // the client's own error, when there is one
	date    time.Time // the answer's Date, when it had one
}

// HTTPStatusCode and ErrorCode are what the AWS SDK's retryer asks an
// error for, to decide whether a call is worth another attempt.
func (e *StatusError) HTTPStatusCode() int { return e.Status }
func (e *StatusError) ErrorCode() string   { return e.Code }

func (e *StatusError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("status %d: %s: %s", e.Status, e.Code, e.Message)
}

func (e *StatusError) Unwrap() error { return e.Err }

// statusOf is err's status when the server answered it, else 0.
func statusOf(err error) (int, string) {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status, se.Code
	}
	return 0, ""
}
