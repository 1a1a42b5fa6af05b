// Package s3store is the object layer of retval's store on S3-compatible
// object storage (AWS S3, MinIO, Ceph, R2, versitygw): the few operations
// the store's protocol is built from, each with the guarantee it relies on.
//
//   - Create writes a key only if it does not exist (If-None-Match: *): of
//     any number of concurrent writers exactly one wins. A value's
//     descriptor is created this way: that create is the value's commit
//     point, as the rename of the descriptor is in a local store.
//   - Replace writes a key only if it still has the ETag the caller read
//     (If-Match): a compare-and-swap, which the lookup-budget ledger of a
//     step is updated with.
//   - Upload streams content of any size with bounded memory (multipart
//     above one part), optionally only if the key is absent.
//   - ReadAt reads a byte range with one ranged GET: line indexes and
//     seekable zstd frames are read this way, never the whole object.
//   - List, Delete (in batches of 1,000) and Stat.
//   - A Lease stands in for gc's exclusive lock: an object created with
//     If-None-Match, renewed and released with If-Match, whose expiry is
//     judged by the server's clock, not the caller's.
//
// Keys are relative to the store's prefix; a Bucket never reads or writes
// outside it.
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Errors callers branch on.
var (
	// ErrExists: Create (or an Upload with IfAbsent) found the key there.
	ErrExists = errors.New("object already exists")
	// ErrChanged: Replace or DeleteIf found another ETag (or no object).
	ErrChanged = errors.New("object changed since it was read")
	// ErrNotFound: no object has that key.
	ErrNotFound = errors.New("no such object")
	// ErrTooLarge: Get found an object larger than the caller allowed.
	ErrTooLarge = errors.New("object larger than allowed")
)

// Location is a parsed s3://BUCKET/PREFIX.
type Location struct {
	Bucket string
	Prefix string // without leading or trailing "/"; "" for the bucket's root
}

// ParseURL parses s3://BUCKET/PREFIX. The prefix may be empty; the bucket
// may not.
func ParseURL(s string) (Location, error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return Location{}, fmt.Errorf("store %q is not an s3://BUCKET/PREFIX address", s)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Location{}, fmt.Errorf("store %q names no bucket: write s3://BUCKET/PREFIX", s)
	}
	prefix = strings.Trim(prefix, "/")
	for _, part := range strings.Split(prefix, "/") {
		if prefix != "" && (part == "" || part == "." || part == "..") {
			return Location{}, fmt.Errorf("store %q has an empty, . or .. segment in its prefix", s)
		}
	}
	return Location{Bucket: bucket, Prefix: prefix}, nil
}

// String is the location as s3://BUCKET/PREFIX.
func (l Location) String() string {
	if l.Prefix == "" {
		return "s3://" + l.Bucket
	}
	return "s3://" + l.Bucket + "/" + l.Prefix
}

// Config is how to reach the server. The zero Config plus credentials
// reaches AWS S3 in us-east-1.
type Config struct {
	Endpoint     string // "" for AWS itself; e.g. http://127.0.0.1:7070
	Region       string // default us-east-1
	AccessKey    string
	SecretKey    string
	SessionToken string
	// PathStyle addresses buckets as ENDPOINT/BUCKET/KEY instead of
	// BUCKET.ENDPOINT/KEY; ConfigFromEnv sets it whenever an endpoint is
	// given, as most S3-compatible servers need it.
	PathStyle  bool
	HTTPClient *http.Client // default: http.DefaultClient's transport
}

