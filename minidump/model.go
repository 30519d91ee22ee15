package minidump

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/dump"
)

// Dump returns the minidump in the common dump model, which every input
// becomes before it is walked and symbolicated (every parser's verb for
// it). The model reads memory through the dump's Memory, lazily.
func (d *Dump) Dump() *dump.Dump {
	m := &dump.Dump{Format: dump.FormatMinidump, Arch: d.Arch, Memory: d.Memory}
	m.System = dump.System{OS: d.osString(), Version: d.OSVersion, Build: d.OSBuild, CPU: d.cpuString()}
	if !d.Time.IsZero() {
		m.Process.Time = d.Time.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if mi := d.MiscInfo; mi != nil && mi.HasProcessID {
		m.Process.PID = int(mi.ProcessID)
	}
	for _, mod := range d.Modules {
		im := dump.Image{Name: mod.Name, Path: mod.Path, LoadAddress: mod.Base, Size: mod.Size, DebugID: mod.DebugID}
		if mod.HasUUID {
			im.UUID = mod.UUID
		}
		if len(m.Images) == 0 {
			m.Process.Name, m.Process.Path = mod.Name, mod.Path // the main executable comes first
		}
		m.Images = append(m.Images, im)
	}
	crashedID, crashed := uint32(0), false
	if ex := d.Exception; ex != nil {
		crashedID, crashed = ex.ThreadID, true
		m.Crash = &dump.Crash{Type: ex.Type, Codes: ex.CodeName, Address: ex.Address, HasAddress: true,
			ThreadID: uint64(ex.ThreadID)}
		if ex.Type == "" {
			m.Crash.Type = ex.Reason
		}
	} else if bi := d.BreakpadInfo; bi != nil && bi.HasRequestingThreadID {
		crashedID, crashed = bi.RequestingThreadID, true
	}
	for i, th := range d.Threads {
		t := dump.Thread{Index: i, ID: uint64(th.ID), Name: th.Name, Registers: th.Registers()}
		if crashed && th.ID == crashedID {
			t.Crashed = true
			// The exception stream's context is where the thread stopped;
			// the thread list may hold the dump writer's own state.
			if ex := d.Exception; ex != nil && ex.Context != nil && ex.Context.Registers != nil {
				t.Registers = ex.Context.Registers
			}
		}
		if th.Stack.Size > 0 {
			t.StackLow, t.StackHigh = th.Stack.Addr, th.Stack.End()
		}
		m.Threads = append(m.Threads, t)
	}
	if ci := d.CrashpadInfo; ci != nil {
		m.Annotations = append(m.Annotations, sortedAnnotations("", ci.SimpleAnnotations)...)
		for _, mi := range ci.Modules {
			name := fmt.Sprintf("module %d", mi.ModuleIndex)
			if mi.ModuleIndex >= 0 && mi.ModuleIndex < len(d.Modules) {
				name = d.Modules[mi.ModuleIndex].Name
			}
			for _, v := range mi.ListAnnotations {
				m.Annotations = append(m.Annotations, dump.Annotation{Module: name, Value: v})
			}
			m.Annotations = append(m.Annotations, sortedAnnotations(name, mi.SimpleAnnotations)...)
			for _, a := range mi.Annotations {
				if a.Type == AnnotationString {
					m.Annotations = append(m.Annotations, dump.Annotation{Module: name, Key: a.Name, Value: string(a.Value)})
				}
			}
		}
	}
	for _, err := range d.Errors {
		m.Warnings = append(m.Warnings, err.Error())
	}
	return m
}

// osString names the OS as crash reports do: "macOS 10.12.6 (16G29)".
func (d *Dump) osString() string {
	s := strings.TrimSpace(d.OSName + " " + d.OSVersion)
	if d.OSBuild != "" {
		s += " (" + d.OSBuild + ")"
	}
	return s
}

func (d *Dump) cpuString() string {
	name := ""
	if d.Arch != nil {
		name = d.Arch.Name
	}
	if d.CPUDescription != "" {
		return strings.TrimSpace(name + " " + d.CPUDescription)
	}
	return name
}

func sortedAnnotations(module string, kv map[string]string) []dump.Annotation {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]dump.Annotation, 0, len(keys))
	for _, k := range keys {
		out = append(out, dump.Annotation{Module: module, Key: k, Value: kv[k]})
	}
	return out
}
