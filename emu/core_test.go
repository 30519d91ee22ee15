//go:build unicorn

package emu

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// deepestPoints are the snapshot points at each architecture's deepest
// function of the chain fixture with frame pointers.
func deepestPoints(t *testing.T) []SnapshotPoint {
	var pts []SnapshotPoint
	for _, pt := range SnapshotPoints {
		if pt.Function == "deepest" && strings.HasPrefix(pt.Output, "chain-") && !strings.HasPrefix(pt.Output, "chain-nofp-") {
			pts = append(pts, pt)
		}
	}
	if len(pts) != 4 {
		t.Fatalf("%d snapshot points at deepest, want one per architecture", len(pts))
	}
	return pts
}

type coreImage struct {
	Name        string
	UUID        string
	LoadAddress uint64
	Size        uint64
}

// TestCoreMatchesCapture captures each architecture's fixture at its
// deepest function both as a snapshot and as a Mach-O core, reads the core
// back with machocore and checks that registers, memory and images are the
// capture's, and that the walk over the core's memory is the walk over the
// snapshot's.
func TestCoreMatchesCapture(t *testing.T) {
	root := repoRoot(t)
	for _, pt := range deepestPoints(t) {
		t.Run(pt.Name, func(t *testing.T) {
			pc, err := CapturePointCore(filepath.Join(root, "fixtures"), pt)
			if err != nil {
				t.Fatal(err)
			}
			snap := pc.Snapshot
			c, err := machocore.Open(bytes.NewReader(pc.Core), int64(len(pc.Core)))
			if err != nil {
				t.Fatalf("machocore.Open: %v", err)
			}
			for _, w := range c.Warnings {
				t.Errorf("warning: %v", w)
			}
			if c.Arch != snap.Arch {
				t.Errorf("Arch = %v, want %v", c.Arch, snap.Arch)
			}
			if len(c.Threads) != 1 || c.Threads[0].Registers == nil {
				t.Fatalf("threads = %+v, want one with registers", c.Threads)
			}
			if diff := cmp.Diff(snap.Threads[0].Registers.Values(), c.Threads[0].Registers.Values()); diff != "" {
				t.Errorf("registers (-capture +core):\n%s", diff)
			}
			for _, r := range snap.Memory.All() {
				got := make([]byte, len(r.Data))
				if n, err := c.Memory.ReadMemory(got, r.Address); n != len(got) || err != nil {
					t.Fatalf("core ReadMemory(%#x, %d) = %d, %v", r.Address, len(got), n, err)
				}
				if !bytes.Equal(got, r.Data) {
					t.Errorf("core memory at %#x differs from the capture", r.Address)
				}
			}
			var want, got []coreImage
			for _, im := range snap.Images {
				size := im.Size
				if strings.HasSuffix(im.Name, ".o") {
					// An object file's mach header is not in any segment,
					// so not in memory: the core reader cannot learn the
					// image's size from it.
					size = 0
				}
				want = append(want, coreImage{im.Name, im.UUID.String(), im.LoadAddress, size})
			}
			for _, im := range c.Images {
				got = append(got, coreImage{im.Name, im.UUID.String(), im.LoadAddress, im.Size})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("images (-capture +core):\n%s", diff)
			}
			th := c.Threads[0]
			frames, _ := pc.Process.Walk(th.Registers, c.Memory, walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh})
			if diff := cmp.Diff(frameAddresses(pc.Frames), frameAddresses(frames)); diff != "" {
				t.Errorf("walk over the core differs from the walk over the snapshot (-snapshot +core):\n%s", diff)
			}
			if diff := cmp.Diff(pc.Truth, MachineNames(frames)); diff != "" {
				t.Errorf("walk over the core differs from the truth (-truth +walk):\n%s", diff)
			}
		})
	}
}

// frameAddresses returns the machine frames' addresses: the PC, then
// return addresses.
func frameAddresses(frames []symstore.Frame) []string {
	var out []string
	for _, f := range frames {
		if f.Inlined {
			continue
		}
		out = append(out, fmt.Sprintf("%#x", f.Address))
	}
	return out
}

var (
	lldbFrame    = regexp.MustCompile(`frame #\d+: 0x([0-9a-f]+) (\S*)`)
	lldbImage    = regexp.MustCompile(`(?m)^\[\s*\d+\] ([0-9A-F-]{36}) 0x([0-9a-f]+) `)
	lldbRegister = regexp.MustCompile(`(?m)^\s*(\w+) = 0x([0-9a-f]+)`)
)

