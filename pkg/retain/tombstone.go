package retain

// WriteTombstone records, durably, that run was collected: the file is
// written and synced under a temporary name, renamed, and its directory
// synced. A symlink in place of .retval or .retval/tombstones is refused
// (an *fsx.PathError), never written through.
func (s *Store) WriteTombstone(t Tombstone) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.WriteTombstone(t)
}

// ReadTombstone returns the tombstone of run, if gc left one. It never
// follows a symlink (at .retval, at tombstones or at the file), never
// opens anything but a regular file, and reads at most MaxTombstoneBytes:
// anything else, or a file that is not a tombstone of run, counts as no
// tombstone.
func (s *Store) ReadTombstone(run ID) (*Tombstone, bool) {
	b, err := s.backend()
	if err != nil {
		return nil, false
	}
	return b.ReadTombstone(run)
}

// RemoveTombstone forgets a tombstone (a new run of that name was written,
// or the tombstone expired). It removes the entry itself, never what a
// symlink there points at. No tombstone is no error.
func (s *Store) RemoveTombstone(run ID) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.RemoveTombstone(run)
}

// TombstoneFiles lists the tombstone directory, reading each tombstone
// within its bound. No directory (no gc collected anything yet) is an
// empty list; a symlink in place of .retval or of the directory is a
// *RefusedError (wrapping an *fsx.PathError), and nothing behind it is
// read.
func (s *Store) TombstoneFiles() ([]TombstoneFile, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.TombstoneFiles()
}

// RemoveTombstoneFile removes the entry name of the tombstone directory
// (a file, a link, or a directory and everything in it) without following
// any symlink. A missing entry is no error.
func (s *Store) RemoveTombstoneFile(name string) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.RemoveTombstoneFile(name)
}
