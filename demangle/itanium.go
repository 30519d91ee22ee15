package demangle

import (
	"strings"
	"sync"
)

// A fast path for the Itanium C++ names real programs mostly hold.
//
// github.com/ianlancetaylor/demangle builds an AST per name, copies and
// simplifies it and prints it: about 4 µs a name, a third of a symbol index
// build on a large C++ dSYM. demangleItanium parses the common subset of the
// grammar in one pass and writes the text as it goes. It never guesses:
// whatever it does not know (local names, lambdas, ABI tags, arrays,
// expressions, pack expansions, ...) makes it decline, and Demangle asks the
// library. Whenever it accepts a name its output is byte for byte the
// library's with the options Demangle uses (LLVMStyle, MaxLength(16)); the
// differential tests and FuzzItanium hold it to that.
//
// The text of every type and name is appended to one scratch buffer and
// named by a span of it. A type grows by appending ("A" becomes "A const"
// then "A const*"), so a substitution candidate is only a span, and the
// spans of a name's parts stay valid as it grows.

// itaniumMaxOutput is the library's MaxLength(16) limit: it cuts longer
// names there. The fast path declines them instead, and bounds its scratch
// text by the same figure, so hostile substitutions cost at most this much.
const itaniumMaxOutput = 1 << 16

// itaniumMaxDepth bounds the parser's recursion (nested types and template
// arguments); deeper names are left to the library.
const itaniumMaxDepth = 64

// A typeKind says how a type's text combines with what is applied to it.
type typeKind uint8

const (
	kindPlain     typeKind = iota // a name or pointer: modifiers append
	kindQualified                 // ends in a cv-qualifier, which the library would merge with another
	kindLRef                      // ends in "&": references collapse
	kindRRef                      // ends in "&&"
	kindComplex                   // a function pointer: a modifier would have to go inside it
	kindUnusable                  // a substitution candidate the fast path cannot print
)

// An offset is a position in the scratch text, which room keeps under
// 2^16 bytes. (Spans of uint16 are 10 bytes: copied in two moves, where 20
// bytes of int32s took two overlapping ones that stalled on every copy.)
type offset = uint16

// A span names a piece of the scratch text.
type span struct {
	start, end offset
	// name is the last unqualified name in it, without template
	// arguments, for a constructor or destructor named after it;
	// nameEnd == 0 when there is none.
	nameStart, nameEnd offset
	kind               typeKind
	pack               bool // a template argument pack (J...E)
}

// itanium is the parser's state, pooled between calls.
type itanium struct {
	in   string
	pos  int
	buf  []byte
	subs []span
	// targs is a stack of template arguments being parsed; once the
	// name is parsed its first ntargs are the function template's,
	// which T_ refers to.
	targs  []span
	ntargs int
	// haveTargs says a template's arguments are in scope for T_; it is
	// off while the name itself is parsed, as the library has it.
	haveTargs bool
	depth     int
	args      []span // the parameter list
	casts     int    // conversion operators seen in the name
	collapsed bool   // a reference to a reference was collapsed
}

var itaniumPool = sync.Pool{New: func() any { return &itanium{buf: make([]byte, 0, 1024)} }}

// demangleItanium demangles an Itanium C++ name ("_Z...", without Mach-O's
// extra underscore) as the library does with LLVMStyle and MaxLength(16),
// or reports false for a name outside the subset it knows.
func demangleItanium(m string) (string, bool) {
	if len(m) < 3 || m[0] != '_' || m[1] != 'Z' || mayBeLegacyRust(m) {
		return "", false
	}
	p := itaniumPool.Get().(*itanium)
	p.in, p.pos, p.buf, p.subs, p.targs, p.ntargs, p.haveTargs, p.depth, p.casts, p.collapsed = m, 2, p.buf[:0], p.subs[:0], p.targs[:0], 0, false, 0, 0, false
	s, ok := p.encoding()
	if cap(p.buf) <= 4*itaniumMaxOutput {
		itaniumPool.Put(p)
	}
	return s, ok
}

// mayBeLegacyRust reports whether the library would try m as a legacy Rust
// name (its own test, looser than isLegacyRust): those are left to it.
func mayBeLegacyRust(m string) bool {
	if len(m) < 24 || m[2] != 'N' {
		return false
	}
	// Most names have no '.': IndexByte is far cheaper than LastIndex.
	if strings.IndexByte(m, '.') >= 0 {
		if i := strings.LastIndex(m, "E."); i > 0 {
			m = m[:i+1]
		}
	}
	return len(m) > 23 && m[len(m)-1] == 'E' && m[len(m)-20:len(m)-17] == "17h"
}

