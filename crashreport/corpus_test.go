package crashreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/uuid"
)

// corpusDir returns ../shared/corpus beside the repository, skipping the
// test when it is absent: a user's clone does not have it, CI does.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return testcorpus.Dir(tb)
}

func readCorpus(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const (
	macsymCrashes = "macsymbolicator/MacSymbolicatorTests/Resources/Crashes/"
	ksReports     = "kscrash/Example-Reports/"
)

// ksNames are the KSCrash example reports; each exists as .json (KSCrash's
// own format) and .txt (its Apple-style rendering of the same crash).
var ksNames = []string{"Abort", "BadPointer", "CorruptMemory", "CorruptObject", "CrashInHandler",
	"MainThreadDeadlock", "NSException", "StackOverflow", "Zombie", "ZombieNSException"}

func TestCorpusCounts(t *testing.T) {
	// Counts read off the files by hand (and with python's json module).
	tests := []struct {
		name          string
		file          string
		format        Format
		threads       int
		images        int
		crashed       int
		crashedFrames int
	}{
		{"ips", macsymCrashes + "single-target-crash.ips", FormatIPS, 1, 3, 0, 3},
		{"crash", macsymCrashes + "single-target-crash.crash", FormatCrash, 1, 3, 0, 3},
		{"Abort.json", ksReports + "Abort.json", FormatKSCrash, 8, 123, 0, 19},
		{"BadPointer.json", ksReports + "BadPointer.json", FormatKSCrash, 8, 123, 0, 16},
		{"CorruptMemory.json", ksReports + "CorruptMemory.json", FormatKSCrash, 7, 123, 0, 34},
		{"CorruptObject.json", ksReports + "CorruptObject.json", FormatKSCrash, 8, 123, 0, 23},
		{"CrashInHandler.json", ksReports + "CrashInHandler.json", FormatKSCrash, 8, 123, 0, 16},
		{"MainThreadDeadlock.json", ksReports + "MainThreadDeadlock.json", FormatKSCrash, 7, 123, 0, 14},
		{"NSException.json", ksReports + "NSException.json", FormatKSCrash, 8, 123, 0, 23},
		{"StackOverflow.json", ksReports + "StackOverflow.json", FormatKSCrash, 7, 123, 0, 50},
		{"Zombie.json", ksReports + "Zombie.json", FormatKSCrash, 7, 123, 0, 11},
		{"ZombieNSException.json", ksReports + "ZombieNSException.json", FormatKSCrash, 7, 123, 0, 17},
		{"Abort.txt", ksReports + "Abort.txt", FormatCrash, 8, 123, 0, 19},
		{"StackOverflow.txt", ksReports + "StackOverflow.txt", FormatCrash, 7, 123, 0, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := readCorpus(t, tt.file)
			if f, ok := Detect(data); f != tt.format || !ok {
				t.Errorf("Detect = %q, %v, want %q, true", f, ok, tt.format)
			}
			r, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := []int{len(r.Threads), len(r.Images), r.CrashedThread, len(r.Threads[r.CrashedThread].Frames)}
			want := []int{tt.threads, tt.images, tt.crashed, tt.crashedFrames}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[threads images crashed crashedFrames] mismatch (-want +got):\n%s", diff)
			}
			if r.Arch == nil {
				t.Errorf("Arch = nil, want the report's architecture")
			}
			checkInvariants(t, r)
		})
	}
}

