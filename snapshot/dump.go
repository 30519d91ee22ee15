package snapshot

import "github.com/stackimage/stackimage/dump"

// Dump returns the snapshot in the common dump model. The model shares the
// snapshot's registers and memory.
func (s *Snapshot) Dump() *dump.Dump {
	d := &dump.Dump{Format: dump.FormatSnapshot, Arch: s.Arch}
	if s.Memory != nil {
		d.Memory = s.Memory
	}
	for _, im := range s.Images {
		d.Images = append(d.Images, dump.Image{Name: im.Name, UUID: im.UUID, LoadAddress: im.LoadAddress, Size: im.Size})
	}
	for i, th := range s.Threads {
		d.Threads = append(d.Threads, dump.Thread{Index: i, ID: th.ID, Name: th.Name, Crashed: th.Crashed,
			Registers: th.Registers, StackLow: th.StackLow, StackHigh: th.StackHigh})
	}
	return d
}
