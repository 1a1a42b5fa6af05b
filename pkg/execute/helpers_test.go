package execute

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

func opts(t *testing.T, args ...string) (*retain.Store, Options) {
	t.Helper()
	lim := retain.Limits{Threshold: 100}
	return retain.Open(t.TempDir()), Options{Args: args, Retain: retain.RetainOptions{Run: "r", Call: "c1", Limits: lim}}
}

func read(t *testing.T, s *retain.Store, id string) (string, *retain.Descriptor) {
	t.Helper()
	v, err := s.OpenValue("r", id)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	b, err := io.ReadAll(v.Section(0, v.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), &v.Desc
}

// seq is what seq 1 n prints.
func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// runGuarded runs Run, turning a hang into a failure.
func runGuarded(t *testing.T, s *retain.Store, o Options) (*Result, error) {
	t.Helper()
	type ret struct {
		res *Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := Run(s, o)
		done <- ret{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return nil, nil
	}
}
