package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// client is API over S3's REST interface: each call is one HTTP request
// on net/http, signed by the AWS SDK's Signature Version 4 signer and
// retried as the SDK's standard retryer decides (three attempts, its
// jittered backoff, on a dropped connection, a 5xx or a throttle). It
// sends the twelve requests the store is built from and nothing else:
// linking the SDK's whole S3 client (service/s3) for them cost every
// retval process, whatever its command, the client's package inits (the
// endpoint tables, the SigV4a signer) and 6 MB of binary — about 0.9 ms of
// start-up (docs/BENCHMARKS.md).
type client struct {
	http    *http.Client
	base    url.URL // scheme and host the bucket is reached at
	prefix  string  // "/BUCKET" with path-style addressing, else ""
	region  string
	creds   aws.Credentials
	signer  *v4.Signer
	retryer *retry.Standard
	now     func() time.Time
	// skew is added to the local clock when signing: the server's clock
	// less ours, learnt from a RequestTimeTooSkewed answer.
	skew atomic.Int64
}

// emptyHash is the SHA-256 of no bytes, the payload hash of a request
// without a body.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// maxAnswer bounds the XML answer of a call (a listing of 1,000 keys is
// about 300 KB).
const maxAnswer = 16 << 20

// NewClient returns the API of bucket on the server c reaches. It sends
// nothing until first used.
func NewClient(bucket string, c Config) API {
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	cl := &client{
		http:   hc,
		region: region,
		creds:  aws.Credentials{AccessKeyID: c.AccessKey, SecretAccessKey: c.SecretKey, SessionToken: c.SessionToken},
		// S3 signs the path as sent: no second escaping.
		signer:  v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		retryer: newRetryer(nil),
		now:     time.Now,
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		// ConfigFromEnv checked it; a Config built by hand is a caller's
		// mistake, answered by every call.
		u = &url.URL{Scheme: "https", Host: "invalid-endpoint.invalid"}
	}
	cl.base = url.URL{Scheme: u.Scheme, Host: u.Host}
	if c.PathStyle || !virtualHostable(bucket, u.Scheme) {
		cl.prefix = "/" + bucket
	} else {
		cl.base.Host = bucket + "." + u.Host
	}
	return cl
}

// newRetryer is the SDK's standard retryer with three attempts, waiting
// as backoff says between them (nil: the SDK's jittered exponential
// backoff).
func newRetryer(backoff retry.BackoffDelayer) *retry.Standard {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 3
		// A CompleteMultipartUpload that failed after its 200 says
		// InternalError in the body: S3 asks for it to be retried.
		o.Retryables = append(o.Retryables, retry.RetryableErrorCode{Codes: map[string]struct{}{"InternalError": {}}})
		if backoff != nil {
			o.Backoff = backoff
		}
	})
}

