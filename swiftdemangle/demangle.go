// Package swiftdemangle demangles Swift symbol names in pure Go.
//
// It reads the manglings Swift compilers emit: "$s" (Swift 5 and later),
// "$S" (Swift 4.2), "_T0" (Swift 4.0), "$e" (Embedded Swift), each with or
// without the extra leading underscore of Mach-O symbol tables ("_$s...",
// "__T0..."), and the "@__swiftmacro_" names of macro expansion buffers. A
// symbol is parsed into a tree of Nodes shaped like those of Swift's own
// demangler (lib/Demangling), which prints in one of several Styles: Full is
// what swift-demangle prints, Simplified what Apple's crash reports show.
// The pre-Swift-4 mangling ("_T" not followed by "0", and the "_Tt" type
// names of Objective-C metadata) is read too.
//
// Every function here is safe for concurrent use. Input is untrusted: work
// and output are bounded (see MaxOutput), and malformed names give errors,
// never panics.
package swiftdemangle

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Style chooses how much of a demangled name is printed.
type Style int

const (
	// Full prints everything, as swift-demangle does by default:
	// "static mangling.HasVarInit.state : Swift.Bool".
	Full Style = iota
	// Simplified prints what Apple's crash reports and Xcode show
	// (swift-demangle -simplified, SimplifiedUIDemangleOptions): no module
	// names, argument labels but no argument types, "specialized" for any
	// specialization: "closure #1 in ViewController.viewDidLoad()".
	Simplified
	// NameOnly prints the qualified name with generic parameters but no
	// parameter list: "Zim.zang<A>" (symbolic's DemangleOptions::name_only).
	NameOnly
	// SimplifiedTypes is Simplified with argument types and without return
	// types: "r13757744(x: [Int])" (symbolic's name_only().parameters(true)).
	SimplifiedTypes
)

