package plcrash_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/internal/plcrashgen"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/plcrash"
	"google.golang.org/protobuf/encoding/protowire"
)

// corpusSample is PLCrashReporter's own sample report.
const corpusSample = "plcrashreporter/fuzz_report.plcrash"

func readCorpus(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(testcorpus.File(t, corpusSample))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCorpusSampleMatchesProtobuf reads PLCrashReporter's own sample
// report and compares every field with the protobuf library's own
// decoding of the same bytes.
func TestCorpusSampleMatchesProtobuf(t *testing.T) {
	data := readCorpus(t)
	got, err := plcrash.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want, err := plcrashgen.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse differs from proto.Unmarshal (-want +got):\n%s", diff)
	}
	if len(got.Threads) == 0 || len(got.Images) == 0 || got.Signal.Name == "" {
		t.Fatalf("sample read as %d threads, %d images, signal %q: want all three", len(got.Threads), len(got.Images), got.Signal.Name)
	}

	// The dump model keeps what the report says.
	d := got.Dump()
	if d.Crash == nil || d.Crash.Signal != want.Signal.Name || d.Crash.Address != want.Signal.Address {
		t.Errorf("Dump().Crash = %+v, want signal %s at %#x", d.Crash, want.Signal.Name, want.Signal.Address)
	}
	if len(d.Images) != len(want.Images) || len(d.Threads) != len(want.Threads) {
		t.Errorf("Dump() has %d images and %d threads, want %d and %d", len(d.Images), len(d.Threads), len(want.Images), len(want.Threads))
	}
	// The sample predates the images' code types: its architecture is the
	// legacy field's.
	if d.Arch == nil || (want.System.Architecture == plcrash.ArchX86_32) != (d.Arch.Name == "i386") {
		t.Errorf("Dump().Arch = %v for legacy architecture %d", d.Arch, want.System.Architecture)
	}
	for ti, th := range d.Threads {
		for fi, f := range th.Frames {
			pc := want.Threads[ti].Frames[fi].PC
			if f.Address != pc {
				t.Errorf("thread %d frame %d: address %#x, want %#x (no PAC on %s)", ti, fi, f.Address, pc, d.Arch.Name)
			}
			if f.ImageIndex < 0 {
				continue
			}
			im := want.Images[f.ImageIndex]
			if pc < im.Base || pc-im.Base >= im.Size || f.ImageOffset != pc-im.Base {
				t.Errorf("thread %d frame %d: %#x placed in %s [%#x, +%#x) at offset %#x", ti, fi, pc, im.Name, im.Base, im.Size, f.ImageOffset)
			}
		}
	}
}

