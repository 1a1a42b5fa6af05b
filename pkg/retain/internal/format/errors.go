package format

import (
	"errors"
	"fmt"
)

// Code is the machine-readable name of a failure, as it appears in error
// messages and in --json output. The CLI maps codes to exit statuses in one
// place; callers of the packages branch on them with CodeOf or errors.Is.
type Code string

// The codes of SPEC §5.
const (
	CodeIO               Code = "io"
	CodeCorrupt          Code = "corrupt"
	CodeConflict         Code = "conflict"
	CodeUsage            Code = "usage"
	CodeUnknownReference Code = "unknown_reference"
	CodeCollected        Code = "collected"
	CodeCapacity         Code = "capacity"
	CodeBudgetExhausted  Code = "budget_exhausted"
	CodeExpandRefused    Code = "expand_refused"
	CodeInvalidRange     Code = "invalid_range"
	CodeNotJSON          Code = "not_json"
	CodeAmbiguousJSON    Code = "ambiguous_json"
	CodeDigestMismatch   Code = "digest_mismatch"
	CodeNotString        Code = "not_string"
	CodeBadPointer       Code = "bad_pointer"
	CodeNotUTF8          Code = "not_utf8"
	CodeTooLarge         Code = "too_large"
	CodeBadReference     Code = "bad_reference"
	// CodeReadOnly: the store cannot be written here (a read-only mount
	// or snapshot, or a runs-dir not writable by us) and the command has
	// nothing to do but write: gc. Exit 1.
	CodeReadOnly Code = "read_only"
)

// Sentinels for errors.Is. An *Error with the matching Code is Is-equal to
// its sentinel, so callers can write errors.Is(err, retain.ErrNotFound).
var (
	ErrNotFound  = &Error{Code: CodeUnknownReference}
	ErrCollected = &Error{Code: CodeCollected}
	ErrCorrupt   = &Error{Code: CodeCorrupt}
	ErrConflict  = &Error{Code: CodeConflict}
	ErrCapacity  = &Error{Code: CodeCapacity}
	ErrReadOnly  = &Error{Code: CodeReadOnly}
)

// Error is a failure with a code. Err carries the human explanation.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the code of the first *Error in err's chain, CodeIO for
// an error without one (a failed system call, say), and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeIO
}
