package aggregate

import (
	"encoding/binary"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/pprof/profile"
)

// encodeProfile serializes the fields of a profile that Profile fills
// (sample and period types, samples with locations, values and string
// labels, mappings, locations with lines, functions) as profile.proto
// spells them, uncompressed. profile.Profile's own encoder gathers every
// sample's labels and locations into new slices on one core; here the
// string table is made first and the rest is then encoded in pieces
// (profilePieces), on every core. A test holds the result, as
// profile.Parse reads it, equal to the encoder's.
func encodeProfile(p *profile.Profile) []byte {
	pieces := profilePieces(p)
	parts := make([][]byte, len(pieces))
	runPieces(len(pieces), func(i int) error {
		parts[i] = pieces[i](nil)
		return nil
	})
	return slices.Concat(parts...)
}

// samplesPerPiece is how many samples are encoded in one piece: about 2
// MB of a profile, on the million-stack bench input. Tests make it small.
var samplesPerPiece = 1 << 15

// profilePieces returns functions that encode a profile in pieces, each
// appending its piece to dst: their pieces in order are the profile.
// The string table is made first, on the caller's core; the pieces are
// independent of each other and may be made on any core in any order.
// Their number depends on the profile only, so that a profile written in
// pieces is the same whatever the number of cores.
func profilePieces(p *profile.Profile) []func(dst []byte) []byte {
	strs := stringTable{index: map[string]int64{"": 0}, list: []string{""}}
	for _, vt := range p.SampleType {
		strs.add(vt.Type)
		strs.add(vt.Unit)
	}
	if p.PeriodType != nil {
		strs.add(p.PeriodType.Type)
		strs.add(p.PeriodType.Unit)
	}
	// Label keys in sorted order, as the samples are encoded below: a
	// map's order would number the strings differently on every run.
	// Profile gives the samples of one label set one shared map, so each
	// map is read once.
	var keys []string
	seen := map[uintptr]bool{}
	for _, s := range p.Sample {
		if len(s.Label) == 0 {
			continue
		}
		id := mapIdentity(s.Label)
		if seen[id] {
			continue
		}
		seen[id] = true
		keys = sortedKeys(keys[:0], s.Label)
		for _, k := range keys {
			strs.add(k)
			for _, v := range s.Label[k] {
				strs.add(v)
			}
		}
	}
	for _, m := range p.Mapping {
		strs.add(m.File)
		strs.add(m.BuildID)
	}
	for _, f := range p.Function {
		strs.add(f.Name)
		strs.add(f.SystemName)
		strs.add(f.Filename)
	}

	// The sample types come first, with the first samples; the rest of
	// the profile last, after the samples: the order profile.Profile's
	// encoder writes them in.
	pieces := []func([]byte) []byte{}
	for lo := 0; lo == 0 || lo < len(p.Sample); lo += samplesPerPiece {
		samples := p.Sample[lo:min(len(p.Sample), lo+samplesPerPiece)]
		first := lo == 0
		pieces = append(pieces, func(out []byte) []byte {
			if first {
				var msg []byte
				for _, vt := range p.SampleType {
					out = appendMessage(out, 1, appendValueType(msg[:0], vt, &strs))
				}
			}
			return encodeSamples(out, samples, &strs)
		})
	}
	pieces = append(pieces, func(out []byte) []byte {
		return encodeProfileTail(out, p, &strs)
	})
	return pieces
}

