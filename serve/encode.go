package serve

import (
	"encoding/json"
	"strconv"
)

// Frames are most of an answer and most of the time spent writing it:
// appendFrame writes one as encoding/json would (same fields, order and
// omissions; TestAppendFrameMatchesEncodingJSON holds it to that) without
// reflection.

// appendJSONString appends s as a JSON string. Printable ASCII without
// quotes or backslashes, nearly every symbol and path, is copied as is;
// anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendHex(b []byte, v uint64) []byte {
	b = append(b, `"0x`...)
	b = strconv.AppendUint(b, v, 16)
	return append(b, '"')
}

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
	return appendJSONString(appendField(b, first, key), v)
}

func appendInt(b []byte, first *bool, key string, v int, omitEmpty bool) []byte {
	if omitEmpty && v == 0 {
		return b
	}
	return strconv.AppendInt(appendField(b, first, key), int64(v), 10)
}

// appendFrame appends a frame's JSON object.
func appendFrame(b []byte, f *symbolicatedFrame) []byte {
	first := true
	b = append(b, '{')
	b = appendString(b, &first, "status", f.Status, false)
	b = appendInt(b, &first, "original_index", f.OriginalIndex, false)
	b = appendHex(appendField(b, &first, "instruction_addr"), uint64(f.InstructionAddr))
	b = appendString(b, &first, "addr_mode", f.AddrMode, true)
	b = appendString(b, &first, "package", f.Package, true)
	b = appendString(b, &first, "lang", f.Lang, true)
	b = appendString(b, &first, "symbol", f.Symbol, true)
	if f.SymAddr != nil {
		b = appendHex(appendField(b, &first, "sym_addr"), uint64(*f.SymAddr))
	}
	b = appendString(b, &first, "function", f.Function, true)
	b = appendString(b, &first, "filename", f.Filename, true)
	b = appendString(b, &first, "abs_path", f.AbsPath, true)
	b = appendInt(b, &first, "lineno", f.Lineno, true)
	b = appendString(b, &first, "trust", f.Trust, true)
	b = appendInt(b, &first, "column", f.Column, true)
	if f.Inlined {
		b = append(appendField(b, &first, "inlined"), "true"...)
	}
	b = appendString(b, &first, "symbol_source", f.SymbolSource, true)
	b = appendString(b, &first, "found_by", f.FoundBy, true)
	return append(b, '}')
}

// appendStacktrace appends a stack trace's JSON object.
func appendStacktrace(b []byte, st *symbolicatedStacktrace) []byte {
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
	b = append(appendField(b, &first, "frames"), '[')
	for i := range st.Frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFrame(b, &st.Frames[i])
	}
	b = append(b, ']')
	b = appendString(b, &first, "stop_reason", st.StopReason.String(), true)
	return append(b, '}')
}
