package s3store

import "time"

// SetSkew moves the server's clock, as a lease judges it, by d.
func SetSkew(b *Bucket, d time.Duration) { b.skew = d }

// KeyOf is key's key in the bucket: under the store's prefix.
func KeyOf(b *Bucket, key string) string { return b.key(key) }
