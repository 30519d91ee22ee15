package crashreport

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
)

const ipsHeader = `{"bug_type":"309","name":"T"}` + "\n"

func TestErrors(t *testing.T) {
	manyThreads := func() string {
		var b strings.Builder
		b.WriteString("Process: T [1]\n\n")
		for i := 0; i <= MaxThreads; i++ {
			fmt.Fprintf(&b, "Thread %d:\n\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name        string
		parse       func([]byte) (*Report, error)
		input       string
		wantErr     string // the whole message, or a part of it when partial is set
		partial     bool
		wantThreads int // -1: no report
	}{
		{
			name:  "ips imageIndex out of range",
			parse: ParseIPS,
			input: ipsHeader + `{"threads":[{"frames":[{"imageIndex":0,"imageOffset":1},{"imageIndex":41,"imageOffset":2}]}],` +
				`"usedImages":[{"base":4096,"size":4096,"uuid":"00000000-0000-0000-0000-000000000001","name":"a"},{"base":8192,"size":4096,"name":"b"}]}`,
			wantErr:     "ips: threads[0].frames[1].imageIndex: 41 out of range (2 images)",
			wantThreads: 1,
		},
		{
			name:        "ips faultingThread out of range",
			parse:       ParseIPS,
			input:       ipsHeader + `{"faultingThread":5,"threads":[{"frames":[]}],"usedImages":[]}`,
			wantErr:     "ips: faultingThread: 5 out of range (1 threads)",
			wantThreads: 1,
		},
		{
			name:        "ips frame field of the wrong type",
			parse:       ParseIPS,
			input:       ipsHeader + `{"threads":[{"frames":[{"imageIndex":0,"imageOffset":"zz"}]}],"usedImages":[{"base":1}]}`,
			wantErr:     `ips: threads[0].frames[0].imageOffset: "zz" is not a number`,
			partial:     true,
			wantThreads: 1,
		},
		{
			name:        "ips thread of the wrong type keeps its place",
			parse:       ParseIPS,
			input:       ipsHeader + `{"threads":[{"frames":[]}, 7, {"frames":[]}],"usedImages":[]}`,
			wantErr:     "ips: threads[1]: is a number, want an object",
			wantThreads: 3,
		},
		{
			name:        "ips first line not JSON",
			parse:       ParseIPS,
			input:       "not json\n{}",
			wantErr:     "ips: line 1: metadata: first line is not a JSON object",
			partial:     true,
			wantThreads: -1,
		},
		{
			name:        "ips truncated after a thread",
			parse:       ParseIPS,
			input:       ipsHeader + `{"threads":[{"frames":[{"imageIndex":0,"imageOffset":1}]},{"fra`,
			wantErr:     "ips: threads[1]: unexpected end of input at byte",
			partial:     true,
			wantThreads: 2, // the cut thread keeps its place, without frames

		},
		{
			name:        "ips metadata only",
			parse:       ParseIPS,
			input:       ipsHeader,
			wantErr:     "ips: no report after the metadata line (report truncated?)",
			wantThreads: 0,
		},
		{
			name:        "ips invalid JSON",
			parse:       ParseIPS,
			input:       ipsHeader + `{"threads":[{"frames":[]}] "usedImages":[]}`,
			wantErr:     "ips: invalid JSON at byte",
			partial:     true,
			wantThreads: 1,
		},
		{
			name:  "kscrash stack contents do not fill the dump",
			parse: ParseKSCrash,
			input: `{"binary_images":[],"crash":{"threads":[{"index":0,"crashed":true,` +
				`"stack":{"dump_start":4096,"dump_end":4100,"stack_pointer":4096,"contents":"0011"}}]}}`,
			wantErr:     "kscrash: crash.threads[0].stack.contents: 2 bytes, but dump_end - dump_start = 0x1004 - 0x1000",
			wantThreads: 1,
		},
		{
			name:        "kscrash frame without instruction_addr",
			parse:       ParseKSCrash,
			input:       `{"binary_images":[],"crash":{"threads":[{"backtrace":{"contents":[{"object_addr":1}]}}]}}`,
			wantErr:     "kscrash: crash.threads[0].backtrace.contents[0].instruction_addr: missing",
			wantThreads: 1,
		},
		{
			name:        "kscrash without crash",
			parse:       ParseKSCrash,
			input:       `{"binary_images":[]}`,
			wantErr:     "kscrash: crash: missing (report truncated?)",
			wantThreads: 0,
		},
		{
			name:        "kscrash not an object",
			parse:       ParseKSCrash,
			input:       `"crash"`,
			wantErr:     "kscrash: is a string, want an object",
			partial:     true,
			wantThreads: 0,
		},
		{
			name:        "crash without Binary Images",
			parse:       ParseCrash,
			input:       "Process: T [1]\n\nThread 0 Crashed:\n0   T   0x1000 0x1000 + 0\n",
			wantErr:     "crash: Binary Images: section missing (report truncated?); frames keep the image names their lines give",
			wantThreads: 1,
		},
		{
			name:        "crash stack dump not hex",
			parse:       ParseCrash,
			input:       "Thread 0 Crashed:\n\nBinary Images:\n\nStack Dump (0x10-0x12):\n\nzz\n",
			wantErr:     "crash: line 7: Stack Dump: contents are not hex bytes",
			wantThreads: 1,
		},
		{
			name:        "crash with too many threads",
			parse:       ParseCrash,
			input:       manyThreads(),
			wantErr:     fmt.Sprintf("crash: line %d: Thread: thread %q: bad number or more than %d threads", 3+2*MaxThreads, fmt.Sprint(MaxThreads), MaxThreads),
			partial:     true,
			wantThreads: MaxThreads,
		},
		{
			name:        "unknown format",
			parse:       Parse,
			input:       "hello, world\n",
			wantErr:     ErrUnknownFormat.Error(),
			wantThreads: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.parse([]byte(tt.input))
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			msg := err.Error()
			if tt.partial {
				msg = msg[:min(len(msg), len(tt.wantErr))]
			} else if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i] // errors.Join: compare the first error
			}
			if msg != tt.wantErr {
				t.Errorf("error = %q, want %q", err.Error(), tt.wantErr)
			}
			gotThreads := -1
			if r != nil {
				gotThreads = len(r.Threads)
				checkInvariants(t, r)
			}
			if gotThreads != tt.wantThreads {
				t.Errorf("threads = %d, want %d (-1: no report)", gotThreads, tt.wantThreads)
			}
			var fe *Error
			if tt.wantThreads >= 0 && !errors.As(err, &fe) {
				t.Errorf("error %T is not a *crashreport.Error", err)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte{' '}, MaxReportSize+1)
	for _, parse := range []func([]byte) (*Report, error){ParseIPS, ParseCrash, ParseKSCrash} {
		r, err := parse(big)
		if r != nil || err == nil || !strings.Contains(err.Error(), "more than the 67108864 accepted") {
			t.Errorf("parse(%d bytes) = %v, %v, want nil and a size error", len(big), r, err)
		}
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name   string
		parse  func([]byte) (*Report, error)
		input  string
		format Format
		want   []string
	}{
		{
			name:   "ips bug_type other than 309",
			parse:  ParseIPS,
			input:  `{"bug_type":"288"}` + "\n" + `{"threads":[],"usedImages":[]}`,
			format: FormatIPS,
			want:   []string{"bug_type 288 is not 309 (crash); reading it as a crash report"},
		},
		{
			name:   "legacy ips with a text payload",
			parse:  ParseIPS,
			input:  `{"bug_type":"109"}` + "\nProcess: T [1]\n\nThread 0 Crashed:\n0   T   0x1000 0x1000 + 0\n\nBinary Images:\n0x1000 - 0x1fff T arm64 <00000000000000000000000000000001> /T\n",
			format: FormatCrash,
			want:   []string{"ips metadata (bug_type 109) followed by a text report"},
		},
		{
			name:   "bad UUID",
			parse:  ParseKSCrash,
			input:  `{"binary_images":[{"image_addr":1,"uuid":"nope"}],"crash":{"threads":[]}}`,
			format: FormatKSCrash,
			want:   []string{`binary_images[0].uuid: "nope" is not a UUID`},
		},
		{
			name:   "several reports in one file",
			parse:  ParseKSCrash,
			input:  `[{"binary_images":[],"crash":{"threads":[]}},{"crash":{}}]`,
			format: FormatKSCrash,
			want:   []string{"the file holds more than one report; only the first is read"},
		},
		{
			name:   "text frame numbering",
			parse:  ParseCrash,
			input:  "Thread 0:\n0   T   0x1000 0x1000 + 0\n2   T   0x1004 0x1000 + 4\n\nBinary Images:\n",
			format: FormatCrash,
			want:   []string{"line 3: frame numbered 2 is frame 1 of its thread"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.parse([]byte(tt.input))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if r.Format != tt.format {
				t.Errorf("Format = %q, want %q", r.Format, tt.format)
			}
			if diff := cmp.Diff(tt.want, r.Warnings); diff != "" {
				t.Errorf("Warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		want   Format
		wantOK bool
	}{
		{"ips", ipsHeader + "{}", FormatIPS, true},
		{"ips metadata only", ipsHeader, FormatIPS, true},
		{"ips with BOM and blank lines", "\ufeff\n\n" + ipsHeader + "{}", FormatIPS, true},
		{"kscrash", `{"binary_images":[],"crash":{}}`, FormatKSCrash, true},
		{"kscrash crash and report", `{"crash":{},"report":{}}`, FormatKSCrash, true},
		{"kscrash truncated after its first key", `{"binary_images":[{"ima`, FormatKSCrash, true},
		{"kscrash array", `[{"crash":{},"binary_images":[]}]`, FormatKSCrash, true},
		{"crash header", "Incident Identifier: X\n", FormatCrash, true},
		{"crash process", "Process:   T [1]\n", FormatCrash, true},
		{"crash thread only", "Thread 0 Crashed::  Dispatch queue: q\n", FormatCrash, true},
		// sample and spindump reports have "Process:" and "Binary Images:"
		// too, but are call graphs for package hangreport.
		{"sample", "Analysis of sampling T (pid 1) every 1 millisecond\nProcess:         T [1]\nCall graph:\n    1 Thread_1\nBinary Images:\n", "", false},
		{"sample without its first lines", "Process:         T [1]\n\nCall graph:\n    1 Thread_1\n", "", false},
		{"spindump", "Date/Time:        2024-01-01\nData Source:      Stackshots\nSteps:            1\n\nProcess:          T [1]\n", "", false},
		{"ips with a text crash report", ipsHeader + "Incident Identifier: X\nException Type: EXC_CRASH\n", FormatIPS, true},
		// A microstackshot .ips also has a text body with "Process:" and
		// "Incident Identifier:", but is a call graph for package hangreport.
		{"ips with a microstackshot report", ipsHeader + "Incident Identifier: X\nData Source:      Microstackshots\nProcess: T [1]\n", "", false},
		{"other json", `{"crash":1}`, "", false},
		{"other text", "hello\n", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Detect([]byte(tt.input))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Detect(%.30q) = %q, %v, want %q, %v", tt.input, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestStackDumpReadMemory(t *testing.T) {
	s := &StackDump{Start: 0x1000, Data: []byte{1, 2, 3, 4}}
	tests := []struct {
		name    string
		addr    uint64
		size    int
		want    []byte
		wantErr bool
	}{
		{"inside", 0x1001, 2, []byte{2, 3}, false},
		{"whole", 0x1000, 4, []byte{1, 2, 3, 4}, false},
		{"past the end", 0x1002, 4, []byte{3, 4}, true},
		{"before", 0xfff, 1, nil, true},
		{"after", 0x1004, 1, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, tt.size)
			n, err := s.ReadMemory(buf, tt.addr)
			if (err != nil) != tt.wantErr {
				t.Errorf("ReadMemory(%#x) error = %v, want error %v", tt.addr, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, buf[:n], cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("ReadMemory(%#x) bytes (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

func TestArchByCPU(t *testing.T) {
	tests := []struct {
		cpuType, cpuSubtype uint64
		want                *archregs.Arch
	}{
		{uint64(archregs.CPUTypeARM64), 0, archregs.ARM64},
		{uint64(archregs.CPUTypeARM64), 2 | 0x80000000, archregs.ARM64E}, // capability bits ignored
		{uint64(archregs.CPUTypeARM), 9, archregs.ARMV7},
		{uint64(archregs.CPUTypeARM), 6, archregs.ARMV7}, // armv6 shares the thread state
		{uint64(archregs.CPUTypeX86_64), 8, archregs.X86_64},
		{uint64(archregs.CPUTypeX86), 3, archregs.I386},
		{18, 0, nil}, // PowerPC
	}
	for _, tt := range tests {
		if got := archByCPU(tt.cpuType, tt.cpuSubtype); got != tt.want {
			t.Errorf("archByCPU(%#x, %#x) = %v, want %v", tt.cpuType, tt.cpuSubtype, got, tt.want)
		}
	}
}
