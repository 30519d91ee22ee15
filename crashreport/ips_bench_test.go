package crashreport

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchIPS builds an .ips hang report shaped as the aggregation
// benchmark's (bench/aggregate): threads of frames given by image index
// and offset only, over images listed after them.
func benchIPS(threads, frames, images int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := fmt.Appendf(nil, `{"app_name":"Bench","timestamp":"2026-11-01 00:00:00.00 +0000","app_version":"2.0","build_version":"1","bug_type":"309","os_version":"iPhone OS 18.0 (22A1)","incident_id":"00000000-0000-0000-0000-000000000000","name":"Bench"}`+"\n")
	b = fmt.Appendf(b, `{"procName":"Bench","procPath":"/private/var/containers/Bundle/Application/B/Bench.app/image0","pid":100,"cpuType":"ARM-64","modelCode":"iPhone12,1","osVersion":{"train":"iPhone OS 18.0","build":"22A1"},`+
		`"bundleInfo":{"CFBundleShortVersionString":"2.0","CFBundleVersion":"1"},"exception":{"type":"EXC_CRASH","signal":"SIGKILL"},"faultingThread":0,"threads":[`)
	for t := range threads {
		if t > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"frames":[`, t)
		for k := range frames {
			if k > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"imageOffset":%d,"imageIndex":%d}`, 0x1000+rng.IntN(1<<20), rng.IntN(images))
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"usedImages":[`...)
	for k := range images {
		if k > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"source":"P","arch":"arm64","base":%d,"size":%d,"uuid":"%08x-0000-4000-8000-000000000000","path":"/usr/lib/image%d.dylib","name":"image%d"}`,
			0x100000000+k<<28, 1<<28, k+1, k, k)
	}
	return append(b, "]}\n"...)
}

// BenchmarkParseIPSHang measures ParseIPS on one report of 100 threads of
// 30 frames over 20 images, as the aggregation benchmark's .ips files
// are, beside the token stream alone (encoding/json's Decoder and one
// json.Unmarshal per frame), which read every report before readFast.
func BenchmarkParseIPSHang(b *testing.B) {
	data := benchIPS(100, 30, 20)
	for _, bm := range []struct {
		name string
		fast bool
	}{{"ParseIPS", true}, {"stream", false}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseIPS(data, bm.fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