// virtualHostable reports whether bucket can be addressed as
// BUCKET.ENDPOINT: a DNS label (a dotted name would not match the
// endpoint's TLS certificate).
func virtualHostable(bucket, scheme string) bool {
	if len(bucket) < 3 || len(bucket) > 63 || (scheme == "https" && strings.Contains(bucket, ".")) {
		return false
	}
	for i := 0; i < len(bucket); i++ {
		c := bucket[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return bucket[0] != '-' && bucket[len(bucket)-1] != '-'
}

// request is one call: a method on the bucket (key "") or an object.
type request struct {
	method string
	key    string
	query  url.Values
	header http.Header
	body   []byte
	sum    *[sha256.Size]byte // body's SHA-256, when the caller has it
}

// escapePath escapes an object's path as S3 signs it: every byte but the
// unreserved ones of RFC 3986 and "/" as %XX.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// httpRequest is r as an HTTP request, signed at t.
func (c *client) httpRequest(ctx context.Context, r request, t time.Time) (*http.Request, error) {
	u := c.base
	u.Path = c.prefix + "/" + r.key
	if r.key == "" && c.prefix != "" {
		u.Path = c.prefix // the bucket itself: /BUCKET
	}
	u.RawPath = escapePath(u.Path)
	// Spaces as %20, not "+": the signer's canonical query and the
	// server's decoding must agree on every byte.
	u.RawQuery = strings.ReplaceAll(r.query.Encode(), "+", "%20")
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	hash := emptyHash
	switch {
	case r.sum != nil:
		hash = hex.EncodeToString(r.sum[:])
	case len(r.body) > 0:
		sum := sha256.Sum256(r.body)
		hash = hex.EncodeToString(sum[:])
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hash, "s3", c.region, t); err != nil {
		return nil, err
	}
	return req, nil
}

// sendError is a request that got no answer: the SDK's retryer retries
// it (the call may or may not have taken effect).
type sendError struct{ err error }

func (e *sendError) Error() string         { return e.err.Error() }
func (e *sendError) Unwrap() error         { return e.err }
func (e *sendError) ConnectionError() bool { return true }

// do sends r until it is answered with success, fails in a way not worth
// retrying, or has been tried three times. On success, read (when not
// nil) reads the answer inside the attempt, so that an answer cut off is
// retried like a dropped connection; otherwise the caller closes the
// answer's body.
func (c *client) do(ctx context.Context, r request, read func(*http.Response) error) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, r, read)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		var se *StatusError
		if errors.As(err, &se) && se.Code == "RequestTimeTooSkewed" && attempt == 1 && se.date != (time.Time{}) {
			// Sign with the server's clock from now on, once.
			c.skew.Store(int64(time.Until(se.date)))
			continue
		}
		if attempt >= c.retryer.MaxAttempts() || !c.retryer.IsErrorRetryable(err) {
			if attempt > 1 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		delay, derr := c.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

func (c *client) attempt(ctx context.Context, r request, read func(*http.Response) error) (*http.Response, error) {
	req, err := c.httpRequest(ctx, r, c.now().Add(time.Duration(c.skew.Load())))
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &sendError{err}
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, answerError(resp)
	}
	if read == nil {
		return resp, nil
	}
	defer resp.Body.Close()
	if err := read(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// answerError is the error an answer with an error status carries: S3's
// code and message from its XML body, or for a body-less answer (a HEAD)
// the status's name ("NotFound").
func answerError(resp *http.Response) error {
	se := &StatusError{Status: resp.StatusCode, Code: strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		se.date = d
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Code    string
		Message string
	}
	if xml.Unmarshal(b, &e) == nil && e.Code != "" {
		se.Code, se.Message = e.Code, e.Message
	}
	if se.Message == "" {
		se.Message = http.StatusText(resp.StatusCode)
	}
	return se
}

// callXML does r and decodes its XML answer into v. An answer of 200
// whose body is an <Error> (S3 can answer a multipart completion so) is
// that error.
func (c *client) callXML(ctx context.Context, r request, v any) error {
	_, err := c.do(ctx, r, func(resp *http.Response) error {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
		if err != nil {
			return &sendError{err}
		}
		if len(b) > maxAnswer {
			return fmt.Errorf("%s answer larger than %d bytes", r.method, maxAnswer)
		}
		var e struct {
			XMLName xml.Name
			Code    string
			Message string
		}
		if xml.Unmarshal(b, &e) == nil && e.XMLName.Local == "Error" {
			return &StatusError{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
		}
		if err := xml.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s answer: %w", r.method, err)
		}
		return nil
	})
	return err
}

// condHeader is the header of a write's precondition.
func condHeader(h http.Header, cond Cond) http.Header {
	if h == nil {
		h = http.Header{}
	}
	if cond.IfNoneMatch {
		h.Set("If-None-Match", "*")
	}
	if cond.IfMatch != "" {
		h.Set("If-Match", cond.IfMatch)
	}
	return h
}

// checksummed is r sending body with its SHA-256, hashed once: signed
// as the payload's hash, and in base64 as its checksum, which the server
// verifies and keeps.
func checksummed(r request, body []byte) request {
	sum := sha256.Sum256(body)
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(sum[:]))
	r.body, r.sum = body, &sum
	return r
}

// object reads what an answer says of the object it is about.
func object(key string, resp *http.Response) Object {
	o := Object{Key: key, Size: resp.ContentLength, ETag: resp.Header.Get("ETag")}
	o.Modified, _ = http.ParseTime(resp.Header.Get("Last-Modified"))
	return o
}

func (c *client) PutObject(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	r := checksummed(request{method: http.MethodPut, key: key, header: condHeader(nil, cond)}, body)
	resp, err := c.do(ctx, r, discard)
	if err != nil {
		return "", err
	}
	return resp.Header.Get("ETag"), nil
}

// discard reads an answer's body to its end, so the connection can carry
// the next request.
func discard(resp *http.Response) error {
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer)); err != nil {
		return &sendError{err}
	}
	return nil
}

