package s3fake

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain/s3store"
)

// Server serves in-memory buckets over S3's HTTP protocol, path-style
// (ENDPOINT/BUCKET/KEY): what a retval process started by a test reaches
// through AWS_ENDPOINT_URL_S3, with its HTTP client, as it would a real
// server. Requests are not authenticated. Only the calls of s3store.API
// are served, plus creating a bucket; anything else is 501.
//
// A request is carried out once it has been read whole, whatever becomes
// of its client: a write whose client died after sending it lands, as on
// a real server.
type Server struct {
	clock func() time.Time

	mu      sync.Mutex
	buckets map[string]*Bucket
}

// NewServer returns a server with no buckets whose clock is clock
// (time.Now when nil): the Last-Modified and Date it answers.
func NewServer(clock func() time.Time) *Server {
	if clock == nil {
		clock = time.Now
	}
	return &Server{clock: clock, buckets: map[string]*Bucket{}}
}

// CreateBucket returns the bucket named name, made empty if there was
// none.
func (s *Server) CreateBucket(name string) *Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[name]
	if b == nil {
		b = NewBucket(s.clock)
		s.buckets[name] = b
	}
	return b
}

// Bucket returns the bucket named name, nil if there is none.
func (s *Server) Bucket(name string) *Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buckets[name]
}

const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

// ServeHTTP answers one S3 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Date", s.clock().UTC().Format(http.TimeFormat))
	name, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if name == "" {
		writeErr(w, r, statusErr(http.StatusNotImplemented, "NotImplemented", "listing buckets is not served"))
		return
	}
	if key == "" && r.Method == http.MethodPut {
		s.CreateBucket(name)
		w.WriteHeader(http.StatusOK)
		return
	}
	b := s.Bucket(name)
	if b == nil {
		writeErr(w, r, statusErr(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist"))
		return
	}
	// The client's going away does not undo a request read whole.
	ctx := context.WithoutCancel(r.Context())
	q := r.URL.Query()
	var err error
	switch {
	case key == "" && r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK)
	case key == "" && r.Method == http.MethodGet && q.Has("uploads"):
		err = listUploads(ctx, w, b, q)
	case key == "" && r.Method == http.MethodGet && q.Get("list-type") == "2":
		err = listObjects(ctx, w, b, q, name)
	case key == "" && r.Method == http.MethodPost && q.Has("delete"):
		err = deleteObjects(ctx, w, r, b)
	case key == "":
		err = statusErr(http.StatusNotImplemented, "NotImplemented", r.Method+" of a bucket is not served")
	case r.Method == http.MethodPut && q.Has("uploadId"):
		err = uploadPart(ctx, w, r, b, key, q)
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "":
		err = putObject(ctx, w, r, b, key)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		err = getObject(ctx, w, r, b, key)
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		if err = b.AbortUpload(ctx, key, q.Get("uploadId")); err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	case r.Method == http.MethodDelete:
		if err = b.DeleteObject(ctx, key, s3store.Cond{IfMatch: r.Header.Get("If-Match")}); err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	case r.Method == http.MethodPost && q.Has("uploads"):
		var id string
		if id, err = b.CreateUpload(ctx, key); err == nil {
			writeXML(w, http.StatusOK, struct {
				XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
				Xmlns    string   `xml:"xmlns,attr"`
				Bucket   string
				Key      string
				UploadID string `xml:"UploadId"`
			}{Xmlns: xmlns, Bucket: name, Key: key, UploadID: id})
		}
	case r.Method == http.MethodPost && q.Has("uploadId"):
		err = completeUpload(ctx, w, r, b, name, key, q)
	default:
		err = statusErr(http.StatusNotImplemented, "NotImplemented", r.Method+" of an object is not served")
	}
	if err != nil {
		writeErr(w, r, err)
	}
}

func writeXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(xml.Header)+len(body)))
	w.WriteHeader(status)
	io.WriteString(w, xml.Header)
	w.Write(body)
}

// writeErr answers err: S3's error document, or its status alone to a
// HEAD.
func writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var se *s3store.StatusError
	if !errors.As(err, &se) {
		se = &s3store.StatusError{Status: http.StatusInternalServerError, Code: "InternalError", Message: err.Error()}
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(se.Status)
		return
	}
	writeXML(w, se.Status, struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string
		Message  string
		Resource string
	}{Code: se.Code, Message: se.Message, Resource: r.URL.Path})
}

