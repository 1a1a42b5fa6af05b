package execute

import (
	"io"
	"testing"
	"time"
)

// A timeout that fires once the command has exited by itself, its status
// decided but Run not yet told, does not make it timed out: the status
// and TimedOut never disagree (exit 0 and "timed out").
func TestRunTimeoutAfterTheExitIsNoTimeout(t *testing.T) {
	fire := make(chan time.Time)
	defer func(n func(time.Duration) (<-chan time.Time, func() bool), d func()) {
		newTimer, statusDecided = n, d
	}(newTimer, statusDecided)
	newTimer = func(time.Duration) (<-chan time.Time, func() bool) { return fire, func() bool { return true } }
	statusDecided = func() {
		// The timer fires now; the second send is taken once the first
		// has been dealt with.
		fire <- time.Now()
		fire <- time.Now()
	}
	s, o := opts(t, childArgs(t, "exit", "0")...)
	o.Timeout = time.Hour
	o.Out = io.Discard
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 || res.TimedOut {
		t.Fatalf("status %d, timed out %v: want 0, not timed out", res.Status, res.TimedOut)
	}
}
