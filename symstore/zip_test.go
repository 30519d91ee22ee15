package symstore

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

var (
	chainBinary = filepath.Join("..", "fixtures", "bin", "chain-arm64-O1")
	chainDWARF  = filepath.Join("..", "fixtures", "bin", "chain-arm64-O1.dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")
	chainX86    = filepath.Join("..", "fixtures", "bin", "chain-x86_64-O1")
)

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func uuidOf(t *testing.T, data []byte) []uuid.UUID {
	t.Helper()
	f, err := image.NewFile(bytes.NewReader(data), "test")
	if err != nil {
		t.Fatal(err)
	}
	var out []uuid.UUID
	for _, im := range f.Images {
		out = append(out, im.UUID)
	}
	return out
}

type zipEntry struct {
	name string
	data []byte
}

// writeZip writes a deflated zip archive of the entries; a name ending in
// "/" is a directory.
func writeZip(t *testing.T, path string, entries ...zipEntry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fatFile lays thin Mach-O files out as a fat file, each slice aligned to
// 16 KiB, as lipo does.
func fatFile(t *testing.T, thins ...[]byte) []byte {
	t.Helper()
	const align = 1 << 14
	out := make([]byte, 8+20*len(thins))
	binary.BigEndian.PutUint32(out[0:], 0xcafebabe)
	binary.BigEndian.PutUint32(out[4:], uint32(len(thins)))
	for i, thin := range thins {
		off := (len(out) + align - 1) / align * align
		out = append(out, make([]byte, off-len(out))...)
		e := out[8+20*i:]
		bo := binary.LittleEndian
		binary.BigEndian.PutUint32(e[0:], bo.Uint32(thin[4:]))
		binary.BigEndian.PutUint32(e[4:], bo.Uint32(thin[8:]))
		binary.BigEndian.PutUint32(e[8:], uint32(off))
		binary.BigEndian.PutUint32(e[12:], uint32(len(thin)))
		binary.BigEndian.PutUint32(e[16:], 14)
		out = append(out, thin...)
	}
	return out
}

// frameText is what a test compares of resolved frames.
func frameText(frames []Frame) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.Format(8))
	}
	return out
}

// resolveAll resolves addresses in the entry for a UUID.
func resolveAll(t *testing.T, syms *Symbols, u uuid.UUID, addrs []uint64) []string {
	t.Helper()
	e, err := syms.Lookup(u)
	if err != nil || e == nil {
		t.Fatalf("Lookup(%s) = %v, %v; want an entry (skipped: %q)", u, e, err, syms.Skipped)
	}
	var out []string
	for _, a := range addrs {
		f := Frame{Image: "chain", Address: a, LookupAddress: a}
		out = append(out, frameText(e.Resolve(f, a, ResolveOptions{}))...)
	}
	return out
}

// TestZipArchive checks that --symbols takes a zip of a binary and its
// dSYM: lookups answer as they do from the same files on disk.
func TestZipArchive(t *testing.T) {
	bin, dwarf := readFixture(t, chainBinary), readFixture(t, chainDWARF)
	u := uuidOf(t, bin)[0]
	dir := t.TempDir()
	archive := filepath.Join(dir, "symbols.zip")
	writeZip(t, archive,
		zipEntry{"README.txt", []byte("not Mach-O")},
		zipEntry{"Payload/", nil},
		zipEntry{"Payload/chain.app/chain", bin},
		zipEntry{"dSYMs/chain.app.dSYM/Contents/Resources/DWARF/chain", dwarf},
	)
	addrs := []uint64{0x1000002f0, 0x100000384, 0x1000004fc}

	onDisk := NewSymbols()
	for _, p := range []string{chainBinary, chainDWARF} {
		if err := onDisk.AddFile(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	want := resolveAll(t, onDisk, u, addrs)

	for _, add := range []struct {
		name string
		path string
	}{{"archive", archive}, {"directory holding it", dir}} {
		t.Run(add.name, func(t *testing.T) {
			syms := NewSymbols()
			if err := syms.AddDir(context.Background(), add.path); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]uuid.UUID{u}, syms.UUIDs()); diff != "" {
				t.Errorf("UUIDs (-want +got):\n%s", diff)
			}
			got := resolveAll(t, syms, u, addrs)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frames from the zip (-on disk +zip):\n%s", diff)
			}
			e, _ := syms.Lookup(u)
			if len(e.Images) != 2 || len(e.Debug()) != 1 {
				t.Errorf("entry has %d images, %d DWARF indexes; want the binary and the dSYM", len(e.Images), len(e.Debug()))
			}
			if len(syms.Skipped) != 0 {
				t.Errorf("Skipped = %q, want nothing", syms.Skipped)
			}
		})
	}
}

