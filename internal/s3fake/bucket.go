// Package s3fake is object storage in memory for tests: a Bucket that
// implements s3store.API with the semantics of S3 (and of versitygw, the
// real server the tests also run against), a Faults wrapper that injects
// failures by rule around any s3store.API (this one or the HTTP client), and
// a Server that serves buckets over S3's HTTP protocol for tests that run
// retval as a separate process.
//
// What the Bucket keeps of S3's semantics is what the store relies on:
// conditional writes answered 412 (PreconditionFailed) when their condition
// does not hold and 404 for If-Match on an absent key; strong
// read-after-write; listings in byte order of the key, paged by opaque
// continuation tokens and max-keys, with common prefixes under a
// delimiter; ETags that are the MD5 of the content (of the parts' MD5s
// and their count for a multipart upload); Last-Modified from the
// bucket's clock, in whole seconds as HTTP dates carry it; ranged reads
// clipped to the object, 416 past its end; multipart uploads whose parts
// but the last are at least MinPartSize.
package s3fake

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain/s3store"
)

// DefaultMinPartSize is S3's smallest part but the last of a multipart
// upload.
const DefaultMinPartSize = 5 << 20

// maxKeys is the most keys (or uploads) a page holds, as on S3.
const maxKeys = 1000

// Bucket is one bucket in memory. Its zero value is not ready: use
// NewBucket. It is safe for concurrent use; every call is atomic.
type Bucket struct {
	// MinPartSize is the least size of a part that is not the last one
	// (S3's 5 MiB by default); a test may lower it to exercise multipart
	// uploads with small values.
	MinPartSize int64

	mu      sync.Mutex
	clock   func() time.Time
	objects map[string]*object
	uploads map[string]*upload
	nextID  int
	// allocated is the content bytes the bucket has copied in, ever.
	allocated int64
}

type object struct {
	data     []byte // never changed once stored: a put stores a new slice
	etag     string
	modified time.Time
}

type upload struct {
	key     string
	id      string
	parts   map[int32]*object
	created int // the order in which uploads were created
}

// NewBucket returns an empty bucket whose clock is clock (time.Now when
// nil).
func NewBucket(clock func() time.Time) *Bucket {
	if clock == nil {
		clock = time.Now
	}
	return &Bucket{MinPartSize: DefaultMinPartSize, clock: clock, objects: map[string]*object{}, uploads: map[string]*upload{}}
}

var _ s3store.API = (*Bucket)(nil)

// now is the bucket's clock as its answers carry it: UTC, whole seconds.
func (b *Bucket) now() time.Time { return b.clock().UTC().Truncate(time.Second) }

func md5ETag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func statusErr(status int, code, msg string) error {
	return &s3store.StatusError{Status: status, Code: code, Message: msg}
}

var (
	errNoSuchKey    = statusErr(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
	errNotFound     = statusErr(http.StatusNotFound, "NotFound", "Not Found")
	errPrecondition = statusErr(http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	errNoSuchUpload = statusErr(http.StatusNotFound, "NoSuchUpload", "The specified multipart upload does not exist.")
	errInvalidRange = statusErr(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable")
)

// check is whether cond holds for the object at key (nil when absent); the
// caller holds b.mu.
func check(o *object, cond s3store.Cond) error {
	switch {
	case cond.IfNoneMatch && o != nil:
		return errPrecondition
	case cond.IfMatch != "" && o == nil:
		return errNoSuchKey
	case cond.IfMatch != "" && cond.IfMatch != o.etag && cond.IfMatch != "*":
		return errPrecondition
	}
	return nil
}

// PutObject stores a copy of body under key, if cond holds.
func (b *Bucket) PutObject(ctx context.Context, key string, body []byte, cond s3store.Cond) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := check(b.objects[key], cond); err != nil {
		return "", err
	}
	o := &object{data: bytes.Clone(body), etag: md5ETag(body), modified: b.now()}
	b.allocated += int64(len(body))
	b.objects[key] = o
	return o.etag, nil
}

// GetObject answers the object, or the part of rng it holds.
func (b *Bucket) GetObject(ctx context.Context, key string, rng *s3store.Range) (*s3store.GetOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	o := b.objects[key]
	b.mu.Unlock()
	if o == nil {
		return nil, errNoSuchKey
	}
	out := &s3store.GetOutput{Object: s3store.Object{Key: key, ETag: o.etag, Modified: o.modified}}
	data := o.data
	if rng != nil {
		size := int64(len(data))
		if rng.Off < 0 || rng.Len <= 0 || rng.Off >= size {
			return nil, errInvalidRange
		}
		end := min(rng.Off+rng.Len, size)
		data = data[rng.Off:end]
		out.ContentRange = fmt.Sprintf("bytes %d-%d/%d", rng.Off, end-1, size)
	}
	out.Size = int64(len(data))
	out.Body = io.NopCloser(bytes.NewReader(data))
	return out, nil
}

// HeadObject says what the object at key is.
func (b *Bucket) HeadObject(ctx context.Context, key string) (s3store.Object, error) {
	if err := ctx.Err(); err != nil {
		return s3store.Object{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.objects[key]
	if o == nil {
		return s3store.Object{}, errNotFound
	}
	return s3store.Object{Key: key, Size: int64(len(o.data)), ETag: o.etag, Modified: o.modified}, nil
}

// A continuation token names the last key (k) or common prefix (p) the
// page before held; it is opaque to callers, as S3's are.
func encodeToken(kind byte, s string) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{kind}, s...))
}

func decodeToken(t string) (kind byte, s string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) == 0 || (b[0] != 'k' && b[0] != 'p') {
		return 0, "", false
	}
	return b[0], string(b[1:]), true
}

