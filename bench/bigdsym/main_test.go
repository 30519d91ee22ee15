package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGenerateDeterministic: two generations give the same files, byte
// for byte, and a second generation into the same directory leaves the
// files untouched (so their objects are not compiled again).
func TestGenerateDeterministic(t *testing.T) {
	a, b := &builder{dir: t.TempDir(), units: 3}, &builder{dir: t.TempDir(), units: 3}
	for _, g := range []*builder{a, b} {
		if err := g.generate(); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"chain.h", "main.cpp", "unit001.cpp", "unit002.cpp", "unit003.cpp"}
	mtimes := map[string]int64{}
	for _, name := range names {
		x, err := os.ReadFile(a.path(name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(b.path(name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two generations", name)
		}
		st, err := os.Stat(a.path(name))
		if err != nil {
			t.Fatal(err)
		}
		mtimes[name] = st.ModTime().UnixNano()
	}
	if err := os.Chtimes(a.path("unit001.cpp"), timeZero, timeZero); err != nil {
		t.Fatal(err)
	}
	mtimes["unit001.cpp"] = timeZero.UnixNano()
	if err := a.generate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		st, err := os.Stat(filepath.Join(a.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.ModTime().UnixNano() != mtimes[name] {
			t.Errorf("%s rewritten by a second generation", name)
		}
	}
}

// TestUnitsDistinct: every unit declares its own namespace, so that
// dsymutil keeps each unit's types instead of uniquing them across units.
func TestUnitsDistinct(t *testing.T) {
	for u := 1; u <= 3; u++ {
		src := unitSource(u)
		ns := fmt.Sprintf("namespace bigdsym::module%03d {", u)
		if !bytes.Contains(src, []byte(ns)) {
			t.Errorf("unit %d does not open %q", u, ns)
		}
		if other := fmt.Sprintf("bigdsym::module%03d", u+1); bytes.Contains(src, []byte(other)) {
			t.Errorf("unit %d names %s", u, other)
		}
	}
}

// timeZero is an old modification time, to tell a rewrite from none.
var timeZero = time.Unix(1_000_000_000, 0)