func (p *itanium) peek() byte {
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

func (p *itanium) peekAt(i int) byte {
	if p.pos+i < len(p.in) {
		return p.in[p.pos+i]
	}
	return 0
}

// text returns the scratch text of s.
func (p *itanium) text(s span) []byte { return p.buf[s.start:s.end] }

// mark returns the scratch offset the next text will start at.
func (p *itanium) mark() offset { return offset(len(p.buf)) }

// room reports whether n more bytes of scratch text stay within the bound,
// one byte short of the output's so that an offset fits 16 bits.
func (p *itanium) room(n int) bool { return len(p.buf)+n < itaniumMaxOutput }

func (p *itanium) appendString(s string) bool {
	if !p.room(len(s)) {
		return false
	}
	p.buf = append(p.buf, s...)
	return true
}

// appendCopy appends a copy of an earlier span's text (a substitution or a
// template argument) and returns the copy's span.
func (p *itanium) appendCopy(s span) (span, bool) {
	n := int(s.end - s.start)
	if !p.room(n) {
		return span{}, false
	}
	start := p.mark()
	p.buf = append(p.buf, p.buf[s.start:s.end]...)
	c := s
	c.start, c.end = start, start+offset(n)
	if s.nameEnd != 0 {
		c.nameStart, c.nameEnd = s.nameStart-s.start+start, s.nameEnd-s.start+start
	}
	return c, true
}

// methodQuals are the qualifiers of a nested name, which the library
// prints after the parameters: cv is qualString's, ref is " &" or " &&".
type methodQuals struct {
	cv, ref uint8 // qualString's index (r, V, K bits); 0, 1 for &, 2 for &&
}

// text returns the qualifiers as printed.
func (q methodQuals) text() string {
	return qualTexts[q.cv] + [...]string{"", " &", " &&"}[q.ref]
}

// A nameInfo describes the name of an encoding.
type nameInfo struct {
	s          span
	quals      methodQuals
	template   bool // ends in template arguments: T_ refers to them
	cdtorCast  bool // the templated thing is a constructor, destructor or conversion
	targsStart int  // the template arguments in p.targs
}

// encoding parses <encoding> ::= <name> [<bare-function-type>] and the
// clone suffixes after it, and builds the output.
func (p *itanium) encoding() (string, bool) {
	c := p.peek()
	if c == 'T' {
		return p.specialName()
	}
	if c == 'G' || c == 0 {
		return "", false // guard variables, transaction clones
	}
	n, ok := p.name()
	if !ok {
		return "", false
	}
	if p.pos == len(p.in) {
		// A data symbol.
		if n.quals != (methodQuals{}) {
			return "", false
		}
		return p.finish(span{}, false, n, false, nil)
	}
	switch p.peek() {
	case 'E':
		return "", false // unparsed characters in the library too
	case '.':
		// A data symbol with a clone suffix: the library's parameter
		// list fails on it (it wants at least one type).
		return "", false
	case 'J':
		return "", false
	}
	hasReturn := n.template && !n.cdtorCast
	if n.template {
		p.haveTargs = true
		p.targs = append(p.targs[:0], p.targs[n.targsStart:]...)
		p.ntargs = len(p.targs)
	}
	var ret span
	if hasReturn {
		if ret, ok = p.typ(); !ok || ret.kind == kindComplex {
			return "", false
		}
	}
	params := p.args[:0]
	for p.pos < len(p.in) && p.peek() != '.' {
		switch p.peek() {
		case 'E', 'Q':
			return "", false
		case 'R', 'O':
			if p.peekAt(1) == 'E' {
				return "", false
			}
		}
		start := p.pos
		t, ok := p.typ()
		if !ok {
			return "", false
		}
		// A lone "v" is an empty parameter list; a template
		// parameter standing for void is not.
		if p.pos == start+1 && p.in[start] == 'v' {
			t.kind = kindUnusable
		}
		params = append(params, t)
	}
	p.args = params[:0]
	if len(params) == 0 {
		return "", false
	}
	if len(params) == 1 && params[0].kind == kindUnusable {
		params = params[:0]
	}
	return p.finish(ret, hasReturn, n, true, params)
}

// finish writes the output: return type, name, parameters (when isFunc),
// qualifiers and clone suffixes, in a string of its own.
func (p *itanium) finish(ret span, hasReturn bool, n nameInfo, isFunc bool, params []span) (string, bool) {
	size := int(n.s.end - n.s.start)
	if hasReturn {
		size += int(ret.end-ret.start) + 1
	}
	if isFunc {
		size += 2 + len(n.quals.text())
		for _, t := range params {
			size += int(t.end-t.start) + 2
		}
	}
	// Clone suffixes (".cold", ".isra.0", ".llvm.123"), each printed as
	// " (.suffix)": a lower-case word, then any ".digits" parts.
	var clones [8]int // ends of the suffixes
	nclones := 0
	suffixes := p.pos
	for p.pos+1 < len(p.in) && p.in[p.pos] == '.' && isCloneByte(p.in[p.pos+1]) {
		i := p.pos + 2
		for i < len(p.in) && isCloneByte(p.in[i]) {
			i++
		}
		for i+1 < len(p.in) && p.in[i] == '.' && isDigitByte(p.in[i+1]) {
			i += 2
			for i < len(p.in) && isDigitByte(p.in[i]) {
				i++
			}
		}
		if nclones == len(clones) {
			return "", false
		}
		clones[nclones] = i
		nclones++
		size += i - p.pos + 3
		p.pos = i
	}
	if p.pos != len(p.in) || size > itaniumMaxOutput {
		return "", false
	}
	var b strings.Builder
	b.Grow(size)
	if hasReturn {
		b.Write(p.text(ret))
		b.WriteByte(' ')
	}
	b.Write(p.text(n.s))
	if isFunc {
		b.WriteByte('(')
		for i, t := range params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(p.text(t))
		}
		b.WriteByte(')')
		b.WriteString(n.quals.text())
	}
	for _, end := range clones[:nclones] {
		b.WriteString(" (")
		b.WriteString(p.in[suffixes:end])
		b.WriteByte(')')
		suffixes = end
	}
	return b.String(), true
}

