package hostile

import (
	"bytes"
	"encoding/binary"
)

// Kind says what a case's bytes are, and so which entry points the runners
// call with them.
type Kind int

const (
	// KindMachO is a Mach-O file, thin or fat. The library runner opens it,
	// reads every table of every slice, builds its symbol table and
	// indexes its DWARF; the command runner uses it as the symbol file of
	// a snapshot naming its UUID (symbolicate), and runs atos and images
	// on it.
	KindMachO Kind = iota
	// KindDump is input to symbolicate: a snapshot or a crash report. The
	// library runner parses it; the command runner symbolicates it.
	KindDump
)

// Case is one hostile input.
type Case struct {
	// Name says what the input is, prefixed by its class
	// ("damaged/export-trie-loop").
	Name string
	Kind Kind
	// Build makes the input, the same bytes on every call.
	Build func() []byte
	// WantErr, when set, is part of the error the library must return:
	// the input is unusable, and must be refused clearly (the command then
	// exits with status 1 and says why). Otherwise the library must return
	// a result, partial when the input is damaged.
	WantErr string
	// WantWarnings are parts of the warnings that must come with the
	// result (symtab.Table.Warnings for KindMachO): each damaged part is
	// named.
	WantWarnings []string
	// WantSymbol, for KindMachO, is the name symtab must give CodeAddr:
	// the damage must not cost the good symbol. Empty: no check.
	WantSymbol string
}

// Size classes: big enough that quadratic work or a per-count allocation
// shows (seconds, or more than the budget), small enough to build in
// milliseconds.
const (
	sortSymbols    = 20000
	sortNameLength = 660000
)