// randomReport makes a report with every field the schema has, some left
// out at random.
func randomReport(rng *rand.Rand) *plcrash.Report {
	str := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz/._ +ÄΩ"
		b := make([]rune, rng.IntN(20))
		runes := []rune(letters)
		for i := range b {
			b[i] = runes[rng.IntN(len(runes))]
		}
		return string(b)
	}
	u64 := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return rng.Uint64()
		}
		return rng.Uint64() >> rng.IntN(64)
	}
	frames := func() []plcrash.Frame {
		var fs []plcrash.Frame
		for range rng.IntN(12) {
			f := plcrash.Frame{PC: u64()}
			if rng.IntN(3) == 0 {
				f.Symbol = &plcrash.Symbol{Name: str(), Start: u64()}
				if rng.IntN(2) == 0 {
					f.Symbol.End, f.Symbol.HasEnd = u64(), true
				}
			}
			fs = append(fs, f)
		}
		return fs
	}
	r := &plcrash.Report{
		Version: plcrash.Version,
		System: plcrash.SystemInfo{OS: plcrash.OperatingSystem(rng.IntN(6)), OSVersion: str(),
			Architecture: plcrash.Architecture(rng.IntN(8)), Timestamp: int64(u64()), OSBuild: str()},
		Application: plcrash.ApplicationInfo{Identifier: str(), Version: str(), MarketingVersion: str()},
		Signal:      plcrash.Signal{Name: str(), Code: str(), Address: u64()},
		CustomData:  str(),
	}
	for i := range rng.IntN(6) {
		th := plcrash.Thread{Number: uint32(i), Crashed: rng.IntN(4) == 0, Frames: frames()}
		for range rng.IntN(5) {
			th.Registers = append(th.Registers, plcrash.Register{Name: str(), Value: u64()})
		}
		r.Threads = append(r.Threads, th)
	}
	for range rng.IntN(6) {
		im := plcrash.BinaryImage{Base: u64(), Size: u64(), Name: str()}
		if rng.IntN(4) > 0 {
			for k := range im.UUID {
				im.UUID[k] = byte(rng.Uint32())
			}
			im.HasUUID = true
		}
		if rng.IntN(4) > 0 {
			im.CodeType = &plcrash.Processor{Encoding: uint64(rng.IntN(2)), Type: u64(), Subtype: u64()}
		}
		r.Images = append(r.Images, im)
	}
	if rng.IntN(2) == 0 {
		r.Exception = &plcrash.Exception{Name: str(), Reason: str(), Frames: frames()}
	}
	if rng.IntN(2) == 0 {
		r.Signal.Mach = &plcrash.MachException{Type: u64()}
		for range rng.IntN(3) {
			r.Signal.Mach.Codes = append(r.Signal.Mach.Codes, u64())
		}
	}
	if rng.IntN(3) > 0 {
		r.Process = &plcrash.ProcessInfo{Name: str(), PID: rng.Uint32(), Path: str(), ParentName: str(), ParentPID: rng.Uint32(), Native: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			r.Process.StartTime, r.Process.HasStartTime = u64(), true
		}
	}
	if rng.IntN(3) > 0 {
		r.Machine = &plcrash.MachineInfo{Model: str(), Processor: plcrash.Processor{Encoding: 1, Type: u64(), Subtype: u64()},
			ProcessorCount: rng.Uint32(), LogicalProcessorCount: rng.Uint32()}
	}
	if rng.IntN(3) > 0 {
		r.Info = &plcrash.ReportInfo{UserRequested: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			r.Info.UUID[3], r.Info.HasUUID = byte(rng.Uint32()), true
		}
	}
	return r
}

// TestRoundTrip writes reports through the protobuf library and reads
// them back with Parse, on a fresh seed each run.
func TestRoundTrip(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 31))
	for i := range 200 {
		want := randomReport(rng)
		data, err := plcrashgen.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := plcrash.Parse(data)
		if err != nil {
			t.Fatalf("report %d: Parse: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("report %d (seed %d): Parse differs from what was written (-want +got):\n%s", i, seed, diff)
		}
		got.Dump() // must not panic on any values
	}
}

// TestPackedMachCodes: proto2 writes repeated varints unpacked, but a
// reader must take the packed form too.
func TestPackedMachCodes(t *testing.T) {
	var mach []byte
	mach = protowire.AppendTag(mach, 1, protowire.VarintType)
	mach = protowire.AppendVarint(mach, 1)
	var codes []byte
	codes = protowire.AppendVarint(codes, 1)
	codes = protowire.AppendVarint(codes, 0x4141414141)
	mach = protowire.AppendTag(mach, 2, protowire.BytesType)
	mach = protowire.AppendBytes(mach, codes)
	var sig []byte
	sig = protowire.AppendTag(sig, 4, protowire.BytesType)
	sig = protowire.AppendBytes(sig, mach)
	data := []byte(plcrash.Magic + "\x01")
	data = protowire.AppendTag(data, 6, protowire.BytesType)
	data = protowire.AppendBytes(data, sig)
	r, err := plcrash.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := &plcrash.MachException{Type: 1, Codes: []uint64{1, 0x4141414141}}
	if diff := cmp.Diff(want, r.Signal.Mach); diff != "" {
		t.Errorf("packed codes (-want +got):\n%s", diff)
	}
	if d := r.Dump(); d.Crash.Type != "EXC_BAD_ACCESS" {
		t.Errorf("Crash.Type = %q, want EXC_BAD_ACCESS", d.Crash.Type)
	}
}

