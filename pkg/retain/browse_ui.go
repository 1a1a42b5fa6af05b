package retain

// OpenValueReadOnly opens a value as OpenValue does, but leaves the run's
// activity stamp alone: a person inspecting a store (retval ui) is not
// its agent using the run, and must not keep it from gc nor write to a
// store it only looks at. It works alike on a runs-dir and on object
// storage.
func (s *Store) OpenValueReadOnly(run, id string) (*Value, error) {
	return s.openValue(run, id, false)
}
