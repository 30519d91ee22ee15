package aggregate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
)

// AddDump counts every thread of a dump as a record (DumpRecords).
func (a *Aggregator) AddDump(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, labels map[string]string) error {
	recs, err := DumpRecords(ctx, z, d, labels)
	a.AddBatch(recs)
	return err
}

// DumpRecords turns every thread of a dump into a record: a report's
// threads (.ips, .crash, KSCrash, sample) as the reporter wrote them, with
// no symbol file opened; a memory dump's threads (snapshot, minidump,
// core) walked first through z, which must then be set. The dump's
// machine, OS, app version and capture time become the records'
// attributes, and labels are given to each. The records share one Images
// slice. It is safe to call from many goroutines at once.
func DumpRecords(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, labels map[string]string) ([]*Record, error) {
	images := make([]Image, len(d.Images))
	for i, im := range d.Images {
		images[i] = Image{UUID: im.UUID, LoadAddress: Address(im.LoadAddress), Size: Address(im.Size),
			Name: im.Name, Path: im.Path, Main: d.Process.Path != "" && im.Path == d.Process.Path}
	}
	base := Record{Images: images, Device: d.System.Hardware, OSVersion: osVersion(d.System), AppVersion: d.Process.Version,
		Timestamp: parseTime(d.Process.Time), Labels: labels}
	var recs []*Record
	add := func(thread string, frames []uint64) {
		if len(frames) == 0 {
			return
		}
		rec := base
		rec.Thread, rec.Frames = thread, frames
		recs = append(recs, &rec)
	}
	if d.Format.IsReport() {
		for _, t := range d.Threads {
			frames := make([]uint64, 0, len(t.Frames))
			for _, f := range t.Frames {
				if f.Inlined {
					continue // the reporter's own inlining: the same address again
				}
				frames = append(frames, f.Address)
			}
			add(t.Name, frames)
		}
		return recs, nil
	}
	if z == nil {
		return nil, fmt.Errorf("aggregate: %s threads must be walked, which needs symbols", d.Format)
	}
	rep, err := report.Symbolicate(ctx, z, d)
	if rep == nil {
		return nil, err
	}
	for _, t := range rep.Threads {
		var frames []uint64
		for _, f := range t.Frames {
			if !f.Inlined {
				frames = append(frames, f.Address)
			}
		}
		add(t.Name, frames)
	}
	return recs, err
}

func osVersion(s dump.System) string {
	if s.OS != "" {
		return s.OS
	}
	return strings.TrimSpace(s.Version + " " + s.Build)
}

// timeLayouts are the capture times reporters write.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999 -0700", // Apple's .ips and .crash
	"2006-01-02 15:04:05 -0700",
	"2006-01-02T15:04:05.999999999Z0700",
}

// parseTime reads a dump's capture time; zero when it has none or none of
// the known layouts reads it.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