// checkInvariants asserts what every parsed report must satisfy, whatever
// the input: consumers index Images with ImageIndex without checking.
func checkInvariants(t testing.TB, r *Report) {
	t.Helper()
	if r.CrashedThread < -1 || r.CrashedThread >= len(r.Threads) {
		t.Fatalf("CrashedThread = %d, want -1..%d", r.CrashedThread, len(r.Threads)-1)
	}
	check := func(what string, frames []Frame) {
		for i, f := range frames {
			if f.ImageIndex < -1 || f.ImageIndex >= len(r.Images) {
				t.Fatalf("%s frame %d: ImageIndex = %d, want -1..%d", what, i, f.ImageIndex, len(r.Images)-1)
			}
			if f.ImageIndex >= 0 && f.ImageLoadAddress != 0 {
				t.Fatalf("%s frame %d: ImageLoadAddress %#x set on a frame whose image is listed", what, i, f.ImageLoadAddress)
			}
			if f.ImageIndex >= 0 && f.Address-r.Images[f.ImageIndex].LoadAddress != f.ImageOffset {
				t.Fatalf("%s frame %d: ImageOffset %#x != Address %#x - load address %#x", what, i, f.ImageOffset, f.Address, r.Images[f.ImageIndex].LoadAddress)
			}
		}
	}
	for i, th := range r.Threads {
		check("thread "+th.Name, th.Frames)
		if th.Registers != nil && th.Registers.Arch == nil {
			t.Fatalf("thread %d: registers without an architecture", i)
		}
	}
	check("last exception", r.LastExceptionBacktrace)
	if r.RecrashThread != nil {
		check("recrash", r.RecrashThread.Frames)
	}
}

