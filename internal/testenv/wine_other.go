//go:build !windows

package testenv

import "testing"

// Wine reports whether the test runs under Wine: never, here.
func Wine() bool { return false }

// SkipUnderWine skips the test under Wine; here it never does.
func SkipUnderWine(testing.TB, string) {}