// isCloneByte reports whether c may be in the word of a clone suffix.
func isCloneByte(c byte) bool { return 'a' <= c && c <= 'z' || isDigitByte(c) || c == '_' }

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// name parses <name> ::= <nested-name> | <unscoped-name> |
// <unscoped-template-name> <template-args>, for the encoding.
func (p *itanium) name() (nameInfo, bool) {
	switch p.peek() {
	case 'N':
		return p.nestedName()
	case 'S':
		if p.peekAt(1) != 't' {
			return nameInfo{}, false
		}
		p.pos += 2
		return p.unscopedName(true)
	}
	return p.unscopedName(false)
}

// unscopedName parses an <unqualified-name> (after "St" when std) and the
// template arguments after it.
func (p *itanium) unscopedName(std bool) (nameInfo, bool) {
	start := p.mark()
	if std && !p.appendString("std::") {
		return nameInfo{}, false
	}
	un, isCast, ok := p.unqualifiedName()
	if !ok || isCast {
		return nameInfo{}, false
	}
	s := span{start: start, end: un.end, nameStart: un.nameStart, nameEnd: un.nameEnd}
	n := nameInfo{s: s}
	if p.peek() == 'I' {
		p.subs = append(p.subs, s)
		n.targsStart = len(p.targs)
		if n.s, ok = p.templateArgs(s); !ok {
			return nameInfo{}, false
		}
		n.template = true
	}
	return n, true
}

// nestedName parses <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>]
// <prefix> E, for the encoding.
func (p *itanium) nestedName() (nameInfo, bool) {
	p.pos++ // N
	var n nameInfo
	var ok bool
	if n.quals.cv, ok = p.cvQualifiers(); !ok {
		return nameInfo{}, false
	}
	switch p.peek() {
	case 'R':
		n.quals.ref = 1
		p.pos++
	case 'O':
		n.quals.ref = 2
		p.pos++
	case 'H':
		return nameInfo{}, false
	}
	var last prefixLast
	if n.s, last, ok = p.prefix(); !ok {
		return nameInfo{}, false
	}
	n.template, n.cdtorCast, n.targsStart = last.template, last.cdtorCast, last.targsStart
	return n, true
}

// cvQualifiers parses [r] [V] [K] and returns them as bits (r 4, V 2,
// K 1), which index qualTexts.
func (p *itanium) cvQualifiers() (uint8, bool) {
	var q uint8
	for {
		var bit uint8
		switch p.peek() {
		case 'r':
			bit = 4
		case 'V':
			bit = 2
		case 'K':
			bit = 1
		case 'D':
			switch p.peekAt(1) {
			case 'x', 'o', 'O', 'w':
				return 0, false // exception specifications
			}
			return q, true
		default:
			return q, true
		}
		// Only the mangled order r V K, each once.
		if q&(bit|(bit-1)) != 0 {
			return 0, false
		}
		q |= bit
		p.pos++
	}
}

// qualTexts are the qualifiers as the library prints them after a type or
// a method: in the reverse of their mangled order.
var qualTexts = [8]string{
	0: "",
	1: " const",
	2: " volatile",
	3: " const volatile",
	4: " restrict",
	5: " const restrict",
	6: " volatile restrict",
	7: " const volatile restrict",
}

// prefixLast describes the last component of a nested name.
type prefixLast struct {
	template   bool // template arguments
	cdtorCast  bool // ... of a constructor, destructor or conversion
	targsStart int
}

