package open

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestOpenStopsWhenContextEnds: File, ReaderAt and Reader read nothing
// once their context has ended, and return its error.
func TestOpenStopsWhenContextEnds(t *testing.T) {
	const path = "../fixtures/snapshots/chain-arm64-O1-deepest.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	r := &countingReaderAt{r: bytes.NewReader(data)}
	for name, open := range map[string]func() (*Input, error){
		"File":     func() (*Input, error) { return File(ended, path) },
		"ReaderAt": func() (*Input, error) { return ReaderAt(ended, r, int64(len(data))) },
		"Reader":   func() (*Input, error) { return Reader(ended, bytes.NewReader(data)) },
	} {
		if in, err := open(); in != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("%s with an ended context = %v, %v; want nothing and context.Canceled", name, in, err)
		}
	}
	if r.read != 0 {
		t.Errorf("ReaderAt read %d bytes with an ended context", r.read)
	}
	in, err := File(context.Background(), path)
	if err != nil || len(in.Dumps) == 0 {
		t.Fatalf("File = %v, %v", in, err)
	}
	in.Close()
}
