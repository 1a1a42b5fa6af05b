package retain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Tombstone is what gc leaves of a collected run.
type Tombstone struct {
	Run       ID        `json:"run"`
	Collected time.Time `json:"collected"`
	Values    int       `json:"values"`
	Bytes     int64     `json:"bytes"`
}

func (s *Store) tombstonePath(run ID) string {
	return filepath.Join(s.Dir, storeDirName, tombstoneDir, string(run)+".json")
}

// TombstoneDir is where tombstones live.
func (s *Store) TombstoneDir() string { return filepath.Join(s.Dir, storeDirName, tombstoneDir) }

// WriteTombstone records that run was collected.
func (s *Store) WriteTombstone(t Tombstone) error {
	if err := os.MkdirAll(s.TombstoneDir(), dirMode); err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.tombstonePath(t.Run), append(b, '\n'), fileMode)
}

// ReadTombstone returns the tombstone of run, if gc left one.
func (s *Store) ReadTombstone(run ID) (*Tombstone, bool) {
	b, err := os.ReadFile(s.tombstonePath(run))
	if err != nil {
		return nil, false
	}
	var t Tombstone
	if json.Unmarshal(b, &t) != nil {
		return nil, false
	}
	return &t, true
}

// RemoveTombstone forgets a tombstone (a new run of that name was written).
func (s *Store) RemoveTombstone(run ID) { os.Remove(s.tombstonePath(run)) }