// TestPACStripped: arm64e frames signed in their high bits lose the
// signature, with the mask the images' end gives; an x86_64 report keeps
// its addresses as written.
func TestPACStripped(t *testing.T) {
	const base = 0x1cc700000
	report := func(cpuType, subtype uint64) *plcrash.Report {
		return &plcrash.Report{
			Version: 1,
			Images: []plcrash.BinaryImage{{Base: base, Size: 0x100000, Name: "/private/var/App.app/App",
				CodeType: &plcrash.Processor{Encoding: plcrash.TypeEncodingMach, Type: cpuType, Subtype: subtype}}},
			Threads:   []plcrash.Thread{{Crashed: true, Frames: []plcrash.Frame{{PC: base + 0x6c4}, {PC: 0x5a6b9101cc7ac6c4}, {PC: 0x2b0e0001cc7000a8}}}},
			Exception: &plcrash.Exception{Name: "NSInvalidArgumentException", Frames: []plcrash.Frame{{PC: 0x7f3c8001cc701234}}},
		}
	}
	for _, tc := range []struct {
		name             string
		cpuType, subtype uint64
		want             []uint64
		wantException    uint64
	}{
		{"arm64e", 0x0100000c, 2, []uint64{base + 0x6c4, 0x1cc7ac6c4, 0x1cc7000a8}, 0x1cc701234},
		{"arm64", 0x0100000c, 0, []uint64{base + 0x6c4, 0x1cc7ac6c4, 0x1cc7000a8}, 0x1cc701234},
		{"x86_64", 0x01000007, 3, []uint64{base + 0x6c4, 0x5a6b9101cc7ac6c4, 0x2b0e0001cc7000a8}, 0x7f3c8001cc701234},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := plcrashgen.Encode(report(tc.cpuType, tc.subtype))
			if err != nil {
				t.Fatal(err)
			}
			r, err := plcrash.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			d := r.Dump()
			if d.Arch == nil || d.Arch.Name != tc.name {
				t.Fatalf("Arch = %v, want %s", d.Arch, tc.name)
			}
			var got []uint64
			for _, f := range d.Threads[0].Frames {
				got = append(got, f.Address)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("frame addresses (-want +got):\n%s", diff)
			}
			if e := d.LastExceptionBacktrace[0].Address; e != tc.wantException {
				t.Errorf("exception frame %#x, want %#x", e, tc.wantException)
			}
			// A stripped address lands in the image.
			if tc.name != "x86_64" && d.Threads[0].Frames[1].ImageIndex != 0 {
				t.Errorf("stripped frame not placed in its image: %+v", d.Threads[0].Frames[1])
			}
		})
	}
}

// TestNotAReport: input that is not a version 1 report gives no report
// and an error saying why.
func TestNotAReport(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "no \"plcrash\" magic"},
		{"text", "hello, world", "no \"plcrash\" magic"},
		{"magic only", "plcrash", "version: file ends before the version byte"},
		{"version 2", "plcrash\x02\x0a\x00", "offset 7: version: format version 2; only 1 is known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := plcrash.Parse([]byte(tc.data))
			if r != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, %v; want no report and an error containing %q", r, err, tc.want)
			}
		})
	}
}

