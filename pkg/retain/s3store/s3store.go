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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
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

// Bucket is a store's prefix in one bucket.
type Bucket struct {
	client *s3.Client
	loc    Location
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

// Open returns the Bucket for loc. It sends nothing until first used.
func Open(loc Location, c Config) *Bucket {
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	creds := aws.Credentials{AccessKeyID: c.AccessKey, SecretAccessKey: c.SecretKey, SessionToken: c.SessionToken, Source: "environment"}
	opts := s3.Options{
		Region: region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
		UsePathStyle: c.PathStyle,
		// Checksums are asked for explicitly where they are wanted (SHA-256
		// of content the store already hashes); not a CRC on every call.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           3,
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
	}
	if c.HTTPClient != nil {
		opts.HTTPClient = c.HTTPClient
	}
	return &Bucket{client: s3.New(opts), loc: loc, PartSize: DefaultPartSize}
}

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

func checksum(data []byte) *string {
	sum := sha256.Sum256(data)
	return aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}

// Create writes data under key only if no object has that key; ErrExists
// otherwise. The server verifies data against its SHA-256 and keeps the
// checksum.
func (b *Bucket) Create(ctx context.Context, key string, data []byte) (etag string, err error) {
	return b.put(ctx, key, data, &s3.PutObjectInput{IfNoneMatch: aws.String("*")})
}

// Replace writes data under key only if the object there still has etag;
// ErrChanged otherwise (another writer got there first, or it is gone).
func (b *Bucket) Replace(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return b.put(ctx, key, data, &s3.PutObjectInput{IfMatch: aws.String(etag)})
}

// Put writes data under key whatever is there.
func (b *Bucket) Put(ctx context.Context, key string, data []byte) (string, error) {
	return b.put(ctx, key, data, &s3.PutObjectInput{})
}

func (b *Bucket) put(ctx context.Context, key string, data []byte, in *s3.PutObjectInput) (string, error) {
	in.Bucket = aws.String(b.loc.Bucket)
	in.Key = aws.String(b.key(key))
	in.Body = bytes.NewReader(data)
	in.ContentLength = aws.Int64(int64(len(data)))
	in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
	in.ChecksumSHA256 = checksum(data)
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		return "", b.classify("put", key, err)
	}
	return aws.ToString(out.ETag), nil
}

// classify turns the conditions the protocol branches on into sentinels
// and keeps everything else as an error that names the key.
func (b *Bucket) classify(op, key string, err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusPreconditionFailed:
			if op == "put" || op == "upload" {
				return &Error{Op: op, Key: key, Err: preconditionErr(err)}
			}
			return &Error{Op: op, Key: key, Err: ErrChanged}
		case http.StatusConflict:
			// ConditionalRequestConflict: a concurrent conditional write
			// to the same key; the caller lost, as with 412.
			return &Error{Op: op, Key: key, Err: preconditionErr(err)}
		case http.StatusNotFound:
			var api smithy.APIError
			if errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket" {
				return &Error{Op: op, Key: key, Err: fmt.Errorf("bucket %s does not exist (create it first)", b.loc.Bucket)}
			}
			return &Error{Op: op, Key: key, Err: ErrNotFound}
		}
	}
	return &Error{Op: op, Key: key, Err: err}
}

// preconditionErr says which precondition failed; the caller's request
// says which one it set, and the SDK keeps the request in the error.
func preconditionErr(err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil && re.Response.Request != nil {
		if re.Response.Request.Header.Get("If-Match") != "" {
			return ErrChanged
		}
	}
	return ErrExists
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
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key))})
	if err != nil {
		return nil, Object{}, b.classify("get", key, err)
	}
	defer out.Body.Close()
	o := Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}
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
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key)), Range: aws.String(rng)})
	if err != nil {
		var re *awshttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable {
			return 0, io.EOF
		}
		return 0, b.classify("get", key, err)
	}
	defer out.Body.Close()
	// A server that ignored the range would send the object from its
	// first byte: those are not the bytes asked for.
	if cr := aws.ToString(out.ContentRange); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", off)) {
		return 0, &Error{Op: "get", Key: key, Err: fmt.Errorf("asked for %s, the server answered Content-Range %q", rng, cr)}
	}
	n, err := io.ReadFull(out.Body, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// Stat says what the object at key is (ErrNotFound if none).
func (b *Bucket) Stat(ctx context.Context, key string) (Object, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key))})
	if err != nil {
		return Object{}, b.classify("head", key, err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

// List calls fn for every object whose key starts with prefix (relative
// to the store's prefix), in key order, one page of up to 1,000 at a time.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(Object) error) error {
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(b.loc.Bucket),
		Prefix: aws.String(b.key(prefix)),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return b.classify("list", prefix, err)
		}
		for _, o := range page.Contents {
			if err := fn(Object{Key: b.unkey(aws.ToString(o.Key)), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes keys (absent ones are not an error), 1,000 per request.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		batch := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			batch[i] = types.ObjectIdentifier{Key: aws.String(b.key(k))}
		}
		out, err := b.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(b.loc.Bucket),
			Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return b.classify("delete", keys[0], err)
		}
		for _, e := range out.Errors {
			if aws.ToString(e.Code) == "NoSuchKey" {
				continue
			}
			return &Error{Op: "delete", Key: b.unkey(aws.ToString(e.Key)), Err: fmt.Errorf("%s: %s", aws.ToString(e.Code), aws.ToString(e.Message))}
		}
		keys = keys[n:]
	}
	return nil
}

// DeleteIf removes key only if it still has etag (ErrChanged otherwise).
func (b *Bucket) DeleteIf(ctx context.Context, key, etag string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key)), IfMatch: aws.String(etag)})
	if err != nil {
		err = b.classify("delete", key, err)
		if errors.Is(err, ErrNotFound) {
			return &Error{Op: "delete", Key: key, Err: ErrChanged}
		}
		return err
	}
	return nil
}

// Now is the server's clock, read from the Date header of a HEAD of the
// prefix: what judges a lease, so no two machines' clocks have to agree.
func (b *Bucket) Now(ctx context.Context) (time.Time, error) {
	out, err := b.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.loc.Bucket)})
	if err != nil {
		return time.Time{}, b.classify("head", "", err)
	}
	return serverDate(out.ResultMetadata)
}

func serverDate(md middleware.Metadata) (time.Time, error) {
	raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok {
		return time.Time{}, errors.New("s3: no response to read the server's Date from")
	}
	t, err := http.ParseTime(raw.Header.Get("Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("s3: server Date %q: %w", raw.Header.Get("Date"), err)
	}
	return t, nil
}
