package symbolicator

import (
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/uuid"
)

// Found is what a service found for one module's symbols, as its answer
// says it: a neutral shape, so that this package needs no symbol cache.
type Found struct {
	// Status is the module's debug status (StatusFound, StatusMissing,
	// or the cache's "timeout", "fetching_failed"...); Err why it was
	// not found, or what was wrong with what was.
	Status string
	Err    string
	// Arch, HasDebug and HasUnwind describe the symbols found: their
	// architecture, whether they hold debug information, and whether
	// the executable or debug file (unwind tables) came with them.
	Arch                string
	HasDebug, HasUnwind bool
	// Source and Location say where the symbols were found, or looked
	// for.
	Source, Location string
}

// FoundModule is a module of the answer with what was found for it (f,
// nil when it was not looked up); walks says the dump was walked, so
// that its unwind tables were used; withCandidates lists where its
// symbols were looked for.
func FoundModule(m Module, f *Found, walks, withCandidates bool) CompleteModule {
	c := CompleteModule{Module: m, DebugStatus: StatusUnused, Arch: "unknown"}
	switch {
	case f == nil:
	case f.Status == StatusFound:
		c.DebugStatus, c.Arch = StatusFound, f.Arch
		c.Features = Features{HasDebugInfo: f.HasDebug, HasSymbols: true, HasUnwindInfo: f.HasUnwind}
		c.Error = f.Err
		c.UnwindStatus = StatusUnused
		if walks {
			c.UnwindStatus = StatusMissing
			if f.HasUnwind {
				c.UnwindStatus = StatusFound
			}
		}
		if withCandidates {
			c.Candidates = []Candidate{{Source: f.Source, Location: f.Location, Download: map[string]string{"status": "ok"}}}
		}
	case f.Status != "":
		c.DebugStatus = f.Status
		c.Error = f.Err
		if withCandidates {
			c.Candidates = []Candidate{{Source: f.Source, Location: f.Location, Download: map[string]string{"status": "notfound"}}}
		}
	}
	return c
}

// DumpModules lists a dump's images as symbolicator's modules, with
// what was found for each (found gives it by UUID); walks says the dump
// was walked.
func DumpModules(d *dump.Dump, found func(uuid.UUID) *Found, walks bool) []CompleteModule {
	modules := make([]CompleteModule, 0, len(d.Images))
	for _, im := range d.Images {
		raw := Module{Type: "macho", DebugID: strings.ToLower(im.UUID.String()), CodeID: im.UUID.Hex(),
			CodeFile: im.Path, DebugFile: im.Name, ImageAddr: Hex(im.LoadAddress)}
		if raw.CodeFile == "" {
			raw.CodeFile = im.Name
		}
		if im.Size > 0 {
			size := Hex(im.Size)
			raw.ImageSize = &size
		}
		if im.UUID.IsZero() {
			modules = append(modules, CompleteModule{Module: raw, DebugStatus: StatusMissing, Arch: "unknown", Error: "the image has no UUID"})
			continue
		}
		modules = append(modules, FoundModule(raw, found(im.UUID), walks, false))
	}
	return modules
}

// AnswerModules lists the modules of the answer to d: the request's own
// when a request (wire) made d, each with where its symbols were looked
// for when the request asks (options.dif_candidates), else d's images.
// found gives what was found for a UUID; walks says d was walked.
func AnswerModules(d *dump.Dump, wire *Input, found func(uuid.UUID) *Found, walks bool) []CompleteModule {
	if wire == nil {
		return DumpModules(d, found, walks)
	}
	return wire.Modules(func(m Module, id uuid.UUID) CompleteModule {
		return FoundModule(m, found(id), false, wire.Request.Options.DIFCandidates)
	})
}
