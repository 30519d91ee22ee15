package symbolicator

import (
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/uuid"
)

// TestFoundModule: what was found for a module becomes its debug and
// unwind status, features and candidates as symbolicator writes them.
func TestFoundModule(t *testing.T) {
	m := Module{Type: "macho", DebugID: "x"}
	tests := []struct {
		name                string
		found               *Found
		walks, candidates   bool
		debug, unwind, arch string
		candidate           string // the candidate's download status, "" for none
	}{
		{"not looked up", nil, true, true, StatusUnused, "", "unknown", ""},
		{"found, names only", &Found{Status: StatusFound, Arch: "arm64"}, false, false, StatusFound, StatusUnused, "arm64", ""},
		{"found, walked without unwind tables", &Found{Status: StatusFound, Arch: "arm64"}, true, false, StatusFound, StatusMissing, "arm64", ""},
		{"found with unwind tables", &Found{Status: StatusFound, Arch: "arm64", HasUnwind: true}, true, true, StatusFound, StatusFound, "arm64", "ok"},
		{"timed out", &Found{Status: "timeout", Err: "late"}, true, true, "timeout", "", "unknown", "notfound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FoundModule(m, tt.found, tt.walks, tt.candidates)
			if c.DebugStatus != tt.debug || c.UnwindStatus != tt.unwind || c.Arch != tt.arch {
				t.Errorf("FoundModule = debug %q, unwind %q, arch %q; want %q, %q, %q", c.DebugStatus, c.UnwindStatus, c.Arch, tt.debug, tt.unwind, tt.arch)
			}
			got := ""
			if len(c.Candidates) > 0 {
				got = c.Candidates[0].Download["status"]
			}
			if got != tt.candidate {
				t.Errorf("candidate download status %q, want %q", got, tt.candidate)
			}
			if tt.found != nil && c.Error != tt.found.Err {
				t.Errorf("error %q, want %q", c.Error, tt.found.Err)
			}
		})
	}
}

// TestDumpModules: a dump's images become modules, an image without a
// UUID missing, the others as found says.
func TestDumpModules(t *testing.T) {
	id := uuid.UUID{1, 2, 3}
	d := &dump.Dump{Images: []dump.Image{{Name: "App", UUID: id, LoadAddress: 0x1000, Size: 0x100}, {Name: "NoUUID"}}}
	mods := DumpModules(d, func(u uuid.UUID) *Found {
		if u != id {
			t.Errorf("asked for %s", u)
		}
		return &Found{Status: StatusFound, Arch: "arm64"}
	}, false)
	if len(mods) != 2 {
		t.Fatalf("%d modules, want 2", len(mods))
	}
	if mods[0].DebugStatus != StatusFound || mods[0].CodeID != "01020300000000000000000000000000" || mods[0].ImageSize == nil {
		t.Errorf("module 0 = %+v; want found, its code id and size", mods[0])
	}
	if mods[1].DebugStatus != StatusMissing || mods[1].Error == "" {
		t.Errorf("module 1 = %+v; want missing, saying why", mods[1])
	}
}
