package snapshot

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/stackimage/stackimage/archregs"
)

// fileOut is fileJSON with its elements typed, for writing.
type fileOut struct {
	Format  string       `json:"format"`
	Arch    string       `json:"arch"`
	Images  []imageJSON  `json:"images"`
	Threads []threadJSON `json:"threads"`
	Memory  []memoryJSON `json:"memory"`
}

// Marshal writes a snapshot as indented JSON that Parse reads back to the
// same snapshot. A thread whose registers are all known is written as
// thread_state in the architecture's native flavor, the bytes
// thread_get_state returns; a thread with only some registers known is
// written as registers, so that unknown registers do not come back as
// known zeros.
//
// Marshal checks its output with Parse, so it returns an error for a
// snapshot Parse would reject (no threads, a thread without a PC, an image
// without a name, ...).
func Marshal(s *Snapshot) ([]byte, error) {
	if s == nil || s.Arch == nil {
		return nil, errors.New("snapshot: Marshal: no architecture")
	}
	out := fileOut{
		Format:  FormatV1,
		Arch:    s.Arch.Name,
		Images:  []imageJSON{},
		Threads: []threadJSON{},
		Memory:  []memoryJSON{},
	}
	for _, img := range s.Images {
		j := imageJSON{Name: img.Name, UUID: img.UUID.String(), LoadAddress: hex(img.LoadAddress)}
		if img.Size != 0 {
			j.Size = hex(img.Size)
		}
		out.Images = append(out.Images, j)
	}
	for i, th := range s.Threads {
		j, err := marshalThread(s.Arch, th)
		if err != nil {
			return nil, fmt.Errorf("snapshot: Marshal: threads[%d]: %v", i, err)
		}
		out.Threads = append(out.Threads, j)
	}
	for _, r := range s.Memory.All() {
		out.Memory = append(out.Memory, memoryJSON{Address: hex(r.Address), Data: base64.StdEncoding.EncodeToString(r.Data)})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("snapshot: Marshal: %v", err)
	}
	if _, err := Parse(data); err != nil {
		return nil, fmt.Errorf("snapshot: Marshal: the snapshot does not validate: %v", err)
	}
	return append(data, '\n'), nil
}

func marshalThread(arch *archregs.Arch, th Thread) (threadJSON, error) {
	id := th.ID
	j := threadJSON{ID: &id, Name: th.Name, Crashed: th.Crashed}
	if th.Registers == nil {
		return j, errors.New("no registers")
	}
	if th.Registers.Arch != arch {
		return j, fmt.Errorf("registers are %s, the snapshot %s", th.Registers.Arch, arch)
	}
	known := th.Registers.Values()
	if len(known) == len(arch.RegNames) {
		flavor := archregs.NativeFlavor(arch)
		data, err := th.Registers.Encode(flavor)
		if err != nil {
			return j, err
		}
		j.ThreadState = &threadStateJSON{Flavor: &flavor, Data: base64.StdEncoding.EncodeToString(data)}
	} else {
		j.Registers = make(map[string]json.RawMessage, len(known))
		for n, v := range known {
			j.Registers[n] = json.RawMessage(strconv.Quote(hex(v)))
		}
	}
	if th.StackLow != 0 || th.StackHigh != 0 {
		j.Stack = &stackJSON{Low: hex(th.StackLow), High: hex(th.StackHigh)}
	}
	return j, nil
}

// hex formats an address as the format spells it.
func hex(v uint64) string { return fmt.Sprintf("%#x", v) }