// ListObjects answers one page of the keys under in.Prefix, in byte
// order, after the page in.Token ended.
func (b *Bucket) ListObjects(ctx context.Context, in s3store.ListInput) (*s3store.ListPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := int(in.MaxKeys)
	if limit <= 0 || limit > maxKeys {
		limit = maxKeys
	}
	var after string
	var afterPrefix bool
	if in.Token != "" {
		kind, s, ok := decodeToken(in.Token)
		if !ok {
			return nil, statusErr(http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect")
		}
		after, afterPrefix = s, kind == 'p'
	}
	b.mu.Lock()
	keys := make([]string, 0, len(b.objects))
	for k := range b.objects {
		if strings.HasPrefix(k, in.Prefix) && (in.Token == "" || k > after) && !(afterPrefix && strings.HasPrefix(k, after)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	page := &s3store.ListPage{}
	n := 0
	var last string
	var lastKind byte
	for _, k := range keys {
		if in.Delimiter != "" {
			if i := strings.Index(k[len(in.Prefix):], in.Delimiter); i >= 0 {
				cp := k[:len(in.Prefix)+i+len(in.Delimiter)]
				if lastKind == 'p' && cp == last {
					continue
				}
				if n == limit {
					page.Next = encodeToken(lastKind, last)
					break
				}
				page.Prefixes = append(page.Prefixes, cp)
				last, lastKind = cp, 'p'
				n++
				continue
			}
		}
		if n == limit {
			page.Next = encodeToken(lastKind, last)
			break
		}
		o := b.objects[k]
		page.Objects = append(page.Objects, s3store.Object{Key: k, Size: int64(len(o.data)), ETag: o.etag, Modified: o.modified})
		last, lastKind = k, 'k'
		n++
	}
	b.mu.Unlock()
	return page, nil
}

// DeleteObject removes key, if cond holds.
func (b *Bucket) DeleteObject(ctx context.Context, key string, cond s3store.Cond) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := check(b.objects[key], s3store.Cond{IfMatch: cond.IfMatch}); err != nil {
		return err
	}
	delete(b.objects, key)
	return nil
}

// DeleteObjects removes up to 1,000 keys.
func (b *Bucket) DeleteObjects(ctx context.Context, keys []string) ([]s3store.DeleteError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 || len(keys) > maxKeys {
		return nil, statusErr(http.StatusBadRequest, "MalformedXML", fmt.Sprintf("a batch delete of %d keys", len(keys)))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		delete(b.objects, k)
	}
	return nil, nil
}

// Now is the bucket's clock.
func (b *Bucket) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return b.now(), nil
}

// CreateUpload starts a multipart upload to key.
func (b *Bucket) CreateUpload(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	sum := sha256.Sum256(fmt.Appendf(nil, "%d %s", b.nextID, key))
	u := &upload{key: key, id: hex.EncodeToString(sum[:12]), parts: map[int32]*object{}, created: b.nextID}
	b.uploads[u.id] = u
	return u.id, nil
}

func (b *Bucket) upload(key, id string) (*upload, error) {
	u := b.uploads[id]
	if u == nil || u.key != key {
		return nil, errNoSuchUpload
	}
	return u, nil
}

// UploadPart stores a copy of body as part num of the upload.
func (b *Bucket) UploadPart(ctx context.Context, key, id string, num int32, body []byte) (s3store.Part, error) {
	if err := ctx.Err(); err != nil {
		return s3store.Part{}, err
	}
	if num < 1 || num > 10000 {
		return s3store.Part{}, statusErr(http.StatusBadRequest, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.upload(key, id)
	if err != nil {
		return s3store.Part{}, err
	}
	p := &object{data: bytes.Clone(body), etag: md5ETag(body), modified: b.now()}
	b.allocated += int64(len(body))
	u.parts[num] = p
	sum := sha256.Sum256(body)
	return s3store.Part{Num: num, ETag: p.etag, Checksum: base64.StdEncoding.EncodeToString(sum[:])}, nil
}

// CompleteUpload makes the object of the listed parts, if cond holds.
func (b *Bucket) CompleteUpload(ctx context.Context, key, id string, parts []s3store.Part, cond s3store.Cond) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.upload(key, id)
	if err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return "", statusErr(http.StatusBadRequest, "MalformedXML", "a completion that lists no parts")
	}
	var size int64
	for _, p := range parts {
		if got := u.parts[p.Num]; got != nil {
			size += int64(len(got.data))
		}
	}
	data, sums := make([]byte, 0, size), []byte(nil)
	b.allocated += size
	for i, p := range parts {
		if i > 0 && p.Num <= parts[i-1].Num {
			return "", statusErr(http.StatusBadRequest, "InvalidPartOrder", "The list of parts was not in ascending order")
		}
		got := u.parts[p.Num]
		if got == nil || got.etag != p.ETag {
			return "", statusErr(http.StatusBadRequest, "InvalidPart", fmt.Sprintf("part %d was not uploaded, or its ETag is not %s", p.Num, p.ETag))
		}
		if i < len(parts)-1 && int64(len(got.data)) < b.MinPartSize {
			return "", statusErr(http.StatusBadRequest, "EntityTooSmall", fmt.Sprintf("part %d is %d bytes, less than the allowed minimum", p.Num, len(got.data)))
		}
		data = append(data, got.data...)
		sum := md5.Sum(got.data)
		sums = append(sums, sum[:]...)
	}
	if err := check(b.objects[key], cond); err != nil {
		return "", err
	}
	sum := md5.Sum(sums)
	o := &object{data: data, etag: fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(sum[:]), len(parts)), modified: b.now()}
	b.objects[key] = o
	delete(b.uploads, id)
	return o.etag, nil
}