// runLLDB runs lldb-16 in batch mode with the commands.
func runLLDB(t *testing.T, lldb string, cmds ...string) string {
	t.Helper()
	args := []string{"-b", "--no-lldbinit"}
	for _, c := range cmds {
		args = append(args, "-o", c)
	}
	out, err := exec.Command(lldb, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("lldb %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestCoreLLDB opens the arm64 and x86_64 cores with lldb-16 and checks
// that lldb finds the image where our "all image infos" note puts it,
// reads the registers we wrote, and unwinds to the frames our walker finds
// for the same state.
//
// lldb is given the fixture binary as the target and told its slide
// (target modules load), which our reader computes from the note; then it
// symbolizes and unwinds with the binary's own unwind tables. Without the
// binary, lldb makes a module from the image in the core's memory, which
// works as well; with `target symbols add` on top of that module, lldb
// 16's arm64 unwind stops after frame 1, so that form is not used.
//
// The one difference: our walk ends with the sentinel return address the
// emulator entered the program with (0x7fffdead0000 on x86_64 and arm64),
// which the truth chain lists as "???"; lldb does not report a frame whose
// PC is in no mapped memory, so its backtrace ends at start.
func TestCoreLLDB(t *testing.T) {
	lldb := testtool.Path(t, "lldb-16", "lldb-16", "the comparison with lldb's backtraces needs it")
	root := repoRoot(t)
	for _, pt := range deepestPoints(t) {
		if !strings.Contains(pt.Name, "arm64") && !strings.Contains(pt.Name, "x86_64") {
			continue
		}
		t.Run(pt.Name, func(t *testing.T) {
			pc, err := CapturePointCore(filepath.Join(root, "fixtures"), pt)
			if err != nil {
				t.Fatal(err)
			}
			c, err := machocore.Open(bytes.NewReader(pc.Core), int64(len(pc.Core)))
			if err != nil {
				t.Fatal(err)
			}
			core := filepath.Join(t.TempDir(), pt.Name+".core")
			if err := os.WriteFile(core, pc.Core, 0o644); err != nil {
				t.Fatal(err)
			}

			// The image lldb finds through the note alone.
			out := runLLDB(t, lldb, fmt.Sprintf("target create --core %q", core), "image list")
			var lldbImages, ourImages []string
			for _, m := range lldbImage.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseUint(m[2], 16, 64)
				lldbImages = append(lldbImages, fmt.Sprintf("%s %#x", m[1], v))
			}
			for _, im := range c.Images {
				ourImages = append(ourImages, fmt.Sprintf("%s %#x", im.UUID, im.LoadAddress))
			}
			if diff := cmp.Diff(ourImages, lldbImages); diff != "" {
				t.Errorf("images (-machocore +lldb):\n%s\nlldb said:\n%s", diff, out)
			}

			// Registers and backtrace, with the fixture binary at the
			// slide our reader gives.
			bin := filepath.Join(root, "fixtures", c.Images[0].Name)
			f, err := image.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, ok := f.Images[0].TextSegment()
			if !ok {
				t.Fatal("the fixture has no __TEXT")
			}
			slide := c.Images[0].LoadAddress - text.Addr
			out = runLLDB(t, lldb, fmt.Sprintf("target create %q --core %q", bin, core),
				fmt.Sprintf("target modules load --file %q --slide %#x", bin, slide),
				"register read", "bt")
			lldbRegs := map[string]uint64{}
			for _, m := range lldbRegister.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseUint(m[2], 16, 64)
				lldbRegs[m[1]] = v
			}
			if diff := cmp.Diff(c.Threads[0].Registers.Values(), lldbRegs); diff != "" {
				t.Errorf("registers (-machocore +lldb):\n%s\nlldb said:\n%s", diff, out)
			}
			var lldbFrames, lldbNames []string
			for _, m := range lldbFrame.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseUint(m[1], 16, 64)
				lldbFrames = append(lldbFrames, fmt.Sprintf("%#x", v))
				name := m[2]
				if i := strings.IndexByte(name, '`'); i >= 0 {
					name = name[i+1:]
				}
				lldbNames = append(lldbNames, name)
			}
			ours := frameAddresses(pc.Frames)
			sentinel := fmt.Sprintf("%#x", uint64(0x7fffdead0000))
			if len(ours) == 0 || ours[len(ours)-1] != sentinel {
				t.Fatalf("our walk %v does not end at the sentinel %s", ours, sentinel)
			}
			if diff := cmp.Diff(ours[:len(ours)-1], lldbFrames); diff != "" {
				t.Errorf("frame addresses (-our walk without the sentinel +lldb bt):\n%s\nlldb said:\n%s", diff, out)
			}
			if diff := cmp.Diff(pc.Truth[:len(pc.Truth)-1], lldbNames); diff != "" {
				t.Errorf("frame functions (-truth without the sentinel +lldb bt):\n%s", diff)
			}
		})
	}
}
