package machocore

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

	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/snapshot"
)

// imageRegions maps a Mach-O file's segments (all but __PAGEZERO) as the
// kernel or dyld would, __TEXT's vmaddr at load: the file's bytes, then
// zeros up to vmsize. An object file's single segment is mapped with
// vmaddr 0 at load.
func imageRegions(t testing.TB, data []byte, load uint64) []WriteRegion {
	t.Helper()
	f, err := image.NewFile(bytes.NewReader(data), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	im := f.Images[0]
	text, ok := im.TextSegment()
	if !ok {
		t.Fatalf("fixture has no __TEXT")
	}
	slide := load - text.Addr
	var regions []WriteRegion
	for _, s := range im.Segments {
		if s.Name == "__PAGEZERO" || s.Size == 0 {
			continue
		}
		regions = append(regions, WriteRegion{
			Name: s.Name, Addr: s.Addr + slide, Size: s.Size,
			Data: data[s.Offset : s.Offset+min(s.FileSize, s.Size)], Prot: s.Prot, MaxProt: s.MaxProt,
		})
	}
	return regions
}

// snapshotCore builds a core from a committed snapshot of a fixture run
// (fixtures/snapshots, captured in the emulator): its thread, its stack
// memory, and the fixture binary's segments mapped where the snapshot says
// the image was loaded. It returns the core's input, the snapshot and the
// fixture's path in the fixtures directory.
func snapshotCore(t testing.TB, name string, notes bool) (*WriteInput, *snapshot.Snapshot) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join("..", "fixtures", "snapshots", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Parse(js)
	if err != nil {
		t.Fatalf("snapshot.Parse(%s): %v", name, err)
	}
	in := &WriteInput{Arch: snap.Arch}
	for _, th := range snap.Threads {
		in.Threads = append(in.Threads, WriteThread{Registers: th.Registers})
	}
	for _, r := range snap.Memory.All() {
		in.Regions = append(in.Regions, WriteRegion{Name: "stack", Addr: r.Address, Data: r.Data})
	}
	for _, si := range snap.Images {
		data, err := fixtures.ReadFile(si.Name)
		if err != nil {
			t.Fatal(err)
		}
		regions := imageRegions(t, data, si.LoadAddress)
		in.Regions = append(in.Regions, regions...)
		if notes {
			im := Image{Name: si.Name, UUID: si.UUID, LoadAddress: si.LoadAddress}
			for _, r := range regions {
				im.Segments = append(im.Segments, ImageSegment{r.Name, r.Addr})
			}
			in.Images = append(in.Images, im)
		}
	}
	return in, snap
}

// lldbPath returns lldb-16's path (Debian's lldb-16 package): the check
// against lldb's reading of our cores needs it.
func lldbPath(t *testing.T) string {
	t.Helper()
	return testtool.Path(t, "lldb-16", "lldb-16", "the check against lldb's reading of our cores needs it")
}

// runLLDB opens core with lldb in batch mode, with binary as the target
// when given, and runs the commands.
func runLLDB(t *testing.T, lldb, binary, core string, cmds ...string) string {
	t.Helper()
	target := fmt.Sprintf("target create --core %q", core)
	if binary != "" {
		target = fmt.Sprintf("target create %q --core %q", binary, core)
	}
	args := []string{"-b", "--no-lldbinit", "-o", target}
	for _, c := range cmds {
		args = append(args, "-o", c)
	}
	out, err := exec.Command(lldb, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("lldb %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// snapshotNames are the committed snapshots at each architecture's deepest
// function.
var snapshotNames = []string{"chain-arm64-O1-deepest", "chain-x86_64-O1-deepest", "chain-armv7-O1-deepest", "chain-i386-O1-deepest"}

type imageView struct {
	Name        string
	UUID        string
	LoadAddress uint64
	Size        uint64
}

// TestSnapshotCores writes each snapshot, with its fixture binary mapped,
// as a core, with and without the "all image infos" note, and checks what
// Open reads back: the registers, the stack bounds and the images, found
// through the note or by their mach headers in memory.
func TestSnapshotCores(t *testing.T) {
	for _, name := range snapshotNames {
		for _, notes := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/notes=%v", name, notes), func(t *testing.T) {
				in, snap := snapshotCore(t, name, notes)
				c := openCore(t, writeCore(t, in))
				for _, w := range c.Warnings {
					t.Errorf("warning: %v", w)
				}
				if len(c.Threads) != 1 || c.Threads[0].Registers == nil {
					t.Fatalf("threads = %+v, want one with registers", c.Threads)
				}
				th := c.Threads[0]
				if diff := cmp.Diff(snap.Threads[0].Registers.Values(), th.Registers.Values()); diff != "" {
					t.Errorf("registers (-snapshot +core):\n%s", diff)
				}
				stack := snap.Memory.All()[0]
				if th.StackLow != stack.Address || th.StackHigh != stack.Address+uint64(len(stack.Data)) {
					t.Errorf("stack bounds [%#x, %#x), want the captured stack [%#x, %#x)", th.StackLow, th.StackHigh, stack.Address, stack.Address+uint64(len(stack.Data)))
				}
				var want, got []imageView
				for _, im := range snap.Images {
					v := imageView{im.Name, im.UUID.String(), im.LoadAddress, im.Size}
					if strings.HasSuffix(im.Name, ".o") {
						if !notes {
							// An object file is not an image a process loads
							// (MH_OBJECT), and its mach header is in no
							// segment: no header to find.
							continue
						}
						v.Size = 0 // no header in memory to measure it by
					}
					if !notes {
						v.Name = "" // an executable names itself nowhere in its load commands
					}
					want = append(want, v)
				}
				for _, im := range c.Images {
					got = append(got, imageView{im.Name, im.UUID.String(), im.LoadAddress, im.Size})
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("images (-snapshot +core):\n%s", diff)
				}
			})
		}
	}
}

var (
	lldbImage    = regexp.MustCompile(`(?m)^\[\s*\d+\] ([0-9A-F-]{36}) 0x([0-9a-f]+) `)
	lldbRegister = regexp.MustCompile(`(?m)^\s*(\w+) = 0x([0-9a-f]+)`)
)

// TestLLDBReadsOurCores opens cores built from the committed snapshots
// (real program states captured in the emulator, with the fixture binary
// mapped) with lldb-16, and checks that lldb reads the registers we wrote
// and finds the images where our "all image infos" note puts them.
//
// Two architectures are checked in part, for reasons on lldb's side:
//   - armv7: lldb 16 shows r0-pc as 0 and r0's value as cpsr, although the
//     LC_THREAD holds ARM_THREAD_STATE (flavor 1, count 17: r0-r12, sp, lr,
//     pc, cpsr), exactly what lldb's own RegisterContextDarwin_arm_Mach::
//     Create_LC_THREAD writes. Registers are not compared; the image is.
//   - i386: the fixture is an object file (MH_OBJECT), which lldb does not
//     load from a note: it lists no image. Registers are compared.
func TestLLDBReadsOurCores(t *testing.T) {
	lldb := lldbPath(t)
	for _, name := range snapshotNames {
		t.Run(name, func(t *testing.T) {
			in, _ := snapshotCore(t, name, true)
			data := writeCore(t, in)
			c := openCore(t, data)
			core := filepath.Join(t.TempDir(), "core")
			if err := os.WriteFile(core, data, 0o644); err != nil {
				t.Fatal(err)
			}
			arch := c.Arch.Name
			cmds := []string{"register read"}
			if arch != "i386" {
				cmds = append(cmds, "image list")
			}
			out := runLLDB(t, lldb, "", core, cmds...)
			if arch != "armv7" {
				regs := map[string]uint64{}
				for _, m := range lldbRegister.FindAllStringSubmatch(out, -1) {
					v, _ := strconv.ParseUint(m[2], 16, 64)
					regs[m[1]] = v
				}
				if diff := cmp.Diff(c.Threads[0].Registers.Values(), regs); diff != "" {
					t.Errorf("registers (-machocore +lldb):\n%s\nlldb said:\n%s", diff, out)
				}
			}
			if arch != "i386" {
				var ours, theirs []string
				for _, im := range c.Images {
					ours = append(ours, fmt.Sprintf("%s %#x", im.UUID, im.LoadAddress))
				}
				for _, m := range lldbImage.FindAllStringSubmatch(out, -1) {
					v, _ := strconv.ParseUint(m[2], 16, 64)
					theirs = append(theirs, fmt.Sprintf("%s %#x", m[1], v))
				}
				if diff := cmp.Diff(ours, theirs); diff != "" {
					t.Errorf("images (-machocore +lldb):\n%s\nlldb said:\n%s", diff, out)
				}
			}
		})
	}
}
