package symbolicator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/symbolize"
)

// Hex is an address as symbolicator takes it: a "0x…" string, a
// decimal string or a JSON number. It is written back as "0x…".
type Hex uint64

// UnmarshalJSON reads a "0x…" string, a decimal string or a number.
func (h *Hex) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	var v uint64
	var err error
	if t, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		v, err = strconv.ParseUint(t, 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("address %s: want a hex string (0x…) or a number", b)
	}
	*h = Hex(v)
	return nil
}

// MarshalJSON writes the address as a "0x…" string.
func (h Hex) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(h), 16) + `"`), nil
}

// OptionalHex is an address that may be absent (sym_addr): a value
// rather than a pointer, so that a frame's costs no allocation.
type OptionalHex struct {
	addr Hex
	set  bool
}

// SomeHex is the address v, present.
func SomeHex(v uint64) OptionalHex { return OptionalHex{Hex(v), true} }

// IsZero tells encoding/json to omit an absent address (omitzero).
func (o OptionalHex) IsZero() bool { return !o.set }

// MarshalJSON writes a present address as Hex does.
func (o OptionalHex) MarshalJSON() ([]byte, error) { return o.addr.MarshalJSON() }

// UnmarshalJSON reads an address, or null for none.
func (o *OptionalHex) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = OptionalHex{}
		return nil
	}
	o.set = true
	return o.addr.UnmarshalJSON(b)
}

// Request is the body of POST /symbolicate.
type Request struct {
	Platform    string            `json:"platform,omitempty"`
	Signal      *int              `json:"signal,omitempty"`
	Sources     []json.RawMessage `json:"sources,omitempty"`
	Stacktraces []Stacktrace      `json:"stacktraces"`
	// Threads is the older name of Stacktraces.
	Threads []Stacktrace `json:"threads,omitempty"`
	Modules []Module     `json:"modules"`
	Options struct {
		DIFCandidates bool `json:"dif_candidates"`
		// NoDemangle is ours: keep names as the binary spells them.
		NoDemangle bool `json:"no_demangle"`
	} `json:"options"`
}

// Stacktrace is a stack trace of a request: its frames, innermost first,
// and the registers, which the answer echoes.
type Stacktrace struct {
	Registers map[string]Hex `json:"registers,omitempty"`
	Frames    Frames         `json:"frames"`
}

// Frame is a frame of a request.
type Frame struct {
	InstructionAddr Hex    `json:"instruction_addr"`
	AddrMode        string `json:"addr_mode,omitempty"`
	// AdjustInstructionAddr says whether the address is a return
	// address to look up one instruction earlier; by default every frame
	// but the first of a stack trace is.
	AdjustInstructionAddr *bool  `json:"adjust_instruction_addr,omitempty"`
	Trust                 string `json:"trust,omitempty"`
}

// Module is a module as the request gives it; it is echoed back with
// the fields the response adds.
type Module struct {
	Type      string `json:"type"`
	DebugID   string `json:"debug_id,omitempty"`
	CodeID    string `json:"code_id,omitempty"`
	DebugFile string `json:"debug_file,omitempty"`
	CodeFile  string `json:"code_file,omitempty"`
	ImageAddr Hex    `json:"image_addr"`
	ImageSize *Hex   `json:"image_size,omitempty"`
}

// SymbolicatedFrame is a frame of the response, with symbolicator's
// fields first and ours (column, inlined, symbol_source, found_by) after.
type SymbolicatedFrame struct {
	Status          string      `json:"status"`
	OriginalIndex   int         `json:"original_index"`
	InstructionAddr Hex         `json:"instruction_addr"`
	AddrMode        string      `json:"addr_mode,omitempty"`
	Package         string      `json:"package,omitempty"`
	Lang            string      `json:"lang,omitempty"`
	Symbol          string      `json:"symbol,omitempty"`
	SymAddr         OptionalHex `json:"sym_addr,omitzero"`
	Function        string      `json:"function,omitempty"`
	Filename        string      `json:"filename,omitempty"`
	AbsPath         string      `json:"abs_path,omitempty"`
	Lineno          int         `json:"lineno,omitempty"`
	Trust           string      `json:"trust,omitempty"`
	Column          int         `json:"column,omitempty"`
	Inlined         bool        `json:"inlined,omitempty"`
	SymbolSource    string      `json:"symbol_source,omitempty"`
	FoundBy         string      `json:"found_by,omitempty"`
}

// SymbolicatedStacktrace is a stack trace of the response.
type SymbolicatedStacktrace struct {
	// ThreadID, IsRequesting and ThreadName are set for dumps.
	ThreadID     *uint64              `json:"thread_id,omitempty"`
	ThreadName   string               `json:"thread_name,omitempty"`
	IsRequesting *bool                `json:"is_requesting,omitempty"`
	Registers    map[string]Hex       `json:"registers,omitempty"`
	Frames       []SymbolicatedFrame  `json:"frames"`
	StopReason   symbolize.StopReason `json:"stop_reason,omitempty"`
}

// Features says what a module's symbols hold.
type Features struct {
	HasDebugInfo  bool `json:"has_debug_info"`
	HasUnwindInfo bool `json:"has_unwind_info"`
	HasSymbols    bool `json:"has_symbols"`
	HasSources    bool `json:"has_sources"`
}

// Candidate is a place a module's symbols were looked for.
type Candidate struct {
	Source   string            `json:"source"`
	Location string            `json:"location,omitempty"`
	Download map[string]string `json:"download"`
}

// CompleteModule is a module of the response: the request's fields and
// what symbolication found.
type CompleteModule struct {
	DebugStatus  string   `json:"debug_status"`
	UnwindStatus string   `json:"unwind_status,omitempty"`
	Features     Features `json:"features"`
	Arch         string   `json:"arch"`
	Module
	Candidates []Candidate `json:"candidates,omitempty"`
	// Error says why the module's symbols are missing or unusable (ours).
	Error string `json:"error,omitempty"`
}

// CompletedResponse is symbolicator's CompletedSymbolicationResponse, as
// Answer writes it (by hand, in the order its fields are known).
type CompletedResponse struct {
	Status      string                   `json:"status"`
	Signal      *int                     `json:"signal,omitempty"`
	Crashed     *bool                    `json:"crashed,omitempty"`
	Arch        string                   `json:"arch,omitempty"`
	Stacktraces []SymbolicatedStacktrace `json:"stacktraces"`
	Modules     []CompleteModule         `json:"modules"`
	Warnings    []string                 `json:"warnings,omitempty"`
}
