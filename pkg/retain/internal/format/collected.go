package format

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// CollectedIDs is a run's collected-ids record: per collection of the run
// (oldest first), when it happened and the ids of the values it removed.
type CollectedIDs struct {
	Run         ID           `json:"run"`
	Generations []Generation `json:"generations"`
}

// Generation is one collection of a run: when, and the values it removed.
type Generation struct {
	Collected time.Time `json:"collected"`
	IDs       []ID      `json:"ids"`
}

// MaxCollectedIDsBytes bounds a collected-ids record, written and read:
// the ids of a run at its default capacity (1,024 values of at most 64
// bytes) fit many times over. gc drops the oldest generations to keep a
// record within it, then, for a run larger still, the ids that do not fit
// (a lookup of one of those says unknown_reference, as without a record).
const MaxCollectedIDsBytes = 1 << 20

const collectedIDsExt = ".ids.json"

// CollectedIDsName is the name of run's collected-ids record in the
// tombstone directory: a run id holds no '.', so it is never a tombstone's.
func CollectedIDsName(run ID) string { return string(run) + collectedIDsExt }

// Newest is when the record's last collection happened.
func (c *CollectedIDs) Newest() time.Time {
	if len(c.Generations) == 0 {
		return time.Time{}
	}
	return c.Generations[len(c.Generations)-1].Collected
}

// errNotCollectedIDs says an entry of the tombstone directory named as a
// collected-ids record does not hold one.
var errNotCollectedIDs = errors.New("is not a collected-ids record")

// ParseCollectedIDs reads the record b of the tombstone directory's
// entry name.
func ParseCollectedIDs(name string, b []byte) (*CollectedIDs, error) {
	var c CollectedIDs
	if json.Unmarshal(b, &c) != nil || !IsClean(string(c.Run)) || name != CollectedIDsName(c.Run) {
		return nil, errNotCollectedIDs
	}
	return &c, nil
}

// Marshal encodes the record within MaxCollectedIDsBytes, dropping its
// oldest generations and then the last ids of the one left until it fits.
func (c *CollectedIDs) Marshal() ([]byte, error) {
	for {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		if len(b)+1 <= MaxCollectedIDsBytes {
			return append(b, '\n'), nil
		}
		if len(c.Generations) > 1 {
			c.Generations = c.Generations[1:]
			continue
		}
		g := &c.Generations[0]
		over := len(b) + 1 - MaxCollectedIDsBytes
		n := len(g.IDs)
		for n > 0 && over > 0 {
			n--
			over -= len(g.IDs[n]) + 3 // the quotes and the comma
		}
		g.IDs = g.IDs[:n]
	}
}

// IsCollectedIDsName reports whether name, an entry of the tombstone
// directory, is named as a collected-ids record.
func IsCollectedIDsName(name string) bool { return strings.HasSuffix(name, collectedIDsExt) }