// readBody reads a request's body whole, checking it against the
// SHA-256 the client sent with it, as S3 does.
func readBody(r *http.Request) ([]byte, error) {
	if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		return nil, statusErr(http.StatusNotImplemented, "NotImplemented", "aws-chunked bodies are not served")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, statusErr(http.StatusBadRequest, "IncompleteBody", err.Error())
	}
	if want := r.Header.Get("X-Amz-Checksum-Sha256"); want != "" {
		sum := sha256.Sum256(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			return nil, statusErr(http.StatusBadRequest, "BadDigest", "The SHA256 you specified did not match the calculated checksum.")
		}
	}
	return body, nil
}

func condOf(r *http.Request) s3store.Cond {
	return s3store.Cond{IfNoneMatch: r.Header.Get("If-None-Match") == "*", IfMatch: r.Header.Get("If-Match")}
}

func putObject(ctx context.Context, w http.ResponseWriter, r *http.Request, b *Bucket, key string) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	etag, err := b.PutObject(ctx, key, body, condOf(r))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusOK)
	return nil
}

// parseRange reads a Range header of the one form a client of the store
// sends: bytes=FIRST-LAST.
func parseRange(h string) (*s3store.Range, error) {
	first, last, ok := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	a, err1 := strconv.ParseInt(first, 10, 64)
	z, err2 := strconv.ParseInt(last, 10, 64)
	if !ok || !strings.HasPrefix(h, "bytes=") || err1 != nil || err2 != nil || z < a {
		return nil, statusErr(http.StatusNotImplemented, "NotImplemented", fmt.Sprintf("range %q is not served", h))
	}
	return &s3store.Range{Off: a, Len: z - a + 1}, nil
}

func getObject(ctx context.Context, w http.ResponseWriter, r *http.Request, b *Bucket, key string) error {
	var rng *s3store.Range
	if h := r.Header.Get("Range"); h != "" {
		var err error
		if rng, err = parseRange(h); err != nil {
			return err
		}
	}
	out, err := b.GetObject(ctx, key, rng)
	if err != nil {
		if r.Method == http.MethodHead && errors.Is(err, errNoSuchKey) {
			return errNotFound
		}
		return err
	}
	defer out.Body.Close()
	h := w.Header()
	h.Set("ETag", out.ETag)
	h.Set("Last-Modified", out.Modified.UTC().Format(http.TimeFormat))
	h.Set("Content-Length", strconv.FormatInt(out.Size, 10))
	h.Set("Accept-Ranges", "bytes")
	status := http.StatusOK
	if out.ContentRange != "" {
		h.Set("Content-Range", out.ContentRange)
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		io.Copy(w, out.Body)
	}
	return nil
}

func listObjects(ctx context.Context, w http.ResponseWriter, b *Bucket, q map[string][]string, name string) error {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	in := s3store.ListInput{Prefix: get("prefix"), Delimiter: get("delimiter"), Token: get("continuation-token")}
	if mk := get("max-keys"); mk != "" {
		n, err := strconv.ParseInt(mk, 10, 32)
		if err != nil || n < 0 {
			return statusErr(http.StatusBadRequest, "InvalidArgument", "max-keys "+mk)
		}
		if n == 0 {
			n = -1 // an empty page, as S3 answers max-keys=0
		}
		in.MaxKeys = int32(n)
	}
	var page *s3store.ListPage
	if in.MaxKeys < 0 {
		page = &s3store.ListPage{}
	} else {
		var err error
		if page, err = b.ListObjects(ctx, in); err != nil {
			return err
		}
	}
	type content struct {
		Key          string
		LastModified string
		ETag         string
		Size         int64
		StorageClass string
	}
	type prefix struct{ Prefix string }
	res := struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Xmlns                 string   `xml:"xmlns,attr"`
		Name                  string
		Prefix                string
		Delimiter             string `xml:",omitempty"`
		KeyCount              int
		MaxKeys               int
		IsTruncated           bool
		ContinuationToken     string `xml:",omitempty"`
		NextContinuationToken string `xml:",omitempty"`
		Contents              []content
		CommonPrefixes        []prefix
	}{Xmlns: xmlns, Name: name, Prefix: in.Prefix, Delimiter: in.Delimiter, MaxKeys: maxKeys,
		IsTruncated: page.Next != "", ContinuationToken: in.Token, NextContinuationToken: page.Next}
	if in.MaxKeys > 0 {
		res.MaxKeys = int(in.MaxKeys)
	}
	for _, o := range page.Objects {
		res.Contents = append(res.Contents, content{Key: o.Key, LastModified: o.Modified.UTC().Format("2006-01-02T15:04:05.000Z"), ETag: o.ETag, Size: o.Size, StorageClass: "STANDARD"})
	}
	for _, p := range page.Prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, prefix{p})
	}
	res.KeyCount = len(res.Contents) + len(res.CommonPrefixes)
	writeXML(w, http.StatusOK, res)
	return nil
}

