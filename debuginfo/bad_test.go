package debuginfo

import (
	"debug/macho"
	"strings"
	"testing"
)

// v5LineHeader returns a DWARF 5 line program header whose directory
// table claims dirCount entries.
func v5LineHeader(dirCount []byte) []byte {
	body := []byte{
		5, 0, // version
		8, 0, // address_size, segment_selector_size
		0, 0, 0, 0, // header_length (not checked)
		1, 1, 1, 0xfb, 14, // min_inst_length, max_ops, default_is_stmt, line_base, line_range
		13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // opcode_base, standard_opcode_lengths
		1, 1, 0x08, // one directory format: DW_LNCT_path, DW_FORM_string
	}
	body = append(body, dirCount...)
	body = append(body, make([]byte, 16)...)
	n := len(body)
	return append([]byte{byte(n), byte(n >> 8), 0, 0}, body...)
}

func TestBadInput(t *testing.T) {
	fixture := dwarfSections(t, "testdata/fixtures/inl-dwarf5.o", macho.CpuArm64)
	with := func(name string, b []byte) map[string][]byte {
		secs := make(map[string][]byte)
		for k, v := range fixture {
			secs[k] = v
		}
		secs[name] = b
		return secs
	}
	tests := []struct {
		name     string
		secs     map[string][]byte
		wantErr  string // substring; "" means New succeeds
		wantWarn string // substring of the only warning; "" means none
	}{
		{"no sections", map[string][]byte{}, "no debug_info section", ""},
		{"empty info", with("debug_info", nil), "no debug_info section", ""},
		{"truncated info", with("debug_info", fixture["debug_info"][:20]), "debuginfo:", ""},
		// A bad line table costs the lines, not the functions.
		{"4G directories", with("debug_line", v5LineHeader([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})), "", "directory count 4294967295 exceeds"},
		{"truncated line", with("debug_line", fixture["debug_line"][:30]), "", "line table"},
		// A unit whose DIEs are garbage leaves nothing to index.
		{"garbage abbrev", with("debug_abbrev", []byte{1, 0x11, 1, 0x03, 0x99, 0, 0}), "nothing could be indexed", ""},
		{"fixture", fixture, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := New(tt.secs)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New = %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New = %v, want an error containing %q", err, tt.wantErr)
			case err != nil:
				return
			}
			parseAll(ix)
			w := ix.Warnings()
			switch {
			case tt.wantWarn == "" && len(w) != 0:
				t.Errorf("Warnings() = %q, want none", w)
			case tt.wantWarn != "" && (len(w) != 1 || !strings.Contains(w[0], tt.wantWarn)):
				t.Errorf("Warnings() = %q, want one containing %q", w, tt.wantWarn)
			}
			if st := ix.Stats(); st.Functions == 0 {
				t.Errorf("Stats() = %+v, want the fixture's functions indexed", st)
			}
		})
	}
}

func TestLookupOutside(t *testing.T) {
	ix, err := New(dwarfSections(t, "testdata/fixtures/inl-dwarf4.dwarf", macho.CpuArm64))
	if err != nil {
		t.Fatal(err)
	}
	// __text of the fixture starts at 0x1000002a0; nothing lies below it
	// and the last sequence ends before 0x100001000.
	for _, a := range []uint64{0, 0x100000000, 0x10000029f, 0x100001000, ^uint64(0)} {
		if frames, err := ix.Lookup(a); err == nil {
			t.Errorf("Lookup(%#x) = %+v, want nothing", a, frames)
		}
	}
}
