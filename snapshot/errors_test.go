package snapshot

import (
	"errors"
	"testing"

	"github.com/stackimage/stackimage/archregs"
)

// TestFieldErrors breaks one field at a time and checks that Parse's error
// is a *FieldError naming the field's path, and that a cause from archregs
// stays reachable with errors.As.
func TestFieldErrors(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(doc map[string]any)
		wantPath string
		// wantCause, when set, is checked with errors.As.
		wantCause func(err error) bool
	}{
		{name: "bad document", mutate: nil, wantPath: ""},
		{name: "format", mutate: func(d map[string]any) { d["format"] = "other/v1" }, wantPath: "format"},
		{name: "unknown arch", mutate: func(d map[string]any) { d["arch"] = "ppc" }, wantPath: "arch",
			wantCause: func(err error) bool {
				var ae *archregs.UnknownArchError
				return errors.As(err, &ae) && ae.Name == "ppc"
			}},
		{name: "image uuid", mutate: func(d map[string]any) { elem(d, "images", 1)["uuid"] = "nope" }, wantPath: "images[1].uuid"},
		{name: "thread state size", mutate: func(d map[string]any) {
			child(elem(d, "threads", 0), "thread_state")["data"] = b64(make([]byte, 12))
		}, wantPath: "threads[0].thread_state",
			wantCause: func(err error) bool {
				var se *archregs.StateSizeError
				return errors.As(err, &se) && se.Size == 12 && se.Flavor == archregs.FlavorARMThreadState64
			}},
		{name: "register name", mutate: func(d map[string]any) { child(elem(d, "threads", 1), "registers")["eax"] = "0x1" },
			wantPath: "threads[1].registers.eax"},
		{name: "register type", mutate: func(d map[string]any) { child(elem(d, "threads", 1), "registers")["pc"] = 7 },
			wantPath: "threads[1].registers.pc"},
		{name: "overlapping memory", mutate: func(d map[string]any) { elem(d, "memory", 1)["address"] = "0x16fdff800" },
			wantPath: "memory[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("{")
			if tt.mutate != nil {
				doc := validDoc(t)
				tt.mutate(doc)
				data = encodeDoc(t, doc)
			}
			_, err := Parse(data)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse() error = %v (%T); want a *FieldError", err, err)
			}
			if fe.Path != tt.wantPath {
				t.Errorf("FieldError.Path = %q, want %q (error %v)", fe.Path, tt.wantPath, err)
			}
			if tt.wantCause != nil && !tt.wantCause(err) {
				t.Errorf("Parse() error = %v; its cause is not reachable with errors.As", err)
			}
		})
	}
}
