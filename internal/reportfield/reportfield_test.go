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
