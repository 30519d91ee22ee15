package crashreport

import (
	"io"
	"testing"
)

// BenchmarkWriteSymbolicated measures writing a report back with every
// frame named (one inlined function each): KSCrash's CrashInHandler text
// report (79 KB), MacSymbolicator's .ips, and a built .ips of 2,000 frames.
func BenchmarkWriteSymbolicated(b *testing.B) {
	big, _ := bigIPS(2000)
	inputs := []struct {
		name string
		data []byte
	}{
		{ksReports + "CrashInHandler.txt", readCorpus(b, ksReports+"CrashInHandler.txt")},
		{macsymCrashes + "single-target-crash.ips", readCorpus(b, macsymCrashes+"single-target-crash.ips")},
		{"bigIPS(2000)", big},
	}
	name := func(FrameRef) (FrameName, bool) { return fuzzName, true }
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := WriteSymbolicated(io.Discard, in.data, "", name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