// sampleForTruncation is a generated report with every kind of field, and
// PLCrashReporter's own sample when the corpus is present.
func truncationInputs(t *testing.T) map[string][]byte {
	rng := rand.New(rand.NewPCG(7, 7))
	r := randomReport(rng)
	for len(r.Threads) < 2 || r.Exception == nil || r.Process == nil {
		r = randomReport(rng)
	}
	data, err := plcrashgen.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{"generated": data}
	if dir, err := testcorpus.Find(); err == nil {
		if b, err := os.ReadFile(dir + "/" + corpusSample); err == nil {
			inputs["corpus sample"] = b
		}
	}
	return inputs
}

// TestTruncatedAtEveryByte cuts reports at every byte: no panic, an error
// naming a field at an offset inside what was given, and every thread and
// image before the cut kept as the whole report has it.
func TestTruncatedAtEveryByte(t *testing.T) {
	for name, data := range truncationInputs(t) {
		t.Run(name, func(t *testing.T) {
			full, err := plcrash.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; n < len(data); n++ {
				r, err := plcrash.Parse(data[:n])
				if n < len(plcrash.Magic)+1 {
					if r != nil || err == nil {
						t.Fatalf("cut at %d: Parse = %v, %v; want an error and no report", n, r, err)
					}
					continue
				}
				if r == nil {
					t.Fatalf("cut at %d: no report (%v)", n, err)
				}
				r.Dump()
				if n == len(plcrash.Magic)+1 {
					continue // an empty message is a valid, empty report
				}
				var fe *plcrash.FormatError
				if err != nil && (!errors.As(err, &fe) || fe.Off > int64(n) || fe.Field == "") {
					t.Fatalf("cut at %d: error %v, want a FormatError naming a field at an offset up to %d", n, err, n)
				}
				if len(r.Threads) > len(full.Threads) || len(r.Images) > len(full.Images) {
					t.Fatalf("cut at %d: more threads or images than the whole report", n)
				}
				// Every thread but the last read is whole; the last holds
				// a prefix of its frames.
				for i, th := range r.Threads {
					want := full.Threads[i]
					if i < len(r.Threads)-1 {
						if !reflect.DeepEqual(want, th) {
							t.Fatalf("cut at %d: thread %d (-whole +read):\n%s", n, i, cmp.Diff(want, th))
						}
						continue
					}
					if len(th.Frames) > len(want.Frames) {
						t.Fatalf("cut at %d: thread %d has %d frames, the whole report %d", n, i, len(th.Frames), len(want.Frames))
					}
					for k := 0; k+1 < len(th.Frames); k++ {
						if !reflect.DeepEqual(want.Frames[k], th.Frames[k]) {
							t.Fatalf("cut at %d: thread %d frame %d (-whole +read):\n%s", n, i, k, cmp.Diff(want.Frames[k], th.Frames[k]))
						}
					}
				}
				for i := 0; i+1 < len(r.Images); i++ {
					if !reflect.DeepEqual(full.Images[i], r.Images[i]) {
						t.Fatalf("cut at %d: image %d (-whole +read):\n%s", n, i, cmp.Diff(full.Images[i], r.Images[i]))
					}
				}
			}
		})
	}
}

// TestCrashOfCutReport: the signal comes after the threads and images in
// the file; a report cut before it says nothing of the crash rather than
// a crash at address 0.
func TestCrashOfCutReport(t *testing.T) {
	data, err := os.ReadFile("testdata/chain-arm64-O1-deepest.plcrash")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := plcrash.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	c := whole.Dump().Crash
	if c == nil || c.Type != "EXC_BAD_ACCESS" || c.Signal != "SIGSEGV" || c.Codes != "SEGV_MAPERR at 0x10" || !c.HasAddress || c.Address != 0x10 {
		t.Fatalf("whole report: crash %+v", c)
	}
	cut, err := plcrash.Parse(data[:700])
	if err == nil || len(cut.Threads) == 0 {
		t.Fatalf("cut report: %d threads, error %v; want the threads and an error", len(cut.Threads), err)
	}
	if c := cut.Dump().Crash; c != nil {
		t.Errorf("report cut before its signal: crash %+v, want none", c)
	}
}
