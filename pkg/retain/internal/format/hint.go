package format

// HintError adds a hint to an error: what a person can do next. Its
// message is Err's alone; the CLI finds the hint with errors.As, through
// any wrapping, and prints it on a second line ("hint: …"). Nothing reads a
// hint back out of message text.
type HintError struct {
	Err  error
	Hint string
}

// WithHint returns err with hint, keeping err's code.
func WithHint(err error, hint string) error { return &HintError{Err: err, Hint: hint} }

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }
