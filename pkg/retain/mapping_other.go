//go:build !unix

package retain

// Mapping is a value mapped into memory; on this system values are never
// mapped (Map returns nil), and searches read with ReadBlocks.
type Mapping struct{}

// Map returns nil: values are read, not mapped, here.
func (v *Value) Map() (*Mapping, error) { return nil, nil }

func (m *Mapping) Data() []byte               { return nil }
func (m *Mapping) Check(off, end int64) error { return nil }
func (m *Mapping) Guard(f func() error) error { return f() }
func (m *Mapping) Release(end int64)          {}
func (m *Mapping) Close() error               { return nil }
