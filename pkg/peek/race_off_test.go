//go:build !race

package peek

// raceEnabled: see race_on_test.go.
const raceEnabled = false