// ConfigFromEnv reads the standard AWS variables: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (or
// AWS_DEFAULT_REGION) and AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL); what
// they leave unset comes from the profile AWS_PROFILE names ("default"
// without it) in the shared credentials and config files, as the AWS CLI
// reads them (see applyProfile). It never probes the instance metadata
// service: a process pays nothing at start-up for a chain it does not use.
func ConfigFromEnv() (Config, error) {
	c := Config{
		AccessKey:    os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Region:       firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"),
		Endpoint:     firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
	}
	if err := applyProfile(&c); err != nil {
		return c, err
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return c, errors.New("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("S3 endpoint %q is not an http(s) URL", c.Endpoint)
		}
		c.PathStyle = true
	}
	return c, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// Bucket is a store's prefix in one bucket: the store's operations,
// built from the calls of the bucket's API.
type Bucket struct {
	api API
	loc Location
	// PartSize is the size of each part of a multipart upload, and the
	// size above which Upload uses one; memory held by an upload is at
	// most four parts (three being sent while the next is filled).
	// Default 8 MiB (S3 allows 5 MiB to 5 GiB).
	PartSize int64
	// skew is added to the server's clock when judging a lease (tests).
	skew time.Duration
}

// DefaultPartSize is Bucket.PartSize's default.
const DefaultPartSize = 8 << 20

// Open returns the Bucket for loc on the server c reaches, through S3's
// HTTP interface (NewClient). It sends nothing until first used.
func Open(loc Location, c Config) *Bucket {
	return New(NewClient(loc.Bucket, c), loc)
}

// New returns the Bucket for loc through api, the API of the bucket
// loc names: the HTTP client's (NewClient), or another implementation of
// the same calls (an in-memory one, one that injects faults).
func New(api API, loc Location) *Bucket {
	return &Bucket{api: api, loc: loc, PartSize: DefaultPartSize}
}

// API is the API of the whole bucket, which Bucket's operations are
// made of (keys outside the store's prefix included).
func (b *Bucket) API() API { return b.api }

// Location is where the bucket points.
func (b *Bucket) Location() Location { return b.loc }

func (b *Bucket) key(k string) string {
	if b.loc.Prefix == "" {
		return k
	}
	return b.loc.Prefix + "/" + k
}

func (b *Bucket) unkey(k string) string {
	if b.loc.Prefix == "" {
		return k
	}
	return strings.TrimPrefix(k, b.loc.Prefix+"/")
}

// Object is what a listing or Stat says of one key.
type Object struct {
	Key      string // relative to the prefix
	Size     int64
	ETag     string
	Modified time.Time // the server's clock
}

// Create writes data under key only if no object has that key; ErrExists
// otherwise. The server verifies data against its SHA-256 and keeps the
// checksum.
func (b *Bucket) Create(ctx context.Context, key string, data []byte) (etag string, err error) {
	return b.put(ctx, key, data, Cond{IfNoneMatch: true})
}

// Replace writes data under key only if the object there still has etag;
// ErrChanged otherwise (another writer got there first, or it is gone).
func (b *Bucket) Replace(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return b.put(ctx, key, data, Cond{IfMatch: etag})
}

// Put writes data under key whatever is there.
func (b *Bucket) Put(ctx context.Context, key string, data []byte) (string, error) {
	return b.put(ctx, key, data, Cond{})
}

func (b *Bucket) put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	etag, err := b.api.PutObject(ctx, b.key(key), data, cond)
	if err != nil {
		return "", b.classify("put", key, err, cond)
	}
	return etag, nil
}

// classify turns the conditions the protocol branches on into sentinels
// and keeps everything else as an error that names the key. cond is the
// precondition the call set: a write whose If-Match failed found the
// object changed, one whose If-None-Match failed found it there.
func (b *Bucket) classify(op, key string, err error, cond Cond) error {
	status, code := statusOf(err)
	switch status {
	case http.StatusPreconditionFailed, http.StatusConflict:
		// 409 is ConditionalRequestConflict: a concurrent conditional
		// write to the same key; the caller lost, as with 412.
		if cond.IfNoneMatch {
			return &Error{Op: op, Key: key, Err: ErrExists}
		}
		if status == http.StatusPreconditionFailed || cond.IfMatch != "" {
			return &Error{Op: op, Key: key, Err: ErrChanged}
		}
	case http.StatusNotFound:
		switch {
		case code == "NoSuchBucket":
			return &Error{Op: op, Key: key, Err: fmt.Errorf("bucket %s does not exist (create it first)", b.loc.Bucket)}
		case cond.IfMatch != "":
			// If-Match on a key that is gone: S3 answers 404, and the
			// object has changed since it was read as surely as with 412.
			return &Error{Op: op, Key: key, Err: ErrChanged}
		}
		return &Error{Op: op, Key: key, Err: ErrNotFound}
	}
	return &Error{Op: op, Key: key, Err: err}
}

