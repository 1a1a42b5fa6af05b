package config

import (
	"strings"
	"testing"
	"time"
)

// Every suffix people write is accepted in any case, and all are binary.
func TestParseSizeForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"512", 512}, {"7B", 7}, {"7b", 7},
		{"4k", 4 << 10}, {"4K", 4 << 10}, {"4kb", 4 << 10}, {"4KB", 4 << 10}, {"4Kb", 4 << 10}, {"4KiB", 4 << 10}, {"4kib", 4 << 10}, {"4KIB", 4 << 10},
		{"16m", 16 << 20}, {"16M", 16 << 20}, {"16mb", 16 << 20}, {"16MB", 16 << 20}, {"16MiB", 16 << 20}, {"16mib", 16 << 20},
		{"2g", 2 << 30}, {"2G", 2 << 30}, {"2gb", 2 << 30}, {"2GB", 2 << 30}, {"2GiB", 2 << 30},
		{"1t", 1 << 40}, {"1TiB", 1 << 40},
		{" 20 KiB ", 20 << 10},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// An unknown suffix names itself and lists every accepted form.
func TestParseSizeUnknownSuffix(t *testing.T) {
	_, err := ParseSize("16MiBs")
	if err == nil {
		t.Fatal("16MiBs accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, `unknown unit "MiBs"`) {
		t.Errorf("error does not name the unit: %s", msg)
	}
	for _, form := range []string{"k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib", "any case", "binary"} {
		if !strings.Contains(msg, form) {
			t.Errorf("error does not list %q: %s", form, msg)
		}
	}
}

func TestParseDurationUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"90s", 90 * time.Second}, {"15m", 15 * time.Minute}, {"36h", 36 * time.Hour},
		{"14d", 14 * 24 * time.Hour}, {"2w", 14 * 24 * time.Hour}, {"1.5d", 36 * time.Hour}, {"1h30m", 90 * time.Minute},
	} {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"2y", "-1w", "w", "14 days"} {
		if _, err := ParseDuration(bad); err == nil || !strings.Contains(err.Error(), "w (weeks)") {
			t.Errorf("ParseDuration(%q): %v, want an error listing the units", bad, err)
		}
	}
}
