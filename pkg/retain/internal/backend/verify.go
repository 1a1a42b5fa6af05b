package backend

import (
	"fmt"
	"io"

	"github.com/retval/retval/pkg/retain/internal/format"
)

// VerifyContent is a value's stored bytes opened for verify.
type VerifyContent struct {
	R     io.Reader   // from the start (a plain value is hashed from it)
	At    io.ReaderAt // by offset (a compressed value is decoded through it)
	Close func()
}

// ContentMissing is the problem of a descriptor whose content is not there.
func ContentMissing(d *format.Descriptor) *format.ValueProblem {
	return &format.ValueProblem{File: format.ContentName(d.ID, d.Compression), Kind: format.ProblemMissing,
		Message: fmt.Sprintf("content file missing: %s has no %s", format.MetaName(d.ID), format.ContentName(d.ID, d.Compression))}
}

// ContentCorrupt is the problem of content that cannot be what d says.
func ContentCorrupt(d *format.Descriptor, msg string, args ...any) *format.ValueProblem {
	return &format.ValueProblem{File: format.ContentName(d.ID, d.Compression), Kind: format.ProblemCorrupt, Message: fmt.Sprintf(msg, args...)}
}
