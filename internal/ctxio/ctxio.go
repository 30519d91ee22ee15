// Package ctxio bounds reading by a context: a reader whose reads fail
// with the context's error once it has ended, so that a copy from a slow
// or endless stream (a download, a zip member, a request body) stops when
// the caller gives up.
package ctxio

import (
	"context"
	"io"
)

// Reader returns r whose every Read first checks ctx: once ctx has ended,
// Read returns ctx's error and reads r no further.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
