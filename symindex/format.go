// Package symindex writes and reads persisted symbol indexes: one file per
// image (UUID and architecture) holding everything needed to answer "which
// symbol, file:line and inlined functions at this address" without the
// binary or its DWARF.
//
// A file holds the image's symbol tables as package symtab builds them
// (LC_SYMTAB names, export-trie names and bare function starts, with the
// section ranges that bound lookups), its segments, the address ranges of
// its DWARF answers (line-table rows merged with function and
// inlined-subroutine ranges) with the tree of inlined calls, and one string
// table. Write builds it from symtab.Tables and debuginfo.Indexes; Open maps
// it (mmap where the system has it) and answers lookups straight from the
// mapped bytes.
//
// The reader trusts nothing: the header's magic, version and length and a
// CRC-32C of the directory and of the per-chunk checksums are checked when
// the file is opened, every section must lie inside the file, each 64 KiB
// chunk is checked against its CRC-32C the first time a lookup reads it
// (an answer is never made from bytes that fail), and every offset read
// at lookup time is bounds-checked, so a damaged file gives errors or
// empty answers, never a panic or a read past its end. docs/symindex.md
// describes the format.
package symindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
)

// Magic starts every index file.
const Magic = "STKSYMIX"

// Version is the format version this package writes and reads. A reader
// refuses any other version, older or newer, with ErrVersion. Version 3
// added the demangled names (kinds 15 and 16); version 4 made a chunk of
// them cover 256 string ids instead of 64.
const Version = 4

// Extension is the file name extension of an index file.
const Extension = ".symindex"

// headerSize is the size of the fixed header; the section directory
// follows it.
const headerSize = 64

// Header field offsets.
const (
	offMagic      = 0  // [8]byte
	offVersion    = 8  // u32
	offSections   = 12 // u32: number of directory entries
	offUUID       = 16 // [16]byte
	offCPUType    = 32 // u32
	offCPUSubtype = 36 // u32
	offFileSize   = 40 // u64: the whole file
	offChecksum   = 48 // u32: CRC-32C of the directory and the chunk checksums
	offFileType   = 52 // u32: the Mach-O file type (MH_EXECUTE, ...)
)

// dirEntrySize is one section directory entry: kind u32, table u32,
// offset u64, size u64.
const dirEntrySize = 24

// Section kinds.
const (
	kindStrings     = 1  // front-coded string blocks
	kindSegments    = 2  // segmentSize records
	kindSymRanges   = 3  // per table: section ranges, rangeSize records
	kindSymBlocks   = 4  // per table: symBlockSize records
	kindSymStream   = 5  // per table: the entries of the blocks
	kindStringIndex = 6  // u32 offset in the string blob per block of strBlock strings
	kindNodes       = 8  // functions and inlined calls, varint-coded
	kindFiles       = 9  // string id u32 per source file
	kindLineBlocks  = 10 // lineBlockSize records
	kindLineStream  = 11 // varint-coded ranges
	kindImageName   = 12 // u32 string id: the file the index was made from
	kindLangs       = 13 // string id u32 per language name of the nodes
	kindChecks      = 14 // CRC-32C u32 per chunk of the file; the last section
	kindDemIndex    = 15 // u32 offset in the demangled stream per demChunk string ids
	kindDemangled   = 16 // the demangled forms of the linkage names, demChunk ids a chunk
	maxSectionKinds = 64 // bounds the directory of a hostile file
	maxTables       = 16 // symbol tables per file (binary, dSYM, ...)
)

// Record sizes.
const (
	segmentSize   = 24 // name id u32, prot u32, addr u64, size u64
	rangeSize     = 24 // start u64, end u64, index u8, flags u8, 6 bytes padding
	symBlockSize  = 16 // first address u64, stream offset u32, entry count u32
	lineBlockSize = 16 // first address u64, stream offset u32, count u32
)

// rangeData is the flag of a section range whose section holds no
// instructions (symtab.SectionRange.Data). Files written before it have 0
// there: every section is then taken for code, as it was.
const rangeData = 1

// blockSize is the number of symbols a symbol block in code holds at
// least (more when the next entries share the last one's address: equal
// addresses are never split between blocks), and lineBlockRanges the most
// ranges one line block holds: a lookup decodes one block of each.
const (
	blockSize       = 8
	lineBlockRanges = 32
)

// dataBlockSize is the number of symbols a block outside code holds at
// least: such blocks are compressed, and bigger ones compress better.
const dataBlockSize = 1024

// maxBlockEntries bounds the entries of one symbol block (the count
// shares its u32 with blockDeflated and the block's address shift), and
// maxInflated the bytes of a compressed block, which are at most
// maxInflateRatio times its compressed bytes.
const (
	maxBlockEntries = 1<<23 - 1
	blockDeflated   = 1 << 23
	maxInflated     = 1 << 20
	maxInflateRatio = 16
)

// demChunk is the number of string ids one chunk of demangled names
// covers (a multiple of strBlock): a lookup that needs one demangled name
// decodes its chunk's names and keeps them. A chunk is DEFLATE-compressed
// when that saves an eighth and inflates to at most demInflateRatio times
// its bytes, and its names add up to at most demExpandRatio times its
// bytes (the writer leaves names out to keep to it): a reader allocates
// no more for a chunk.
const (
	demChunk        = 256
	demInflateRatio = 16
	demExpandRatio  = 32
)

// vmProtExecute marks a segment of code (VM_PROT_EXECUTE).
const vmProtExecute = 4

// strBlock is the number of strings of one front-coded string block: a
// string is found by decoding at most this many.
const strBlock = 16

// chunkShift gives the size of a checksummed chunk (64 KiB): a lookup
// verifies the chunks it reads on first use, not the whole file at open.
const chunkShift = 16

// maxAddrDelta bounds the address step between two ranges of the line
// stream, which shares its varint with four flag bits.
const maxAddrDelta = 1<<59 - 1

// Line stream flag bits, in the low bits of each range's first varint.
const (
	flagFound    = 1 << 0 // the DWARF answers here
	flagLeaf     = 1 << 1 // the innermost node differs from the previous range's
	flagFile     = 1 << 2 // the file differs
	flagColumn   = 1 << 3 // the column is not 0
	lineFlagBits = 4
	maxLangs     = 255
)

// Node flag bits, the first uvarint of a node; the language table index
// plus one follows them (nodeLangShift).
const (
	nodeInlined   = 1 << 0 // the function was inlined into its parent
	nodeFunction  = 1 << 1 // a function name id follows
	nodeLinkage   = 1 << 2 // a linkage name id follows
	nodeDemangled = 1 << 3 // the function name is the demangled linkage name
	nodeCall      = 1 << 4 // the call site (file, line, column) follows
	nodeLangShift = 5
)

// noString marks an absent string reference.
const noString = ^uint32(0)

// castagnoli returns the CRC-32C table (hardware-accelerated on amd64 and
// arm64). It is made on first use: making it costs about half a
// millisecond, which every run of the command would otherwise pay at
// start, index or not.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

var le = binary.LittleEndian

// ErrVersion is wrapped by the error for a file of another format version.
var ErrVersion = errors.New("symindex: unsupported format version")

// ErrUUID is wrapped by the error for a file whose UUID is not the one
// asked for.
var ErrUUID = errors.New("symindex: UUID mismatch")

// FormatError reports a malformed index file: what is wrong and where (the
// byte offset in the file of the field or record).
type FormatError struct {
	Off int64
	Msg string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("symindex: %s at offset %#x", e.Msg, e.Off)
}