func (c *client) GetObject(ctx context.Context, key string, rng *Range) (*GetOutput, error) {
	r := request{method: http.MethodGet, key: key}
	if rng != nil {
		r.header = http.Header{"Range": {rng.Header()}}
	}
	resp, err := c.do(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	return &GetOutput{Body: resp.Body, Object: object(key, resp), ContentRange: resp.Header.Get("Content-Range")}, nil
}

func (c *client) HeadObject(ctx context.Context, key string) (Object, error) {
	resp, err := c.do(ctx, request{method: http.MethodHead, key: key}, discard)
	if err != nil {
		return Object{}, err
	}
	return object(key, resp), nil
}

func (c *client) ListObjects(ctx context.Context, in ListInput) (*ListPage, error) {
	q := url.Values{"list-type": {"2"}, "prefix": {in.Prefix}}
	if in.Delimiter != "" {
		q.Set("delimiter", in.Delimiter)
	}
	if in.Token != "" {
		q.Set("continuation-token", in.Token)
	}
	if in.MaxKeys > 0 {
		q.Set("max-keys", strconv.Itoa(int(in.MaxKeys)))
	}
	var out struct {
		IsTruncated           bool
		NextContinuationToken string
		Contents              []struct {
			Key          string
			Size         int64
			ETag         string
			LastModified time.Time
		}
		CommonPrefixes []struct{ Prefix string }
	}
	if err := c.callXML(ctx, request{method: http.MethodGet, query: q}, &out); err != nil {
		return nil, err
	}
	page := &ListPage{Objects: make([]Object, 0, len(out.Contents))}
	for _, o := range out.Contents {
		page.Objects = append(page.Objects, Object{Key: o.Key, Size: o.Size, ETag: o.ETag, Modified: o.LastModified})
	}
	for _, p := range out.CommonPrefixes {
		page.Prefixes = append(page.Prefixes, p.Prefix)
	}
	if out.IsTruncated {
		page.Next = out.NextContinuationToken
		if page.Next == "" {
			return nil, errors.New("s3: a truncated listing without a continuation token")
		}
	}
	return page, nil
}

func (c *client) DeleteObject(ctx context.Context, key string, cond Cond) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, key: key, header: condHeader(nil, Cond{IfMatch: cond.IfMatch})}, discard)
	return err
}

func (c *client) DeleteObjects(ctx context.Context, keys []string) ([]DeleteError, error) {
	type object struct{ Key string }
	body, err := xml.Marshal(struct {
		XMLName xml.Name `xml:"Delete"`
		Objects []object `xml:"Object"`
		Quiet   bool
	}{Objects: func() []object {
		o := make([]object, len(keys))
		for i, k := range keys {
			o[i].Key = k
		}
		return o
	}(), Quiet: true})
	if err != nil {
		return nil, err
	}
	// S3 demands a digest of a batch delete's body.
	sum := md5.Sum(body)
	h := http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(sum[:])}, "Content-Type": {"application/xml"}}
	var out struct {
		Errors []DeleteError `xml:"Error"`
	}
	if err := c.callXML(ctx, request{method: http.MethodPost, query: url.Values{"delete": {""}}, header: h, body: body}, &out); err != nil {
		return nil, err
	}
	return out.Errors, nil
}

