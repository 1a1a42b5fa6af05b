package object

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// On object storage nothing can be appended to, so a run's read log is a
// set of small objects under <run>.values/.reads/, one per record, named
// by the record's time (nanoseconds, zero-padded so that key order is time
// order) and a random suffix (so that two processes never write the same
// key). Each holds one record exactly as a line of the local log.

// readKey is the key of a record written at t.
func readKey(run format.ID, r format.Read) string {
	var b [4]byte
	rand.Read(b[:])
	return Key(run, fmt.Sprintf("%s%020d-%s", format.ReadsDir, r.Time.UnixNano(), hex.EncodeToString(b[:])))
}

// LogRead writes one record of run's read log; a run that holds nothing is
// not made by it.
func (o *Backend) LogRead(run format.ID, r format.Read) error {
	if ok, err := o.runExists(run); err != nil || !ok {
		return nil // no run, or a store not reached: the read said so
	}
	var buf [format.MaxReadRecord]byte
	key := readKey(run, r)
	etag, err := o.b.Create(o.ctx, key, format.AppendRecord(buf[:0], r))
	if err != nil {
		return o.ioErr(err)
	}
	o.undoIfCollected(run, key, etag)
	return nil
}

func (o *Backend) ScanReads(run format.ID, f func(*format.Read)) (format.ReadLogInfo, error) {
	return o.scanReadObjects(run, f, nil)
}

// scanReadObjects calls f with each record of run's read log, oldest
// first, and bad, when set, with the key of each object that is not one
// record.
func (o *Backend) scanReadObjects(run format.ID, f func(*format.Read), bad func(key string)) (format.ReadLogInfo, error) {
	var info format.ReadLogInfo
	if err := o.MustExist(run); err != nil {
		return info, err
	}
	var keys []string
	prefix := Key(run, format.ReadsDir)
	err := o.b.List(o.ctx, prefix, func(ob s3store.Object) error {
		keys = append(keys, ob.Key)
		info.Bytes += ob.Size
		return nil
	})
	if err != nil {
		return info, o.ioErr(err)
	}
	var rec format.Read
	in := format.Interner{}
	for i, k := range keys { // listed in key order: time order
		b, _, err := o.b.Get(o.ctx, k, format.MaxReadRecord)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			continue // collected meanwhile
		case err != nil && !errors.Is(err, s3store.ErrTooLarge):
			// Not read is not malformed: verify would have the user
			// delete a record a failed request did not show.
			return info, o.ioErr(err)
		}
		line, ok := strings.CutSuffix(string(b), "\n")
		if err != nil || !ok || !format.ParseRecord([]byte(line), &rec, in) {
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
