package peek

import "testing"

// BenchmarkQueryRare searches a retained ~46 MiB log for a string it does
// not hold: the cost of one pass over the value.
func BenchmarkQueryRare(b *testing.B) {
	_, v := retainValueB(b)
	for b.Loop() {
		if _, err := Query(v, QueryOptions{Query: "rare-marker-7f3a"}, DefaultCaps); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(v.Size())
}

// BenchmarkQueryCommon searches for a string on about one line in five.
func BenchmarkQueryCommon(b *testing.B) {
	_, v := retainValueB(b)
	for b.Loop() {
		if _, err := Query(v, QueryOptions{Query: "level=3"}, DefaultCaps); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(v.Size())
}

// BenchmarkLinesEnd reads the last 400 lines of the value.
func BenchmarkLinesEnd(b *testing.B) {
	_, v := retainValueB(b)
	n := v.Desc.Lines
	for b.Loop() {
		if _, err := Lines(v, n-399, n, DefaultCaps); err != nil {
			b.Fatal(err)
		}
	}
}