// TestZipFatMember checks that every slice of a fat member is indexed,
// reading up to the last slice's load commands.
func TestZipFatMember(t *testing.T) {
	arm, x86 := readFixture(t, chainBinary), readFixture(t, chainX86)
	fat := fatFile(t, arm, x86)
	want := uuidOf(t, fat)
	if len(want) != 2 {
		t.Fatalf("the fat test file has %d slices, want 2", len(want))
	}
	archive := filepath.Join(t.TempDir(), "fat.zip")
	writeZip(t, archive, zipEntry{"chain", fat})
	syms := NewSymbols()
	if err := syms.AddDir(context.Background(), archive); err != nil {
		t.Fatal(err)
	}
	for _, u := range want {
		e, err := syms.Lookup(u)
		if err != nil || e == nil || e.Image().UUID != u {
			t.Errorf("Lookup(%s) = %v, %v; want the slice", u, e, err)
		}
	}
}

// TestZipHostile checks that a zip bomb costs neither memory nor time:
// a member declaring far more than its compressed bytes can hold is
// skipped, and indexing stops when its budget is spent.
func TestZipHostile(t *testing.T) {
	bomb := make([]byte, 8<<20) // 8 MiB of zeros deflate about 1000:1
	copy(bomb, []byte{0xcf, 0xfa, 0xed, 0xfe})
	bin := readFixture(t, chainBinary)
	dir := t.TempDir()
	bombZip := filepath.Join(dir, "bomb.zip")
	writeZip(t, bombZip, zipEntry{"bomb", bomb}, zipEntry{"chain", bin})

	syms := NewSymbols()
	if err := syms.AddDir(context.Background(), bombZip); err != nil {
		t.Fatal(err)
	}
	if len(syms.Skipped) != 1 || !strings.Contains(syms.Skipped[0], "bomb") || !strings.Contains(syms.Skipped[0], "zip bomb") {
		t.Errorf("Skipped = %q, want the bomb member named as a likely zip bomb", syms.Skipped)
	}
	if got := len(syms.UUIDs()); got != 1 {
		t.Errorf("%d UUIDs indexed, want the honest member's", got)
	}

	t.Run("budget", func(t *testing.T) {
		defer func(old func(int64) uint64) { zipIndexBudget = old }(zipIndexBudget)
		zipIndexBudget = func(int64) uint64 { return 100 } // less than one header and its load commands
		archive := filepath.Join(t.TempDir(), "many.zip")
		writeZip(t, archive, zipEntry{"a", bin}, zipEntry{"b", bin})
		syms := NewSymbols()
		if err := syms.AddDir(context.Background(), archive); err != nil {
			t.Fatal(err)
		}
		if len(syms.UUIDs()) != 0 || len(syms.Skipped) != 1 || !strings.Contains(syms.Skipped[0], "budget") {
			t.Errorf("UUIDs %v, Skipped %q; want none indexed and the budget named once", syms.UUIDs(), syms.Skipped)
		}
	})

	t.Run("lookup bounded", func(t *testing.T) {
		defer func(old uint64) { maxZipMember = old }(maxZipMember)
		syms := NewSymbols()
		archive := filepath.Join(t.TempDir(), "one.zip")
		writeZip(t, archive, zipEntry{"chain", bin})
		if err := syms.AddDir(context.Background(), archive); err != nil {
			t.Fatal(err)
		}
		maxZipMember = uint64(len(bin)) - 1
		u := uuidOf(t, bin)[0]
		if e, _ := syms.Lookup(u); e != nil {
			t.Errorf("Lookup(%s) opened a member larger than maxZipMember", u)
		}
		if w := syms.Warnings(); len(w) != 1 || !strings.Contains(w[0], "into memory") {
			t.Errorf("Warnings = %q, want the size limit named", w)
		}
	})
}

// FuzzZipMemberUUIDs feeds arbitrary bytes as a zip member's content: the
// UUID reader must not panic, and never inflates more than its budget.
func FuzzZipMemberUUIDs(f *testing.F) {
	bin, err := os.ReadFile(chainBinary)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bin[:min(len(bin), 4096)])
	f.Add([]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2, 1, 2, 3})
	f.Add([]byte{0xcf, 0xfa, 0xed, 0xfe, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, member []byte) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "m", Method: zip.Store}) // stored: the fuzzer's time goes to the reader
		w.Write(member)
		zw.Close()
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		budget := &budgetReader{left: 1 << 20}
		uuids, _ := zipMemberUUIDs(zr.File[0], budget)
		if len(uuids) > maxFatArchs {
			t.Errorf("%d UUIDs from one member, more than %d slices", len(uuids), maxFatArchs)
		}
		if used := 1<<20 - budget.left; used > uint64(len(member)) {
			t.Errorf("read %d bytes of a %d-byte member", used, len(member))
		}
	})
}