// prefix parses the components of a nested name up to its E, adding each
// but the last to the substitutions as the library does.
func (p *itanium) prefix() (span, prefixLast, bool) {
	var a span
	haveA := false
	var last prefixLast
	lastIsCDtorCast := false // the last component before any template arguments
	for {
		c := p.peek()
		if c == 'E' {
			if !haveA {
				return span{}, last, false
			}
			p.pos++
			return a, last, true
		}
		var next span
		isCDtorCast := false
		switch {
		case isDigitByte(c) || 'a' <= c && c <= 'z' || c == 'L':
			if haveA && !p.appendString("::") {
				return span{}, last, false
			}
			un, isCast, ok := p.unqualifiedName()
			if !ok {
				return span{}, last, false
			}
			if isCast {
				if p.casts++; p.casts > 1 {
					return span{}, last, false
				}
			}
			next, isCDtorCast = un, isCast
		case c == 'C' || c == 'D':
			// A constructor or destructor takes the name of the
			// last component, without its template arguments.
			if !haveA || a.nameEnd == 0 {
				return span{}, last, false
			}
			kind := p.peekAt(1)
			if c == 'C' && (kind < '1' || kind > '5') || c == 'D' && kind != '0' && kind != '1' && kind != '2' && kind != '4' && kind != '5' {
				return span{}, last, false
			}
			p.pos += 2
			if p.peek() == 'B' {
				return span{}, last, false
			}
			nameStart, nameEnd := a.nameStart, a.nameEnd
			if !p.appendString("::") {
				return span{}, last, false
			}
			start := p.mark()
			if c == 'D' && !p.appendString("~") {
				return span{}, last, false
			}
			if !p.room(int(nameEnd - nameStart)) {
				return span{}, last, false
			}
			p.buf = append(p.buf, p.buf[nameStart:nameEnd]...)
			// A constructor after this one takes its whole
			// text, "~" included: the library's getLast stops at
			// a constructor or destructor.
			next = span{start: start, end: p.mark(), nameStart: start, nameEnd: p.mark()}
			isCDtorCast = true
		case c == 'S':
			if haveA {
				return span{}, last, false
			}
			s, ok := p.substitution(true)
			if !ok {
				return span{}, last, false
			}
			a, haveA = s, true
			last = prefixLast{}
			lastIsCDtorCast = false
			continue // a substitution is not a candidate again
		case c == 'I':
			// Arguments right after arguments make the library
			// look for a return type even for a constructor:
			// left to it.
			if !haveA || last.template {
				return span{}, last, false
			}
			targsStart := len(p.targs)
			t, ok := p.templateArgs(a)
			if !ok {
				return span{}, last, false
			}
			a = t
			last = prefixLast{template: true, cdtorCast: lastIsCDtorCast, targsStart: targsStart}
			if p.peek() != 'E' {
				p.targs = p.targs[:targsStart]
				p.subs = append(p.subs, a)
			}
			continue
		case c == 'T':
			if haveA || !p.haveTargs {
				return span{}, last, false
			}
			t, ok := p.templateParam()
			if !ok {
				return span{}, last, false
			}
			t.nameEnd = 0 // a constructor of T_ is beyond the fast path
			next = t
		default:
			return span{}, last, false
		}
		if haveA {
			a = span{start: a.start, end: next.end, nameStart: next.nameStart, nameEnd: next.nameEnd}
		} else {
			a, haveA = next, true
		}
		last = prefixLast{}
		lastIsCDtorCast = isCDtorCast
		if p.peek() != 'E' {
			p.subs = append(p.subs, a)
		}
	}
}

// unqualifiedName parses a source name, an "L" internal-linkage source name
// or an operator name, appends its text and reports whether it is a
// conversion operator.
func (p *itanium) unqualifiedName() (s span, isCast, ok bool) {
	c := p.peek()
	start := p.mark()
	switch {
	case isDigitByte(c):
		if !p.sourceName() {
			return span{}, false, false
		}
	case c == 'L':
		p.pos++
		if !isDigitByte(p.peek()) || !p.sourceName() || !p.discriminator() {
			return span{}, false, false
		}
	case 'a' <= c && c <= 'z':
		if c == 'c' && p.peekAt(1) == 'v' {
			// A conversion operator: "operator int". Its
			// type may not use T_, whose template is not known
			// yet; the library fills those in afterwards.
			p.pos += 2
			if !p.appendString("operator ") {
				return span{}, false, false
			}
			if p.depth++; p.depth > itaniumMaxDepth {
				return span{}, false, false
			}
			have := p.haveTargs
			p.haveTargs = false
			t, ok := p.typ()
			p.haveTargs = have
			p.depth--
			if !ok || t.kind == kindComplex {
				return span{}, false, false
			}
			isCast = true
			break
		}
		op := operatorName(c, p.peekAt(1))
		if op == "" || !p.appendString(op) {
			return span{}, false, false
		}
		p.pos += 2
	default:
		return span{}, false, false
	}
	if p.peek() == 'B' {
		return span{}, false, false // ABI tags
	}
	s = span{start: start, end: p.mark()}
	if c != 'c' && !('a' <= c && c <= 'z') {
		s.nameStart, s.nameEnd = start, s.end
	}
	return s, isCast, true
}

// sourceName parses <source-name> ::= <length> <identifier> and appends
// the identifier, or "(anonymous namespace)" for GCC's and clang's name of
// one.
func (p *itanium) sourceName() bool {
	n, ok := p.number()
	if !ok || n <= 0 || n > len(p.in)-p.pos {
		return false
	}
	id := p.in[p.pos : p.pos+n]
	p.pos += n
	const anon = "_GLOBAL_"
	if len(id) > len(anon)+2 && strings.HasPrefix(id, anon) {
		c1, c2 := id[len(anon)], id[len(anon)+1]
		if (c1 == '.' || c1 == '_' || c1 == '$') && c2 == 'N' {
			id = "(anonymous namespace)"
		}
	}
	return p.appendString(id)
}

