package local

import (
	"container/list"
	"path/filepath"
	"sync"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// ValueCache keeps small values (those read whole and checked against
// their SHA-256) that a long-running reader — retval mcp serve, a Go
// harness — has read, so that the next read of one costs a few lstat
// calls instead of opening, parsing and hashing it again. Values are
// immutable; an entry is used only while its descriptor and its content
// file are the very files it was read from (device, inode, size,
// modification and change times), and only after the run's directory was
// looked up as for any read: a run gc collected, or a file that was
// replaced or written to, is read again from disk, with every check.
// Entries are let go least recently used first once the cache holds more
// than its bytes. It is safe for concurrent use; a nil *ValueCache caches
// nothing, and a zero ValueCache holds DefaultValueCacheBytes. Object
// storage is not cached.
type ValueCache struct {
	max int64 // 0: DefaultValueCacheBytes

	mu   sync.Mutex
	used int64
	m    map[string]*list.Element // by the descriptor's path
	lru  list.List                // of *cachedValue, most recent first
}

// DefaultValueCacheBytes is the cache retval's MCP server keeps.
const DefaultValueCacheBytes = 16 << 20

// NewValueCache returns a cache of at most maxBytes of values
// (DefaultValueCacheBytes when maxBytes is not above 0).
func NewValueCache(maxBytes int64) *ValueCache {
	return &ValueCache{max: max(maxBytes, 0)}
}

// Max is the most the cache holds, in bytes of values.
func (c *ValueCache) Max() int64 { return c.limit() }

// Bytes is what the cache holds now, in bytes of values.
func (c *ValueCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len is the number of values the cache holds.
func (c *ValueCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// limit is the most the cache holds.
func (c *ValueCache) limit() int64 {
	if c.max <= 0 {
		return DefaultValueCacheBytes
	}
	return c.max
}

type cachedValue struct {
	meta          string // the descriptor's path: the key
	desc          format.Descriptor
	data          []byte // the value, checked against desc.SHA256
	metaID, conID fileID
}

// pendingCache is what a Value opened through a cache needs to enter it
// once its bytes are checked.
type pendingCache struct {
	c             *ValueCache
	meta          string
	metaID, conID fileID
}

// get returns the cached entry of the descriptor at meta in dir, or nil.
func (c *ValueCache) get(dir, meta string) *backend.OpenedValue {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	e, ok := c.m[meta]
	var cv *cachedValue
	if ok {
		cv = e.Value.(*cachedValue)
	}
	c.mu.Unlock()
	if cv == nil {
		return nil
	}
	// The files are looked at without the lock: two lstat calls.
	if id, ok := lstatID(meta); !ok || id != cv.metaID {
		c.drop(meta, cv)
		return nil
	}
	if id, ok := lstatID(filepath.Join(dir, format.ContentName(cv.desc.ID, cv.desc.Compression))); !ok || id != cv.conID {
		c.drop(meta, cv)
		return nil
	}
	c.mu.Lock()
	if e, ok := c.m[meta]; ok && e.Value == cv {
		c.lru.MoveToFront(e)
	}
	c.mu.Unlock()
	return &backend.OpenedValue{Desc: cv.desc, Whole: cv.data}
}

// pending is how op enters the cache once read whole and checked, or nil
// where it cannot: no cache, a value too large to be read whole, a file
// whose identity cannot be asked. metaID is the descriptor's identity,
// asked before the descriptor was read.
func (c *ValueCache) pending(meta string, metaID fileID, op *backend.OpenedValue) func(format.Descriptor, []byte) {
	if c == nil || op.File == nil || op.Desc.Size > format.IndexMinSize || op.Desc.Size > c.limit() {
		return nil
	}
	conID, ok := fstatID(op.File)
	if !ok {
		return nil
	}
	p := &pendingCache{c: c, meta: meta, metaID: metaID, conID: conID}
	return p.add
}

// add enters a value whose bytes were just checked.
func (p *pendingCache) add(d format.Descriptor, data []byte) {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[p.meta]; ok {
		c.remove(e)
	}
	if c.m == nil {
		c.m = map[string]*list.Element{}
	}
	c.m[p.meta] = c.lru.PushFront(&cachedValue{meta: p.meta, desc: d, data: data, metaID: p.metaID, conID: p.conID})
	c.used += int64(len(data))
	for c.used > c.limit() {
		c.remove(c.lru.Back())
	}
}

// drop lets go of cv, if it is still the entry at meta.
func (c *ValueCache) drop(meta string, cv *cachedValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[meta]; ok && e.Value == cv {
		c.remove(e)
	}
}

// remove takes e out; the caller holds c.mu.
func (c *ValueCache) remove(e *list.Element) {
	cv := c.lru.Remove(e).(*cachedValue)
	delete(c.m, cv.meta)
	c.used -= int64(len(cv.data))
}
