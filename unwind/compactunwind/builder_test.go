package compactunwind

import (
	"encoding/binary"
	"sort"
)

// tableBuilder writes an __unwind_info section, as ld64 lays it out,
// for tests and benchmarks.
type tableBuilder struct {
	funcs         []Entry  // FuncStart, Encoding, and LSDA used; sorted by FuncStart
	end           uint32   // the sentinel's function offset
	common        []uint32 // common encodings
	personalities []uint32
	perPage       int
	compressed    bool
}

func le32put(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le16put(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }

func (tb *tableBuilder) build() []byte {
	sort.Slice(tb.funcs, func(i, j int) bool { return tb.funcs[i].FuncStart < tb.funcs[j].FuncStart })
	var pages [][]Entry
	for i := 0; i < len(tb.funcs); i += tb.perPage {
		pages = append(pages, tb.funcs[i:min(i+tb.perPage, len(tb.funcs))])
	}
	commonOff := uint32(headerSize)
	persOff := commonOff + 4*uint32(len(tb.common))
	indexOff := persOff + 4*uint32(len(tb.personalities))
	lsdaOff := indexOff + indexEntrySize*uint32(len(pages)+1)
	var lsdas []Entry
	for _, f := range tb.funcs {
		if f.LSDA != 0 {
			lsdas = append(lsdas, f)
		}
	}
	pagesOff := lsdaOff + lsdaEntrySize*uint32(len(lsdas))

	// Pages first, to know their offsets.
	var pageBytes []byte
	var pageOffs []uint32
	commonIndex := map[uint32]int{}
	for i, c := range tb.common {
		commonIndex[c] = i
	}
	for _, p := range pages {
		pageOffs = append(pageOffs, pagesOff+uint32(len(pageBytes)))
		var b []byte
		if !tb.compressed {
			b = le32put(b, pageRegular)
			b = le16put(b, 8)
			b = le16put(b, uint16(len(p)))
			for _, f := range p {
				b = le32put(b, f.FuncStart)
				b = le32put(b, f.Encoding)
			}
		} else {
			var local []uint32
			localIndex := map[uint32]int{}
			for _, f := range p {
				if _, ok := commonIndex[f.Encoding]; !ok {
					if _, ok := localIndex[f.Encoding]; !ok {
						localIndex[f.Encoding] = len(tb.common) + len(local)
						local = append(local, f.Encoding)
					}
				}
			}
			b = le32put(b, pageCompressed)
			b = le16put(b, 12)
			b = le16put(b, uint16(len(p)))
			b = le16put(b, uint16(12+4*len(p)))
			b = le16put(b, uint16(len(local)))
			for _, f := range p {
				idx, ok := commonIndex[f.Encoding]
				if !ok {
					idx = localIndex[f.Encoding]
				}
				b = le32put(b, uint32(idx)<<24|(f.FuncStart-p[0].FuncStart))
			}
			for _, e := range local {
				b = le32put(b, e)
			}
		}
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		pageBytes = append(pageBytes, b...)
	}

	out := le32put(nil, 1)
	for _, v := range []uint32{commonOff, uint32(len(tb.common)), persOff, uint32(len(tb.personalities)), indexOff, uint32(len(pages) + 1)} {
		out = le32put(out, v)
	}
	for _, c := range tb.common {
		out = le32put(out, c)
	}
	for _, p := range tb.personalities {
		out = le32put(out, p)
	}
	lsdaAt := lsdaOff
	for i, p := range pages {
		out = le32put(out, p[0].FuncStart)
		out = le32put(out, pageOffs[i])
		out = le32put(out, lsdaAt)
		for _, f := range p {
			if f.LSDA != 0 {
				lsdaAt += lsdaEntrySize
			}
		}
	}
	out = le32put(out, tb.end)
	out = le32put(out, 0)
	out = le32put(out, lsdaAt)
	for _, f := range lsdas {
		out = le32put(out, f.FuncStart)
		out = le32put(out, f.LSDA)
	}
	return append(out, pageBytes...)
}
