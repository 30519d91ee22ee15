package crashreport

import (
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/dump"
)

// Dump returns the report in the common dump model. The model shares the
// report's registers and stack dumps.
func (r *Report) Dump() *dump.Dump {
	d := &dump.Dump{
		Format: dump.Format(r.Format),
		Arch:   r.Arch,
		System: dump.System{OS: r.OS, Hardware: r.Hardware},
		Process: dump.Process{Name: r.Process, PID: r.PID, Path: r.Path, Identifier: r.Identifier,
			Version: r.Version, Time: r.Time, IncidentID: r.IncidentID},
		ReporterVersion: r.ReportVersion,
		CallerAddresses: r.callerAddresses(),
		Warnings:        append([]string(nil), r.Warnings...),
	}
	if ex := r.Exception; ex != (Exception{}) {
		ex.HasAddress = ex.Address != 0
		d.Crash = &ex
	}
	d.Images = append([]dump.Image(nil), r.Images...)
	for _, th := range r.Threads {
		d.Threads = append(d.Threads, r.dumpThread(th))
	}
	d.LastExceptionBacktrace = r.dumpFrames(r.LastExceptionBacktrace)
	if r.RecrashThread != nil {
		t := r.dumpThread(*r.RecrashThread)
		d.RecrashThread = &t
	}
	return d
}

func (r *Report) dumpThread(th Thread) dump.Thread {
	th.Frames = r.dumpFrames(th.Frames)
	if st, ok := th.Stack.(*StackDump); ok && th.StackHigh == 0 {
		setStack(&th, st) // a report made by hand
	}
	return th
}

// dumpFrames converts frames, giving each the load address of its image:
// the listed image's, else the one the frame line gave.
func (r *Report) dumpFrames(frames []Frame) []dump.Frame {
	if frames == nil {
		return nil
	}
	out := append([]dump.Frame(nil), frames...)
	for i, f := range frames {
		if f.ImageIndex >= 0 && f.ImageIndex < len(r.Images) {
			out[i].ImageLoadAddress = r.Images[f.ImageIndex].LoadAddress
		}
	}
	return out
}

// callerAddresses tells how the report's caller addresses were written.
//
// KSCrash before report format 3 rounded every return address its own
// walker read down to twice the pointer size; later versions write them
// as they are. KSCrash's Apple-style text (a .crash report with a "Stack
// Dump", which Apple never writes) does not state the version, so it is
// taken as possibly rounded.
func (r *Report) callerAddresses() dump.CallerAddresses {
	switch {
	case r.Format == FormatKSCrash && reportMajor(r.ReportVersion) < 3,
		r.Format == FormatCrash && r.hasStackDump():
		return dump.MaybeRoundedReturnAddresses
	}
	return dump.ReturnAddresses
}

// reportMajor returns the major number of a report version ("2.0" → 2),
// or 0 when there is none.
func reportMajor(version string) int {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	return n
}

// hasStackDump reports whether a thread of the report (or the reporter's
// own crashed thread) has a stack dump.
func (r *Report) hasStackDump() bool {
	for _, th := range r.Threads {
		if th.Stack != nil {
			return true
		}
	}
	return r.RecrashThread != nil && r.RecrashThread.Stack != nil
}
