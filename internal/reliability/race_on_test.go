//go:build race

package reliability

// raceEnabled: the test binary runs under the race detector, so the
// retval binary the tests start is built with it too.
const raceEnabled = true
