package aggregate

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchLine is a stream record of 30 frames in an image set, with the
// string fields, a timestamp, a weight and labels, as a profiler sends
// them.
func benchLine() []byte {
	b := []byte(`{"image_set":"p1","frames":[`)
	for k := range 30 {
		if k > 0 {
			b = append(b, ',')
		}
		if k%2 == 0 {
			b = fmt.Appendf(b, "%d", 0x100000000+k*0x1234)
		} else {
			b = fmt.Appendf(b, `"0x%x"`, 0x180000000+k*0x4321)
		}
	}
	return append(b, `],"thread":"main","device":"iPhone15,2","os_version":"17.4 (21E219)","app_version":"2.3.1 (4567)","timestamp":"2026-11-26T01:02:03.456Z","weight":7,"labels":{"api":"checkout","region":"eu"}}`...)
}

// BenchmarkDecodeLine measures the reading of one stream record by the
// hand-written scanner (decodeFast) beside json.Unmarshal alone, which
// reads the records the scanner is not sure of.
func BenchmarkDecodeLine(b *testing.B) {
	line := benchLine()
	b.Run("decodeFast", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		var rec Record
		for b.Loop() {
			if err := decodeFast(line, &rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			var rec Record
			if err := json.Unmarshal(line, &rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}