// String names the style as the package's constants do.
func (s Style) String() string {
	switch s {
	case Full:
		return "Full"
	case Simplified:
		return "Simplified"
	case NameOnly:
		return "NameOnly"
	case SimplifiedTypes:
		return "SimplifiedTypes"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// MaxOutput bounds the length of a demangled name, in bytes. Substitutions
// let a short mangled name describe a type whose printed form doubles with
// every few bytes; such names fail with ErrTooComplex.
const MaxOutput = 1 << 16

var (
	// ErrNotMangled: the name has no Swift mangling prefix.
	ErrNotMangled = errors.New("not a Swift mangled name")
	// ErrMalformed: the name has a Swift prefix but does not parse.
	ErrMalformed = errors.New("malformed Swift mangled name")
	// ErrTooComplex: the name needs more nodes, nesting or output than
	// this package allows.
	ErrTooComplex = errors.New("Swift mangled name too complex")
)

// Error tells why a name did not demangle and, for malformed names, the
// byte offset in the name (after any Mach-O underscore) where parsing gave
// up. It wraps one of the Err values above, for errors.Is.
type Error struct {
	Name   string // the name as given, cut to 80 bytes
	Offset int
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("swiftdemangle: %q: %v at byte %d", e.Name, e.Err, e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

func newError(name string, offset int, err error) *Error {
	if len(name) > 80 {
		name = name[:80]
	}
	return &Error{Name: name, Offset: offset, Err: err}
}

// trimMachO drops the extra underscore Mach-O symbol tables prepend, as
// swift-demangle does for any name starting with "__".
func trimMachO(name string) string {
	if strings.HasPrefix(name, "__") {
		return name[1:]
	}
	return name
}

// IsMangled reports whether name starts like a Swift mangled symbol, in
// any of the manglings this package knows, with or without Mach-O's extra
// underscore. It does not parse the name.
func IsMangled(name string) bool {
	name = trimMachO(name)
	return manglingPrefixLength(name) > 0 || strings.HasPrefix(name, "_T")
}

// Parse demangles name into its node tree.
func Parse(mangled string) (*Node, error) {
	return parse(trimMachO(mangled))
}

func parse(name string) (*Node, error) {
	return parseWith(&demangler{}, name)
}

// demanglers are reused by Demangle, whose trees do not outlive the call:
// their node and child-list slabs then cost no allocation. sync.Pool hands
// each demangler to one goroutine at a time.
var demanglers = sync.Pool{New: func() any { return new(demangler) }}

// A pooled demangler keeps its slabs and buffers between calls up to these
// sizes, enough for any ordinary symbol. Larger ones, grown by some huge or
// hostile name, are left to the garbage collector instead of being kept
// alive by the pool.
const (
	maxPooledNodes = 1024     // nodes slab: 88 KiB
	maxPooledSlots = 4096     // child-list slab, stack and substitutions
	maxPooledBytes = 16 << 10 // print buffer and identifier scratch
)

// reset readies a pooled demangler for a new name.
func (d *demangler) reset() {
	// Size the slabs for the largest name seen recently, so that the next
	// name of that size needs no second slab, but within the pool's
	// limits, lest release drop them.
	if n := d.count(); n > cap(d.nodes) && cap(d.nodes) < maxPooledNodes {
		d.nodes = make([]nodeBox, 0, min(n+n/2, maxPooledNodes))
	}
	if n := d.kidCount; n > cap(d.kids) && cap(d.kids) < maxPooledSlots {
		d.kids = make([]*Node, 0, min(n+n/2, maxPooledSlots))
	}
	d.nodes, d.kids = d.nodes[:0], d.kids[:0]
	d.text, d.pos = "", 0
	d.stack, d.subst = d.stack[:0], d.subst[:0]
	d.nw, d.wordSources = 0, d.wordSources[:0]
	d.oldFunctionTypeMangling, d.sawOpaqueReturnType, d.opaqueBudget = false, false, 0
	d.kidCount, d.nodeCount, d.tooMany, d.depth = 0, 0, false, 0
}

// release readies the demangler for the pool: it drops whatever some huge
// name made grow past the pool's limits. What it keeps is not zeroed
// (newNode sets every field of a node), so a pooled demangler may still
// point into the last names it read, within those limits, until it is
// reused or the pool lets it go.
func (d *demangler) release() {
	dropIfOver(&d.nodes, maxPooledNodes)
	dropIfOver(&d.kids, maxPooledSlots)
	dropIfOver(&d.stack, maxPooledSlots)
	dropIfOver(&d.subst, maxPooledSlots)
	dropIfOver(&d.wordSources, maxPooledSlots)
	dropIfOver(&d.out, maxPooledBytes)
	dropIfOver(&d.scratch, maxPooledBytes)
	d.text = ""
}

// dropIfOver sets *s to nil if its capacity is over limit. It writes
// nothing otherwise, which is the common case on every Demangle.
func dropIfOver[T any](s *[]T, limit int) {
	if cap(*s) > limit {
		*s = nil
	}
}

// errInternal marks a panic recovered inside the demangler: a bug, which
// FuzzDemangle looks for, reported to callers as a malformed name.
var errInternal = fmt.Errorf("%w (internal error)", ErrMalformed)

func parseWith(d *demangler, name string) (root *Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, newError(name, min(d.pos, len(name)), errInternal)
		}
	}()
	switch prefix := manglingPrefixLength(name); {
	case prefix > 0:
		root = d.demangleSymbol(name, prefix)
	case strings.HasPrefix(name, "_T"):
		o := oldDemangler{d: d, text: name}
		root = o.demangleTopLevel()
		d.pos = len(name) - len(o.text)
	default:
		return nil, newError(name, 0, ErrNotMangled)
	}
	if d.tooMany || d.count() > maxNodes || d.depth > maxRecursion {
		return nil, newError(name, min(d.pos, len(name)), ErrTooComplex)
	}
	if root == nil {
		return nil, newError(name, min(d.pos, len(name)), ErrMalformed)
	}
	return root, nil
}

// String prints the tree in the given style. It returns "" if the tree
// cannot be printed (a shape Swift's printer rejects too) or its printed
// form would exceed MaxOutput.
func (n *Node) String(style Style) string {
	s, _ := n.format(style)
	return s
}

func (n *Node) format(style Style) (string, bool) {
	return n.formatInto(style, nil)
}

// printPanics counts panics recovered while printing (bugs, like
// errInternal); FuzzDemangle checks it stays zero.
var printPanics atomic.Int64

// formatInto prints into buf's storage, which the caller may reuse.
func (n *Node) formatInto(style Style, buf *[]byte) (s string, ok bool) {
	p := printer{opts: optionsFor(style), limit: MaxOutput}
	if buf != nil {
		p.buf = (*buf)[:0]
	}
	// One deferred call does both jobs: Demangle pays for it on every name.
	defer func() {
		if buf != nil {
			*buf = p.buf[:0]
		}
		if recover() != nil {
			s, ok = "", false
			printPanics.Add(1)
		}
	}()
	s, ok = p.printRoot(n)
	if !ok || len(s) > MaxOutput || s == "" {
		return "", false
	}
	return s, true
}

// Demangle returns the demangled form of a Swift symbol name in the given
// style. Names that are not Swift, are malformed or too complex give an
// *Error.
func Demangle(mangled string, style Style) (string, error) {
	name := trimMachO(mangled)
	d := demanglers.Get().(*demangler)
	d.reset()
	// No defer: parseWith and formatInto recover their own panics.
	root, err := parseWith(d, name)
	var s string
	if err == nil {
		var ok bool
		if s, ok = root.formatInto(style, &d.out); !ok {
			err = newError(name, len(name), ErrTooComplex)
		}
	}
	d.release()
	demanglers.Put(d)
	return s, err
}
