package symbolicator

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Frames are most of an answer and most of the time spent writing it:
// AppendFrame writes one as encoding/json would (same fields, order and
// omissions; TestAppendFrameMatchesEncodingJSON holds it to that) without
// reflection.

// AppendModules appends modules' JSON objects, each followed by a newline
// as json.Encoder wrote them.
func AppendModules(b []byte, modules []CompleteModule) []byte {
	for i := range modules {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(AppendModule(b, &modules[i]), '\n')
	}
	return b
}

// AppendModule appends a module's JSON object as encoding/json writes it
// (TestAppendModuleMatchesEncodingJSON): a request names a few modules,
// and encoding/json took a few microseconds for each.
func AppendModule(b []byte, m *CompleteModule) []byte {
	b = AppendJSONString(append(b, `{"debug_status":`...), m.DebugStatus)
	b = AppendStringField(b, `,"unwind_status":`, m.UnwindStatus)
	b = append(b, `,"features":{"has_debug_info":`...)
	b = strconv.AppendBool(b, m.Features.HasDebugInfo)
	b = strconv.AppendBool(append(b, `,"has_unwind_info":`...), m.Features.HasUnwindInfo)
	b = strconv.AppendBool(append(b, `,"has_symbols":`...), m.Features.HasSymbols)
	b = strconv.AppendBool(append(b, `,"has_sources":`...), m.Features.HasSources)
	b = AppendJSONString(append(b, `},"arch":`...), m.Arch)
	b = AppendJSONString(append(b, `,"type":`...), m.Type)
	b = AppendStringField(b, `,"debug_id":`, m.DebugID)
	b = AppendStringField(b, `,"code_id":`, m.CodeID)
	b = AppendStringField(b, `,"debug_file":`, m.DebugFile)
	b = AppendStringField(b, `,"code_file":`, m.CodeFile)
	b = appendHex(append(b, `,"image_addr":`...), uint64(m.ImageAddr))
	if m.ImageSize != nil {
		b = appendHex(append(b, `,"image_size":`...), uint64(*m.ImageSize))
	}
	if len(m.Candidates) > 0 {
		// Asked for now and then: their maps are left to encoding/json,
		// which cannot fail on them.
		c, _ := json.Marshal(m.Candidates)
		b = append(append(b, `,"candidates":`...), c...)
	}
	b = AppendStringField(b, `,"error":`, m.Error)
	return append(b, '}')
}

// AppendJSONString appends s as a JSON string. Printable ASCII without
// quotes, backslashes or HTML's <, > and &, nearly every symbol and path,
// is copied as is; anything else goes through encoding/json.
func AppendJSONString(b []byte, s string) []byte {
	if !isPlainJSON(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	return appendQuoted(b, s)
}

// isPlainJSON tells a string AppendJSONString copies as it is. Symbols
// and paths are long (a Go function's name is often 40 bytes and more),
// so their bytes are looked at eight at a time.
func isPlainJSON(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if !plainWord(w) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !plainJSON[s[i]] {
			return false
		}
	}
	return true
}

// Bytes repeated in each of a word's eight bytes.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasZeroByte tells whether one of x's bytes is zero.
func hasZeroByte(x uint64) bool { return (x-ones)&^x&highs != 0 }

// plainWord tells whether all eight bytes of x are ones plainJSON
// passes: from 0x20 to 0x7e, and none of " \ < > &.
func plainWord(x uint64) bool {
	// A byte below 0x20 or above 0x7e: below 0x20, subtracting 0x20
	// borrows into its high bit; from 0x7f up, adding 1 sets it (or it
	// is already set).
	if ((x-0x20*ones)&^x|(x+ones)|x)&highs != 0 {
		return false
	}
	return !hasZeroByte(x^('"'*ones)) && !hasZeroByte(x^('\\'*ones)) &&
		!hasZeroByte(x^('<'*ones)) && !hasZeroByte(x^('>'*ones)) && !hasZeroByte(x^('&'*ones))
}

// appendQuoted appends a string that needs no escaping, between quotes.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON tells the bytes encoding/json writes as they are, one table
// look-up a byte.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendHex appends v as a quoted "0x…" in lowercase hex. Every frame has
// an address or two, and strconv's general formatting took a tenth of an
// answer's encoding.
func appendHex(b []byte, v uint64) []byte {
	var buf [20]byte // a quote, "0x", 16 digits and a quote
	i := len(buf) - 1
	buf[i] = '"'
	for {
		i--
		buf[i] = hexDigits[v&0xf]
		v >>= 4
		if v == 0 {
			break
		}
	}
	i -= 3
	buf[i], buf[i+1], buf[i+2] = '"', '0', 'x'
	return append(b, buf[i:]...)
}

