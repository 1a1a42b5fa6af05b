package e2etest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// envChild is set in the test process re-executed inside the namespace.
const envChild = "RETVAL_E2E_NETNS"

// Isolated reports whether this process is the re-executed test running
// inside the loopback-only namespace. A test starts with
//
//	if e2etest.Isolated() {
//		scenarios(t)
//		return
//	}
//
// then installs what it needs and calls Isolate.
func Isolated() bool { return os.Getenv(envChild) != "" }

// Isolate re-executes the running top-level test inside a new network
// namespace that has only loopback, up (unshare -n as root, with a user
// namespace otherwise), with env added to this process's environment, and
// fails unless the test passed there. Its output is logged.
func Isolate(t *testing.T, env ...string) {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	unshare := []string{"unshare", "-n"}
	if os.Geteuid() != 0 {
		unshare = []string{"unshare", "-r", "-n"}
	}
	if out, err := exec.Command(unshare[0], append(unshare[1:], "true")...).CombinedOutput(); err != nil {
		t.Fatalf("%s true: %v: %s (the test needs a network namespace: run as root or allow user namespaces)", strings.Join(unshare, " "), err, out)
	}
	// The run inside has what is left of this one's deadline (go test's
	// -timeout), not a fixed one: a loaded machine makes each client slower.
	timeout := "0"
	if d, ok := t.Deadline(); ok {
		timeout = time.Until(d).Round(time.Second).String()
	}
	args := append(unshare[1:], "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1", "-test.timeout="+timeout)
	cmd := exec.Command(unshare[0], args...)
	cmd.Env = append(append(os.Environ(), envChild+"=1"), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("inside the namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the scenarios failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatal("the scenarios did not run")
	}
}
