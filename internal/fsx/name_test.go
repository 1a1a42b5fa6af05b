package fsx

import "testing"

func TestWindowsReserved(t *testing.T) {
	for name, want := range map[string]bool{
		"CON": true, "con": true, "Con.txt": true, "NUL.tar.gz": true, "nul .txt": true,
		"PRN": true, "aux": true, "COM1": true, "com9.values": true, "LPT0": true,
		"COM¹": true, "lpt³.txt": true, "CONIN$": true, "conout$.x": true,
		"x.": true, "x ": true, "run.values.": true,
		"": false, "CONS": false, "ICON": false, "COM": false, "COM10": false,
		"LPT": false, "nul_1": false, "aux-3f2a9c01": false, "x.y": false,
		".lock": false, "COMx": false, "c0n": false,
	} {
		if got := WindowsReserved(name); got != want {
			t.Errorf("WindowsReserved(%q) = %v, want %v", name, got, want)
		}
	}
}
