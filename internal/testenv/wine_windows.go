package testenv

import (
	"testing"

	"golang.org/x/sys/windows"
)

// Wine reports whether the test runs under Wine rather than Windows
// (Wine's ntdll exports wine_get_version; Windows' does not).
func Wine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// SkipUnderWine skips the test under Wine, saying what Wine lacks that
// the test needs of Windows.
func SkipUnderWine(t testing.TB, lacks string) {
	t.Helper()
	if Wine() {
		t.Skip("Wine lacks " + lacks)
	}
}
