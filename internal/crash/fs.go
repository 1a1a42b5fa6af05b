// Package crash explores the states a power loss may leave a store in, the
// way ALICE does (Pillai et al., OSDI '14): it records the file-system
// operations of the real binary under strace, builds every state (or a
// seeded sample) that a persistence model allows after a crash at any
// point, writes each into a fresh directory and lets a test check it with
// the real binary.
package crash

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// inode is a file or a directory of the model file system.
type inode struct {
	dir     bool
	data    []byte         // a file's bytes
	entries map[string]int // a directory's entries: name → inode number
}

// FS is a model file system: inodes by number, inode 1 the root (the
// directory the workload runs in). Entries may name inodes that no path
// reaches any more; a file may exist without any entry (its creation was
// lost while its writes were not), as after a real crash.
type FS struct {
	ino  map[int]*inode
	next int
}

const rootIno = 1

// clone returns a deep copy of fs.
func (fs *FS) clone() *FS {
	c := &FS{ino: make(map[int]*inode, len(fs.ino)), next: fs.next}
	for n, in := range fs.ino {
		cp := &inode{dir: in.dir}
		if in.dir {
			cp.entries = make(map[string]int, len(in.entries))
			for k, v := range in.entries {
				cp.entries[k] = v
			}
		} else {
			cp.data = in.data // copied on write (see write)
		}
		c.ino[n] = cp
	}
	return c
}

// Load reads the tree under dir (directories and regular files; anything
// else is an error) into a model file system.
func Load(dir string) (*FS, error) {
	fs := &FS{ino: map[int]*inode{rootIno: {dir: true, entries: map[string]int{}}}, next: rootIno + 1}
	var walk func(path string, ino int) error
	walk = func(path string, ino int) error {
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := filepath.Join(path, e.Name())
			n := fs.next
			fs.next++
			switch {
			case e.IsDir():
				fs.ino[n] = &inode{dir: true, entries: map[string]int{}}
				if err := walk(p, n); err != nil {
					return err
				}
			case e.Type().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				fs.ino[n] = &inode{data: b}
			default:
				return fmt.Errorf("crash: %s is neither a file nor a directory", p)
			}
			fs.ino[ino].entries[e.Name()] = n
		}
		return nil
	}
	return fs, walk(dir, rootIno)
}

// apply performs op on fs. An operation whose inodes the chosen state
// lacks (a write to a file whose creation was not kept is still kept: the
// inode exists, unreachable) still does what it can, as a disk would.
func (fs *FS) apply(op *Op) {
	get := func(n int, dir bool) *inode {
		in := fs.ino[n]
		if in == nil {
			in = &inode{dir: dir}
			if dir {
				in.entries = map[string]int{}
			}
			fs.ino[n] = in
		}
		return in
	}
	switch op.Kind {
	case OpCreate:
		fs.ino[op.Ino] = &inode{}
		get(op.Dir, true).entries[op.Name] = op.Ino
	case OpMkdir:
		fs.ino[op.Ino] = &inode{dir: true, entries: map[string]int{}}
		get(op.Dir, true).entries[op.Name] = op.Ino
	case OpWrite:
		in := get(op.Ino, false)
		end := op.Off + int64(len(op.Data))
		b := make([]byte, max(int64(len(in.data)), end))
		copy(b, in.data)
		copy(b[op.Off:], op.Data)
		in.data = b
	case OpTruncate:
		in := get(op.Ino, false)
		b := make([]byte, op.Off)
		copy(b, in.data)
		in.data = b
	case OpRename:
		src := get(op.Dir, true)
		if src.entries[op.Name] == op.Ino {
			delete(src.entries, op.Name)
		}
		get(op.Dir2, true).entries[op.Name2] = op.Ino
	case OpLink:
		get(op.Dir2, true).entries[op.Name2] = op.Ino
	case OpUnlink, OpRmdir:
		d := get(op.Dir, true)
		if d.entries[op.Name] == op.Ino {
			delete(d.entries, op.Name)
		}
	}
}

// Materialise writes the tree reachable from the root of fs into dir
// (which must exist and be empty): directories 0700, files 0600.
func (fs *FS) Materialise(dir string) error {
	var walk func(path string, ino int) error
	walk = func(path string, ino int) error {
		for name, n := range fs.ino[ino].entries {
			in := fs.ino[n]
			if in == nil {
				continue
			}
			p := filepath.Join(path, name)
			if in.dir {
				if err := os.Mkdir(p, 0o700); err != nil {
					return err
				}
				if err := walk(p, n); err != nil {
					return err
				}
			} else if err := os.WriteFile(p, in.data, 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(dir, rootIno)
}

// Sum is a digest of the tree reachable from the root: two states with
// the same Sum materialise to the same files.
func (fs *FS) Sum() [32]byte {
	h := sha256.New()
	var walk func(ino int, depth int)
	walk = func(ino int, depth int) {
		if depth > 64 {
			return // a rename cycle in a chosen subset: cut, as Materialise would loop
		}
		in := fs.ino[ino]
		names := make([]string, 0, len(in.entries))
		for k := range in.entries {
			if fs.ino[in.entries[k]] != nil {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			c := fs.ino[in.entries[k]]
			var n [8]byte
			binary.LittleEndian.PutUint64(n[:], uint64(len(c.data)))
			h.Write([]byte(k))
			h.Write(n[:])
			if c.dir {
				h.Write([]byte{'/'})
				walk(in.entries[k], depth+1)
				h.Write([]byte{'\\'})
			} else {
				h.Write(c.data)
			}
		}
	}
	walk(rootIno, 0)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// pathOf is a path of inode n relative to the root, for reports: "?" and
// its number when no entry reaches it.
func (fs *FS) pathOf(n int) string {
	if n == rootIno {
		return "."
	}
	var find func(dir int, at string, depth int) string
	find = func(dir int, at string, depth int) string {
		if depth > 64 {
			return ""
		}
		for name, c := range fs.ino[dir].entries {
			if c == n {
				return filepath.Join(at, name)
			}
		}
		for name, c := range fs.ino[dir].entries {
			if in := fs.ino[c]; in != nil && in.dir {
				if p := find(c, filepath.Join(at, name), depth+1); p != "" {
					return p
				}
			}
		}
		return ""
	}
	if p := find(rootIno, "", 0); p != "" {
		return p
	}
	return fmt.Sprintf("?%d", n)
}
