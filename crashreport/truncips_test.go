package crashreport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// bigIPS builds an .ips report laid out as ReportCrash writes one (thread
// state first, then the frames, one compact object each), with one
// thread of n frames and usedImages at the end. It returns the report and
// the offset just past each frame object.
func bigIPS(n int) ([]byte, []int) {
	var b bytes.Buffer
	b.WriteString(`{"app_name":"Big","bug_type":"309","os_version":"macOS 14.0 (23A344)","name":"Big"}` + "\n")
	b.WriteString("{\n  \"procName\" : \"Big\",\n  \"cpuType\" : \"ARM-64\",\n  \"faultingThread\" : 0,\n")
	b.WriteString(`  "threads" : [{"triggered":true,"id":1234,"threadState":{"x":[`)
	for i := 0; i < 29; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"value":%d}`, 4294967296+i*4096)
	}
	b.WriteString(`],"flavor":"ARM_THREAD_STATE64","lr":{"value":4294983680},"pc":{"value":4294983700}},"queue":"com.apple.main-thread","frames":[`)
	var ends []int
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"imageOffset":%d,"symbol":"function_number_%d","symbolLocation":%d,"imageIndex":0}`, 16384+i*64, i, 8+i%32)
		ends = append(ends, b.Len())
	}
	b.WriteString("]}],\n  \"usedImages\" : [{\"source\":\"P\",\"arch\":\"arm64\",\"base\":4294967296,\"size\":1048576,\"uuid\":\"01d2a9d5-1f8a-35c8-9228-7c7cca13c5fc\",\"path\":\"/Big\",\"name\":\"Big\"}]\n}\n")
	return b.Bytes(), ends
}

// TestTruncatedIPSKeepsFrames: an .ips cut inside a thread keeps the thread
// and every frame of it that was complete. Before frames were streamed,
// the thread was decoded whole and a cut anywhere inside it lost it all.
func TestTruncatedIPSKeepsFrames(t *testing.T) {
	data, ends := bigIPS(200)
	const cut = 9000
	complete := 0
	for _, e := range ends {
		if e <= cut {
			complete++
		}
	}
	if complete < 45 || ends[len(ends)-1] <= cut {
		t.Fatalf("test input: %d frames end before byte %d and the thread ends at %d; want at least 45 and after the cut", complete, cut, ends[len(ends)-1])
	}
	whole, err := ParseIPS(data)
	if err != nil || len(whole.Threads) != 1 || len(whole.Threads[0].Frames) != 200 {
		t.Fatalf("ParseIPS(whole) = %d threads, %v; want 1 thread of 200 frames", len(whole.Threads), err)
	}

	for _, c := range []int{cut, ends[complete-1], ends[complete-1] + 1, ends[complete-1] - 1} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			r, err := ParseIPS(data[:c])
			if err == nil || !strings.Contains(err.Error(), "unexpected end of input") {
				t.Errorf("ParseIPS(first %d bytes) error = %v, want unexpected end of input", c, err)
			}
			if r == nil || len(r.Threads) != 1 {
				t.Fatalf("ParseIPS(first %d bytes) kept no thread; %d frames were complete", c, complete)
			}
			want := 0
			for _, e := range ends {
				if e <= c {
					want++
				}
			}
			th := r.Threads[0]
			if len(th.Frames) != want {
				t.Fatalf("ParseIPS(first %d bytes): %d frames, want %d", c, len(th.Frames), want)
			}
			for i, f := range th.Frames {
				wf := whole.Threads[0].Frames[i]
				if f.ImageOffset != wf.ImageOffset || f.Symbol != wf.Symbol || f.SymbolOffset != wf.SymbolOffset {
					t.Errorf("frame %d = %#x %s+%d, want %#x %s+%d", i, f.ImageOffset, f.Symbol, f.SymbolOffset, wf.ImageOffset, wf.Symbol, wf.SymbolOffset)
				}
			}
			if th.KernelID != 1234 || !th.Crashed || th.Queue != "com.apple.main-thread" || th.Registers == nil {
				t.Errorf("thread fields read before the frames were lost: %+v", th)
			}
			if r.CrashedThread != 0 {
				t.Errorf("CrashedThread = %d, want 0", r.CrashedThread)
			}
		})
	}
}
