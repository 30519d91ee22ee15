package crashreport

import (
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds the hand-written samples and, when the corpus is present,
// the real reports of the given extensions (read at fuzz time, never
// copied into the repository).
func addSeeds(f *testing.F, samples []string, corpusFiles []string) {
	for _, s := range samples {
		f.Add(readTestdata(f, s))
	}
	root, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return
		}
		root = parent
	}
	corpus := filepath.Join(root, "..", "shared", "corpus")
	for _, rel := range corpusFiles {
		if data, err := os.ReadFile(filepath.Join(corpus, rel)); err == nil {
			f.Add(data)
		}
	}
}

func ksFiles(ext string) []string {
	var out []string
	for _, n := range ksNames {
		out = append(out, ksReports+n+ext)
	}
	return out
}

// fuzzCheck runs parse and asserts what must hold for any input.
func fuzzCheck(t *testing.T, parse func([]byte) (*Report, error), data []byte) {
	r, err := parse(data)
	if r == nil && err == nil {
		t.Fatal("nil report and nil error")
	}
	if r == nil {
		return
	}
	checkInvariants(t, r)
	for i, th := range r.Threads {
		if len(th.Frames) > MaxFrames {
			t.Fatalf("thread %d: %d frames, more than MaxFrames", i, len(th.Frames))
		}
		if st := stackOf(th); st != nil && st.Start+uint64(len(st.Data)) < st.Start || th.StackHigh < th.StackLow {
			t.Fatalf("thread %d: stack dump wraps around the address space", i)
		}
	}
	if len(r.Threads) > MaxThreads || len(r.Images) > MaxImages {
		t.Fatalf("%d threads, %d images: over the limits", len(r.Threads), len(r.Images))
	}
	// Parse must agree with the format's own parser whenever it detects it.
	if f, ok := Detect(data); ok && f == r.Format && f != FormatCrash {
		r2, _ := Parse(data)
		if r2 == nil || len(r2.Threads) != len(r.Threads) {
			t.Fatalf("Parse and the %s parser disagree", f)
		}
	}
}

func FuzzParseIPS(f *testing.F) {
	addSeeds(f, []string{"arm64.ips"}, []string{macsymCrashes + "single-target-crash.ips"})
	f.Add([]byte(ipsHeader + `{"threads":[{"frames":[{"imageIndex":-1}],"threadState":{"x":[{"value":-1}],"flavor":"x86_THREAD_STATE"}}],"usedImages":[{}],"faultingThread":0}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, ParseIPS, data) })
}

func FuzzParseCrash(f *testing.F) {
	addSeeds(f, []string{"arm64.crash"}, append(ksFiles(".txt"), macsymCrashes+"single-target-crash.crash"))
	f.Add([]byte("Thread 0 Crashed:\n0 a 0x1 0x0 + 1\n\nThread 0 crashed with X86 Thread State (32-bit):\n eip: 0x1\n\nBinary Images:\n0x0 - ??? a <> \nStack Dump (0x1-0x0):\n00\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, ParseCrash, data) })
}

func FuzzParseKSCrash(f *testing.F) {
	addSeeds(f, []string{"x86_64-kscrash.json"}, ksFiles(".json"))
	f.Add([]byte(`[{"binary_images":[{"image_addr":"0x10","cpu_type":12}],"crash":{"threads":[{"stack":{"dump_start":18446744073709551615,"dump_end":0,"contents":""}}]},"recrash_report":{"crash":{"crashed_thread":{}}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, ParseKSCrash, data) })
}
