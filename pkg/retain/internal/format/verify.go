package format

// The kinds of Problem verify reports.
const (
	ProblemCorrupt = "corrupt" // a value (or its index) does not match its descriptor
	ProblemMissing = "missing" // a descriptor whose content file is not there
	ProblemDebris  = "debris"  // a file that belongs to no committed value
)

// Problem is one thing verify found wrong.
type Problem struct {
	Run ID `json:"run"`
	// File is the entry's name inside the run directory.
	File    string `json:"file"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Bytes is the size of a debris entry.
	Bytes int64 `json:"bytes,omitempty"`
}
