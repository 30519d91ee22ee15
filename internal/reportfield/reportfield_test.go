package reportfield

import "testing"

func TestNameAndPID(t *testing.T) {
	tests := []struct {
		in   string
		name string
		pid  int
	}{
		{"CrashingTest [1710]", "CrashingTest", 1710},
		{"Name With Spaces [7]", "Name With Spaces", 7},
		{"tight[3]", "tight", 3},
		{"a [b] [12]", "a [b]", 12},
		{"no pid", "no pid", 0},
		{"bad [x]", "bad [x]", 0},
		{"open [12", "open [12", 0},
		{"", "", 0},
	}
	for _, tt := range tests {
		if name, pid := NameAndPID(tt.in); name != tt.name || pid != tt.pid {
			t.Errorf("NameAndPID(%q) = %q, %d, want %q, %d", tt.in, name, pid, tt.name, tt.pid)
		}
	}
}

func TestImageTail(t *testing.T) {
	tests := []struct {
		in               string
		desc, uuid, path string
		ok               bool
	}{
		{"+Name (0) <4C4C44F7-5555-3144-A1E3-217410051A06> /path/to/Name", "+Name (0) ", "4C4C44F7-5555-3144-A1E3-217410051A06", "/path/to/Name", true},
		{"com.apple.AppKit (6.9 - 2113) <uuid>  /System/AppKit  ", "com.apple.AppKit (6.9 - 2113) ", "uuid", "/System/AppKit", true},
		{"libfoo.dylib arm64 <(null)> ???", "libfoo.dylib arm64 ", "(null)", "???", true},
		{"Name <> ", "Name ", "", "", true},
		{"Name (1.0)", "Name (1.0)", "", "", false},
		{"Name <unclosed /path", "Name <unclosed /path", "", "", false},
		{"a > b <u> /p", "a > b ", "u", "/p", true},
	}
	for _, tt := range tests {
		desc, uuid, path, ok := ImageTail(tt.in)
		if desc != tt.desc || uuid != tt.uuid || path != tt.path || ok != tt.ok {
			t.Errorf("ImageTail(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tt.in, desc, uuid, path, ok, tt.desc, tt.uuid, tt.path, tt.ok)
		}
	}
}
