package s3store

import (
	"context"
	"io"
)

// Prefixes calls fn for each distinct "directory" directly under prefix
// (relative to the store's prefix): the key prefixes that end in "/" one
// level down, as a listing with a "/" delimiter reports them, so a store
// of many runs is listed by run without reading every key.
func (b *Bucket) Prefixes(ctx context.Context, prefix string, fn func(string) error) error {
	in := ListInput{Prefix: b.key(prefix), Delimiter: "/"}
	for {
		page, err := b.api.ListObjects(ctx, in)
		if err != nil {
			return b.classify("list", prefix, err, Cond{})
		}
		for _, p := range page.Prefixes {
			if err := fn(b.unkey(p)); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		in.Token = page.Next
	}
}

// Open streams a whole object with one GET: for a reader that goes
// through every byte once (verify), where ranged reads would cost a
// request per window. The caller closes the body.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	out, err := b.api.GetObject(ctx, b.key(key), nil)
	if err != nil {
		return nil, Object{}, b.classify("get", key, err, Cond{})
	}
	o := out.Object
	o.Key = key
	return out.Body, o, nil
}