func (c *client) Now(ctx context.Context) (time.Time, error) {
	resp, err := c.do(ctx, request{method: http.MethodHead}, discard)
	if err != nil {
		return time.Time{}, err
	}
	t, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("s3: server Date %q: %w", resp.Header.Get("Date"), err)
	}
	return t, nil
}

func (c *client) CreateUpload(ctx context.Context, key string) (string, error) {
	var out struct {
		UploadID string `xml:"UploadId"`
	}
	r := request{method: http.MethodPost, key: key, query: url.Values{"uploads": {""}}, header: http.Header{"X-Amz-Checksum-Algorithm": {"SHA256"}}}
	if err := c.callXML(ctx, r, &out); err != nil {
		return "", err
	}
	if out.UploadID == "" {
		return "", errors.New("s3: a multipart upload created without an id")
	}
	return out.UploadID, nil
}

func (c *client) UploadPart(ctx context.Context, key, id string, num int32, body []byte) (Part, error) {
	q := url.Values{"partNumber": {strconv.Itoa(int(num))}, "uploadId": {id}}
	resp, err := c.do(ctx, checksummed(request{method: http.MethodPut, key: key, query: q}, body), discard)
	if err != nil {
		return Part{}, err
	}
	return Part{Num: num, ETag: resp.Header.Get("ETag"), Checksum: resp.Header.Get("X-Amz-Checksum-Sha256")}, nil
}

func (c *client) CompleteUpload(ctx context.Context, key, id string, parts []Part, cond Cond) (string, error) {
	type part struct {
		PartNumber     int32
		ETag           string
		ChecksumSHA256 string `xml:",omitempty"`
	}
	done := struct {
		XMLName xml.Name `xml:"CompleteMultipartUpload"`
		Parts   []part   `xml:"Part"`
	}{Parts: make([]part, len(parts))}
	for i, p := range parts {
		done.Parts[i] = part{PartNumber: p.Num, ETag: p.ETag, ChecksumSHA256: p.Checksum}
	}
	body, err := xml.Marshal(done)
	if err != nil {
		return "", err
	}
	var out struct{ ETag string }
	r := request{method: http.MethodPost, key: key, query: url.Values{"uploadId": {id}}, header: condHeader(http.Header{"Content-Type": {"application/xml"}}, cond), body: body}
	if err := c.callXML(ctx, r, &out); err != nil {
		return "", err
	}
	return out.ETag, nil
}

func (c *client) AbortUpload(ctx context.Context, key, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, key: key, query: url.Values{"uploadId": {id}}}, discard)
	return err
}

func (c *client) ListUploads(ctx context.Context, in ListUploadsInput) (*UploadsPage, error) {
	q := url.Values{"uploads": {""}, "prefix": {in.Prefix}}
	if in.KeyMarker != "" {
		q.Set("key-marker", in.KeyMarker)
	}
	if in.UploadIDMarker != "" {
		q.Set("upload-id-marker", in.UploadIDMarker)
	}
	var out struct {
		IsTruncated        bool
		NextKeyMarker      string
		NextUploadIDMarker string `xml:"NextUploadIdMarker"`
		Uploads            []struct {
			Key      string
			UploadID string `xml:"UploadId"`
		} `xml:"Upload"`
	}
	if err := c.callXML(ctx, request{method: http.MethodGet, query: q}, &out); err != nil {
		return nil, err
	}
	page := &UploadsPage{Truncated: out.IsTruncated, NextKeyMarker: out.NextKeyMarker, NextUploadIDMarker: out.NextUploadIDMarker}
	for _, u := range out.Uploads {
		page.Uploads = append(page.Uploads, Upload{Key: u.Key, ID: u.UploadID})
	}
	return page, nil
}
