package fsx

// ReadSmall is ReadFile: the fast path of Unix (a file read without an
// *os.File) has no counterpart worth its code here.
func ReadSmall(path string, max int64) ([]byte, error) { return ReadFile(path, max) }
