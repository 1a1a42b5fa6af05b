package retain

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/retain/s3store"
)

// On object storage nothing can be appended to, so a run's read log is a
// set of small objects under <run>.values/.reads/, one per record, named
// by the record's time (nanoseconds, zero-padded so that key order is time
// order) and a random suffix (so that two processes never write the same
// key). Each holds one record exactly as a line of the local log.

// readKey is the key of a record written at t.
func readKey(run ID, r Read) string {
	var b [4]byte
	rand.Read(b[:])
	return objKey(run, fmt.Sprintf("%s%020d-%s", readsDir, r.Time.UnixNano(), hex.EncodeToString(b[:])))
}

// logRead writes one record of run's read log; a run that holds nothing is
// not made by it.
func (o *objStore) logRead(run ID, r Read) error {
	if ok, err := o.runExists(run); err != nil || !ok {
		return nil // no run, or a store not reached: the read said so
	}
	var buf [MaxReadRecord]byte
	key := readKey(run, r)
	etag, err := o.b.Create(o.ctx, key, appendRecord(buf[:0], r))
	if err != nil {
		return o.ioErr(err)
	}
	o.undoIfCollected(run, key, etag)
	return nil
}

func (o *objStore) scanReads(run ID, f func(*Read)) (ReadLogInfo, error) {
	return o.scanReadObjects(run, f, nil)
}

// scanReadObjects calls f with each record of run's read log, oldest
// first, and bad, when set, with the key of each object that is not one
// record.
func (o *objStore) scanReadObjects(run ID, f func(*Read), bad func(key string)) (ReadLogInfo, error) {
	var info ReadLogInfo
	if err := o.mustExist(run); err != nil {
		return info, err
	}
	var keys []string
	prefix := objKey(run, readsDir)
	err := o.b.List(o.ctx, prefix, func(ob s3store.Object) error {
		keys = append(keys, ob.Key)
		info.Bytes += ob.Size
		return nil
	})
	if err != nil {
		return info, o.ioErr(err)
	}
	var rec Read
	in := interner{}
	for i, k := range keys { // listed in key order: time order
		b, _, err := o.b.Get(o.ctx, k, MaxReadRecord)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			continue // collected meanwhile
		case err != nil && !errors.Is(err, s3store.ErrTooLarge):
			// Not read is not malformed: verify would have the user
			// delete a record a failed request did not show.
			return info, o.ioErr(err)
		}
		line, ok := strings.CutSuffix(string(b), "\n")
		if err != nil || !ok || !parseRecord([]byte(line), &rec, in) {
			info.NoteMalformed(int64(i + 1))
			if bad != nil {
				bad(k)
			}
			continue
		}
		info.Records++
		f(&rec)
	}
	return info, nil
}
