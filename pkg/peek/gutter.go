package peek

import "strings"

// StripGutter removes the "N: " gutters a peek puts before each line from
// text a model pasted back (an edit's old_str, say), so that it matches
// the file again. Gutters can be stacked — a peek of a value that itself
// holds read_file output shows "12: 5: text" — and each layer is removed in
// turn.
//
// A layer is removed only when it is unmistakably a gutter:
//   - every non-empty line starts with a line number (1 or more, no leading
//     zero) followed by ": ", or by ":" at the end of the line (a gutter
//     whose trailing space was trimmed);
//   - the numbers go up by exactly one from line to line; an empty line
//     counts as a line (its gutter was trimmed away with its space) and
//     stays empty;
//   - there is at least one such line.
//
// Otherwise the text is returned unchanged: "404: not found\n500: oops"
// keeps its numbers, as does any line that merely starts with digits
// ("2024-05-01 …", "10:30 …"). Text whose own lines are consecutively
// numbered "1: …", "2: …" cannot be told from peek output and loses its
// numbers, so a caller should try the text as given first and fall back to
// StripGutter(text) only when that does not match. Line endings ("\n",
// "\r\n", none on the last line) are kept as they are.
func StripGutter(text string) string {
	for {
		out, ok := stripLayer(text)
		if !ok {
			return text
		}
		text = out
	}
}

// stripLayer removes one layer of gutters, if text carries one.
func stripLayer(text string) (string, bool) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	cut := make([]int, len(lines)) // gutter length of each line
	next := int64(0)               // the number the next line must carry; 0 before the first
	seen := false
	for i, l := range lines {
		body := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		if body == "" {
			if next > 0 {
				next++
			}
			continue
		}
		n, g, ok := parseGutter(body)
		if !ok || next > 0 && n != next {
			return "", false
		}
		cut[i], next, seen = g, n+1, true
	}
	if !seen {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(text))
	for i, l := range lines {
		b.WriteString(l[cut[i]:])
	}
	return b.String(), true
}

// parseGutter reads "N: " (or "N:" ending the line) at the start of body
// and returns N and the gutter's length.
func parseGutter(body string) (n int64, length int, ok bool) {
	i := 0
	for i < len(body) && i < 19 && body[i] >= '0' && body[i] <= '9' {
		n = n*10 + int64(body[i]-'0')
		i++
	}
	if i == 0 || body[0] == '0' || i >= len(body) || body[i] != ':' {
		return 0, 0, false
	}
	switch {
	case i+1 == len(body):
		return n, i + 1, true
	case body[i+1] == ' ':
		return n, i + 2, true
	}
	return 0, 0, false
}
