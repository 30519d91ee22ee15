package symstore

import (
	"fmt"
	"sync"

	"github.com/stackimage/stackimage/image"
)

// The walker decodes a few instructions (the call before a return address,
// prologue and epilogue shapes at the PC) to place frame 0's caller. A
// crash dump holds the stack, not the code, so the code comes from the
// image files: Entry.Code reads them, a page at a time, and keeps the
// pages with the entry, which every dump using the files shares.

// codePageSize is the unit in which code is read from a file and cached:
// a walk reads a few instructions at each of a few addresses, so whole
// segments (hundreds of MiB in a large app) are never read.
const codePageSize = 4096

// maxCodePages bounds an entry's cache (4 MiB). When it is full it is emptied:
// walks touch few pages, and rereading one costs a single ReadAt.
const maxCodePages = 1024

// codePageKey names a page of one segment's file bytes.
type codePageKey struct {
	im      *image.Image
	segOff  uint64 // the segment's file offset, telling segments apart
	pageOff uint64 // the page's file offset, a multiple of codePageSize
}

// codeCache holds an entry's code pages. It lives with the entry, which
// owns the image files and is shared by every dump that uses them.
type codeCache struct {
	mu    sync.Mutex
	pages map[codePageKey][]byte
	limit int // pages kept at most; zero means maxCodePages
}

// Code returns the code bytes of the entry's files at an unslid address in
// the segment named segment, from there to the end of its page (or of the
// segment's file bytes), at least one. ok is false when no file holds
// bytes there: a dSYM's segments have none, so the binary is read, which
// comes before its dSYM.
func (e *Entry) Code(segment string, unslid uint64) (code []byte, ok bool, err error) {
	for _, im := range e.Images {
		for _, s := range im.Segments {
			if s.Name != segment || unslid < s.Addr || unslid-s.Addr >= s.FileSize {
				continue
			}
			code, err = e.code.page(im, s, s.Offset+(unslid-s.Addr))
			return code, true, err
		}
	}
	return nil, false, nil
}

// page returns seg's file bytes from off to the end of off's page (or of
// the segment), reading and caching the page when needed.
func (c *codeCache) page(im *image.Image, seg image.Segment, off uint64) ([]byte, error) {
	page := off &^ (codePageSize - 1)
	key := codePageKey{im: im, segOff: seg.Offset, pageOff: page}
	c.mu.Lock()
	data, ok := c.pages[key]
	c.mu.Unlock()
	if !ok {
		start := max(page, seg.Offset)
		end := min(page+codePageSize, seg.Offset+seg.FileSize)
		var err error
		data, err = im.ReadSegment(image.Segment{Name: seg.Name, Offset: start, FileSize: end - start})
		if err != nil {
			return nil, err
		}
		// Pad the front so that data[i] is at page+i.
		data = append(make([]byte, start-page, start-page+uint64(len(data))), data...)
		c.mu.Lock()
		limit := c.limit
		if limit == 0 {
			limit = maxCodePages
		}
		if c.pages == nil || len(c.pages) >= limit {
			c.pages = map[codePageKey][]byte{}
		}
		c.pages[key] = data
		c.mu.Unlock()
	}
	if off-page >= uint64(len(data)) {
		return nil, fmt.Errorf("code at file offset %#x of %s: past the segment's file bytes", off, im.Name)
	}
	return data[off-page:], nil
}
