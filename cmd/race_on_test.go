//go:build race

package cmd

// raceEnabled: under the race detector sync.Pool drops items at random,
// so allocation counts are not the program's.
const raceEnabled = true