const hexDigits = "0123456789abcdef"

// appendField appends ,"key": (or "key": for the first field).
func appendField(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendString(b []byte, first *bool, key, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	return AppendJSONString(appendField(b, first, key), v)
}

// AppendFrame appends a frame's JSON object. Its status always comes
// first, so every other field is written with its comma and key as one
// constant.
func AppendFrame(b []byte, f *SymbolicatedFrame) []byte {
	b = AppendJSONString(append(b, `{"status":`...), f.Status)
	b = strconv.AppendInt(append(b, `,"original_index":`...), int64(f.OriginalIndex), 10)
	b = appendHex(append(b, `,"instruction_addr":`...), uint64(f.InstructionAddr))
	b = AppendStringField(b, `,"addr_mode":`, f.AddrMode)
	b = AppendStringField(b, `,"package":`, f.Package)
	b = AppendStringField(b, `,"lang":`, f.Lang)
	var symbol []byte // the symbol's JSON string
	if f.Symbol != "" {
		b = append(b, `,"symbol":`...)
		start := len(b)
		b = AppendJSONString(b, f.Symbol)
		symbol = b[start:]
	}
	if f.SymAddr.set {
		b = appendHex(append(b, `,"sym_addr":`...), uint64(f.SymAddr.addr))
	}
	if symbol != nil && f.Function == f.Symbol {
		// Most often the same name: its JSON is copied, not made again.
		b = append(append(b, `,"function":`...), symbol...)
	} else {
		b = AppendStringField(b, `,"function":`, f.Function)
	}
	// The file name ends its path: when the path needs no escaping,
	// neither does the name, and neither is looked at byte by byte again.
	if isPlainJSON(f.AbsPath) && strings.HasSuffix(f.AbsPath, f.Filename) {
		if f.Filename != "" {
			b = appendQuoted(append(b, `,"filename":`...), f.Filename)
		}
		if f.AbsPath != "" {
			b = appendQuoted(append(b, `,"abs_path":`...), f.AbsPath)
		}
	} else {
		b = AppendStringField(b, `,"filename":`, f.Filename)
		b = AppendStringField(b, `,"abs_path":`, f.AbsPath)
	}
	b = appendIntField(b, `,"lineno":`, f.Lineno)
	b = AppendStringField(b, `,"trust":`, f.Trust)
	b = appendIntField(b, `,"column":`, f.Column)
	if f.Inlined {
		b = append(b, `,"inlined":true`...)
	}
	b = AppendStringField(b, `,"symbol_source":`, f.SymbolSource)
	b = AppendStringField(b, `,"found_by":`, f.FoundBy)
	return append(b, '}')
}

// AppendStringField appends a field's comma and key (prefix) and its
// value, unless the value is empty (omitempty).
func AppendStringField(b []byte, prefix, v string) []byte {
	if v == "" {
		return b
	}
	return AppendJSONString(append(b, prefix...), v)
}

// appendIntField is AppendStringField for a number.
func appendIntField(b []byte, prefix string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, prefix...), int64(v), 10)
}

// AppendStacktrace appends a stack trace's JSON object.
func AppendStacktrace(b []byte, st *SymbolicatedStacktrace) []byte {
	b = appendStacktraceHead(b, st)
	for i := range st.Frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendFrame(b, &st.Frames[i])
	}
	return appendStacktraceTail(b, st)
}

// appendStacktraceHead appends a stack trace's JSON object up to its
// frames' opening bracket.
func appendStacktraceHead(b []byte, st *SymbolicatedStacktrace) []byte {
	first := true
	b = append(b, '{')
	if st.ThreadID != nil {
		b = strconv.AppendUint(appendField(b, &first, "thread_id"), *st.ThreadID, 10)
	}
	b = appendString(b, &first, "thread_name", st.ThreadName, true)
	if st.IsRequesting != nil {
		b = strconv.AppendBool(appendField(b, &first, "is_requesting"), *st.IsRequesting)
	}
	if len(st.Registers) > 0 {
		regs, _ := json.Marshal(st.Registers)
		b = append(appendField(b, &first, "registers"), regs...)
	}
	return append(appendField(b, &first, "frames"), '[')
}

// appendStacktraceTail appends the rest of a stack trace's JSON object,
// from its frames' closing bracket.
func appendStacktraceTail(b []byte, st *SymbolicatedStacktrace) []byte {
	first := false // the frames came before
	b = appendString(append(b, ']'), &first, "stop_reason", st.StopReason.String(), true)
	return append(b, '}')
}
