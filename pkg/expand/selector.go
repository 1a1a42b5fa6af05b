package expand

import (
	"strconv"

	"github.com/retval/retval/pkg/peek"
)

// Selector is what the reference selects in the flag form of peek and
// resolve, as the read log keeps it (retain.Read.Sel): "--bytes 0-"
// (the whole value), "--bytes A-B", "--lines A-B", "--pointer P" (after
// "--lines N " for a line of an NDJSON value), "--outline P", "--list N".
func (r Ref) Selector() string {
	rng := peek.RangeArg{First: r.Start, Last: r.End, Tail: r.Tail}
	line := ""
	if r.Line > 0 {
		line = "--lines " + strconv.FormatInt(r.Line, 10) + " "
	}
	switch r.Kind {
	case RefWhole:
		return "--bytes 0-"
	case RefBytes:
		return "--bytes " + rng.String()
	case RefLines:
		return "--lines " + rng.String()
	case RefPointer:
		return line + "--pointer " + r.Pointer.String()
	case RefOutline:
		return line + "--outline " + r.Pointer.String()
	case RefList:
		return "--list " + strconv.FormatInt(r.Page, 10)
	}
	return ""
}
