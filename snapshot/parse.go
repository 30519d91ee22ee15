package snapshot

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// The JSON shapes of version 1. The arrays are decoded element by element
// (json.RawMessage) so that an error can name the element's index.
type (
	fileJSON struct {
		Format  string            `json:"format"`
		Arch    string            `json:"arch"`
		Images  []json.RawMessage `json:"images"`
		Threads []json.RawMessage `json:"threads"`
		Memory  []json.RawMessage `json:"memory"`
	}
	imageJSON struct {
		Name        string `json:"name"`
		UUID        string `json:"uuid"`
		LoadAddress string `json:"load_address"`
		Size        string `json:"size,omitempty"`
	}
	threadJSON struct {
		ID          *uint64                    `json:"id"`
		Name        string                     `json:"name,omitempty"`
		Crashed     bool                       `json:"crashed"`
		ThreadState *threadStateJSON           `json:"thread_state,omitempty"`
		Registers   map[string]json.RawMessage `json:"registers,omitempty"`
		Stack       *stackJSON                 `json:"stack,omitempty"`
	}
	threadStateJSON struct {
		Flavor *uint32 `json:"flavor"`
		Data   string  `json:"data"`
	}
	stackJSON struct {
		Low  string `json:"low"`
		High string `json:"high"`
	}
	memoryJSON struct {
		Address string `json:"address"`
		Data    string `json:"data"`
	}
)

// Read reads a snapshot from r, refusing more than MaxInputSize bytes
// before it decodes anything.
func Read(r io.Reader) (*Snapshot, error) {
	if r == nil {
		return nil, errors.New("snapshot: nil reader")
	}
	return read(r, defaultLimits)
}

func read(r io.Reader, lim limits) (*Snapshot, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(lim.input)+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return parseLimited(data, lim)
}

// limits are the size limits Parse applies; tests use smaller ones.
type limits struct {
	input  int // bytes of JSON
	memory int // decoded bytes of memory regions
}

var defaultLimits = limits{input: MaxInputSize, memory: MaxMemorySize}

// Parse reads and validates a snapshot. Errors name the field
// ("threads[0].thread_state.data: ..."). A UTF-8 byte order mark before
// the document is ignored.
func Parse(data []byte) (*Snapshot, error) {
	return parseLimited(data, defaultLimits)
}

func parseLimited(data []byte, lim limits) (*Snapshot, error) {
	s, err := parse(data, lim)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return s, nil
}

