package crash

import "testing"

// A call strace logs unfinished ends on a short line of its own, padded
// before its " = ": parse joins the two, and the join is still a call
// (else a slow fsync, the call most often cut by another thread's, went
// missing from the trace, and a crash state lacked a sync retval made).
func TestSplitResumedCall(t *testing.T) {
	joined := "fsync(9<\\x2f\\x72>" + ")              = 0" // `... <unfinished ...>` + `<... fsync resumed>)              = 0`
	name, args, ret, ok := splitCall(joined)
	if !ok || name != "fsync" || len(args) != 1 || args[0] != "9<\\x2f\\x72>" || ret != "0" {
		t.Errorf("splitCall(%q) = %q, %q, %q, %v", joined, name, args, ret, ok)
	}
	name, args, ret, ok = splitCall("renameat(3<\\x2f>, \"\\x61\", 3<\\x2f>, \"\\x62\") = 0")
	if !ok || name != "renameat" || len(args) != 4 || ret != "0" {
		t.Errorf("a call on one line: %q, %q, %q, %v", name, args, ret, ok)
	}
}
