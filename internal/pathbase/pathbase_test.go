package pathbase

import "testing"

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/lib/libSystem.B.dylib":    "libSystem.B.dylib",
		`C:\build\src\main.c`:           "main.c",
		`/Volumes/src\mixed/file.swift`: "file.swift",
		"Foundation":                    "Foundation",
		"/a/b/":                         "b",
		"":                              ".",
	} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Base("/usr/lib/dyld") }); n != 0 {
		t.Errorf("Base of a Unix path allocates %v times", n)
	}
}
