package retain

import (
	"context"
	"testing"

	"github.com/retval/retval/pkg/retain/internal/backend/object"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// objStore is a test's hold on the object backend of a store: the
// backend, and the bucket it works on, to look at and to damage.
type objStore struct {
	*object.Backend
	b   *s3store.Bucket
	ctx context.Context
}

// objectBackend is the object backend s chose.
func objectBackend(t testing.TB, s *Store) *objStore {
	t.Helper()
	b, err := s.backend()
	o, ok := b.(*object.Backend)
	if err != nil || !ok {
		t.Fatalf("object backend: %T, %v", b, err)
	}
	return &objStore{Backend: o, b: o.Bucket(), ctx: context.Background()}
}

// The object backend's keys, as the tests name them.
var (
	objKey        = object.Key
	runPrefix     = object.RunPrefix
	collectingKey = object.CollectingKey
	tombstoneKey  = object.TombstoneKey
	leaseHolder   = object.LeaseHolder
)

const (
	leaseKey        = object.LeaseKey
	collectingDir   = object.CollectingDir
	tombstonePrefix = object.TombstonePrefix
	readsDir        = format.ReadsDir
	readWindow      = object.ReadWindow
)
