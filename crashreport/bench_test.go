package crashreport

import "testing"

// BenchmarkParse measures parsing of the largest corpus report of each
// format (KSCrash's CrashInHandler, 79 KB in either format).
func BenchmarkParse(b *testing.B) {
	for _, file := range []string{ksReports + "CrashInHandler.json", ksReports + "CrashInHandler.txt", macsymCrashes + "single-target-crash.ips"} {
		data := readCorpus(b, file)
		b.Run(file, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