// AbortUpload drops the upload and its parts.
func (b *Bucket) AbortUpload(ctx context.Context, key, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.upload(key, id); err != nil {
		return err
	}
	delete(b.uploads, id)
	return nil
}

// ListUploads answers one page of the unfinished uploads under in.Prefix,
// by key, then by when they began.
func (b *Bucket) ListUploads(ctx context.Context, in s3store.ListUploadsInput) (*s3store.UploadsPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var us []*upload
	for _, u := range b.uploads {
		if strings.HasPrefix(u.key, in.Prefix) {
			us = append(us, u)
		}
	}
	slices.SortFunc(us, func(x, y *upload) int {
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
		return x.created - y.created
	})
	// After the markers: keys past KeyMarker, and with the same key,
	// uploads past UploadIDMarker.
	start := 0
	if in.KeyMarker != "" {
		start = len(us)
		passed := in.UploadIDMarker == ""
		for i, u := range us {
			if u.key > in.KeyMarker || (u.key == in.KeyMarker && passed) {
				start = i
				break
			}
			if u.key == in.KeyMarker && u.id == in.UploadIDMarker {
				passed = true
			}
		}
	}
	us = us[start:]
	page := &s3store.UploadsPage{}
	if len(us) > maxKeys {
		us = us[:maxKeys]
		page.Truncated = true
		page.NextKeyMarker, page.NextUploadIDMarker = us[len(us)-1].key, us[len(us)-1].id
	}
	for _, u := range us {
		page.Uploads = append(page.Uploads, s3store.Upload{Key: u.key, ID: u.id})
	}
	return page, nil
}

// Clone returns a bucket holding what b holds now (objects and
// unfinished uploads), with clock as its clock: a test sets a bucket up
// once and runs each case on a copy.
func (b *Bucket) Clone(clock func() time.Time) *Bucket {
	c := NewBucket(clock)
	b.mu.Lock()
	defer b.mu.Unlock()
	c.MinPartSize, c.nextID = b.MinPartSize, b.nextID
	for k, o := range b.objects {
		c.objects[k] = o // never changed once stored: shared
	}
	for id, u := range b.uploads {
		cu := *u
		cu.parts = maps.Clone(u.parts)
		c.uploads[id] = &cu
	}
	return c
}

// Keys are the bucket's keys, in order: what a test looks at.
func (b *Bucket) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objects))
	for k := range b.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Uploads is how many multipart uploads are unfinished.
func (b *Bucket) Uploads() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.uploads)
}

// Allocated is the content bytes the bucket has copied into its own
// memory since it was made (objects and parts, kept or not): what a
// caller measuring its own allocations takes off.
func (b *Bucket) Allocated() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.allocated
}