func deleteObjects(ctx context.Context, w http.ResponseWriter, r *http.Request, b *Bucket) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return statusErr(http.StatusBadRequest, "IncompleteBody", err.Error())
	}
	var req struct {
		Objects []struct{ Key string } `xml:"Object"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return statusErr(http.StatusBadRequest, "MalformedXML", err.Error())
	}
	keys := make([]string, len(req.Objects))
	for i, o := range req.Objects {
		keys[i] = o.Key
	}
	failed, err := b.DeleteObjects(ctx, keys)
	if err != nil {
		return err
	}
	type fail struct{ Key, Code, Message string }
	res := struct {
		XMLName xml.Name `xml:"DeleteResult"`
		Xmlns   string   `xml:"xmlns,attr"`
		Errors  []fail   `xml:"Error"`
	}{Xmlns: xmlns}
	for _, f := range failed {
		res.Errors = append(res.Errors, fail(f))
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func uploadPart(ctx context.Context, w http.ResponseWriter, r *http.Request, b *Bucket, key string, q map[string][]string) error {
	num, err := strconv.ParseInt(firstOf(q, "partNumber"), 10, 32)
	if err != nil {
		return statusErr(http.StatusBadRequest, "InvalidArgument", "partNumber")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	p, err := b.UploadPart(ctx, key, firstOf(q, "uploadId"), int32(num), body)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", p.ETag)
	w.Header().Set("X-Amz-Checksum-Sha256", p.Checksum)
	w.WriteHeader(http.StatusOK)
	return nil
}

func firstOf(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func completeUpload(ctx context.Context, w http.ResponseWriter, r *http.Request, b *Bucket, name, key string, q map[string][]string) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return statusErr(http.StatusBadRequest, "IncompleteBody", err.Error())
	}
	var req struct {
		Parts []struct {
			PartNumber     int32
			ETag           string
			ChecksumSHA256 string
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return statusErr(http.StatusBadRequest, "MalformedXML", err.Error())
	}
	parts := make([]s3store.Part, len(req.Parts))
	for i, p := range req.Parts {
		parts[i] = s3store.Part{Num: p.PartNumber, ETag: p.ETag, Checksum: p.ChecksumSHA256}
	}
	etag, err := b.CompleteUpload(ctx, key, firstOf(q, "uploadId"), parts, condOf(r))
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, struct {
		XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
		Xmlns    string   `xml:"xmlns,attr"`
		Location string
		Bucket   string
		Key      string
		ETag     string
	}{Xmlns: xmlns, Location: "/" + name + "/" + key, Bucket: name, Key: key, ETag: etag})
	return nil
}

func listUploads(ctx context.Context, w http.ResponseWriter, b *Bucket, q map[string][]string) error {
	page, err := b.ListUploads(ctx, s3store.ListUploadsInput{Prefix: firstOf(q, "prefix"), KeyMarker: firstOf(q, "key-marker"), UploadIDMarker: firstOf(q, "upload-id-marker")})
	if err != nil {
		return err
	}
	type up struct {
		Key      string
		UploadID string `xml:"UploadId"`
	}
	res := struct {
		XMLName            xml.Name `xml:"ListMultipartUploadsResult"`
		Xmlns              string   `xml:"xmlns,attr"`
		Prefix             string
		KeyMarker          string
		UploadIDMarker     string `xml:"UploadIdMarker"`
		NextKeyMarker      string `xml:",omitempty"`
		NextUploadIDMarker string `xml:"NextUploadIdMarker,omitempty"`
		MaxUploads         int
		IsTruncated        bool
		Uploads            []up `xml:"Upload"`
	}{Xmlns: xmlns, Prefix: firstOf(q, "prefix"), KeyMarker: firstOf(q, "key-marker"), UploadIDMarker: firstOf(q, "upload-id-marker"),
		NextKeyMarker: page.NextKeyMarker, NextUploadIDMarker: page.NextUploadIDMarker, MaxUploads: maxKeys, IsTruncated: page.Truncated}
	for _, u := range page.Uploads {
		res.Uploads = append(res.Uploads, up{Key: u.Key, UploadID: u.ID})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