// Cases returns the hostile corpus. Each class of attack the project has
// met is here at a size where the bug showed; special files (FIFOs,
// devices) and symbolic links are not bytes, and have their own tests in
// cmd/stackimage and symbolize.
func Cases() []Case {
	good := Symbol{Name: "_good", Addr: CodeAddr}
	return []Case{
		{
			// 20,000 symbols at one address named by suffixes of one
			// 660 KB string: a sort comparing whole names ran minutes.
			Name: "sort/shared-suffixes", Kind: KindMachO,
			Build: func() []byte {
				strs := append([]byte{0}, bytes.Repeat([]byte{'a'}, sortNameLength)...)
				strs = append(strs, 0)
				syms := make([]Symbol, sortSymbols)
				for i := range syms {
					syms[i] = Symbol{Strx: uint32(1 + (i*7919)%sortSymbols), Addr: CodeAddr}
				}
				return MachO{UUID: [16]byte{0x50}, Strings: strs, Symbols: syms}.Bytes()
			},
		},
		{
			Name: "sort/hidden-names", Kind: KindMachO,
			Build: func() []byte {
				return MachO{UUID: [16]byte{0x51}, Symbols: []Symbol{
					{Name: "__hidden#0_", Addr: CodeAddr}, {Name: "_good", Addr: CodeAddr},
				}}.Bytes()
			},
			WantSymbol: "good",
		},
		{
			Name: "damaged/nlist-name-past-strings", Kind: KindMachO,
			Build: func() []byte {
				return MachO{UUID: [16]byte{0x52}, Strings: []byte("\x00_good\x00"), Symbols: []Symbol{
					{Strx: 1, Addr: CodeAddr}, {Strx: 0x7fffffff, Addr: CodeAddr + 0x20},
				}}.Bytes()
			},
			WantWarnings: []string{"LC_SYMTAB: symbol 1 skipped"},
			WantSymbol:   "good",
		},
		{
			Name: "damaged/many-bad-nlists", Kind: KindMachO,
			Build: func() []byte {
				syms := []Symbol{{Strx: 1, Addr: CodeAddr}}
				for i := 0; i < 50000; i++ {
					syms = append(syms, Symbol{Strx: 0x7fffffff, Addr: CodeAddr + 4 + uint64(i)})
				}
				return MachO{UUID: [16]byte{0x53}, Strings: []byte("\x00_good\x00"), Symbols: syms}.Bytes()
			},
			WantWarnings: []string{"LC_SYMTAB: symbol 1 skipped", "and 49990 more problems"},
			WantSymbol:   "good",
		},
		{
			Name: "damaged/export-trie-loop", Kind: KindMachO,
			Build: func() []byte {
				return MachO{UUID: [16]byte{0x54}, Symbols: []Symbol{good},
					ExportTrie: ExportTrie([]string{"_exported"}, []uint64{0x40}, true)}.Bytes()
			},
			WantWarnings: []string{"export trie: node reached twice"},
			WantSymbol:   "good",
		},
		{
			// Both edges of every node of a chain lead to the next node:
			// walked as a tree, 2^15 paths, and more with longer chains.
			Name: "damaged/export-trie-shared-nodes", Kind: KindMachO,
			Build: func() []byte {
				var trie []byte
				const depth = 15 // offsets stay one-byte ULEB128s
				for i := 0; i < depth; i++ {
					next := uint64(len(trie)) + 8 // each node is 8 bytes
					trie = append(trie, 0, 2, 'a', 0, byte(next), 'b', 0, byte(next))
				}
				trie = append(trie, 0, 0)
				return MachO{UUID: [16]byte{0x55}, Symbols: []Symbol{good}, ExportTrie: trie}.Bytes()
			},
			WantWarnings: []string{"export trie: node reached twice"},
			WantSymbol:   "good",
		},
		{
			Name: "damaged/function-starts-overflow", Kind: KindMachO,
			Build: func() []byte {
				starts := append(ULEB128(nil, CodeOffset+0x40), append(bytes.Repeat([]byte{0xff}, 10), 0x7f)...) // bits past the 64th
				return MachO{UUID: [16]byte{0x56}, Symbols: []Symbol{good}, FunctionStarts: starts}.Bytes()
			},
			WantWarnings: []string{"LC_FUNCTION_STARTS", "LEB128 number does not fit in 64 bits"},
			WantSymbol:   "good",
		},
		{
			Name: "damaged/absurd-nsyms", Kind: KindMachO,
			Build: func() []byte {
				b := MachO{UUID: [16]byte{0x57}, Symbols: []Symbol{good},
					ExportTrie: ExportTrie([]string{"_good"}, []uint64{0}, false)}.Bytes()
				binary.LittleEndian.PutUint32(symtabCommand(b)[12:], 0xffffffff)
				return b
			},
			WantWarnings: []string{"LC_SYMTAB skipped", "nsyms 4294967295"},
			WantSymbol:   "good", // from the export trie
		},
		{
			Name: "damaged/fat-one-bad-slice", Kind: KindMachO,
			Build: func() []byte {
				ok := MachO{UUID: [16]byte{0x58}, Symbols: []Symbol{good}}.Bytes()
				bad := MachO{UUID: [16]byte{0x59}}.Bytes()
				binary.LittleEndian.PutUint32(bad[16:], 0xffffffff) // ncmds
				return Fat([][]byte{bad, ok}, []uint32{2, 0})
			},
			WantSymbol: "good",
		},
		{
			Name: "escapes/symbol-names", Kind: KindMachO,
			Build: func() []byte {
				return MachO{UUID: [16]byte{0x5a}, Symbols: []Symbol{
					{Name: "_\x1b[2J\x1b]0;owned\x07\nThread 9 Crashed:\xff\u009b\u202e", Addr: CodeAddr},
				}}.Bytes()
			},
		},
		{
			Name: "dump/zeros", Kind: KindDump,
			Build:   func() []byte { return make([]byte, 4<<20) },
			WantErr: "unrecognized report format",
		},
		{
			Name: "dump/snapshot-with-bom", Kind: KindDump,
			Build: func() []byte {
				return []byte("\ufeff" + `{"format": "stackimage.snapshot/v1", "arch": "arm64",
  "images": [{"name": "/app/App", "uuid": "50000000-0000-0000-0000-000000000000", "load_address": "0x100000000"}],
  "threads": [{"id": 1, "registers": {"pc": "0x100001000"}}], "memory": []}`)
			},
		},
		{
			Name: "dump/snapshot-absurd-counts", Kind: KindDump,
			Build: func() []byte {
				var b bytes.Buffer
				b.WriteString(`{"format": "stackimage.snapshot/v1", "arch": "arm64", "images": [`)
				for i := 0; i < 70000; i++ {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(`{}`)
				}
				b.WriteString(`], "threads": [], "memory": []}`)
				return b.Bytes()
			},
			WantErr: "more than 65536 (MaxImages)",
		},
		{
			// Thousands of threads walking one deep stack: a 760 KB
			// snapshot once made 4.2 GB of JSON work and 20 s.
			Name: "amplify/shared-stack", Kind: KindDump,
			Build: func() []byte { return SharedStackSnapshot(SharedStackThreads, SharedStackFrames, false) },
		},
		{
			Name: "amplify/shared-stack-distinct", Kind: KindDump,
			Build: func() []byte { return SharedStackSnapshot(SharedStackThreads, SharedStackFrames, true) },
		},
		{
			// 3,000 compile units naming successive entries of one 30 KB
			// abbreviation list, in big-endian DWARF: debug/dwarf decoded
			// each table to the list's end, unbounded because the check
			// of that cost read the unit headers little-endian and saw no
			// unit (85 KB: 2.1 GB allocated, 6 s).
			Name: "amplify/dwarf-abbrev-offsets-big-endian", Kind: KindMachO,
			Build:        func() []byte { return AbbrevListMachO(AbbrevDistinctBigEndian) },
			WantWarnings: []string{"debug_abbrev: the tables the units name"},
			WantSymbol:   "good",
		},
		{
			// 3,000 units without ranges naming the start of that list:
			// each unit's parse decoded the whole list again (85 KB:
			// 2.2 GB allocated, 4 s).
			Name: "amplify/dwarf-abbrev-shared", Kind: KindMachO,
			Build:      func() []byte { return AbbrevListMachO(AbbrevShared) },
			WantSymbol: "good",
		},
		{
			// Units whose header fills them name successive entries: the
			// check of the abbreviation cost skipped units without DIEs,
			// whose tables debug/dwarf parses all the same.
			Name: "amplify/dwarf-abbrev-offsets-empty-units", Kind: KindMachO,
			Build:        func() []byte { return AbbrevListMachO(AbbrevDistinctEmpty) },
			WantWarnings: []string{"debug_abbrev: the tables the units name"},
			WantSymbol:   "good",
		},
	}
}

// symtabCommand returns the LC_SYMTAB command of a file MachO built.
func symtabCommand(b []byte) []byte {
	off := 32
	for i := uint32(0); i < binary.LittleEndian.Uint32(b[16:]); i++ {
		if binary.LittleEndian.Uint32(b[off:]) == lcSymtab {
			return b[off:]
		}
		off += int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	panic("hostile: no LC_SYMTAB")
}
