package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far long work has come (files symbolicated, indexes
// written) as a bar on stderr, redrawn in place. It shows nothing when
// stderr is not a terminal (a log, a pipe, a test) or with --quiet, so
// that only the command's own lines are written there.
type progress struct {
	bar   *progressbar.ProgressBar // nil when silent
	n     int                      // the work done, as set last
	drawn time.Time                // when the bar was last drawn
}

// redrawEvery is how often the bar is redrawn at most as work is done:
// often enough to look alive, seldom enough to cost nothing.
const redrawEvery = 100 * time.Millisecond

func newProgress(stderr io.Writer, quiet bool, total int, what string) *progress {
	if quiet || total <= 1 || !isTerminal(stderr) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true)), drawn: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// set shows n pieces of work as done.
func (p *progress) set(n int) {
	p.n = n
	if p.bar != nil && time.Since(p.drawn) >= redrawEvery {
		p.draw()
	}
}

func (p *progress) draw() {
	p.bar.Set(p.n)
	p.drawn = time.Now()
}

// writer returns w, whose writes, when w is a terminal, erase the bar
// first and draw it again after, so that a line written to the terminal
// does not land on the bar and the bar stays below the lines.
func (p *progress) writer(w io.Writer) io.Writer {
	if p.bar == nil || !isTerminal(w) {
		return w
	}
	return clearingWriter{p, w}
}

type clearingWriter struct {
	p *progress
	w io.Writer
}

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.bar.Clear()
	n, err := c.w.Write(b)
	c.p.draw()
	return n, err
}

// finish erases the bar for good.
func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