// number parses [n] <decimal>, failing where the library does: no digits,
// or a value near 2^31.
func (p *itanium) number() (int, bool) {
	neg := false
	if p.peek() == 'n' {
		neg = true
		p.pos++
	}
	if !isDigitByte(p.peek()) {
		return 0, false
	}
	v := 0
	for isDigitByte(p.peek()) {
		if v >= 0x80000000/10-10 {
			return 0, false
		}
		v = v*10 + int(p.in[p.pos]-'0')
		p.pos++
	}
	if neg {
		v = -v
	}
	return v, true
}

// discriminator skips what follows an "L" source name as the library does:
// "_" <digit>, "__" <number> "_", or, as clang may end a name, digits alone.
func (p *itanium) discriminator() bool {
	if p.peek() != '_' {
		for i := p.pos; i < len(p.in); i++ {
			if !isDigitByte(p.in[i]) {
				return true
			}
		}
		p.pos = len(p.in)
		return true
	}
	p.pos++
	trailing := false
	if p.peek() == '_' {
		p.pos++
		trailing = true
	}
	d, ok := p.number()
	if !ok || d < 0 {
		return false
	}
	if trailing && d >= 10 {
		if p.peek() != '_' {
			return false
		}
		p.pos++
	}
	return true
}

// operatorName returns the text the library prints for an operator code,
// or "" for one the fast path leaves to it.
func operatorName(c0, c1 byte) string {
	switch string([]byte{c0, c1}) {
	case "aN":
		return "operator&="
	case "aS":
		return "operator="
	case "aa":
		return "operator&&"
	case "ad", "an":
		return "operator&"
	case "cl":
		return "operator()"
	case "cm":
		return "operator,"
	case "co":
		return "operator~"
	case "dV":
		return "operator/="
	case "da":
		return "operator delete[]"
	case "de", "ml":
		return "operator*"
	case "dl":
		return "operator delete"
	case "dv":
		return "operator/"
	case "eO":
		return "operator^="
	case "eo":
		return "operator^"
	case "eq":
		return "operator=="
	case "ge":
		return "operator>="
	case "gt":
		return "operator>"
	case "ix":
		return "operator[]"
	case "lS":
		return "operator<<="
	case "le":
		return "operator<="
	case "ls":
		return "operator<<"
	case "lt":
		return "operator<"
	case "mI":
		return "operator-="
	case "mL":
		return "operator*="
	case "mi", "ng":
		return "operator-"
	case "mm":
		return "operator--"
	case "na":
		return "operator new[]"
	case "ne":
		return "operator!="
	case "nt":
		return "operator!"
	case "nw":
		return "operator new"
	case "oR":
		return "operator|="
	case "oo":
		return "operator||"
	case "or":
		return "operator|"
	case "pL":
		return "operator+="
	case "pl", "ps":
		return "operator+"
	case "pp":
		return "operator++"
	case "pt":
		return "operator->"
	case "rM":
		return "operator%="
	case "rS":
		return "operator>>="
	case "rm":
		return "operator%"
	case "rs":
		return "operator>>"
	case "ss":
		return "operator<=>"
	}
	return ""
}

// templateArgs parses <template-args> ::= I <template-arg>+ E after name
// (the last text appended) and returns the name with its arguments. The
// arguments' spans are left on p.targs for the caller to keep or drop.
func (p *itanium) templateArgs(name span) (span, bool) {
	if p.depth++; p.depth > itaniumMaxDepth {
		return span{}, false
	}
	t, ok := p.templateArgsIn(name)
	p.depth--
	return t, ok
}

func (p *itanium) templateArgsIn(name span) (span, bool) {
	p.pos++ // I
	if name.end != p.mark() {
		return span{}, false
	}
	// The library separates "operator<" from its arguments.
	if name.end > name.start && p.buf[name.end-1] == '<' && !p.appendString(" ") {
		return span{}, false
	}
	if !p.appendString("<") {
		return span{}, false
	}
	printed := false
	for p.peek() != 'E' {
		if p.pos >= len(p.in) {
			return span{}, false
		}
		if p.peek() == 'J' && p.peekAt(1) == 'E' {
			// An empty pack prints as nothing, not even a comma.
			p.pos += 2
			m := p.mark()
			p.targs = append(p.targs, span{start: m, end: m, pack: true})
			continue
		}
		if printed && !p.appendString(", ") {
			return span{}, false
		}
		a, ok := p.templateArg()
		if !ok {
			return span{}, false
		}
		p.targs = append(p.targs, a)
		printed = true
	}
	p.pos++ // E
	if !p.appendString(">") {
		return span{}, false
	}
	return span{start: name.start, end: p.mark(), nameStart: name.nameStart, nameEnd: name.nameEnd}, true
}

