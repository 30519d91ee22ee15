package hangreport

import (
	"io"
	"os"
	"strings"
	"testing"
)

// BenchmarkParse parses the spindump testdata repeated to about 1 MiB.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/spindump.txt")
	if err != nil {
		b.Fatal(err)
	}
	big := []byte(strings.Repeat(string(data), (1<<20)/len(data)+1))
	b.SetBytes(int64(len(big)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, _ := Parse(big)
		if err := r.Write(io.Discard, nil, StyleReport); err != nil {
			b.Fatal(err)
		}
	}
}
