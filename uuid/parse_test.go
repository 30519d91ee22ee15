package uuid

import (
	"testing"
)

func TestParseForms(t *testing.T) {
	want := UUID{0xac, 0x58, 0xd7, 0x7f, 0x5f, 0x09, 0x35, 0xef, 0xaf, 0x14, 0xa1, 0xf1, 0x63, 0xd3, 0x8f, 0x99}
	const canonical = "AC58D77F-5F09-35EF-AF14-A1F163D38F99"
	if got := want.String(); got != canonical {
		t.Errorf("String() = %q, want %q", got, canonical)
	}
	tests := []struct {
		name    string
		in      string
		want    UUID
		wantErr bool
	}{
		{name: "canonical", in: canonical, want: want},
		{name: "lower case", in: "ac58d77f-5f09-35ef-af14-a1f163d38f99", want: want},
		{name: "no dashes", in: "AC58D77F5F0935EFAF14A1F163D38F99", want: want},
		{name: "mixed case no dashes", in: "ac58D77F5f0935efAF14a1f163d38F99", want: want},
		{name: "zero", in: "00000000-0000-0000-0000-000000000000", want: UUID{}},
		{name: "empty", in: "", wantErr: true},
		{name: "too short", in: "AC58D77F-5F09-35EF-AF14-A1F163D38F9", wantErr: true},
		{name: "too long", in: "AC58D77F5F0935EFAF14A1F163D38F9900", wantErr: true},
		{name: "dash misplaced", in: "AC58D77-F5F09-35EF-AF14-A1F163D38F99", wantErr: true},
		{name: "not hex", in: "AC58D77F-5F09-35EF-AF14-A1F163D38FZZ", wantErr: true},
		{name: "braces", in: "{AC58D77F-5F09-35EF-AF14-A1F163D38F}", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
			}
			if !tt.wantErr && got.IsZero() != (tt.want == UUID{}) {
				t.Errorf("Parse(%q).IsZero() = %v", tt.in, got.IsZero())
			}
		})
	}
}