// Error is an operation on one key that failed.
type Error struct {
	Op  string
	Key string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("s3 %s %s: %v", e.Op, e.Key, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Get reads a whole object of at most max bytes (ErrTooLarge beyond).
func (b *Bucket) Get(ctx context.Context, key string, max int64) ([]byte, Object, error) {
	out, err := b.api.GetObject(ctx, b.key(key), nil)
	if err != nil {
		return nil, Object{}, b.classify("get", key, err, Cond{})
	}
	defer out.Body.Close()
	o := out.Object
	o.Key = key
	if o.Size > max {
		return nil, o, &Error{Op: "get", Key: key, Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, max+1))
	if err != nil {
		return nil, o, &Error{Op: "get", Key: key, Err: err}
	}
	if int64(len(data)) > max {
		return nil, o, &Error{Op: "get", Key: key, Err: ErrTooLarge}
	}
	return data, o, nil
}

// ReadAt reads len(p) bytes at off with one ranged GET. Like io.ReaderAt,
// it returns io.EOF when the object ends before p is full.
func (b *Bucket) ReadAt(ctx context.Context, key string, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	rng := Range{Off: off, Len: int64(len(p))}
	out, err := b.api.GetObject(ctx, b.key(key), &rng)
	if err != nil {
		if status, _ := statusOf(err); status == http.StatusRequestedRangeNotSatisfiable {
			return 0, io.EOF
		}
		return 0, b.classify("get", key, err, Cond{})
	}
	defer out.Body.Close()
	// A server that ignored the range would send the object from its
	// first byte: those are not the bytes asked for.
	var first, last, total int64
	if _, err := fmt.Sscanf(out.ContentRange, "bytes %d-%d/%d", &first, &last, &total); err != nil || first != off || last < first || last-first >= int64(len(p)) || last >= total {
		return 0, &Error{Op: "get", Key: key, Err: fmt.Errorf("asked for %s, the server answered Content-Range %q", rng.Header(), out.ContentRange)}
	}
	// The bytes the answer holds, read whole: a body that ends before
	// them was cut off (io.ErrUnexpectedEOF), which is not the object's
	// end.
	n, err := io.ReadFull(out.Body, p[:last-first+1])
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return n, &Error{Op: "get", Key: key, Err: fmt.Errorf("the answer to %s ended after %d of its %d bytes: %w", rng.Header(), n, last-first+1, io.ErrUnexpectedEOF)}
	case err != nil:
		return n, &Error{Op: "get", Key: key, Err: err}
	case n < len(p) && last+1 != total:
		return n, &Error{Op: "get", Key: key, Err: fmt.Errorf("asked for %s, the server answered Content-Range %q", rng.Header(), out.ContentRange)}
	case n < len(p):
		return n, io.EOF // the object ends within the range
	}
	return n, nil
}

// Stat says what the object at key is (ErrNotFound if none).
func (b *Bucket) Stat(ctx context.Context, key string) (Object, error) {
	o, err := b.api.HeadObject(ctx, b.key(key))
	if err != nil {
		return Object{}, b.classify("head", key, err, Cond{})
	}
	o.Key = key
	return o, nil
}

// List calls fn for every object whose key starts with prefix (relative
// to the store's prefix), in key order, one page of up to 1,000 at a time.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(Object) error) error {
	in := ListInput{Prefix: b.key(prefix)}
	for {
		page, err := b.api.ListObjects(ctx, in)
		if err != nil {
			return b.classify("list", prefix, err, Cond{})
		}
		for _, o := range page.Objects {
			o.Key = b.unkey(o.Key)
			if err := fn(o); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		in.Token = page.Next
	}
}

// Delete removes keys (absent ones are not an error), 1,000 per request.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		batch := make([]string, n)
		for i, k := range keys[:n] {
			batch[i] = b.key(k)
		}
		failed, err := b.api.DeleteObjects(ctx, batch)
		if err != nil {
			return b.classify("delete", keys[0], err, Cond{})
		}
		for _, e := range failed {
			if e.Code == "NoSuchKey" {
				continue
			}
			return &Error{Op: "delete", Key: b.unkey(e.Key), Err: fmt.Errorf("%s: %s", e.Code, e.Message)}
		}
		keys = keys[n:]
	}
	return nil
}

// DeleteIf removes key only if it still has etag (ErrChanged otherwise).
func (b *Bucket) DeleteIf(ctx context.Context, key, etag string) error {
	cond := Cond{IfMatch: etag}
	if err := b.api.DeleteObject(ctx, b.key(key), cond); err != nil {
		return b.classify("delete", key, err, cond)
	}
	return nil
}

// Now is the server's clock, read from the Date header of a HEAD of the
// bucket: what judges a lease, so no two machines' clocks have to agree.
func (b *Bucket) Now(ctx context.Context) (time.Time, error) {
	t, err := b.api.Now(ctx)
	if err != nil {
		return time.Time{}, b.classify("head", "", err, Cond{})
	}
	return t, nil
}
