// Package textdist measures how far apart two short strings are, for the
// "did you mean" of mistyped commands, flags and value ids.
package textdist

// Distance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent bytes, each 1.
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Limit is how many edits a guess may be from what was typed: one for a
// short word, two from five bytes on.
func Limit(s string) int {
	if len(s) >= 5 {
		return 2
	}
	return 1
}
