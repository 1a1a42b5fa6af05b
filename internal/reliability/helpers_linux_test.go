package reliability

// Helpers only the Linux-only tests (hostile, perm) use: elsewhere they
// would be unused, which staticcheck reports for GOOS=windows.

import (
	"crypto/sha256"
	"encoding/hex"
)

// sha is b's SHA-256 in hex.
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
