// Package expand resolves references to retained values: a Ref names a
// value and a selection of it (the whole value, a byte range, a line range
// or an RFC 6901 JSON pointer), Select finds where the selection lies
// without reading more than it must, and a Selection streams or returns the
// selected bytes. Lookups spend a per-step budget kept in a ledger in the
// run directory. Everything is read through pkg/retain, so every byte
// returned has been checked against the value's digests.
//
// The same Ref, Select and Selection serve `retval resolve` (one lookup per
// reference, under the budget) and the template expansion of `retval
// expand` (which composes selections without spending the budget).
package expand