// The .ips and .crash files from MacSymbolicator describe the same crash;
// the two parsers must agree on it.
func TestIPSAndCrashAgree(t *testing.T) {
	ips, err := ParseIPS(readCorpus(t, macsymCrashes+"single-target-crash.ips"))
	if err != nil {
		t.Fatalf("ParseIPS: %v", err)
	}
	txt, err := ParseCrash(readCorpus(t, macsymCrashes+"single-target-crash.crash"))
	if err != nil {
		t.Fatalf("ParseCrash: %v", err)
	}
	addrs := func(r *Report) []uint64 {
		var out []uint64
		for _, f := range r.Threads[r.CrashedThread].Frames {
			out = append(out, f.Address)
		}
		return out
	}
	// From the .crash text: 0x10e311e45, 0x10e311e80, 0x11beb451e.
	want := []uint64{0x10e311e45, 0x10e311e80, 0x11beb451e}
	if diff := cmp.Diff(want, addrs(ips)); diff != "" {
		t.Errorf(".ips crashed-thread addresses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(addrs(ips), addrs(txt)); diff != "" {
		t.Errorf("crashed-thread addresses .ips vs .crash (-ips +crash):\n%s", diff)
	}
	type img struct {
		UUID uuid.UUID
		Load uint64
	}
	imgs := func(r *Report) []img {
		var out []img
		for _, im := range r.Images {
			out = append(out, img{im.UUID, im.LoadAddress})
		}
		return out
	}
	if diff := cmp.Diff(imgs(ips), imgs(txt)); diff != "" {
		t.Errorf("images .ips vs .crash (-ips +crash):\n%s", diff)
	}
	if got, want := ips.Images[0].UUID, mustUUID(t, "01D2A9D5-1F8A-35C8-9228-7C7CCA13C5FC"); got != want {
		t.Errorf("ips image 0 UUID = %v, want %v", got, want)
	}
	// The text report leaves out the segment registers and the exception
	// state, so compare the general registers both give.
	it, tt := ips.Threads[ips.CrashedThread], txt.Threads[txt.CrashedThread]
	for _, name := range []string{"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "rflags"} {
		iv, iok := it.Registers.Get(name)
		tv, tok := tt.Registers.Get(name)
		if !iok || !tok || iv != tv {
			t.Errorf("register %s: .ips %#x (%v), .crash %#x (%v)", name, iv, iok, tv, tok)
		}
	}
	if pc, _ := it.Registers.PC(); pc != want[0] {
		t.Errorf("ips PC = %#x, want frame 0's address %#x", pc, want[0])
	}
	if diff := cmp.Diff(ips.Exception, txt.Exception); diff != "" {
		t.Errorf("exception .ips vs .crash (-ips +crash):\n%s", diff)
	}
	if ips.Arch != txt.Arch || ips.Process != txt.Process || ips.PID != txt.PID || ips.OS != txt.OS {
		t.Errorf("header: .ips %v %q %d %q, .crash %v %q %d %q", ips.Arch, ips.Process, ips.PID, ips.OS, txt.Arch, txt.Process, txt.PID, txt.OS)
	}
}

// frameKey is what a KSCrash .json and its .txt rendering both say of a frame.
type frameKey struct {
	Address      uint64
	ImageName    string
	ImageOffset  uint64
	Symbol       string
	SymbolOffset uint64
}

func frameKeys(frames []Frame) []frameKey {
	var out []frameKey
	for _, f := range frames {
		out = append(out, frameKey{f.Address, f.ImageName, f.ImageOffset, f.Symbol, f.SymbolOffset})
	}
	return out
}

// Each KSCrash example exists in both of KSCrash's formats: the JSON and
// text parsers must read the same threads, frames, images and registers.
func TestKSCrashJSONAndTextAgree(t *testing.T) {
	for _, name := range ksNames {
		t.Run(name, func(t *testing.T) {
			js, err := ParseKSCrash(readCorpus(t, ksReports+name+".json"))
			if err != nil {
				t.Fatalf("ParseKSCrash: %v", err)
			}
			txt, err := ParseCrash(readCorpus(t, ksReports+name+".txt"))
			if err != nil {
				t.Fatalf("ParseCrash: %v", err)
			}
			checkInvariants(t, js)
			checkInvariants(t, txt)
			if len(js.Threads) != len(txt.Threads) {
				t.Fatalf("threads: json %d, txt %d", len(js.Threads), len(txt.Threads))
			}
			for i := range js.Threads {
				if diff := cmp.Diff(frameKeys(js.Threads[i].Frames), frameKeys(txt.Threads[i].Frames)); diff != "" {
					t.Errorf("thread %d frames (-json +txt):\n%s", i, diff)
				}
			}
			type img struct {
				Name string
				UUID uuid.UUID
				Load uint64
				Size uint64
			}
			imgs := func(r *Report) []img {
				var out []img
				for _, im := range r.Images {
					out = append(out, img{im.Name, im.UUID, im.LoadAddress, im.Size})
				}
				return out
			}
			if diff := cmp.Diff(imgs(js), imgs(txt)); diff != "" {
				t.Errorf("images (-json +txt):\n%s", diff)
			}
			jc, tc := js.Threads[js.CrashedThread], txt.Threads[txt.CrashedThread]
			if jc.Registers == nil && tc.Registers != nil {
				// Where the JSON has no registers (the NSException reports:
				// the exception was caught on the thread, with no machine
				// context), KSCrash's text rendering prints a block of
				// zeros. Check that, then compare nothing else.
				for _, n := range tc.Registers.Known() {
					if v, _ := tc.Registers.Get(n); v != 0 {
						t.Errorf("txt register %s = %#x where the json has no registers, want the zero block", n, v)
					}
				}
			} else if diff := cmp.Diff(jc.Registers, tc.Registers, regsTransform); diff != "" {
				t.Errorf("crashed thread registers (-json +txt):\n%s", diff)
			}
			if (jc.Stack == nil) != (tc.Stack == nil) {
				t.Fatalf("crashed thread stack: json %v, txt %v", jc.Stack != nil, tc.Stack != nil)
			}
			if jc.Stack != nil {
				if diff := cmp.Diff(jc.Stack, tc.Stack); diff != "" {
					t.Errorf("crashed thread stack (-json +txt):\n%s", diff)
				}
			}
			if (js.RecrashThread == nil) != (txt.RecrashThread == nil) {
				t.Fatalf("recrash thread: json %v, txt %v", js.RecrashThread != nil, txt.RecrashThread != nil)
			}
			if js.RecrashThread != nil {
				if diff := cmp.Diff(frameKeys(js.RecrashThread.Frames), frameKeys(txt.RecrashThread.Frames)); diff != "" {
					t.Errorf("recrash frames (-json +txt):\n%s", diff)
				}
			}
		})
	}
}

// KSCrash's stack dumps and registers, checked against the raw JSON read
// independently with encoding/json.
func TestKSCrashStackAndRegisters(t *testing.T) {
	for _, name := range ksNames {
		t.Run(name, func(t *testing.T) {
			data := readCorpus(t, ksReports+name+".json")
			var raw struct {
				Crash struct {
					Threads []struct {
						Crashed   bool `json:"crashed"`
						Registers struct {
							Basic map[string]uint64 `json:"basic"`
						} `json:"registers"`
						Stack *struct {
							DumpStart    uint64 `json:"dump_start"`
							DumpEnd      uint64 `json:"dump_end"`
							StackPointer uint64 `json:"stack_pointer"`
							Contents     string `json:"contents"`
						} `json:"stack"`
					} `json:"threads"`
				} `json:"crash"`
			}
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			r, err := ParseKSCrash(data)
			if err != nil {
				t.Fatalf("ParseKSCrash: %v", err)
			}
			for i, rt := range raw.Crash.Threads {
				th := r.Threads[i]
				if len(rt.Registers.Basic) > 0 {
					got := map[string]uint64{}
					for _, n := range th.Registers.Known() {
						got[n], _ = th.Registers.Get(n)
					}
					want := map[string]uint64{}
					for n, v := range rt.Registers.Basic {
						if n == "ip" {
							n = "r12" // KSCrash's name for ARM's r12
						}
						want[n] = v
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("thread %d registers (-want +got):\n%s", i, diff)
					}
				}
				switch st := rt.Stack; {
				case st == nil || st.Contents == "":
					if th.Stack != nil {
						t.Errorf("thread %d: Stack = %d bytes, want none", i, len(stackOf(th).Data))
					}
				default:
					if th.Stack == nil {
						t.Fatalf("thread %d: Stack = nil, want a dump", i)
					}
					if got, want := uint64(len(stackOf(th).Data)), st.DumpEnd-st.DumpStart; got != want {
						t.Errorf("thread %d: len(Stack.Data) = %d, want dump_end - dump_start = %d", i, got, want)
					}
					if stackOf(th).Start != st.DumpStart || stackOf(th).SP != st.StackPointer {
						t.Errorf("thread %d: Stack start %#x SP %#x, want %#x %#x", i, stackOf(th).Start, stackOf(th).SP, st.DumpStart, st.StackPointer)
					}
					if !strings.EqualFold(st.Contents[:16], hexOf(stackOf(th).Data[:8])) {
						t.Errorf("thread %d: first stack bytes %x, want %s", i, stackOf(th).Data[:8], st.Contents[:16])
					}
					// The saved SP lies in the dump; reading a word there works.
					buf := make([]byte, 4)
					if n, err := stackOf(th).ReadMemory(buf, stackOf(th).SP); n != 4 || err != nil {
						t.Errorf("thread %d: ReadMemory(SP %#x) = %d, %v", i, stackOf(th).SP, n, err)
					}
				}
				if th.Crashed != rt.Crashed {
					t.Errorf("thread %d: Crashed = %v, want %v", i, th.Crashed, rt.Crashed)
				}
			}
			// The crashed thread's frame 0 is the PC, unless KSCrash cut the
			// top of a deep stack (StackOverflow: "skipped": 64862).
			ct := r.Threads[r.CrashedThread]
			if ct.SkippedFrames > 0 && name != "StackOverflow" {
				t.Errorf("SkippedFrames = %d; only StackOverflow cuts its backtrace", ct.SkippedFrames)
			}
			if name == "StackOverflow" && ct.SkippedFrames != 64862 {
				t.Errorf("StackOverflow: SkippedFrames = %d, want 64862", ct.SkippedFrames)
			}
			if ct.Registers != nil && ct.SkippedFrames == 0 {
				if pc, _ := ct.Registers.PC(); len(ct.Frames) > 0 && ct.Frames[0].Address != pc {
					t.Errorf("crashed thread frame 0 = %#x, PC = %#x", ct.Frames[0].Address, pc)
				}
			}
		})
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(digits[c>>4])
		sb.WriteByte(digits[c&15])
	}
	return sb.String()
}

// stackOf returns a thread's stack dump; nil when it has none.
func stackOf(th Thread) *StackDump {
	st, _ := th.Stack.(*StackDump)
	return st
}
