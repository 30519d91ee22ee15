package breakpadsym

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestParseDebugID(t *testing.T) {
	tests := []struct {
		id       string
		wantUUID [16]byte
		wantAge  uint32
		wantErr  bool
	}{
		{id: "73781EDEBF5B34EC81B2749A0F1FA5FD0",
			wantUUID: [16]byte{0x73, 0x78, 0x1e, 0xde, 0xbf, 0x5b, 0x34, 0xec, 0x81, 0xb2, 0x74, 0x9a, 0x0f, 0x1f, 0xa5, 0xfd}},
		{id: "3249d99d0c4049318610f4e4fb0b69361", // lower case, age 1
			wantUUID: [16]byte{0x32, 0x49, 0xd9, 0x9d, 0x0c, 0x40, 0x49, 0x31, 0x86, 0x10, 0xf4, 0xe4, 0xfb, 0x0b, 0x69, 0x36}, wantAge: 1},
		{id: "3249D99D0C4049318610F4E4FB0B6936A2", // PDB age 0xa2
			wantUUID: [16]byte{0x32, 0x49, 0xd9, 0x9d, 0x0c, 0x40, 0x49, 0x31, 0x86, 0x10, 0xf4, 0xe4, 0xfb, 0x0b, 0x69, 0x36}, wantAge: 0xa2},
		{id: "73781EDEBF5B34EC81B2749A0F1FA5FD", wantErr: true},          // no age
		{id: "73781EDEBF5B34EC81B2749A0F1FA5FG0", wantErr: true},         // not hex
		{id: "73781EDEBF5B34EC81B2749A0F1FA5FD0Z", wantErr: true},        // age not hex
		{id: "73781EDEBF5B34EC81B2749A0F1FA5FD012345678", wantErr: true}, // too long
		{id: "", wantErr: true},
	}
	for _, tt := range tests {
		uuid, age, err := ParseDebugID(tt.id)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDebugID(%q) error = %v, want error %v", tt.id, err, tt.wantErr)
			continue
		}
		if uuid != tt.wantUUID || age != tt.wantAge {
			t.Errorf("ParseDebugID(%q) = %x, %d, want %x, %d", tt.id, uuid, age, tt.wantUUID, tt.wantAge)
		}
		m := Module{DebugID: tt.id}
		if m.UUID() != tt.wantUUID || m.Age() != tt.wantAge {
			t.Errorf("Module{DebugID: %q}.UUID(), Age() = %x, %d, want %x, %d", tt.id, m.UUID(), m.Age(), tt.wantUUID, tt.wantAge)
		}
	}
}

func TestPointerSize(t *testing.T) {
	for arch, want := range map[string]int{"x86_64": 8, "arm64": 8, "arm64e": 8, "x86": 4, "arm": 4, "ppc": 4, "ppc64": 8, "unknown": 0} {
		if got := (Module{Arch: arch}).PointerSize(); got != want {
			t.Errorf("Module{Arch: %q}.PointerSize() = %d, want %d", arch, got, want)
		}
	}
}

// endlessReader fails the test if more than limit bytes are read from it.
type endlessReader struct {
	t     *testing.T
	read  int
	limit int
}

func (r *endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.read += len(p)
	if r.read > r.limit {
		r.t.Fatalf("read %d bytes, more than %d", r.read, r.limit)
	}
	return len(p), nil
}

func TestReadModuleLine(t *testing.T) {
	tests := []struct {
		name    string
		r       io.Reader
		want    Module
		wantErr bool
	}{
		{name: "sample", r: strings.NewReader(sampleText()),
			want: Module{OS: "mac", Arch: "x86_64", DebugID: "0123456789ABCDEF0123456789ABCDEF0", Name: "test module"}},
		{name: "one byte at a time, crlf, no more lines", r: iotest.OneByteReader(strings.NewReader("MODULE Linux arm 0123456789ABCDEF0123456789ABCDEF0 libc.so\r\n")),
			want: Module{OS: "Linux", Arch: "arm", DebugID: "0123456789ABCDEF0123456789ABCDEF0", Name: "libc.so"}},
		{name: "no newline", r: strings.NewReader("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 a"),
			want: Module{OS: "mac", Arch: "arm64", DebugID: "0123456789ABCDEF0123456789ABCDEF0", Name: "a"}},
		{name: "empty", r: strings.NewReader(""), wantErr: true},
		{name: "not a MODULE", r: strings.NewReader("FILE 0 a.c\n"), wantErr: true},
		{name: "no name", r: strings.NewReader("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0\n"), wantErr: true},
		{name: "bad debug id", r: strings.NewReader("MODULE mac arm64 0123 a\n"), wantErr: true},
		{name: "endless first line", r: &endlessReader{t: t, limit: maxModuleLine + 4096}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadModuleLine(tt.r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadModuleLine = %+v, %v, want error %v", got, err, tt.wantErr)
			}
			var fe *FormatError
			if err != nil && !errors.As(err, &fe) {
				t.Errorf("error %v is not a *FormatError", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadModuleLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindInStore(t *testing.T) {
	root := t.TempDir()
	put := func(rel string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("MODULE\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crash := put("crash/67E9247C814E392BA027DBDE6748FCBF0/crash.sym")
	pdb := put("app.pdb/3249D99D0C4049318610F4E4FB0B69361/app.sym")
	os.MkdirAll(filepath.Join(root, "dir", "67E9247C814E392BA027DBDE6748FCBF0", "dir.sym"), 0o755)
	tests := []struct {
		name, module, id, want string
	}{
		{"exact", "crash", "67E9247C814E392BA027DBDE6748FCBF0", crash},
		{"lower-case id", "crash", "67e9247c814e392ba027dbde6748fcbf0", crash},
		{"module path", "/Users/travis/build/./crash", "67E9247C814E392BA027DBDE6748FCBF0", crash},
		{"windows module path", `C:\build\crash`, "67E9247C814E392BA027DBDE6748FCBF0", crash},
		{"pdb name", "app.pdb", "3249D99D0C4049318610F4E4FB0B69361", pdb},
		{"other id", "crash", "67E9247C814E392BA027DBDE6748FCBF1", ""},
		{"escape attempt in id", "crash", "../crash/67E9247C814E392BA027DBDE6748FCBF0", ""},
		{"dot-dot name", "..", "67E9247C814E392BA027DBDE6748FCBF0", ""},
		{"empty name", "", "67E9247C814E392BA027DBDE6748FCBF0", ""},
		{"directory, not a file", "dir", "67E9247C814E392BA027DBDE6748FCBF0", ""},
	}
	for _, tt := range tests {
		if got := FindInStore(root, tt.module, tt.id); got != tt.want {
			t.Errorf("%s: FindInStore(root, %q, %q) = %q, want %q", tt.name, tt.module, tt.id, got, tt.want)
		}
	}
}
