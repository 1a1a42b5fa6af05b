package retain

// A run's tombstone means "collected, and not written since": the first
// value written into the run again removes it. What a run lived through
// before that is kept beside it, by gc alone, in the run's collected-ids
// record (.retval/tombstones/<run>.ids.json): the ids of the values each
// collection of the run removed. A run written again after gc collected
// it then still answers `collected` for a value of an earlier generation,
// where it would otherwise say unknown_reference and suggest one of the
// new values, whose content is unrelated.