func parse(data []byte, lim limits) (*Snapshot, error) {
	if len(data) > lim.input {
		return nil, &FieldError{Err: fmt.Errorf("document is larger than %d bytes (MaxInputSize)", lim.input)}
	}
	// Some editors start UTF-8 files with a byte order mark; JSON does
	// not allow one, but the crash report parsers accept it too.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var f fileJSON
	if err := decodeStrict(data, &f); err != nil {
		return nil, jsonError("", err)
	}
	if err := checkFormat(f.Format); err != nil {
		return nil, err
	}
	if f.Arch == "" {
		return nil, fieldErrorf("arch", "missing")
	}
	arch, err := archregs.ByName(f.Arch)
	if err != nil {
		names := make([]string, len(archregs.All))
		for i, a := range archregs.All {
			names[i] = a.Name
		}
		// The archregs error stays reachable (errors.As) for its name.
		return nil, &FieldError{Path: "arch", Err: &archError{err: err,
			msg: fmt.Sprintf("unknown architecture %q (want one of %s)", f.Arch, strings.Join(names, ", "))}}
	}
	s := &Snapshot{Arch: arch}
	p := parser{arch: arch, maxMemory: lim.memory}

	if len(f.Images) > MaxImages {
		return nil, fieldErrorf("images", "%d images, more than %d (MaxImages)", len(f.Images), MaxImages)
	}
	for i, raw := range f.Images {
		img, err := p.image(fmt.Sprintf("images[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		s.Images = append(s.Images, img)
	}

	if len(f.Threads) == 0 {
		return nil, fieldErrorf("threads", "missing or empty; a snapshot needs at least one thread")
	}
	if len(f.Threads) > MaxThreads {
		return nil, fieldErrorf("threads", "%d threads, more than %d (MaxThreads)", len(f.Threads), MaxThreads)
	}
	seen := make(map[uint64]int)
	for i, raw := range f.Threads {
		path := fmt.Sprintf("threads[%d]", i)
		th, err := p.thread(path, raw)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[th.ID]; dup {
			return nil, fieldErrorf(path+".id", "%d is also the id of threads[%d]", th.ID, j)
		}
		seen[th.ID] = i
		s.Threads = append(s.Threads, th)
	}

	if len(f.Memory) > MaxRegions {
		return nil, fieldErrorf("memory", "%d regions, more than %d (MaxRegions)", len(f.Memory), MaxRegions)
	}
	regions := make([]Region, 0, len(f.Memory))
	for i, raw := range f.Memory {
		r, err := p.region(fmt.Sprintf("memory[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		regions = append(regions, r)
	}
	if s.Memory, err = newRegions(regions, "memory"); err != nil {
		return nil, err
	}
	return s, nil
}

// checkFormat accepts version 1 and tells a newer version from a document
// that is not a snapshot at all.
func checkFormat(format string) error {
	switch {
	case format == FormatV1:
		return nil
	case format == "":
		return fieldErrorf("format", "missing (want %q)", FormatV1)
	case strings.HasPrefix(format, formatPrefix):
		return fieldErrorf("format", "unsupported version %q (this reader knows %q)", format, FormatV1)
	}
	return fieldErrorf("format", "%q is not a stackimage snapshot (want %q)", format, FormatV1)
}

// parser carries what element parsing needs: the architecture, for
// registers and address widths, and the memory budget.
type parser struct {
	arch       *archregs.Arch
	maxMemory  int // MaxMemorySize, or smaller in tests
	memoryUsed int
}

func (p *parser) image(path string, raw []byte) (Image, error) {
	var j imageJSON
	if err := decodeStrict(raw, &j); err != nil {
		return Image{}, jsonError(path, err)
	}
	var img Image
	if j.Name == "" {
		return Image{}, fieldErrorf(path+".name", "missing")
	}
	img.Name = j.Name
	if j.UUID == "" {
		return Image{}, fieldErrorf(path+".uuid", "missing")
	}
	u, err := uuid.Parse(j.UUID)
	if err != nil {
		return Image{}, &FieldError{Path: path + ".uuid", Err: err}
	}
	img.UUID = u
	if img.LoadAddress, err = p.address(path+".load_address", j.LoadAddress); err != nil {
		return Image{}, err
	}
	if j.Size != "" {
		if img.Size, err = parseHex(path+".size", j.Size); err != nil {
			return Image{}, err
		}
		if img.Size == 0 {
			return Image{}, fieldErrorf(path+".size", "zero (omit size when unknown)")
		}
		if img.Size-1 > p.maxAddress()-img.LoadAddress {
			return Image{}, fieldErrorf(path+".size", "%#x bytes at %#x run past the end of the %d-bit address space",
				img.Size, img.LoadAddress, 8*p.arch.PtrSize)
		}
	}
	return img, nil
}

func (p *parser) thread(path string, raw []byte) (Thread, error) {
	var j threadJSON
	if err := decodeStrict(raw, &j); err != nil {
		return Thread{}, jsonError(path, err)
	}
	if j.ID == nil {
		return Thread{}, fieldErrorf(path+".id", "missing")
	}
	th := Thread{ID: *j.ID, Name: j.Name, Crashed: j.Crashed}
	var err error
	switch {
	case j.ThreadState != nil && j.Registers != nil:
		return Thread{}, fieldErrorf(path, "has both thread_state and registers; give one")
	case j.ThreadState != nil:
		th.Registers, err = p.threadState(path+".thread_state", j.ThreadState)
	case j.Registers != nil:
		th.Registers, err = p.registers(path+".registers", j.Registers)
	default:
		return Thread{}, fieldErrorf(path, "has neither thread_state nor registers")
	}
	if err != nil {
		return Thread{}, err
	}
	if j.Stack != nil {
		if th.StackLow, err = p.address(path+".stack.low", j.Stack.Low); err != nil {
			return Thread{}, err
		}
		if th.StackHigh, err = p.address(path+".stack.high", j.Stack.High); err != nil {
			return Thread{}, err
		}
		if th.StackLow >= th.StackHigh {
			return Thread{}, fieldErrorf(path+".stack", "low %#x is not below high %#x", th.StackLow, th.StackHigh)
		}
	}
	return th, nil
}

func (p *parser) threadState(path string, j *threadStateJSON) (*archregs.Registers, error) {
	if j.Flavor == nil {
		return nil, fieldErrorf(path+".flavor", "missing")
	}
	if j.Data == "" {
		return nil, fieldErrorf(path+".data", "missing")
	}
	if len(j.Data) > maxStateData {
		return nil, fieldErrorf(path+".data", "%d characters, more than any thread state (%d)", len(j.Data), maxStateData)
	}
	data, err := base64.StdEncoding.DecodeString(j.Data)
	if err != nil {
		return nil, fieldErrorf(path+".data", "bad base64: %v", err)
	}
	regs, err := archregs.Decode(p.arch, *j.Flavor, data)
	if err != nil {
		return nil, &FieldError{Path: path, Err: err}
	}
	return regs, nil
}

func (p *parser) registers(path string, m map[string]json.RawMessage) (*archregs.Registers, error) {
	if len(m) == 0 {
		return nil, fieldErrorf(path, "empty")
	}
	// Sorted, so that the first error is the same on every run.
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	regs := archregs.NewRegisters(p.arch)
	givenAs := make(map[string]string)
	for _, n := range names {
		canon, ok := p.arch.RegisterName(n)
		if !ok {
			return nil, fieldErrorf(path+"."+n, "%s has no register %q", p.arch.Name, n)
		}
		if other, dup := givenAs[canon]; dup {
			return nil, fieldErrorf(path+"."+n, "register %s is also given as %q", canon, other)
		}
		givenAs[canon] = n
		var hexValue string
		if err := json.Unmarshal(m[n], &hexValue); err != nil {
			return nil, jsonError(path+"."+n, err)
		}
		v, err := parseHex(path+"."+n, hexValue)
		if err != nil {
			return nil, err
		}
		if err := regs.Set(canon, v); err != nil {
			return nil, &FieldError{Path: path + "." + n, Err: err}
		}
	}
	if _, ok := regs.PC(); !ok {
		return nil, fieldErrorf(path, "no %s (the program counter is required)", p.arch.PC)
	}
	// Values too wide for their field would not survive Marshal.
	if _, err := regs.Encode(archregs.NativeFlavor(p.arch)); err != nil {
		return nil, &FieldError{Path: path, Err: err}
	}
	return regs, nil
}

func (p *parser) region(path string, raw []byte) (Region, error) {
	var j memoryJSON
	if err := decodeStrict(raw, &j); err != nil {
		return Region{}, jsonError(path, err)
	}
	addr, err := p.address(path+".address", j.Address)
	if err != nil {
		return Region{}, err
	}
	if j.Data == "" {
		return Region{}, fieldErrorf(path+".data", "missing or empty")
	}
	// Bound the allocation before decoding.
	if decodedSize(j.Data) > p.maxMemory-p.memoryUsed {
		return Region{}, fieldErrorf(path+".data", "captured memory would exceed %d bytes (MaxMemorySize)", p.maxMemory)
	}
	data, err := base64.StdEncoding.DecodeString(j.Data)
	if err != nil {
		return Region{}, fieldErrorf(path+".data", "bad base64: %v", err)
	}
	if len(data) == 0 {
		return Region{}, fieldErrorf(path+".data", "no bytes")
	}
	p.memoryUsed += len(data)
	if uint64(len(data))-1 > p.maxAddress()-addr {
		return Region{}, fieldErrorf(path+".data", "%d bytes at %#x run past the end of the %d-bit address space",
			len(data), addr, 8*p.arch.PtrSize)
	}
	return Region{Address: addr, Data: data}, nil
}

// decodedSize returns how many bytes the base64 text s decodes to, or an
// upper bound when s is not plain padded base64.
func decodedSize(s string) int {
	n := base64.StdEncoding.DecodedLen(len(s))
	if len(s)%4 == 0 {
		tail := s[len(s)-min(len(s), 2):]
		n -= len(tail) - len(strings.TrimRight(tail, "="))
	}
	return n
}

// maxAddress returns the highest address of the architecture.
func (p *parser) maxAddress() uint64 {
	if p.arch.PtrSize == 4 {
		return math.MaxUint32
	}
	return math.MaxUint64
}

// address parses a required hex address that must fit the architecture.
func (p *parser) address(path, s string) (uint64, error) {
	if s == "" {
		return 0, fieldErrorf(path, "missing")
	}
	v, err := parseHex(path, s)
	if err != nil {
		return 0, err
	}
	if v > p.maxAddress() {
		return 0, fieldErrorf(path, "%#x does not fit a %d-bit %s address", v, 8*p.arch.PtrSize, p.arch.Name)
	}
	return v, nil
}

// parseHex parses "0x" and 1 to 16 hex digits. JSON numbers cannot carry
// 64-bit values exactly, so the format spells them as hex strings.
func parseHex(path, s string) (uint64, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		digits, ok = strings.CutPrefix(s, "0X")
	}
	if !ok || len(digits) == 0 || len(digits) > 16 {
		return 0, fieldErrorf(path, "bad hex value %q: want 0x and 1 to 16 hex digits", s)
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return 0, fieldErrorf(path, "bad hex value %q: want 0x and 1 to 16 hex digits", s)
	}
	return v, nil
}

// decodeStrict decodes one JSON value, rejecting unknown fields and
// anything after the value.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// jsonError rewrites an encoding/json error to name the field by its path
// in the document, without Go type names.
func jsonError(path string, err error) error {
	join := func(field string) string {
		switch {
		case path == "":
			return field
		case field == "":
			return path
		}
		return path + "." + field
	}
	// The whole document, when no field is named.
	at := func(p, format string, args ...any) error {
		if p == "" {
			return &FieldError{Err: fmt.Errorf("document: "+format, args...)}
		}
		return fieldErrorf(p, format, args...)
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		want := "a string"
		switch typeErr.Type.Kind() {
		case reflect.Bool:
			want = "true or false"
		case reflect.Uint32, reflect.Uint64:
			want = "a non-negative integer"
		case reflect.Slice:
			want = "an array"
		case reflect.Map, reflect.Struct:
			want = "an object"
		}
		return at(join(typeErr.Field), "got JSON %s, want %s", typeErr.Value, want)
	case errors.As(err, &syntaxErr):
		return at(path, "invalid JSON at byte %d: %v", syntaxErr.Offset, strings.TrimPrefix(err.Error(), "json: "))
	case errors.Is(err, io.EOF):
		return at(path, "empty document")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return at(path, "invalid JSON: unexpected end of input")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return &FieldError{Path: path, Err: errors.New(msg)}
}

// FieldError reports a snapshot that is not valid: Path names the field as
// a path from the document's root ("threads[0].thread_state.data",
// "arch"), empty for the document as a whole; Err says what is wrong with
// it, and wraps the cause from another package when there is one (an
// *archregs.StateSizeError for thread state bytes of the wrong size, for
// instance). Parse's errors are *FieldError, behind a "snapshot: " prefix;
// find them with errors.As.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

// archError says an architecture is unknown in the snapshot's words while
// keeping archregs' error to unwrap.
type archError struct {
	msg string
	err error
}

func (e *archError) Error() string { return e.msg }
func (e *archError) Unwrap() error { return e.err }
