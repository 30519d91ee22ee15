package minidump

import (
	"bufio"
	"debug/macho"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

func parseFile(t *testing.T, path string) *Dump {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(f, st.Size())
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	for _, e := range d.Errors {
		t.Errorf("Parse(%s): %v", filepath.Base(path), e)
	}
	return d
}

// snapshot is what symbolicator's expected output says of a dump.
type snapshot struct {
	top       map[string]string // top-level and system_info scalars
	registers map[string]uint64 // the first stack trace's registers
	modules   []snapModule
}

type snapModule struct {
	CodeFile, DebugID string
	Addr, Size        uint64
}

// readSnapshot reads the few parts of symbolicator's YAML snapshot the
// tests compare, line by line (the file is plain, regular YAML).
func readSnapshot(t *testing.T, path string) *snapshot {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &snapshot{top: map[string]string{}, registers: map[string]uint64{}}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		key, val, _ := strings.Cut(strings.TrimPrefix(trimmed, "- "), ":")
		val = strings.Trim(strings.TrimSpace(val), `"`)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case indent == 0:
			section = key
			s.top[key] = val
		case section == "system_info" && indent == 2:
			s.top[key] = val
		case section == "stacktraces" && trimmed == "registers:":
			section = "registers"
		case section == "registers" && indent == 6 && !strings.HasPrefix(trimmed, "- "):
			v, err := strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
			if err != nil {
				t.Fatalf("%s: register %q: %v", path, line, err)
			}
			s.registers[key] = v
		case section == "registers" && trimmed == "frames:":
			section = "frames"
		case section == "modules" && strings.HasPrefix(line, "  - "):
			s.modules = append(s.modules, snapModule{})
		case section == "modules" && indent == 4:
			m := &s.modules[len(s.modules)-1]
			switch key {
			case "code_file":
				m.CodeFile = val
			case "debug_id":
				m.DebugID = val
			case "image_addr":
				m.Addr, _ = strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
			case "image_size":
				m.Size, _ = strconv.ParseUint(val, 10, 64)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCorpusBreakpadMac reads the Breakpad-written macOS dump from
// symbolicator's tests and compares it with what symbolicator reported for
// it (its expected.snap), and the main module's UUID with the Mach-O the
// dump was taken from.
func TestCorpusBreakpadMac(t *testing.T) {
	dir := testcorpus.Dir(t)
	d := parseFile(t, filepath.Join(dir, "minidump", "symbolicator-macos.dmp"))
	snap := readSnapshot(t, filepath.Join(dir, "minidump", "symbolicator-macos.expected.snap"))

	if got, want := strconv.FormatInt(d.Time.Unix(), 10), snap.top["timestamp"]; got != want {
		t.Errorf("Time = %s, want %s", got, want)
	}
	if d.OSName != snap.top["os_name"] || d.OSVersion != snap.top["os_version"] || d.OSBuild != snap.top["os_build"] {
		t.Errorf("OS = %q %q %q, want %q %q %q", d.OSName, d.OSVersion, d.OSBuild,
			snap.top["os_name"], snap.top["os_version"], snap.top["os_build"])
	}
	if d.Arch == nil || d.Arch.Name != snap.top["cpu_arch"] {
		t.Errorf("Arch = %v, want %s", d.Arch, snap.top["cpu_arch"])
	}

	// symbolicator writes "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS / 0x45":
	// the reason, then the crash address.
	e := d.Exception
	if e == nil {
		t.Fatal("no exception")
	}
	if got, want := e.Reason+" / "+"0x"+strconv.FormatUint(e.Address, 16), snap.top["crash_reason"]; got != want {
		t.Errorf("crash reason / address = %q, want %q", got, want)
	}

	if len(d.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(d.Threads))
	}
	th := d.CrashedThread()
	if th == nil {
		t.Fatal("no crashed thread")
	}
	got := th.Registers().Values()
	for name := range got {
		if _, ok := snap.registers[name]; !ok {
			delete(got, name) // symbolicator leaves out rflags and the segments
		}
	}
	if diff := cmp.Diff(snap.registers, got); diff != "" {
		t.Errorf("crashed thread registers (-symbolicator +ours):\n%s", diff)
	}

	if len(snap.modules) < 10 || len(snap.registers) < 17 {
		t.Fatalf("read %d modules and %d registers from the snapshot, want at least 10 and 17", len(snap.modules), len(snap.registers))
	}
	byPath := map[string]*Module{}
	for i := range d.Modules {
		byPath[d.Modules[i].Path] = &d.Modules[i]
	}
	for _, sm := range snap.modules {
		m := byPath[sm.CodeFile]
		if m == nil {
			t.Errorf("module %s missing", sm.CodeFile)
			continue
		}
		// symbolicator prints the debug id as a UUID, leaving out age 0.
		wantID := strings.ToUpper(strings.ReplaceAll(sm.DebugID, "-", "")) + "0"
		if m.Base != sm.Addr || m.Size != sm.Size || m.DebugID != wantID || m.CodeID != strings.ReplaceAll(sm.DebugID, "-", "") {
			t.Errorf("module %s = base %#x size %d debug id %s code id %s; want %#x %d %s",
				sm.CodeFile, m.Base, m.Size, m.DebugID, m.CodeID, sm.Addr, sm.Size, wantID)
		}
	}

	// The crashed program itself is in the corpus: its LC_UUID must be the
	// module's UUID.
	exe := filepath.Join(dir, "symbolic", "symbolic-testutils", "fixtures", "macos", "crash")
	mf, err := macho.Open(exe)
	if err != nil {
		t.Fatalf("reading the crashed program: %v", err)
	}
	defer mf.Close()
	var exeUUID []byte
	for _, l := range mf.Loads {
		if raw := l.Raw(); len(raw) >= 24 && le.Uint32(raw) == 0x1b { // LC_UUID
			exeUUID = raw[8:24]
		}
	}
	main := d.ModuleAt(0x109ba8c15) // the crash pc symbolicator attributes to ./crash
	if main == nil || string(main.UUID[:]) != string(exeUUID) {
		t.Errorf("module at the crash pc has UUID %x, the program's LC_UUID is %x", main.UUID, exeUUID)
	}

	if bp := d.BreakpadInfo; bp == nil || !bp.HasRequestingThreadID || bp.RequestingThreadID != th.ID {
		t.Errorf("Breakpad info = %+v, want requesting thread %d", bp, th.ID)
	}
	if th.ID != 775 {
		t.Errorf("crashed thread id = %d, want 775 (symbolicator's)", th.ID)
	}
	// The stack pointer lies in the captured stack.
	sp, _ := th.Registers().SP()
	var word [8]byte
	if _, err := d.Memory.ReadMemory(word[:], sp); err != nil {
		t.Errorf("ReadMemory(sp %#x): %v", sp, err)
	}
}

// TestCorpusCrashpad reads the Crashpad-written macOS dump from
// rust-minidump's testdata. The expected annotations and ids are those
// rust-minidump's own tests assert (minidump/tests/test_minidump.rs,
// test_crashpad_info).
func TestCorpusCrashpad(t *testing.T) {
	dir := testcorpus.Dir(t)
	d := parseFile(t, filepath.Join(dir, "minidump", "simple-crashpad.dmp"))
	ci := d.CrashpadInfo
	if ci == nil {
		t.Fatal("no Crashpad info")
	}
	// GUID {42F9DE72-518A-43DD-97D7-8DDC328D3662}, stored little-endian.
	wantReport := GUIDToUUID([16]byte{0x42, 0xf9, 0xde, 0x72, 0x51, 0x8a, 0x43, 0xdd, 0x97, 0xd7, 0x8d, 0xdc, 0x32, 0x8d, 0x36, 0x62})
	if ci.ReportID != wantReport {
		t.Errorf("ReportID = %x, want %x", ci.ReportID, wantReport)
	}
	if ci.SimpleAnnotations["hello"] != "world" {
		t.Errorf("SimpleAnnotations = %v, want hello=world", ci.SimpleAnnotations)
	}
	if len(ci.Modules) != 2 {
		t.Fatalf("%d Crashpad modules, want 2", len(ci.Modules))
	}
	m := ci.Modules[0]
	if m.ModuleIndex != 16 || !cmp.Equal(m.ListAnnotations, []string{"abort() called"}) || len(m.SimpleAnnotations) != 0 || len(m.Annotations) != 0 {
		t.Errorf("Crashpad module 0 = %+v, want index 16 with list annotation %q", m, "abort() called")
	}
	// abort() lives in libsystem_c, so the annotation is that module's.
	if m.ModuleIndex >= len(d.Modules) || d.Modules[m.ModuleIndex].Name != "libsystem_c.dylib" {
		t.Errorf("module %d is not libsystem_c.dylib", m.ModuleIndex)
	}
	// An abort() is EXC_CRASH with SIGABRT, which Crashpad keeps in the
	// exception parameters.
	if e := d.Exception; e == nil || e.Reason != "EXC_CRASH / SIGABRT" {
		t.Errorf("exception = %+v, want EXC_CRASH / SIGABRT", e)
	}
	// The system info stream and the misc info's build string are written
	// separately; they must agree ("Mac OS X 10.15.7 (19H114); Darwin ...").
	if d.Arch != archregs.X86_64 || d.OSName != "macOS" {
		t.Errorf("system = %v %s, want x86_64 macOS", d.Arch, d.OSName)
	}
	if want := d.OSVersion + " (" + d.OSBuild + ")"; d.MiscInfo == nil || !strings.Contains(d.MiscInfo.BuildString, want) {
		t.Errorf("misc info build string does not hold the system info's %q", want)
	}
	// The crashed thread's pc is in a module and its sp in captured memory.
	th := d.CrashedThread()
	if th == nil {
		t.Fatal("no crashed thread")
	}
	pc, _ := th.Registers().PC()
	if mod := d.ModuleAt(pc); mod == nil {
		t.Errorf("pc %#x is in no module", pc)
	}
	sp, _ := th.Registers().SP()
	var word [8]byte
	if _, err := d.Memory.ReadMemory(word[:], sp); err != nil {
		t.Errorf("ReadMemory(sp %#x): %v", sp, err)
	}
}

// TestCorpusSymDebugID checks DebugID's form against a real Breakpad
// symbol file's MODULE line: 32 upper-case hex digits of UUID, then the
// age in hex.
func TestCorpusSymDebugID(t *testing.T) {
	path := testcorpus.File(t, "minidump/sentry_example.sym")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line) // MODULE mac arm64 DEBUGID NAME
	if len(fields) != 5 || fields[0] != "MODULE" {
		t.Fatalf("first line %q is not a MODULE line", line)
	}
	id := fields[3]
	var uuid [16]byte
	if _, err := hex.Decode(uuid[:], []byte(id[:32])); err != nil {
		t.Fatalf("debug id %q: %v", id, err)
	}
	age, err := strconv.ParseUint(id[32:], 16, 32)
	if err != nil {
		t.Fatalf("debug id %q age: %v", id, err)
	}
	if got := DebugID(uuid, uint32(age)); got != id {
		t.Errorf("DebugID(%x, %d) = %q, want the .sym's %q", uuid, age, got, id)
	}
}
