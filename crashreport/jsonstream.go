package crashreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// num is an integer field read as uint64. It accepts non-negative JSON
// integers, negative ones (stored two's complement, as C reporters print
// signed register values) and "0x..." hex strings; null leaves it zero.
type num uint64

func (n *num) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		uq, err := strconv.Unquote(s)
		if err != nil {
			return fmt.Errorf("%s is not a number", s)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(uq), 0, 64)
		if err != nil {
			return fmt.Errorf("%s is not a number", s)
		}
		*n = num(v)
		return nil
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		*n = num(v)
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = num(uint64(v))
		return nil
	}
	return fmt.Errorf("%.40s is not a 64-bit integer", s)
}

// str is a string field that also accepts a JSON number (.ips metadata
// writes bug_type either way).
type str string

func (s *str) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = str(v)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("%.40s is not a string or number", b)
	}
	*s = str(n)
	return nil
}

// errStream marks an error after which the JSON stream cannot be read on:
// bad syntax or the end of the input. Everything decoded before it is kept.
var errStream = errors.New("stream error")

// jsonStream walks a JSON document token by token so that a truncated or
// corrupt document still yields the values read before the damage.
type jsonStream struct {
	dec  *json.Decoder
	base int64 // offset of the stream's first byte in the whole input
	p    *problems
}

func newJSONStream(data []byte, base int64, p *problems) *jsonStream {
	return &jsonStream{dec: json.NewDecoder(bytes.NewReader(data)), base: base, p: p}
}

// fatal records err, a read error at path, and returns errStream.
func (s *jsonStream) fatal(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		s.p.fail(path, 0, "unexpected end of input at byte %d (report truncated?)", s.base+s.dec.InputOffset())
	case errors.As(err, &se):
		s.p.fail(path, 0, "invalid JSON at byte %d: %v", s.base+se.Offset, err)
	default:
		s.p.fail(path, 0, "%v", err)
	}
	return errStream
}

// object reads an object, calling fn with each key; fn must consume the
// key's value. A value that is not an object is recorded and skipped.
func (s *jsonStream) object(path string, fn func(key string) error) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.fatal(path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return s.wrongKind(path, tok, "an object")
	}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return s.fatal(path, err)
		}
		key, ok := tok.(string)
		if !ok {
			return s.fatal(path, fmt.Errorf("object key is %v", tok))
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return s.fatal(path, err)
	}
	return nil
}

// array reads an array of at most max elements, calling fn with each
// index; fn must consume the element.
func (s *jsonStream) array(path string, max int, fn func(i int) error) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.fatal(path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return s.wrongKind(path, tok, "an array")
	}
	for i := 0; s.dec.More(); i++ {
		if i >= max {
			s.p.fail(path, 0, "more than %d elements", max)
			return errStream
		}
		if err := fn(i); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return s.fatal(path, err)
	}
	return nil
}

// wrongKind records a value of the wrong JSON kind whose first token was
// tok, and skips the rest of it when it is a container.
func (s *jsonStream) wrongKind(path string, tok json.Token, want string) error {
	s.p.fail(path, 0, "is %s, want %s", describeToken(tok), want)
	if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
		// Skip the container's contents to stay in step.
		for depth := 1; depth > 0; {
			t, err := s.dec.Token()
			if err != nil {
				return s.fatal(path, err)
			}
			if d, ok := t.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
			}
		}
	}
	return nil
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// decode reads one value into v. It reports whether v was filled; a value
// of the wrong type is recorded at path and skipped, while a syntax error
// or the end of input returns errStream.
func (s *jsonStream) decode(path string, v any) (bool, error) {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return false, s.fatal(path, err)
	}
	if rm, ok := v.(*json.RawMessage); ok {
		*rm = raw
		return true, nil
	}
	return decodeRaw(s.p, path, raw, v), nil
}

// skip reads and discards one value.
func (s *jsonStream) skip(path string) error {
	var raw json.RawMessage
	_, err := s.decode(path, &raw)
	return err
}

// typeErrorPath extends path with the field a type error names.
func typeErrorPath(path string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return path + "." + te.Field
	}
	return path
}

func typeErrorMsg(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("is a JSON %s, want %s", te.Value, goKind(te.Type.Kind().String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// goKind names a Go kind the way a JSON user thinks of it.
func goKind(k string) string {
	switch k {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// decodeRaw unmarshals one already-extracted value, recording a failure
// at path; it reports whether v was filled.
func decodeRaw(p *problems, path string, raw json.RawMessage, v any) bool {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return true
	}
	field := typeErrorPath(path, err)
	if field == path {
		// Errors from a field's own UnmarshalJSON (num, str) do not say
		// which field failed: find it by decoding the fields one by one.
		if k := failingField(raw, v); k != "" {
			field = path + "." + k
		}
	}
	p.fail(field, 0, "%s", typeErrorMsg(err))
	return false
}

// failingField returns the key of raw, a JSON object, whose value alone
// fails to decode into a fresh value of v's type; "" when there is none.
func failingField(raw json.RawMessage, v any) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := reflect.TypeOf(v).Elem()
	for _, k := range keys {
		one, err := json.Marshal(map[string]json.RawMessage{k: fields[k]})
		if err != nil {
			continue
		}
		if json.Unmarshal(one, reflect.New(t).Interface()) != nil {
			return k
		}
	}
	return ""
}
