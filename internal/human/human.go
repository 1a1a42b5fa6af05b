// Package human formats numbers for people: sizes in IEC units, counts
// with thousands separators, and times relative to now. It writes exactly
// what github.com/dustin/go-humanize writes for these (human_test.go holds
// it to that), without linking that package, whose init compiles regexps
// and builds big-number tables in every retval process.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

var iec = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// IBytes is a size in IEC units: "82 B", "1.0 KiB", "98 KiB", "1.5 GiB"
// (two significant digits at least, as humanize.IBytes).
func IBytes(s uint64) string {
	if s < 10 {
		return fmt.Sprintf("%d B", s)
	}
	e := math.Floor(math.Log(float64(s)) / math.Log(1024))
	val := float64(s) / math.Pow(1024, e)
	intDigits := digits(int64(val))
	dec := max(2-intDigits, 0)
	rounding := math.Pow10(dec)
	val = math.Floor(val*rounding+0.5) / rounding
	if d := digits(int64(val)); d > intDigits {
		dec = max(dec-(d-intDigits), 0)
	}
	return strconv.FormatFloat(val, 'f', dec, 64) + " " + iec[int(e)]
}

func digits(n int64) int {
	d := 0
	for n != 0 {
		n /= 10
		d++
	}
	return d
}

// Comma is n with commas between groups of three digits: "1,234,567".
func Comma(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}

const (
	day      = 24 * time.Hour
	week     = 7 * day
	month    = 30 * day
	year     = 12 * month
	longTime = 37 * year
)

var magnitudes = []struct {
	d      time.Duration
	format string
	divBy  time.Duration
}{
	{time.Second, "now", time.Second},
	{2 * time.Second, "1 second %s", 1},
	{time.Minute, "%d seconds %s", time.Second},
	{2 * time.Minute, "1 minute %s", 1},
	{time.Hour, "%d minutes %s", time.Minute},
	{2 * time.Hour, "1 hour %s", 1},
	{day, "%d hours %s", time.Hour},
	{2 * day, "1 day %s", 1},
	{week, "%d days %s", day},
	{2 * week, "1 week %s", 1},
	{month, "%d weeks %s", week},
	{2 * month, "1 month %s", 1},
	{year, "%d months %s", month},
	{18 * month, "1 year %s", 1},
	{2 * year, "2 years %s", 1},
	{longTime, "%d years %s", year},
	{math.MaxInt64, "a long while %s", 1},
}

// RelTime is a relative to b, "3 hours ago" (albl) or "2 days from now"
// (blbl), as humanize.RelTime.
func RelTime(a, b time.Time, albl, blbl string) string {
	lbl, diff := albl, b.Sub(a)
	if a.After(b) {
		lbl, diff = blbl, a.Sub(b)
	}
	i := 0
	for i < len(magnitudes)-1 && magnitudes[i].d <= diff {
		i++
	}
	m := magnitudes[i]
	var args []any
	for j := 0; j+1 < len(m.format); j++ {
		if m.format[j] != '%' {
			continue
		}
		switch m.format[j+1] {
		case 's':
			args = append(args, lbl)
		case 'd':
			args = append(args, diff/m.divBy)
		}
		j++
	}
	out := fmt.Sprintf(m.format, args...)
	if lbl == "" {
		out = strings.TrimRight(out, " ")
	}
	return out
}