// templateArg parses one template argument: a type, an integer literal or
// a pack of types and literals.
func (p *itanium) templateArg() (span, bool) {
	switch p.peek() {
	case 'L':
		return p.literal()
	case 'J':
		// A pack prints as its arguments; T_ naming it is left to
		// the library.
		p.pos++
		start := p.mark()
		for i := 0; p.peek() != 'E'; i++ {
			if p.pos >= len(p.in) || p.peek() == 'J' {
				return span{}, false
			}
			if i > 0 && !p.appendString(", ") {
				return span{}, false
			}
			var a span
			var ok bool
			if p.peek() == 'L' {
				a, ok = p.literal()
			} else {
				a, ok = p.typ()
			}
			if !ok {
				return span{}, false
			}
			_ = a
		}
		p.pos++
		return span{start: start, end: p.mark(), pack: true}, true
	case 'X', 'T':
		if p.peek() == 'T' {
			switch p.peekAt(1) {
			case 'y', 'n', 't', 'p', 'k':
				return span{}, false
			}
			return p.typ()
		}
		return span{}, false
	}
	return p.typ()
}

// literal parses an integer <expr-primary> ::= L <type> [n] <value> E and
// appends it as the library prints it.
func (p *itanium) literal() (span, bool) {
	p.pos++ // L
	c := p.peek()
	var typeName, suffix string
	cast := true
	switch c {
	case 'i':
		cast, typeName = false, ""
	case 'j':
		cast, suffix = false, "u"
	case 'l':
		cast, suffix = false, "l"
	case 'm':
		cast, suffix = false, "ul"
	case 'x':
		cast, suffix = false, "ll"
	case 'y':
		cast, suffix = false, "ull"
	case 'b', 'a', 'c', 'h', 's', 't', 'w', 'n', 'o':
		typeName = builtinName(c)
	default:
		return span{}, false
	}
	p.pos++
	neg := false
	if p.peek() == 'n' {
		neg = true
		p.pos++
	}
	vs := p.pos
	for isDigitByte(p.peek()) {
		p.pos++
	}
	if p.pos == vs || p.peek() != 'E' {
		return span{}, false
	}
	val := p.in[vs:p.pos]
	p.pos++
	start := p.mark()
	if c == 'b' && !neg && (val == "0" || val == "1") {
		b := "false"
		if val == "1" {
			b = "true"
		}
		if !p.appendString(b) {
			return span{}, false
		}
		return span{start: start, end: p.mark()}, true
	}
	if cast && !(p.appendString("(") && p.appendString(typeName) && p.appendString(")")) {
		return span{}, false
	}
	if neg && !p.appendString("-") {
		return span{}, false
	}
	if !p.appendString(val) || !p.appendString(suffix) {
		return span{}, false
	}
	return span{start: start, end: p.mark()}, true
}

// builtinName returns the library's name of a one-letter builtin type, or
// "" for a letter that is none.
func builtinName(c byte) string {
	switch c {
	case 'a':
		return "signed char"
	case 'b':
		return "bool"
	case 'c':
		return "char"
	case 'd':
		return "double"
	case 'e':
		return "long double"
	case 'f':
		return "float"
	case 'g':
		return "__float128"
	case 'h':
		return "unsigned char"
	case 'i':
		return "int"
	case 'j':
		return "unsigned int"
	case 'l':
		return "long"
	case 'm':
		return "unsigned long"
	case 'n':
		return "__int128"
	case 'o':
		return "unsigned __int128"
	case 's':
		return "short"
	case 't':
		return "unsigned short"
	case 'v':
		return "void"
	case 'w':
		return "wchar_t"
	case 'x':
		return "long long"
	case 'y':
		return "unsigned long long"
	case 'z':
		return "..."
	}
	return ""
}

