//go:build race

package peek

// raceEnabled: the race detector slows every byte down, so the largest
// values in tests are made smaller under it.
const raceEnabled = true