// encodeProfileTail appends what follows the samples: mappings,
// locations, functions, the string table and the period.
func encodeProfileTail(out []byte, p *profile.Profile, strs *stringTable) []byte {
	var msg []byte
	for _, m := range p.Mapping {
		msg = appendVarintField(msg[:0], 1, m.ID)
		msg = appendVarintField(msg, 2, m.Start)
		msg = appendVarintField(msg, 3, m.Limit)
		msg = appendVarintField(msg, 4, m.Offset)
		msg = appendVarintField(msg, 5, uint64(strs.index[m.File]))
		msg = appendVarintField(msg, 6, uint64(strs.index[m.BuildID]))
		msg = appendBoolField(msg, 7, m.HasFunctions)
		msg = appendBoolField(msg, 8, m.HasFilenames)
		msg = appendBoolField(msg, 9, m.HasLineNumbers)
		msg = appendBoolField(msg, 10, m.HasInlineFrames)
		out = appendMessage(out, 3, msg)
	}
	var line []byte
	for _, l := range p.Location {
		msg = appendVarintField(msg[:0], 1, l.ID)
		if l.Mapping != nil {
			msg = appendVarintField(msg, 2, l.Mapping.ID)
		}
		msg = appendVarintField(msg, 3, l.Address)
		for _, ln := range l.Line {
			line = line[:0]
			if ln.Function != nil {
				line = appendVarintField(line, 1, ln.Function.ID)
			}
			line = appendVarintField(line, 2, uint64(ln.Line))
			line = appendVarintField(line, 3, uint64(ln.Column))
			msg = appendMessage(msg, 4, line)
		}
		msg = appendBoolField(msg, 5, l.IsFolded)
		out = appendMessage(out, 4, msg)
	}
	for _, f := range p.Function {
		msg = appendVarintField(msg[:0], 1, f.ID)
		msg = appendVarintField(msg, 2, uint64(strs.index[f.Name]))
		msg = appendVarintField(msg, 3, uint64(strs.index[f.SystemName]))
		msg = appendVarintField(msg, 4, uint64(strs.index[f.Filename]))
		msg = appendVarintField(msg, 5, uint64(f.StartLine))
		out = appendMessage(out, 5, msg)
	}
	for _, s := range strs.list {
		out = appendMessage(out, 6, []byte(s))
	}
	if p.PeriodType != nil {
		out = appendMessage(out, 11, appendValueType(msg[:0], p.PeriodType, strs))
	}
	return appendVarintField(out, 12, uint64(p.Period))
}

// encodeSamples appends samples to out.
func encodeSamples(out []byte, samples []*profile.Sample, strs *stringTable) []byte {
	var msg, packed []byte
	var keys []string
	labels := map[uintptr][]byte{} // a label map's encoded labels, by the map
	for _, s := range samples {
		packed = packed[:0]
		for _, l := range s.Location {
			packed = binary.AppendUvarint(packed, l.ID)
		}
		msg = appendMessage(msg[:0], 1, packed)
		packed = packed[:0]
		for _, v := range s.Value {
			packed = binary.AppendUvarint(packed, uint64(v))
		}
		msg = appendMessage(msg, 2, packed)
		if len(s.Label) > 0 {
			id := mapIdentity(s.Label)
			enc, ok := labels[id]
			if !ok {
				enc = encodeLabels(nil, s.Label, strs, &keys, &packed)
				labels[id] = enc
			}
			msg = append(msg, enc...)
		}
		out = appendMessage(out, 2, msg)
	}
	return out
}

// runPieces calls do(i) for every i below n on every core, the last
// first (the tail of a profile is the longest piece), and returns the
// first error by i.
func runPieces(n int, do func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				i := n - 1 - k
				errs[i] = do(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stringTable numbers a profile's strings, "" first as profile.proto
// requires.
type stringTable struct {
	index map[string]int64
	list  []string
}

func (t *stringTable) add(s string) {
	if _, ok := t.index[s]; !ok {
		t.index[s] = int64(len(t.list))
		t.list = append(t.list, s)
	}
}

func appendValueType(b []byte, vt *profile.ValueType, strs *stringTable) []byte {
	b = appendVarintField(b, 1, uint64(strs.index[vt.Type]))
	return appendVarintField(b, 2, uint64(strs.index[vt.Unit]))
}

// appendVarintField appends a varint field; zero, proto3's default, is
// left out.
func appendVarintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}

func appendBoolField(b []byte, field int, v bool) []byte {
	if !v {
		return b
	}
	return appendVarintField(b, field, 1)
}

// appendMessage appends a length-delimited field: a message, a packed
// array or a string.
func appendMessage(b []byte, field int, msg []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(msg)))
	return append(b, msg...)
}

// encodeLabels appends the sample labels of m to out, keys in sorted
// order; keys and packed are scratch space.
func encodeLabels(out []byte, m map[string][]string, strs *stringTable, keys *[]string, packed *[]byte) []byte {
	*keys = sortedKeys((*keys)[:0], m)
	for _, k := range *keys {
		for _, v := range m[k] {
			*packed = appendVarintField((*packed)[:0], 1, uint64(strs.index[k]))
			*packed = appendVarintField(*packed, 2, uint64(strs.index[v]))
			out = appendMessage(out, 3, *packed)
		}
	}
	return out
}

// sortedKeys appends m's keys to keys, sorted.
func sortedKeys(keys []string, m map[string][]string) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mapIdentity tells label maps apart by identity: the samples Profile
// makes share one map per label set, whose labels are then encoded once.
func mapIdentity(m map[string][]string) uintptr {
	return reflect.ValueOf(m).Pointer()
}