// substitution parses <substitution> ::= S_ | S <seq-id> _ | St | Sa | Sb
// | Ss | Si | So | Sd and appends its text. In a nested name's prefix
// (forPrefix) before a constructor or destructor, the library spells
// Ss, Si, So and Sd out in full.
func (p *itanium) substitution(forPrefix bool) (span, bool) {
	p.pos++ // S
	c := p.peek()
	if c == '_' || isDigitByte(c) || 'A' <= c && c <= 'Z' {
		id := 0
		if c == '_' {
			p.pos++
		} else {
			for {
				c := p.peek()
				switch {
				case c == '_':
				case isDigitByte(c):
					id = id*36 + int(c-'0')
				case 'A' <= c && c <= 'Z':
					id = id*36 + int(c-'A') + 10
				default:
					return span{}, false
				}
				p.pos++
				if c == '_' {
					id++
					break
				}
				if id >= 0x80000000/36-36 {
					return span{}, false
				}
			}
		}
		if id >= len(p.subs) || p.subs[id].kind == kindUnusable {
			return span{}, false
		}
		return p.appendCopy(p.subs[id])
	}
	p.pos++
	var text, name string
	verbose := forPrefix && (p.peek() == 'C' || p.peek() == 'D')
	switch c {
	case 't':
		text, name = "std", "std"
	case 'a':
		text, name = "std::allocator", "allocator"
	case 'b':
		text, name = "std::basic_string", "basic_string"
	case 's':
		text, name = "std::string", "string"
		if verbose {
			text, name = "std::basic_string<char, std::char_traits<char>, std::allocator<char>>", "basic_string"
		}
	case 'i':
		text, name = "std::istream", "istream"
		if verbose {
			text, name = "std::basic_istream<char, std::char_traits<char>>", "basic_istream"
		}
	case 'o':
		text, name = "std::ostream", "ostream"
		if verbose {
			text, name = "std::basic_ostream<char, std::char_traits<char>>", "basic_ostream"
		}
	case 'd':
		text, name = "std::iostream", "iostream"
		if verbose {
			text, name = "std::basic_iostream<char, std::char_traits<char>>", "basic_iostream"
		}
	default:
		return span{}, false
	}
	if p.peek() == 'B' {
		return span{}, false
	}
	start := p.mark()
	if !p.appendString(text) {
		return span{}, false
	}
	s := span{start: start, end: p.mark()}
	// The name a constructor takes: the library strips the verbose
	// forms' template arguments.
	if i := strings.Index(text, name); i >= 0 {
		s.nameStart, s.nameEnd = start+offset(i), start+offset(i+len(name))
	}
	return s, true
}

// templateParam parses <template-param> ::= T_ | T <number> _ and appends
// the function template's argument it names.
func (p *itanium) templateParam() (span, bool) {
	p.pos++ // T
	if !p.haveTargs {
		return span{}, false
	}
	n := 0
	if p.peek() != '_' {
		v, ok := p.number()
		if !ok || v < 0 {
			return span{}, false
		}
		n = v + 1
	}
	if p.peek() != '_' {
		return span{}, false
	}
	p.pos++
	if n >= p.ntargs || p.targs[n].pack {
		return span{}, false
	}
	return p.appendCopy(p.targs[n])
}

// typ parses a <type> and appends its text, adding substitution
// candidates as the library does. Its recursion goes through a pointer or
// reference, template arguments or a conversion operator, which count the
// depth.
func (p *itanium) typ() (span, bool) {
	quals, ok := p.cvQualifiers()
	if !ok {
		return span{}, false
	}
	c := p.peek()
	start := p.mark()
	var t span
	addSubst := true
	if name := builtinName(c); name != "" {
		p.pos++
		if !p.appendString(name) {
			return span{}, false
		}
		t, addSubst = span{start: start, end: p.mark()}, false
	} else {
		switch c {
		case 'N', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if t, ok = p.typeName(); !ok {
				return span{}, false
			}
		case 'T':
			if p.peekAt(1) == 's' || p.peekAt(1) == 'u' || p.peekAt(1) == 'e' {
				return span{}, false
			}
			if t, ok = p.templateParam(); !ok || p.peek() == 'I' {
				return span{}, false
			}
		case 'S':
			c2 := p.peekAt(1)
			switch {
			case c2 == 't':
				// St <unqualified-name>: a candidate,
				// and so is its template before the
				// arguments.
				p.pos += 2
				if !p.appendString("std::") {
					return span{}, false
				}
				un, isCast, ok := p.unqualifiedName()
				if !ok || isCast {
					return span{}, false
				}
				t = span{start: start, end: un.end, nameStart: un.nameStart, nameEnd: un.nameEnd}
				if p.peek() == 'I' {
					p.subs = append(p.subs, t)
					if t, ok = p.templateArgsDropped(t); !ok {
						return span{}, false
					}
				}
			default:
				// S_, S<seq-id>_, Sa, Ss...: a candidate
				// only with template arguments after it.
				if t, ok = p.substitution(false); !ok {
					return span{}, false
				}
				if p.peek() != 'I' {
					addSubst = false
				} else if t, ok = p.templateArgsDropped(t); !ok {
					return span{}, false
				}
			}
		case 'P', 'R', 'O':
			p.pos++
			if p.depth++; p.depth > itaniumMaxDepth {
				return span{}, false
			}
			if c == 'P' && p.peek() == 'F' {
				t, ok = p.functionPointer()
			} else {
				var inner span
				if inner, ok = p.typ(); ok {
					t, ok = p.modify(c, inner)
				}
			}
			p.depth--
			if !ok {
				return span{}, false
			}
		case 'D':
			var name string
			switch p.peekAt(1) {
			case 'n':
				name = "std::nullptr_t"
			case 'i':
				name = "char32_t"
			case 's':
				name = "char16_t"
			case 'u':
				name = "char8_t"
			default:
				return span{}, false
			}
			p.pos += 2
			if !p.appendString(name) {
				return span{}, false
			}
			t, addSubst = span{start: start, end: p.mark()}, false
		default:
			return span{}, false
		}
	}
	if addSubst {
		p.subs = append(p.subs, t)
	}
	if quals != 0 {
		switch t.kind {
		case kindPlain:
		default:
			// The library merges qualifiers, collapses or
			// wraps: left to it.
			return span{}, false
		}
		if !p.appendString(qualTexts[quals]) {
			return span{}, false
		}
		t = span{start: t.start, end: p.mark(), kind: kindQualified}
		p.subs = append(p.subs, t)
	}
	return t, true
}

