package retain

import (
	"fmt"

	"github.com/retval/retval/internal/xxh3"
)

func fmtHex(v uint64) string         { return fmt.Sprintf("%016x", v) }
func xxh3HashString(s string) uint64 { return xxh3.HashString(s) }
