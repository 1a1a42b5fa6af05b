package fsx

import "strings"

// WindowsReserved reports whether Windows cannot hold a file named name
// as it is: one whose part before the first dot is a DOS device name
// (CON, PRN, AUX, NUL, COM0–COM9, LPT0–LPT9, any case, also with ¹²³ for
// the digit, and with spaces before the dot) opens that device through
// the Win32 API ("NUL.txt" is NUL on Windows 10), and a trailing dot or
// space is dropped from the name. It is a pure check, the same on every
// system, so that a store made on one system is usable on another.
func WindowsReserved(name string) bool {
	if name == "" {
		return false
	}
	if last := name[len(name)-1]; last == '.' || last == ' ' {
		return true
	}
	base, _, _ := strings.Cut(name, ".")
	base = strings.TrimRight(base, " ")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) < 4 {
		return false
	}
	switch strings.ToUpper(base[:3]) {
	case "COM", "LPT":
	default:
		return false
	}
	switch digit := base[3:]; digit {
	case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}
