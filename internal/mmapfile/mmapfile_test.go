package mmapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOpenAndMap(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("stackimage"), 10000)
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Bytes(), want) {
		t.Errorf("Open(%s).Bytes() differs from the file", path)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := f.Close(); err != nil || f.Bytes() != nil {
		t.Errorf("second Close = %v, Bytes() = %d bytes; want nil, none", err, len(f.Bytes()))
	}

	m, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		if m != nil {
			t.Errorf("Map mapped a file on %s", runtime.GOOS)
		}
		return
	}
	if m == nil || !bytes.Equal(m.Bytes(), want) {
		t.Fatalf("Map(%s) = %v, want the file's bytes", path, m)
	}
	m.Close()
}

func TestEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := Map(path); m != nil || err != nil {
		t.Errorf("Map(empty) = %v, %v; want nil, nil", m, err)
	}
	f, err := Open(path)
	if err != nil || len(f.Bytes()) != 0 {
		t.Errorf("Open(empty) = %v, %v; want no bytes", f, err)
	}
}

func TestRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{"directory": dir, "missing": filepath.Join(dir, "missing")}
	if fifo, ok := makeFIFO(dir); ok {
		paths["FIFO"] = fifo // opening it would block: it must be refused first
	}
	for name, path := range paths {
		if f, err := Open(path); err == nil {
			t.Errorf("Open(%s) = %v, want an error", name, f)
		}
		if f, err := Map(path); err == nil {
			t.Errorf("Map(%s) = %v, want an error", name, f)
		}
	}
}
