package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
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

// sdkAPI is API through the AWS SDK's client: the real thing.
type sdkAPI struct {
	client *s3.Client
	bucket *string
}

// NewClient returns the API of bucket on the server c reaches, through the
// AWS SDK. It sends nothing until first used.
func NewClient(bucket string, c Config) API {
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
	return &sdkAPI{client: s3.New(opts), bucket: aws.String(bucket)}
}

// apiErr turns an answer of the server into a *StatusError; other errors
// (the connection's) stay as they are.
func apiErr(err error) error {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	se := &StatusError{Status: re.HTTPStatusCode(), Err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		se.Code, se.Message = api.ErrorCode(), api.ErrorMessage()
	}
	return se
}

func checksum(data []byte) *string {
	sum := sha256.Sum256(data)
	return aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}

func setCond(cond Cond, ifNoneMatch, ifMatch **string) {
	if cond.IfNoneMatch {
		*ifNoneMatch = aws.String("*")
	}
	if cond.IfMatch != "" {
		*ifMatch = aws.String(cond.IfMatch)
	}
}

// PutObject sends body with its SHA-256, which the server verifies and
// keeps.
func (a *sdkAPI) PutObject(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:            a.bucket,
		Key:               aws.String(key),
		Body:              bytes.NewReader(body),
		ContentLength:     aws.Int64(int64(len(body))),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		ChecksumSHA256:    checksum(body),
	}
	setCond(cond, &in.IfNoneMatch, &in.IfMatch)
	out, err := a.client.PutObject(ctx, in)
	if err != nil {
		return "", apiErr(err)
	}
	return aws.ToString(out.ETag), nil
}

func (a *sdkAPI) GetObject(ctx context.Context, key string, rng *Range) (*GetOutput, error) {
	in := &s3.GetObjectInput{Bucket: a.bucket, Key: aws.String(key)}
	if rng != nil {
		in.Range = aws.String(rng.Header())
	}
	out, err := a.client.GetObject(ctx, in)
	if err != nil {
		return nil, apiErr(err)
	}
	return &GetOutput{
		Body:         out.Body,
		Object:       Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)},
		ContentRange: aws.ToString(out.ContentRange),
	}, nil
}

func (a *sdkAPI) HeadObject(ctx context.Context, key string) (Object, error) {
	out, err := a.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: a.bucket, Key: aws.String(key)})
	if err != nil {
		return Object{}, apiErr(err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

func (a *sdkAPI) ListObjects(ctx context.Context, in ListInput) (*ListPage, error) {
	req := &s3.ListObjectsV2Input{Bucket: a.bucket, Prefix: aws.String(in.Prefix)}
	if in.Delimiter != "" {
		req.Delimiter = aws.String(in.Delimiter)
	}
	if in.Token != "" {
		req.ContinuationToken = aws.String(in.Token)
	}
	if in.MaxKeys > 0 {
		req.MaxKeys = aws.Int32(in.MaxKeys)
	}
	out, err := a.client.ListObjectsV2(ctx, req)
	if err != nil {
		return nil, apiErr(err)
	}
	page := &ListPage{Objects: make([]Object, 0, len(out.Contents))}
	for _, o := range out.Contents {
		page.Objects = append(page.Objects, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)})
	}
	for _, p := range out.CommonPrefixes {
		page.Prefixes = append(page.Prefixes, aws.ToString(p.Prefix))
	}
	if aws.ToBool(out.IsTruncated) {
		page.Next = aws.ToString(out.NextContinuationToken)
		if page.Next == "" {
			return nil, errors.New("s3: a truncated listing without a continuation token")
		}
	}
	return page, nil
}

func (a *sdkAPI) DeleteObject(ctx context.Context, key string, cond Cond) error {
	in := &s3.DeleteObjectInput{Bucket: a.bucket, Key: aws.String(key)}
	if cond.IfMatch != "" {
		in.IfMatch = aws.String(cond.IfMatch)
	}
	_, err := a.client.DeleteObject(ctx, in)
	return apiErr(err)
}

func (a *sdkAPI) DeleteObjects(ctx context.Context, keys []string) ([]DeleteError, error) {
	batch := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		batch[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := a.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: a.bucket,
		Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return nil, apiErr(err)
	}
	var failed []DeleteError
	for _, e := range out.Errors {
		failed = append(failed, DeleteError{Key: aws.ToString(e.Key), Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)})
	}
	return failed, nil
}

func (a *sdkAPI) Now(ctx context.Context) (time.Time, error) {
	out, err := a.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: a.bucket})
	if err != nil {
		return time.Time{}, apiErr(err)
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

func (a *sdkAPI) CreateUpload(ctx context.Context, key string) (string, error) {
	out, err := a.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:            a.bucket,
		Key:               aws.String(key),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
	})
	if err != nil {
		return "", apiErr(err)
	}
	return aws.ToString(out.UploadId), nil
}

func (a *sdkAPI) UploadPart(ctx context.Context, key, id string, num int32, body []byte) (Part, error) {
	out, err := a.client.UploadPart(ctx, &s3.UploadPartInput{
		Bucket: a.bucket, Key: aws.String(key), UploadId: aws.String(id),
		PartNumber:        aws.Int32(num),
		Body:              bytes.NewReader(body),
		ContentLength:     aws.Int64(int64(len(body))),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		ChecksumSHA256:    checksum(body),
	})
	if err != nil {
		return Part{}, apiErr(err)
	}
	return Part{Num: num, ETag: aws.ToString(out.ETag), Checksum: aws.ToString(out.ChecksumSHA256)}, nil
}

func (a *sdkAPI) CompleteUpload(ctx context.Context, key, id string, parts []Part, cond Cond) (string, error) {
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(p.Num), ETag: aws.String(p.ETag)}
		if p.Checksum != "" {
			done[i].ChecksumSHA256 = aws.String(p.Checksum)
		}
	}
	in := &s3.CompleteMultipartUploadInput{
		Bucket: a.bucket, Key: aws.String(key), UploadId: aws.String(id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	}
	setCond(cond, &in.IfNoneMatch, &in.IfMatch)
	out, err := a.client.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return "", apiErr(err)
	}
	return aws.ToString(out.ETag), nil
}

func (a *sdkAPI) AbortUpload(ctx context.Context, key, id string) error {
	_, err := a.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: a.bucket, Key: aws.String(key), UploadId: aws.String(id)})
	return apiErr(err)
}

func (a *sdkAPI) ListUploads(ctx context.Context, in ListUploadsInput) (*UploadsPage, error) {
	req := &s3.ListMultipartUploadsInput{Bucket: a.bucket, Prefix: aws.String(in.Prefix)}
	if in.KeyMarker != "" {
		req.KeyMarker = aws.String(in.KeyMarker)
	}
	if in.UploadIDMarker != "" {
		req.UploadIdMarker = aws.String(in.UploadIDMarker)
	}
	out, err := a.client.ListMultipartUploads(ctx, req)
	if err != nil {
		return nil, apiErr(err)
	}
	page := &UploadsPage{
		Truncated:          aws.ToBool(out.IsTruncated),
		NextKeyMarker:      aws.ToString(out.NextKeyMarker),
		NextUploadIDMarker: aws.ToString(out.NextUploadIdMarker),
	}
	for _, u := range out.Uploads {
		page.Uploads = append(page.Uploads, Upload{Key: aws.ToString(u.Key), ID: aws.ToString(u.UploadId)})
	}
	return page, nil
}