// modify applies a pointer ('P'), reference ('R') or rvalue reference
// ('O') to inner, whose text is the last appended.
func (p *itanium) modify(c byte, inner span) (span, bool) {
	if inner.end != p.mark() {
		return span{}, false
	}
	switch inner.kind {
	case kindPlain, kindQualified:
	case kindLRef:
		// T& & and T& && are T&: the library prints inner.
		if c == 'P' {
			return span{}, false
		}
		p.collapsed = true
		return span{start: inner.start, end: inner.end, kind: kindLRef}, true
	case kindRRef:
		// T&& && is T&&; T&& & would need a copy without one "&".
		if c != 'O' {
			return span{}, false
		}
		p.collapsed = true
		return span{start: inner.start, end: inner.end, kind: kindRRef}, true
	default:
		return span{}, false
	}
	var s string
	var kind typeKind
	switch c {
	case 'P':
		s, kind = "*", kindPlain
	case 'R':
		s, kind = "&", kindLRef
	default:
		s, kind = "&&", kindRRef
	}
	if !p.appendString(s) {
		return span{}, false
	}
	return span{start: inner.start, end: p.mark(), kind: kind}, true
}

// functionPointer parses the <function-type> F [Y] <type>+ E of a pointer to
// function and appends "ret (*)(params)". The function type itself is a
// substitution candidate the fast path cannot print alone.
func (p *itanium) functionPointer() (span, bool) {
	p.pos++ // F
	if p.peek() == 'Y' {
		p.pos++
	}
	ret, ok := p.typ()
	if !ok || ret.kind == kindComplex {
		return span{}, false
	}
	if !p.appendString(" (*)(") {
		return span{}, false
	}
	n := 0
	var only span
	for p.peek() != 'E' {
		switch p.peek() {
		case 0, '.', 'Q':
			return span{}, false
		case 'R', 'O':
			if p.peekAt(1) == 'E' {
				return span{}, false // a ref-qualified function type
			}
		}
		if n > 0 && !p.appendString(", ") {
			return span{}, false
		}
		start := p.pos
		t, ok := p.typ()
		if !ok {
			return span{}, false
		}
		if p.pos == start+1 && p.in[start] == 'v' {
			only = t
			only.kind = kindUnusable
		}
		n++
	}
	p.pos++ // E
	if n == 0 {
		return span{}, false
	}
	if n == 1 && only.kind == kindUnusable {
		// (void) prints as ().
		p.buf = p.buf[:only.start]
	}
	if !p.appendString(")") {
		return span{}, false
	}
	p.subs = append(p.subs, span{kind: kindUnusable})
	return span{start: ret.start, end: p.mark(), kind: kindComplex}, true
}

// typeName parses a <class-enum-type> that is a nested name or an unscoped
// name with optional template arguments.
func (p *itanium) typeName() (span, bool) {
	if p.peek() == 'N' {
		p.pos++
		if q, ok := p.cvQualifiers(); !ok || q != 0 || p.peek() == 'R' || p.peek() == 'O' || p.peek() == 'H' {
			return span{}, false
		}
		n := len(p.targs)
		t, _, ok := p.prefix()
		p.targs = p.targs[:n]
		return t, ok
	}
	un, isCast, ok := p.unqualifiedName()
	if !ok || isCast {
		return span{}, false
	}
	if p.peek() == 'I' {
		p.subs = append(p.subs, un)
		return p.templateArgsDropped(un)
	}
	return un, true
}

// templateArgsDropped is templateArgs for a type, whose arguments T_ never
// names.
func (p *itanium) templateArgsDropped(name span) (span, bool) {
	n := len(p.targs)
	t, ok := p.templateArgs(name)
	p.targs = p.targs[:n]
	return t, ok
}

// specialName parses the special names of a class's vtable, VTT and type
// information: T[VTIS] <type>. Thunks and the rest are left to the library.
func (p *itanium) specialName() (string, bool) {
	var prefix string
	switch p.peekAt(1) {
	case 'V':
		prefix = "vtable for "
	case 'T':
		prefix = "VTT for "
	case 'I':
		prefix = "typeinfo for "
	case 'S':
		prefix = "typeinfo name for "
	default:
		return "", false
	}
	p.pos += 2
	start := p.mark()
	if !p.appendString(prefix) {
		return "", false
	}
	// The library does not simplify a special name's type: references
	// to references stay as they are.
	t, ok := p.typ()
	if !ok || p.collapsed || t.kind == kindComplex || t.start != start+offset(len(prefix)) {
		return "", false
	}
	return p.finish(span{}, false, nameInfo{s: span{start: start, end: t.end}}, false, nil)
}
