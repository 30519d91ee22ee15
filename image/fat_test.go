package image

import (
	"testing"

	"github.com/stackimage/stackimage/uuid"
)

func TestFatSelect(t *testing.T) {
	path := corpusFile(t, "go-debug-macho/fat-gcc-386-amd64-darwin-exec")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Fat || len(f.Images) != 2 {
		t.Fatalf("Fat, len(Images) = %v, %d, want true, 2", f.Fat, len(f.Images))
	}
	i386, x64 := f.Images[0], f.Images[1]
	tests := []struct {
		name    string
		arch    string
		want    *Image
		wantErr string
	}{
		{name: "i386", arch: "i386", want: i386},
		{name: "x86_64 in upper case", arch: "X86_64", want: x64},
		{name: "missing arch lists slices", arch: "arm64", wantErr: "image: no arm64 slice in " + path + " (has i386, x86_64)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.ByArch(tt.arch)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("ByArch(%q) error = %v, want %q", tt.arch, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ByArch(%q) = %v, %v, want slice %s", tt.arch, got, err, tt.want.ArchName())
			}
		})
	}
	for _, im := range f.Images {
		got, err := f.ByUUID(im.UUID)
		if err != nil || got != im {
			t.Errorf("ByUUID(%s) = %v, %v, want the %s slice", im.UUID, got, err, im.ArchName())
		}
	}
	u := uuid.UUID{1, 2, 3}
	wantErr := "image: no slice with UUID " + u.String() + " in " + path +
		" (has i386 " + i386.UUID.String() + ", x86_64 " + x64.UUID.String() + ")"
	if _, err := f.ByUUID(u); err == nil || err.Error() != wantErr {
		t.Errorf("ByUUID(%s) error = %v, want %q", u, err, wantErr)
	}
	// Both slices hold the same program: their tables must both be readable
	// from within their own slice.
	for _, im := range f.Images {
		raw, ok, err := im.Symtab()
		if err != nil || !ok || raw.NSyms == 0 {
			t.Errorf("%s: Symtab() = %d syms, %v, %v, want symbols", im.ArchName(), raw.NSyms, ok, err)
		}
	}
}

func TestThinByArch(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/static-aarch64"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Fat {
		t.Errorf("Fat = true for a thin file")
	}
	if im, err := f.ByArch("arm64"); err != nil || im != f.Images[0] {
		t.Errorf("ByArch(arm64) = %v, %v, want the only image", im, err)
	}
	if _, err := f.ByArch("arm64e"); err == nil {
		t.Errorf("ByArch(arm64e) on an arm64 file succeeded; slices must match exactly")
	}
}
