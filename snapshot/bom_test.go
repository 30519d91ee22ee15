package snapshot

import (
	"bytes"
	"testing"
)

// TestByteOrderMark checks that a snapshot saved by an editor that starts
// UTF-8 files with a byte order mark is read like the same snapshot
// without it, as the crash report parsers read theirs.
func TestByteOrderMark(t *testing.T) {
	doc := encodeDoc(t, validDoc(t))
	want, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	withBOM := append([]byte("\ufeff"), doc...)
	got, err := Parse(withBOM)
	if err != nil {
		t.Fatalf("Parse(BOM + snapshot): %v", err)
	}
	if len(got.Threads) != len(want.Threads) || len(got.Images) != len(want.Images) {
		t.Errorf("Parse(BOM + snapshot) = %d threads, %d images; want %d, %d",
			len(got.Threads), len(got.Images), len(want.Threads), len(want.Images))
	}
	if _, err := Read(bytes.NewReader(withBOM)); err != nil {
		t.Errorf("Read(BOM + snapshot): %v", err)
	}
	// Only one mark, and only at the start.
	if _, err := Parse(append([]byte("\ufeff\ufeff"), doc...)); err == nil {
		t.Error("Parse(two BOMs + snapshot) succeeded; want an error")
	}
}
