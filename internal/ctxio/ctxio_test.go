package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReaderStopsWithItsContext: reads pass through while the context
// lives, and fail with its error, reading nothing more, once it ends.
func TestReaderStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := strings.NewReader("abcdef")
	r := Reader(ctx, src)
	buf := make([]byte, 2)
	if n, err := r.Read(buf); n != 2 || err != nil || string(buf) != "ab" {
		t.Fatalf("Read = %d, %v, %q; want 2 bytes ab", n, err, buf)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel = %d, %v; want 0 and context.Canceled", n, err)
	}
	if rest, _ := io.ReadAll(src); string(rest) != "cdef" {
		t.Errorf("the source was read on after the context ended: %q left", rest)
	}
}
