package s3store

import (
	"context"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Prefixes calls fn for each distinct "directory" directly under prefix
// (relative to the store's prefix): the key prefixes that end in "/" one
// level down, as a listing with a "/" delimiter reports them, so a store
// of many runs is listed by run without reading every key.
func (b *Bucket) Prefixes(ctx context.Context, prefix string, fn func(string) error) error {
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{
		Bucket:    aws.String(b.loc.Bucket),
		Prefix:    aws.String(b.key(prefix)),
		Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return b.classify("list", prefix, err)
		}
		for _, cp := range page.CommonPrefixes {
			if err := fn(b.unkey(aws.ToString(cp.Prefix))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Open streams a whole object with one GET: for a reader that goes
// through every byte once (verify), where ranged reads would cost a
// request per window. The caller closes the body.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.loc.Bucket), Key: aws.String(b.key(key))})
	if err != nil {
		return nil, Object{}, b.classify("get", key, err)
	}
	o := Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}
	return out.Body, o, nil
}
