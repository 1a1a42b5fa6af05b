package retain_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// numbered returns n lines "line 1" … "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// A harness retains a tool result and shows the model the stub; a result
// within the threshold goes through unchanged.
func Example() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	store := retain.Open(filepath.Join(dir, "runs"))

	limits := retain.DefaultLimits()
	limits.Threshold = 100   // bytes; the default is 20 KiB
	limits.PreviewBytes = 40 // head + tail excerpts of the stub

	opts := retain.RetainOptions{Run: "run-1", Call: "call_1", Meta: retain.Meta{Tool: "seq"}, Limits: limits}
	res, err := store.Retain(strings.NewReader(numbered(1000)), os.Stdout, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Stub)

	opts.Call = "call_2"
	res, _ = store.Retain(strings.NewReader("short\n"), os.Stdout, opts)
	fmt.Println("verbatim:", res.Verbatim)
	// Output:
	// [retained #call_1] 8893 bytes, 1000 lines, sha256:bdc2458a0c103e8d1fb7bcd0546807d91b7589b0f44e43c70df8558909f6225e, complete
	// line 1
	// line 2
	// [… 996 lines, 8860 bytes not shown …]
	// line 999
	// line 1000
	// [read more: peek call_1 --lines 3-402 | --query TEXT]
	// short
	// verbatim: true
}

// OpenValue reads a retained value back; every byte is checked against the
// value's digests.
func ExampleStore_OpenValue() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	store := retain.Open(filepath.Join(dir, "runs"))
	limits := retain.DefaultLimits()
	limits.Threshold = retain.Unlimited // retain everything
	_, err := store.Retain(strings.NewReader(numbered(1000)), os.Stdout,
		retain.RetainOptions{Run: "run-1", Call: "call_1", Limits: limits})
	if err != nil {
		fmt.Println(err)
		return
	}

	v, err := store.OpenValue("run-1", "call_1")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	b, err := v.Bytes(v.Size()-10, v.Size())
	fmt.Printf("%d bytes, %d lines, last bytes %q, %v\n", v.Desc.Size, v.Desc.Lines, b, err)

	_, err = store.OpenValue("run-1", "call_9")
	fmt.Println(errors.Is(err, retain.ErrNotFound), retain.CodeOf(err))
	// Output:
	// 8893 bytes, 1000 lines, last bytes "line 1000\n", <nil>
	// true unknown_reference
}

// Sanitize maps any call id to a value id that is a plain file name.
func ExampleSanitize() {
	for _, call := range []string{"toolu_01A", "../../etc/passwd"} {
		id, _ := retain.Sanitize(call)
		fmt.Println(id)
	}
	// Output:
	// toolu_01A
	// ______etc_passwd-f2c2ba8b
}
