package symbolize

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symstore"
)

// An arm64 snapshot of one library, /app/Lib, whose binary is absent:
// frame 0 at lrLib+0x2010 with its record at FP giving lrLib+0x3004, and
// LR at lrLib+0x1fc0, 20 instructions before PC. In an image with neither
// code nor symbols the walker sets such an LR aside (walker's
// lrAmbiguous); with a Breakpad file listing the functions, LR lies in
// another function than PC and is frame 1.
const (
	lrLib      = 0x100000000
	lrStack    = 0x16f000000
	lrPC       = lrLib + 0x2010
	lrNear     = lrLib + 0x1fc0 // within 128 instructions of PC
	lrFar      = lrLib + 0x1000 // 1028 instructions before PC: kept
	lrRecordRA = lrLib + 0x3004
	lrLibUUID  = "5B000000-0000-0000-0000-000000000001"
)

// lrLibSym lists the library's functions: LR's call site in caller, PC in
// leaf, the record's return address in outer.
const lrLibSym = `MODULE mac arm64 5B0000000000000000000000000000010 Lib
FUNC 1000 100 0 far_caller
FUNC 1f00 100 0 caller
FUNC 2000 100 0 leaf
FUNC 3000 100 0 outer
`

// setAsideSnapshot returns the snapshot with one thread per LR, each with
// the same stack.
func setAsideSnapshot(t testing.TB, lrs ...uint64) *dump.Dump {
	t.Helper()
	stack := make([]byte, 0x40)
	binary.LittleEndian.PutUint64(stack[0x10:], 0) // the record at FP: the last
	binary.LittleEndian.PutUint64(stack[0x18:], lrRecordRA)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"format": "stackimage.snapshot/v1", "arch": "arm64",
"images": [{"name": "/app/Lib", "uuid": %q, "load_address": "%#x", "size": "0x100000"}],
"threads": [`, lrLibUUID, lrLib)
	for i, lr := range lrs {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": %d, "registers": {"pc": "%#x", "lr": "%#x", "fp": "%#x", "sp": "%#x"}, "stack": {"low": "%#x", "high": "%#x"}}`,
			i+1, lrPC, lr, lrStack+0x10, lrStack, lrStack, lrStack+len(stack))
	}
	fmt.Fprintf(&b, `],
"memory": [{"address": "%#x", "data": %q}]}`, lrStack, base64.StdEncoding.EncodeToString(stack))
	snap, err := snapshot.Parse(b.Bytes())
	if err != nil {
		t.Fatalf("snapshot.Parse: %v\n%s", err, b.String())
	}
	return snap.Dump()
}

// lrLibSymbols returns a store holding lrLibSym.
func lrLibSymbols(t *testing.T) *symstore.Symbols {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "Lib", "5B0000000000000000000000000000010", "Lib.sym")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(lrLibSym), 0o644); err != nil {
		t.Fatal(err)
	}
	s := symstore.NewSymbols()
	t.Cleanup(func() { s.Close() })
	if err := s.AddDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return s
}

// returnAddresses lists the machine frames' addresses.
func returnAddresses(frames []symstore.Frame) []uint64 {
	var out []uint64
	for _, f := range frames {
		if !f.Inlined {
			out = append(out, f.Address)
		}
	}
	return out
}

// TestSetAsideLR: the link register the walker set aside reaches the
// symbolized thread, named by its image and offset, for every thread of
// one state (their walk is shared) and for our walk beside a reporter's
// backtrace; an LR far from PC, or a walk with the image's symbols, sets
// nothing aside.
func TestSetAsideLR(t *testing.T) {
	wantName := fmt.Sprintf("Lib + %#x", lrNear-lrLib)
	type want struct {
		frames []uint64
		lr     uint64
		name   string
	}
	aside := want{[]uint64{lrPC, lrRecordRA}, lrNear, wantName}
	for _, tc := range []struct {
		name    string
		symbols bool
		// threads: LR near, LR near (the same state), LR far; then the
		// reporter's backtrace of the first with our walk beside it.
		want []want
	}{
		{"no symbols", false, []want{aside, aside, {[]uint64{lrPC, lrFar, lrRecordRA}, 0, ""}, aside}},
		{"Breakpad symbols", true, []want{
			{[]uint64{lrPC, lrNear, lrRecordRA}, 0, ""},
			{[]uint64{lrPC, lrNear, lrRecordRA}, 0, ""},
			{[]uint64{lrPC, lrFar, lrRecordRA}, 0, ""},
			{[]uint64{lrPC, lrNear, lrRecordRA}, 0, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := setAsideSnapshot(t, lrNear, lrNear, lrFar)
			reported := d.Threads[0]
			reported.Index, reported.ID = 3, 4
			reported.Frames = []dump.Frame{{Address: lrPC, ImageIndex: 0, ImageOffset: lrPC - lrLib},
				{Address: lrRecordRA, ImageIndex: 0, ImageOffset: lrRecordRA - lrLib}}
			d.Threads = append(d.Threads, reported)
			z := &Symbolizer{}
			if tc.symbols {
				z.Symbols = lrLibSymbols(t)
			}
			rep, err := z.Symbolicate(d)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Threads) != len(tc.want) {
				t.Fatalf("%d threads, want %d", len(rep.Threads), len(tc.want))
			}
			for i, th := range rep.Threads {
				w := tc.want[i]
				frames, lr, name := th.Frames, th.SetAsideLR, th.SetAsideLRName
				if i == 3 {
					if th.Walk == nil {
						t.Fatalf("thread %d: no walk beside the reporter's backtrace", th.ID)
					}
					if th.SetAsideLR != 0 {
						t.Errorf("thread %d: reporter's backtrace has SetAsideLR %#x, want it on the walk only", th.ID, th.SetAsideLR)
					}
					frames, lr, name = th.Walk.Frames, th.Walk.SetAsideLR, th.Walk.SetAsideLRName
				}
				if diff := cmp.Diff(w.frames, returnAddresses(frames)); diff != "" {
					t.Errorf("thread %d: frames (-want +got):\n%s", th.ID, diff)
				}
				if lr != w.lr || name != w.name {
					t.Errorf("thread %d: SetAsideLR, SetAsideLRName = %#x, %q; want %#x, %q", th.ID, lr, name, w.lr, w.name)
				}
			}
		})
	}
}

// TestSetAsideLRCutByBound: a thread the report's bound leaves without
// frames shows no frame 0 to have a caller missing after it; one cut
// after frame 0 keeps its set-aside LR.
func TestSetAsideLRCutByBound(t *testing.T) {
	rep, err := (&Symbolizer{MaxTotalFrames: 3}).Symbolicate(setAsideSnapshot(t, lrNear, lrNear))
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, th := range rep.Threads {
		got = append(got, uint64(len(th.Frames)), th.SetAsideLR)
	}
	if diff := cmp.Diff([]uint64{2, lrNear, 1, lrNear}, got); diff != "" {
		t.Errorf("frames and SetAsideLR per thread (-want +got):\n%s", diff)
	}
	rep, err = (&Symbolizer{MaxTotalFrames: 2}).Symbolicate(setAsideSnapshot(t, lrNear, lrNear))
	if err != nil {
		t.Fatal(err)
	}
	if th := rep.Threads[1]; len(th.Frames) != 0 || th.SetAsideLR != 0 {
		t.Errorf("thread left without frames: %d frames, SetAsideLR %#x; want none and 0", len(th.Frames), th.SetAsideLR)
	}
}
