package uuid

import "testing"

func TestParseAndString(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"01D2A9D5-1F8A-35C8-9228-7C7CCA13C5FC", "01D2A9D5-1F8A-35C8-9228-7C7CCA13C5FC", true},
		{"01d2a9d51f8a35c892287c7cca13c5fc", "01D2A9D5-1F8A-35C8-9228-7C7CCA13C5FC", true},
		{"01D2A9D5+1F8A-35C8-9228-7C7CCA13C5FC", "", false},
		{"01D2A9D5", "", false},
		{"zzD2A9D51F8A35C892287C7CCA13C5FC", "", false},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("Parse(%q) error = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && u.String() != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, u.String(), tt.want)
		}
	}
	if !(UUID{}).IsZero() {
		t.Error("zero UUID not IsZero")
	}
}

func TestHex(t *testing.T) {
	u := UUID{0x37, 0x2c, 0xf4, 0xba, 0x9c, 0x07, 0x3c, 0x9b, 0xe5, 0xaf, 0x67, 0x10, 0xdc, 0xf0, 0x86, 0x07}
	if got, want := u.Hex(), "372cf4ba9c073c9be5af6710dcf08607"; got != want {
		t.Errorf("Hex = %q, want %q", got, want)
	}
	if back, err := Parse(u.Hex()); err != nil || back != u {
		t.Errorf("Parse(Hex) = %v, %v; want %v", back, err, u)
	}
}
