package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A Lease is exclusive ownership of a key for a while: what stands in for
// an exclusive lock where there are no locks. It is an object created
// only if absent; its holder renews it (If-Match on the ETag it wrote)
// and releases it (a delete If-Match). Whether it has expired is judged
// by the server's clock against the object's Last-Modified, so machines
// whose clocks disagree still agree on who holds it. A holder that cannot
// renew in time has lost it, and must stop before its next write.
type Lease struct {
	b       *Bucket
	key     string
	etag    string
	token   string // this lease's own, in its body (leaseBody)
	Holder  string
	TTL     time.Duration
	Renewed time.Time // the server's clock at the last write
}

// leaseBody is what the lease object holds: who, and for how long. The
// token is random, one per lease: a server's ETag is a digest of the
// body, and two holders of one name (two in one process, or two
// containers with one hostname, each pid 1) would otherwise write the
// same bytes, and the one whose lease was taken over would still match
// the other's ETag.
type leaseBody struct {
	Holder string `json:"holder"`
	TTLMs  int64  `json:"ttl_ms"`
	Token  string `json:"token,omitempty"`
}

func (l *Lease) body() []byte {
	b, _ := json.Marshal(leaseBody{Holder: l.Holder, TTLMs: l.TTL.Milliseconds(), Token: l.token})
	return b
}

// HeldError says who holds a lease that could not be taken, and until
// when (by the server's clock).
type HeldError struct {
	Key    string
	Holder string
	Until  time.Time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lease %s is held by %s until %s", e.Key, e.Holder, e.Until.UTC().Format(time.RFC3339))
}

// ErrLeaseLost: the lease was taken over (it expired) or removed.
var ErrLeaseLost = errors.New("lease lost")

// maxLeaseBytes bounds what is read of a lease object: a hostile one
// cannot make a reader allocate much.
const maxLeaseBytes = 4 << 10

// AcquireLease takes the lease at key for holder, for ttl. If another
// holds it and it has not expired, the error is a *HeldError. An expired
// lease is taken over with If-Match on the ETag read, so of several
// takers exactly one wins.
func (b *Bucket) AcquireLease(ctx context.Context, key, holder string, ttl time.Duration) (*Lease, error) {
	var token [8]byte
	rand.Read(token[:])
	l := &Lease{b: b, key: key, token: hex.EncodeToString(token[:]), Holder: holder, TTL: ttl}
	body := l.body()
	etag, err := b.Create(ctx, key, body)
	if err == nil {
		l.etag = etag
		return l.stamped(ctx)
	}
	if !errors.Is(err, ErrExists) {
		return nil, err
	}
	data, cur, err := b.Get(ctx, key, maxLeaseBytes)
	if errors.Is(err, ErrNotFound) {
		// Released between the create and the read: try once more.
		return b.AcquireLease(ctx, key, holder, ttl)
	}
	if err != nil {
		return nil, err
	}
	var held leaseBody
	if json.Unmarshal(data, &held) == nil && held.Token == l.token {
		// Our own create: it took effect, its answer was lost, and the
		// client's retry met the object it had made.
		l.etag = cur.ETag
		return l.stamped(ctx)
	}
	if json.Unmarshal(data, &held) != nil || held.TTLMs <= 0 {
		// Unreadable: treat it as expired once its Last-Modified plus the
		// caller's ttl has passed.
		held = leaseBody{Holder: "(unreadable lease)", TTLMs: ttl.Milliseconds()}
	}
	now, err := b.Now(ctx)
	if err != nil {
		return nil, err
	}
	until := cur.Modified.Add(time.Duration(held.TTLMs) * time.Millisecond)
	if now.Add(b.skew).Before(until) {
		return nil, &HeldError{Key: key, Holder: held.Holder, Until: until}
	}
	etag, err = b.Replace(ctx, key, body, cur.ETag)
	if errors.Is(err, ErrChanged) {
		if data, cur, gerr := b.Get(ctx, key, maxLeaseBytes); gerr == nil && json.Unmarshal(data, &held) == nil && held.Token == l.token {
			l.etag = cur.ETag // our own take-over, its answer lost
			return l.stamped(ctx)
		}
		return nil, &HeldError{Key: key, Holder: "another process (it took over the expired lease first)", Until: now.Add(ttl)}
	}
	if err != nil {
		return nil, err
	}
	l.etag = etag
	return l.stamped(ctx)
}

// stamped stamps a lease just written and returns it; one that cannot be
// stamped is released (if it is still this holder's) rather than left to
// keep others out until it expires.
func (l *Lease) stamped(ctx context.Context) (*Lease, error) {
	if err := l.stamp(ctx); err != nil {
		l.Release(ctx)
		return nil, err
	}
	return l, nil
}

// stamp records when the server last saw the lease written.
func (l *Lease) stamp(ctx context.Context) error {
	o, err := l.b.Stat(ctx, l.key)
	if err != nil {
		return err
	}
	if o.ETag != l.etag {
		return &Error{Op: "lease", Key: l.key, Err: ErrLeaseLost}
	}
	l.Renewed = o.Modified
	return nil
}

// Renew extends the lease by its TTL from now; ErrLeaseLost (wrapped) if
// it is no longer this holder's.
func (l *Lease) Renew(ctx context.Context) error {
	etag, err := l.b.Replace(ctx, l.key, l.body(), l.etag)
	if errors.Is(err, ErrChanged) {
		return &Error{Op: "lease", Key: l.key, Err: ErrLeaseLost}
	}
	if err != nil {
		return err
	}
	l.etag = etag
	return l.stamp(ctx)
}

// Release gives the lease up; a lease already lost is not an error.
func (l *Lease) Release(ctx context.Context) error {
	err := l.b.DeleteIf(ctx, l.key, l.etag)
	if errors.Is(err, ErrChanged) {
		return nil
	}
	return err
}
