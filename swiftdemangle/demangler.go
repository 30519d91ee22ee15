package swiftdemangle

import (
	"strconv"
	"strings"
)

// This file parses the current Swift mangling ($s, $S, _T0 and the
// "@__swiftmacro_" file names) into a node tree. It follows the structure of
// Swift's lib/Demangling/Demangler.cpp: a stack machine in which every
// operator character pops the nodes it consumes and pushes the node it
// builds, with substitution tables for repeated nodes and words.

const (
	maxNumWords    = 26   // word substitutions a..z
	maxRepeatCount = 2048 // Swift's SubstitutionMerging::MaxRepeatCount
	maxSpecPass    = 10   // Swift's MAX_SPECIALIZATION_PASS
	maxBuiltinSize = 4096 // bound on Builtin.IntN / FPIEEEN / VecN sizes
	// maxNodes bounds the nodes one symbol may create: repetition counts
	// (up to 2048 per operator) could otherwise make a short input build
	// millions of nodes.
	maxNodes = 1 << 16
	// maxRecursion bounds the demangler's own recursion (nested bound
	// generic contexts, nested symbols in specialization payloads).
	maxRecursion = 256
)

type demangler struct {
	text  string
	pos   int
	stack []*Node
	subst []*Node
	words [maxNumWords]string
	nw    int
	// wordSources are the identifiers not yet split into words: splitting
	// waits for the first word substitution, which most names never have.
	wordSources []string

	oldFunctionTypeMangling bool
	sawOpaqueReturnType     bool // only then link opaque types to their declaration
	opaqueBudget            int  // nodes the linking may still visit

	nodes     []nodeBox // slab the nodes are carved from
	kids      []*Node   // slab the longer child lists are carved from
	kidCount  int       // child-list slots carved from kids so far
	out       []byte    // Demangle's print buffer, kept with the pool
	scratch   []byte    // identifiers built from word substitutions
	lists     [8]*Node
	nodeCount int // nodes in earlier slabs, and pushes of repeated substitutions
	tooMany   bool
	depth     int
}

// nodeBox is a slot of the node slab: a node with room for its first
// children, which most nodes never outgrow.
type nodeBox struct {
	node Node
	kids [3]*Node
}

func (d *demangler) newNode(k Kind) *Node {
	i := len(d.nodes)
	if i == cap(d.nodes) {
		return d.newNodeInNewSlab(k)
	}
	d.nodes = d.nodes[:i+1]
	// A pooled slab holds the nodes of earlier names: every field is set.
	b := &d.nodes[i]
	b.node = Node{Kind: k, Children: b.kids[:0]}
	return &b.node
}

// newNodeInNewSlab starts a new node slab when the current one is full;
// the nodes carved from the old one stay where they are. It is also where
// the bound on nodes is checked: at most one slab's worth past maxNodes.
// Kept out of newNode, whose short path then needs no spills.
//
//go:noinline
func (d *demangler) newNodeInNewSlab(k Kind) *Node {
	d.nodeCount += len(d.nodes)
	if d.nodeCount > maxNodes {
		d.tooMany = true
	}
	size := 64
	if d.nodeCount > 64 {
		size = 256
	}
	d.nodes = make([]nodeBox, 0, size)
	return d.newNode(k)
}

// count is the number of nodes made so far, counting each push of a
// repeated substitution as one.
func (d *demangler) count() int { return d.nodeCount + len(d.nodes) }

func (d *demangler) textNode(k Kind, text string) *Node {
	n := d.newNode(k)
	n.Text = text
	n.payload = payloadText
	return n
}

func (d *demangler) indexNode(k Kind, index uint64) *Node {
	n := d.newNode(k)
	n.Index = index
	n.payload = payloadIndex
	return n
}

func (d *demangler) peek() byte {
	if d.pos >= len(d.text) {
		return 0
	}
	return d.text[d.pos]
}

func (d *demangler) next() byte {
	if d.pos >= len(d.text) {
		d.pos++ // keep pushBack symmetric at the end, as Swift's does
		return 0
	}
	c := d.text[d.pos]
	d.pos++
	return c
}

func (d *demangler) nextIf(c byte) bool {
	if d.pos < len(d.text) && d.text[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *demangler) pushBack() { d.pos-- }

func (d *demangler) consumeAll() string {
	if d.pos >= len(d.text) {
		return ""
	}
	s := d.text[d.pos:]
	d.pos = len(d.text)
	return s
}

func (d *demangler) push(n *Node) { d.stack = append(d.stack, n) }

func (d *demangler) pop() *Node {
	if len(d.stack) == 0 {
		return nil
	}
	n := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return n
}

func (d *demangler) popKind(k Kind) *Node {
	if len(d.stack) == 0 || d.stack[len(d.stack)-1].Kind != k {
		return nil
	}
	return d.pop()
}

func (d *demangler) popIf(pred func(Kind) bool) *Node {
	if len(d.stack) == 0 || !pred(d.stack[len(d.stack)-1].Kind) {
		return nil
	}
	return d.pop()
}

func (d *demangler) addSubst(n *Node) {
	if n != nil {
		d.subst = append(d.subst, n)
	}
}

func addChild(parent, child *Node) *Node {
	if parent == nil || child == nil {
		return nil
	}
	parent.Children = append(parent.Children, child)
	return parent
}

// childList returns an empty child list with room for n children, carved
// from a slab so that small lists cost no allocation of their own.
func (d *demangler) childList(n int) []*Node {
	if n > 16 {
		return make([]*Node, 0, n)
	}
	d.kidCount += n
	if cap(d.kids)-len(d.kids) < n {
		d.kids = make([]*Node, 0, 256)
	}
	l := d.kids[len(d.kids) : len(d.kids) : len(d.kids)+n]
	d.kids = d.kids[:len(d.kids)+n]
	return l
}

// withChild returns a new node of kind k whose child is c, or nil if c is
// nil. It is small enough to inline, and the one call it makes carves
// the node with its child in place.
func (d *demangler) withChild(k Kind, c *Node) *Node {
	if c == nil {
		return nil
	}
	return d.newNodeWithChild(k, c)
}

// newNodeWithChild is newNode for a node with one child, c: a quarter of
// all nodes are Type nodes around one child.
func (d *demangler) newNodeWithChild(k Kind, c *Node) *Node {
	i := len(d.nodes)
	if i == cap(d.nodes) {
		n := d.newNodeInNewSlab(k)
		n.Children = append(n.Children, c)
		return n
	}
	d.nodes = d.nodes[:i+1]
	b := &d.nodes[i]
	b.kids[0] = c
	b.node = Node{Kind: k, Children: b.kids[:1]}
	return &b.node
}

func (d *demangler) withChildren(k Kind, cs ...*Node) *Node {
	for _, c := range cs {
		if c == nil {
			return nil
		}
	}
	if i := len(d.nodes); i < cap(d.nodes) && len(cs) <= len(d.nodes[i].kids) {
		// The common case, carved in place as by newNodeWithChild.
		d.nodes = d.nodes[:i+1]
		b := &d.nodes[i]
		for j, c := range cs { // cheaper than copy's call for a few
			b.kids[j] = c
		}
		b.node = Node{Kind: k, Children: b.kids[:len(cs)]}
		return &b.node
	}
	n := d.newNode(k)
	if len(cs) > cap(n.Children) {
		n.Children = d.childList(len(cs))
	}
	n.Children = append(n.Children, cs...)
	return n
}

func (d *demangler) typeNode(c *Node) *Node { return d.withChild(KindType, c) }

func (d *demangler) withPoppedType(k Kind) *Node { return d.withChild(k, d.popKind(KindType)) }

func (d *demangler) changeKind(n *Node, k Kind) *Node {
	if n == nil {
		return nil
	}
	m := d.newNode(k)
	m.Text, m.Index, m.payload = n.Text, n.Index, n.payload
	if len(n.Children) > cap(m.Children) {
		m.Children = d.childList(len(n.Children))
	}
	m.Children = append(m.Children, n.Children...)
	return m
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isLower(c byte) bool     { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool     { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool    { return isLower(c) || isUpper(c) }
func isWordStart(c byte) bool { return !isDigit(c) && c != '_' && c != 0 }
func isWordEnd(c, prev byte) bool {
	return c == '_' || c == 0 || (!isUpper(prev) && isUpper(c))
}

func isDeclName(k Kind) bool {
	switch k {
	case KindIdentifier, KindLocalDeclName, KindPrivateDeclName, KindRelatedEntityDeclName,
		KindPrefixOperator, KindPostfixOperator, KindInfixOperator,
		KindTypeSymbolicReference, KindProtocolSymbolicReference, KindObjectiveCProtocolSymbolicReference:
		return true
	}
	return false
}

func isAnyGeneric(k Kind) bool {
	switch k {
	case KindStructure, KindClass, KindEnum, KindProtocol, KindProtocolSymbolicReference,
		KindObjectiveCProtocolSymbolicReference, KindOtherNominalType, KindTypeAlias,
		KindTypeSymbolicReference, KindBuiltinTupleType:
		return true
	}
	return false
}

func isEntity(k Kind) bool { return k == KindType || isContext(k) }

func isRequirement(k Kind) bool {
	switch k {
	case KindDependentGenericParamPackMarker, KindDependentGenericSameTypeRequirement,
		KindDependentGenericSameShapeRequirement, KindDependentGenericLayoutRequirement,
		KindDependentGenericConformanceRequirement, KindDependentGenericInverseConformanceRequirement:
		return true
	}
	return false
}

func isFunctionAttr(k Kind) bool {
	switch k {
	case KindFunctionSignatureSpecialization, KindGenericSpecialization,
		KindGenericSpecializationPrespecialized, KindInlinedGenericFunction,
		KindGenericSpecializationNotReAbstracted, KindGenericPartialSpecialization,
		KindGenericPartialSpecializationNotReAbstracted, KindGenericSpecializationInResilienceDomain,
		KindObjCAttribute, KindNonObjCAttribute, KindDynamicAttribute,
		KindDirectMethodReferenceAttribute, KindVTableAttribute, KindPartialApplyForwarder,
		KindPartialApplyObjCForwarder, KindOutlinedVariable, KindOutlinedReadOnlyObject,
		KindOutlinedBridgedMethod, KindMergedFunction, KindDistributedThunk, KindDistributedAccessor,
		KindDynamicallyReplaceableFunctionImpl, KindDynamicallyReplaceableFunctionKey,
		KindDynamicallyReplaceableFunctionVar, KindAsyncFunctionPointer,
		KindAsyncAwaitResumePartialFunction, KindAsyncSuspendResumePartialFunction,
		KindAccessibleFunctionRecord, KindBackDeploymentThunk, KindBackDeploymentFallback,
		KindHasSymbolQuery:
		return true
	}
	return false
}

func isProtocolNode(n *Node) bool {
	switch n.kind() {
	case KindType:
		return isProtocolNode(n.firstChild())
	case KindProtocol, KindProtocolSymbolicReference, KindObjectiveCProtocolSymbolicReference:
		return true
	}
	return false
}

// manglingPrefixLength returns the length of the current-mangling prefix
// name starts with, or 0.
func manglingPrefixLength(name string) int {
	if len(name) < 2 {
		return 0
	}
	switch name[0] {
	case '$':
		if c := name[1]; c == 's' || c == 'S' || c == 'e' {
			return 2
		}
	case '_':
		if len(name) >= 3 {
			if name[1] == 'T' && name[2] == '0' {
				return 3
			}
			if c := name[2]; name[1] == '$' && (c == 's' || c == 'S' || c == 'e') {
				return 3
			}
		}
	case '@':
		if strings.HasPrefix(name, "@__swiftmacro_") {
			return len("@__swiftmacro_")
		}
	}
	return 0
}

// demangleSymbol parses a whole symbol; nil means it is not one.
// prefix is manglingPrefixLength(name), which the caller has checked.
func (d *demangler) demangleSymbol(name string, prefix int) *Node {
	d.text, d.pos = name, 0
	if prefix == 0 {
		return nil
	}
	d.oldFunctionTypeMangling = name[0] == '_' && len(name) > 1 && name[1] == 'T'
	d.pos = prefix
	if !d.parseAndPushNodes() {
		return nil
	}
	top := d.newNode(KindGlobal)
	parent := top
	for {
		attr := d.popIf(isFunctionAttr)
		if attr == nil {
			break
		}
		addChild(parent, attr)
		if attr.Kind == KindPartialApplyForwarder || attr.Kind == KindPartialApplyObjCForwarder {
			parent = attr
		}
	}
	for _, n := range d.stack {
		if n.Kind == KindType {
			addChild(parent, n.firstChild())
		} else {
			addChild(parent, n)
		}
	}
	if len(top.Children) == 0 || d.tooMany {
		return nil
	}
	return top
}

func (d *demangler) parseAndPushNodes() bool {
	for d.pos < len(d.text) {
		n := d.demangleOperator()
		if n == nil || d.tooMany {
			return false
		}
		d.push(n)
	}
	return true
}

func (d *demangler) demangleOperator() *Node {
	for {
		c := d.next()
		switch c {
		case 0xFF:
			continue // alignment padding for symbolic references
		case 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xA, 0xB, 0xC:
			// Symbolic references point into the binary: with no resolver,
			// Swift refuses them too.
			return nil
		case 'A':
			return d.demangleMultiSubstitutions()
		case 'B':
			return d.demangleBuiltinType()
		case 'C':
			return d.demangleAnyGenericType(KindClass)
		case 'D':
			return d.demangleTypeMangling()
		case 'E':
			return d.demangleExtensionContext()
		case 'F':
			return d.demanglePlainFunction()
		case 'G':
			return d.demangleBoundGenericType()
		case 'H':
			switch d.next() {
			case 'A':
				return d.demangleDependentProtocolConformanceAssociated()
			case 'C':
				return d.demangleConcreteProtocolConformance()
			case 'D':
				return d.demangleDependentProtocolConformanceRoot()
			case 'I':
				return d.demangleDependentProtocolConformanceInherited()
			case 'P':
				return d.withChild(KindProtocolConformanceRefInTypeModule, d.popProtocol())
			case 'p':
				return d.withChild(KindProtocolConformanceRefInProtocolModule, d.popProtocol())
			case 'c':
				return d.withChild(KindProtocolConformanceDescriptorRecord, d.popProtocolConformance())
			case 'n':
				return d.withPoppedType(KindNominalTypeDescriptorRecord)
			case 'o':
				return d.withChild(KindOpaqueTypeDescriptorRecord, d.pop())
			case 'r':
				return d.withChild(KindProtocolDescriptorRecord, d.popProtocol())
			case 'F':
				return d.newNode(KindAccessibleFunctionRecord)
			default:
				d.pushBack()
				d.pushBack()
				return d.demangleIdentifier()
			}
		case 'I':
			return d.demangleImplFunctionType()
		case 'K':
			return d.newNode(KindThrowsAnnotation)
		case 'L':
			return d.demangleLocalIdentifier()
		case 'M':
			return d.demangleMetatype()
		case 'N':
			return d.withChild(KindTypeMetadata, d.popKind(KindType))
		case 'O':
			return d.demangleAnyGenericType(KindEnum)
		case 'P':
			return d.demangleAnyGenericType(KindProtocol)
		case 'Q':
			return d.demangleArchetype()
		case 'R':
			return d.demangleGenericRequirement()
		case 'S':
			return d.demangleStandardSubstitution()
		case 'T':
			return d.demangleThunkOrSpecialization()
		case 'V':
			return d.demangleAnyGenericType(KindStructure)
		case 'W':
			return d.demangleWitness()
		case 'X':
			return d.demangleSpecialType()
		case 'Y':
			return d.demangleTypeAnnotation()
		case 'Z':
			return d.withChild(KindStatic, d.popIf(isEntity))
		case 'a':
			return d.demangleAnyGenericType(KindTypeAlias)
		case 'c':
			return d.popFunctionType(KindFunctionType, false)
		case 'd':
			return d.newNode(KindVariadicMarker)
		case 'f':
			return d.demangleFunctionEntity()
		case 'g':
			return d.demangleRetroactiveConformance()
		case 'h':
			return d.typeNode(d.withChild(KindShared, d.popTypeAndGetChild()))
		case 'i':
			return d.demangleSubscript()
		case 'l':
			return d.demangleGenericSignature(false)
		case 'm':
			return d.typeNode(d.withChild(KindMetatype, d.popKind(KindType)))
		case 'n':
			return d.typeNode(d.withChild(KindOwned, d.popTypeAndGetChild()))
		case 'o':
			return d.demangleOperatorIdentifier()
		case 'p':
			return d.typeNode(d.demangleProtocolList())
		case 'q':
			return d.typeNode(d.demangleGenericParamIndex())
		case 'r':
			return d.demangleGenericSignature(true)
		case 's':
			return d.textNode(KindModule, "Swift")
		case 't':
			return d.popTuple()
		case 'u':
			return d.demangleGenericType()
		case 'v':
			return d.demangleVariable()
		case 'w':
			return d.demangleValueWitness()
		case 'x':
			return d.typeNode(d.dependentGenericParamType(0, 0))
		case 'y':
			return d.newNode(KindEmptyList)
		case 'z':
			return d.typeNode(d.withChild(KindInOut, d.popTypeAndGetChild()))
		case '_':
			return d.newNode(KindFirstElementMarker)
		case '.':
			// IRGen's ".<n>" and LLVM's ".cold" etc.: an unmangled suffix.
			d.pushBack()
			return d.textNode(KindSuffix, d.consumeAll())
		default:
			d.pushBack()
			return d.demangleIdentifier()
		}
	}
}

func (d *demangler) demangleTypeAnnotation() *Node {
	switch d.next() {
	case 'a':
		return d.newNode(KindAsyncAnnotation)
	case 'A':
		return d.newNode(KindIsolatedAnyFunctionType)
	case 'b':
		return d.newNode(KindConcurrentFunctionType)
	case 'c':
		return d.withChild(KindGlobalActorFunctionType, d.popTypeAndGetChild())
	case 'C':
		return d.newNode(KindNonIsolatedCallerFunctionType)
	case 'i':
		return d.typeNode(d.withChild(KindIsolated, d.popTypeAndGetChild()))
	case 'j':
		return d.demangleDifferentiableFunctionType()
	case 'k':
		return d.typeNode(d.withChild(KindNoDerivative, d.popTypeAndGetChild()))
	case 'K':
		return d.withChild(KindTypedThrowsAnnotation, d.popTypeAndGetChild())
	case 't':
		return d.typeNode(d.withChild(KindCompileTimeConst, d.popTypeAndGetChild()))
	case 'T':
		return d.newNode(KindTransferringResultFunctionType)
	case 'u':
		return d.typeNode(d.withChild(KindTransferring, d.popTypeAndGetChild()))
	case 'l':
		kind := d.demangleLifetimeDependenceKind()
		if kind == nil {
			return nil
		}
		return d.typeNode(d.withChildren(KindParamLifetimeDependence, kind, d.popTypeAndGetChild()))
	case 'L':
		kind := d.demangleLifetimeDependenceKind()
		if kind == nil {
			return nil
		}
		n := d.newNode(KindSelfLifetimeDependence)
		n.Index, n.payload = kind.Index, payloadIndex
		return n
	}
	return nil
}

// Lifetime dependence kinds, as NodePrinter numbers them.
const (
	lifetimeInherit = 0
	lifetimeScope   = 1
)

func (d *demangler) demangleLifetimeDependenceKind() *Node {
	switch d.next() {
	case 'i':
		return d.indexNode(KindIndex, lifetimeInherit)
	case 's':
		return d.indexNode(KindIndex, lifetimeScope)
	}
	return nil
}

func (d *demangler) demangleNatural() int {
	if !isDigit(d.peek()) {
		return -1000
	}
	// Work on locals: every identifier's length comes through here.
	text, pos, num := d.text, d.pos, 0
	for pos < len(text) && isDigit(text[pos]) {
		n := 10*num + int(text[pos]-'0')
		pos++
		if n < num || n > 1<<31-1 {
			d.pos = pos
			return -1000
		}
		num = n
	}
	d.pos = pos
	return num
}

func (d *demangler) demangleIndex() int {
	if d.nextIf('_') {
		return 0
	}
	n := d.demangleNatural()
	if n >= 0 && d.nextIf('_') {
		return n + 1
	}
	return -1000
}

func (d *demangler) demangleIndexAsNode() *Node {
	i := d.demangleIndex()
	if i >= 0 {
		return d.indexNode(KindNumber, uint64(i))
	}
	return nil
}

func (d *demangler) demangleMultiSubstitutions() *Node {
	repeat := -1
	for {
		c := d.next()
		switch {
		case c == 0:
			return nil
		case isLower(c):
			n := d.pushMultiSubstitutions(repeat, int(c-'a'))
			if n == nil {
				return nil
			}
			d.push(n)
			repeat = -1
			continue
		case isUpper(c):
			return d.pushMultiSubstitutions(repeat, int(c-'A'))
		case c == '_':
			idx := repeat + 27
			if idx < 0 || idx >= len(d.subst) {
				return nil
			}
			return d.subst[idx]
		}
		d.pushBack()
		repeat = d.demangleNatural()
		if repeat < 0 {
			return nil
		}
	}
}

func (d *demangler) pushMultiSubstitutions(repeat, idx int) *Node {
	if idx >= len(d.subst) || repeat > maxRepeatCount {
		return nil
	}
	n := d.subst[idx]
	for ; repeat > 1; repeat-- {
		d.nodeCount++
		d.push(n)
	}
	if d.count() > maxNodes {
		d.tooMany = true
		return nil
	}
	return n
}

func (d *demangler) swiftType(k Kind, name string) *Node {
	return d.typeNode(d.withChildren(k, d.textNode(KindModule, "Swift"), d.textNode(KindIdentifier, name)))
}

func (d *demangler) demangleStandardSubstitution() *Node {
	switch d.next() {
	case 'o':
		return d.textNode(KindModule, "__C")
	case 'C':
		return d.textNode(KindModule, "__C_Synthesized")
	case 'g':
		opt := d.typeNode(d.withChildren(KindBoundGenericEnum,
			d.swiftType(KindEnum, "Optional"),
			d.withChild(KindTypeList, d.popKind(KindType))))
		d.addSubst(opt)
		return opt
	default:
		d.pushBack()
		repeat := d.demangleNatural()
		if repeat > maxRepeatCount {
			return nil
		}
		second := d.nextIf('c')
		n := d.standardSubstitution(d.next(), second)
		if n == nil {
			return nil
		}
		for ; repeat > 1; repeat-- {
			d.nodeCount++
			d.push(n)
		}
		if d.count() > maxNodes {
			d.tooMany = true
			return nil
		}
		return n
	}
}

type stdType struct {
	kind Kind
	name string
}

// standardTypes and concurrencyTypes are Swift's StandardTypesMangling.def:
// the one-letter substitutions S<c> and Sc<c>.
var standardTypes = [128]stdType{
	'A': {KindStructure, "AutoreleasingUnsafeMutablePointer"},
	'a': {KindStructure, "Array"},
	'b': {KindStructure, "Bool"},
	'D': {KindStructure, "Dictionary"},
	'd': {KindStructure, "Double"},
	'f': {KindStructure, "Float"},
	'h': {KindStructure, "Set"},
	'I': {KindStructure, "DefaultIndices"},
	'i': {KindStructure, "Int"},
	'J': {KindStructure, "Character"},
	'N': {KindStructure, "ClosedRange"},
	'n': {KindStructure, "Range"},
	'O': {KindStructure, "ObjectIdentifier"},
	'P': {KindStructure, "UnsafePointer"},
	'p': {KindStructure, "UnsafeMutablePointer"},
	'R': {KindStructure, "UnsafeBufferPointer"},
	'r': {KindStructure, "UnsafeMutableBufferPointer"},
	'S': {KindStructure, "String"},
	's': {KindStructure, "Substring"},
	'u': {KindStructure, "UInt"},
	'V': {KindStructure, "UnsafeRawPointer"},
	'v': {KindStructure, "UnsafeMutableRawPointer"},
	'W': {KindStructure, "UnsafeRawBufferPointer"},
	'w': {KindStructure, "UnsafeMutableRawBufferPointer"},
	'q': {KindEnum, "Optional"},
	'B': {KindProtocol, "BinaryFloatingPoint"},
	'E': {KindProtocol, "Encodable"},
	'e': {KindProtocol, "Decodable"},
	'F': {KindProtocol, "FloatingPoint"},
	'G': {KindProtocol, "RandomNumberGenerator"},
	'H': {KindProtocol, "Hashable"},
	'j': {KindProtocol, "Numeric"},
	'K': {KindProtocol, "BidirectionalCollection"},
	'k': {KindProtocol, "RandomAccessCollection"},
	'L': {KindProtocol, "Comparable"},
	'l': {KindProtocol, "Collection"},
	'M': {KindProtocol, "MutableCollection"},
	'm': {KindProtocol, "RangeReplaceableCollection"},
	'Q': {KindProtocol, "Equatable"},
	'T': {KindProtocol, "Sequence"},
	't': {KindProtocol, "IteratorProtocol"},
	'U': {KindProtocol, "UnsignedInteger"},
	'X': {KindProtocol, "RangeExpression"},
	'x': {KindProtocol, "Strideable"},
	'Y': {KindProtocol, "RawRepresentable"},
	'y': {KindProtocol, "StringProtocol"},
	'Z': {KindProtocol, "SignedInteger"},
	'z': {KindProtocol, "BinaryInteger"},
}

var concurrencyTypes = [128]stdType{
	'A': {KindProtocol, "Actor"},
	'C': {KindStructure, "CheckedContinuation"},
	'c': {KindStructure, "UnsafeContinuation"},
	'E': {KindStructure, "CancellationError"},
	'e': {KindStructure, "UnownedSerialExecutor"},
	'F': {KindProtocol, "Executor"},
	'f': {KindProtocol, "SerialExecutor"},
	'G': {KindStructure, "TaskGroup"},
	'g': {KindStructure, "ThrowingTaskGroup"},
	'h': {KindProtocol, "TaskExecutor"},
	'I': {KindProtocol, "AsyncIteratorProtocol"},
	'i': {KindProtocol, "AsyncSequence"},
	'J': {KindStructure, "UnownedJob"},
	'M': {KindClass, "MainActor"},
	'P': {KindStructure, "TaskPriority"},
	'S': {KindStructure, "AsyncStream"},
	's': {KindStructure, "AsyncThrowingStream"},
	'T': {KindStructure, "Task"},
	't': {KindStructure, "UnsafeCurrentTask"},
}

func (d *demangler) standardSubstitution(c byte, second bool) *Node {
	if c >= 128 {
		return nil
	}
	t := standardTypes[c]
	if second {
		t = concurrencyTypes[c]
	}
	if t.name == "" {
		return nil
	}
	return d.swiftType(t.kind, t.name)
}

func (d *demangler) demangleIdentifier() *Node {
	hasWordSubsts, punycoded := false, false
	c := d.peek()
	if !isDigit(c) {
		return nil
	}
	if c == '0' {
		d.next()
		if d.peek() == '0' {
			d.next()
			punycoded = true
		} else {
			hasWordSubsts = true
		}
	}
	if !hasWordSubsts && !punycoded {
		// The common case: the identifier is a slice of the name itself.
		n := d.demangleNatural()
		if n <= 0 || d.pos+n > len(d.text) {
			return nil
		}
		slice := d.text[d.pos : d.pos+n]
		d.wordSources = append(d.wordSources, slice)
		d.pos += n
		ident := d.textNode(KindIdentifier, slice)
		d.addSubst(ident)
		return ident
	}
	d.splitWords()
	ident := d.scratch[:0]
	defer func() { d.scratch = ident[:0] }()
	for {
		for hasWordSubsts && isLetter(d.peek()) {
			c := d.next()
			var idx int
			if isLower(c) {
				idx = int(c - 'a')
			} else {
				idx = int(c - 'A')
				hasWordSubsts = false
			}
			if idx >= d.nw {
				return nil
			}
			ident = append(ident, d.words[idx]...)
		}
		if d.nextIf('0') {
			break
		}
		n := d.demangleNatural()
		if n <= 0 {
			return nil
		}
		if punycoded {
			d.nextIf('_')
		}
		if d.pos+n > len(d.text) {
			return nil
		}
		slice := d.text[d.pos : d.pos+n]
		if punycoded {
			s, ok := decodePunycodeUTF8(slice)
			if !ok {
				return nil
			}
			ident = append(ident, s...)
		} else {
			ident = append(ident, slice...)
			d.wordSources = append(d.wordSources, slice)
		}
		d.pos += n
		if !hasWordSubsts {
			break
		}
		d.splitWords()
	}
	if len(ident) == 0 {
		return nil
	}
	n := d.textNode(KindIdentifier, string(ident))
	d.addSubst(n)
	return n
}

// splitWords adds the words of the identifiers seen so far to the words
// available for substitution.
func (d *demangler) splitWords() {
	for _, s := range d.wordSources {
		d.addWords(s)
	}
	d.wordSources = d.wordSources[:0]
}

// addWords records the words of an identifier for later word
// substitutions: runs of two or more characters split at '_', digits and
// lower-to-upper case changes.
func (d *demangler) addWords(slice string) {
	wordStart := -1
	for i := 0; i <= len(slice) && d.nw < maxNumWords; i++ {
		var c byte
		if i < len(slice) {
			c = slice[i]
		}
		if wordStart >= 0 && isWordEnd(c, slice[i-1]) {
			if i-wordStart >= 2 {
				d.words[d.nw] = slice[wordStart:i]
				d.nw++
			}
			wordStart = -1
		}
		if wordStart < 0 && isWordStart(c) {
			wordStart = i
		}
	}
}

const opCharTable = "& @/= >    <*!|+?%-~   ^ ."

func (d *demangler) demangleOperatorIdentifier() *Node {
	ident := d.popKind(KindIdentifier)
	if ident == nil {
		return nil
	}
	op := make([]byte, 0, len(ident.Text))
	for i := 0; i < len(ident.Text); i++ {
		c := ident.Text[i]
		if c >= 0x80 {
			op = append(op, c) // Unicode operator characters pass through
			continue
		}
		if !isLower(c) {
			return nil
		}
		o := opCharTable[c-'a']
		if o == ' ' {
			return nil
		}
		op = append(op, o)
	}
	switch d.next() {
	case 'i':
		return d.textNode(KindInfixOperator, string(op))
	case 'p':
		return d.textNode(KindPrefixOperator, string(op))
	case 'P':
		return d.textNode(KindPostfixOperator, string(op))
	}
	return nil
}

func (d *demangler) demangleLocalIdentifier() *Node {
	if d.nextIf('L') {
		disc := d.popKind(KindIdentifier)
		name := d.popIf(isDeclName)
		return d.withChildren(KindPrivateDeclName, disc, name)
	}
	if d.nextIf('l') {
		disc := d.popKind(KindIdentifier)
		return d.withChild(KindPrivateDeclName, disc)
	}
	if c := d.peek(); (c >= 'a' && c <= 'j') || (c >= 'A' && c <= 'J') {
		kind := d.textNode(KindIdentifier, string(d.next()))
		name := d.pop()
		res := d.newNode(KindRelatedEntityDeclName)
		addChild(res, kind)
		return addChild(res, name)
	}
	disc := d.demangleIndexAsNode()
	name := d.popIf(isDeclName)
	return d.withChildren(KindLocalDeclName, disc, name)
}

func (d *demangler) popModule() *Node {
	if id := d.popKind(KindIdentifier); id != nil {
		return d.changeKind(id, KindModule)
	}
	return d.popKind(KindModule)
}

func (d *demangler) popContext() *Node {
	if m := d.popModule(); m != nil {
		return m
	}
	if ty := d.popKind(KindType); ty != nil {
		if len(ty.Children) != 1 {
			return nil
		}
		c := ty.Children[0]
		if !isContext(c.Kind) {
			return nil
		}
		return c
	}
	return d.popIf(isContext)
}

func (d *demangler) popTypeAndGetChild() *Node {
	ty := d.popKind(KindType)
	if ty == nil || len(ty.Children) != 1 {
		return nil
	}
	return ty.Children[0]
}

func (d *demangler) popTypeAndGetAnyGeneric() *Node {
	c := d.popTypeAndGetChild()
	if c != nil && isAnyGeneric(c.Kind) {
		return c
	}
	return nil
}

func (d *demangler) demangleBuiltinType() *Node {
	var ty *Node
	switch d.next() {
	case 'b':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.BridgeObject")
	case 'B':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.UnsafeValueBuffer")
	case 'e':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.Executor")
	case 'f':
		size := d.demangleIndex() - 1
		if size <= 0 || size > maxBuiltinSize {
			return nil
		}
		ty = d.textNode(KindBuiltinTypeName, "Builtin.FPIEEE"+strconv.Itoa(size))
	case 'i':
		size := d.demangleIndex() - 1
		if size <= 0 || size > maxBuiltinSize {
			return nil
		}
		ty = d.textNode(KindBuiltinTypeName, "Builtin.Int"+strconv.Itoa(size))
	case 'I':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.IntLiteral")
	case 'v':
		elts := d.demangleIndex() - 1
		if elts <= 0 || elts > maxBuiltinSize {
			return nil
		}
		elt := d.popTypeAndGetChild()
		if elt == nil || elt.Kind != KindBuiltinTypeName || len(elt.Text) < 8 || elt.Text[:8] != "Builtin." {
			return nil
		}
		ty = d.textNode(KindBuiltinTypeName, "Builtin.Vec"+strconv.Itoa(elts)+"x"+elt.Text[8:])
	case 'O':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.UnknownObject")
	case 'o':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.NativeObject")
	case 'p':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.RawPointer")
	case 'j':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.Job")
	case 'D':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.DefaultActorStorage")
	case 'd':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.NonDefaultDistributedActorStorage")
	case 'c':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.RawUnsafeContinuation")
	case 't':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.SILToken")
	case 'w':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.Word")
	case 'P':
		ty = d.textNode(KindBuiltinTypeName, "Builtin.PackIndex")
	case 'T':
		ty = d.newNode(KindBuiltinTupleType)
	default:
		return nil
	}
	return d.typeNode(ty)
}

func (d *demangler) demangleAnyGenericType(k Kind) *Node {
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	nty := d.typeNode(d.withChildren(k, ctx, name))
	d.addSubst(nty)
	return nty
}

func (d *demangler) demangleExtensionContext() *Node {
	sig := d.popKind(KindDependentGenericSignature)
	module := d.popModule()
	ty := d.popTypeAndGetAnyGeneric()
	ext := d.withChildren(KindExtension, module, ty)
	if sig != nil {
		ext = addChild(ext, sig)
	}
	return ext
}

// setParentForOpaqueReturnTypeNodes links opaque return types ("some P") to
// the declaration that defines them. budget bounds the walk: trees share
// subtrees, so an unbounded walk could be exponential.
func (d *demangler) setParentForOpaqueReturnTypeNodes(parent, visited *Node, budget *int) *Node {
	if parent == nil || visited == nil {
		return nil
	}
	if *budget <= 1 {
		return parent
	}
	*budget--
	if visited.Kind == KindOpaqueReturnType {
		if last := visited.lastChild(); last != nil && last.Kind == KindOpaqueReturnTypeParent {
			return parent
		}
		// Swift stores the parent's address; the printer never shows it.
		addChild(visited, d.indexNode(KindOpaqueReturnTypeParent, 0))
		return parent
	}
	if visited.Kind == KindFunction || visited.Kind == KindVariable || visited.Kind == KindSubscript {
		return parent
	}
	for _, c := range visited.Children {
		d.setParentForOpaqueReturnTypeNodes(parent, c, budget)
	}
	return parent
}

func (d *demangler) opaqueParents(parent, ty *Node) *Node {
	if !d.sawOpaqueReturnType {
		return parent
	}
	if d.opaqueBudget == 0 {
		d.opaqueBudget = 1 << 16 // for the whole symbol
	}
	return d.setParentForOpaqueReturnTypeNodes(parent, ty, &d.opaqueBudget)
}

func (d *demangler) demanglePlainFunction() *Node {
	sig := d.popKind(KindDependentGenericSignature)
	ty := d.popFunctionType(KindFunctionType, false)
	labels := d.popFunctionParamLabels(ty)
	if sig != nil {
		ty = d.typeNode(d.withChildren(KindDependentGenericType, sig, ty))
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	var res *Node
	if labels != nil {
		res = d.withChildren(KindFunction, ctx, name, labels, ty)
	} else {
		res = d.withChildren(KindFunction, ctx, name, ty)
	}
	return d.opaqueParents(res, ty)
}

func (d *demangler) demangleClangType() *Node {
	n := d.demangleNatural()
	if n <= 0 || d.pos+n > len(d.text) {
		return nil
	}
	s := d.text[d.pos : d.pos+n]
	d.pos += n
	return d.textNode(KindClangType, s)
}

func (d *demangler) popFunctionType(k Kind, hasClangType bool) *Node {
	fn := d.newNode(k)
	if hasClangType {
		addChild(fn, d.demangleClangType())
	}
	if len(d.stack) > 0 && isFunctionTypePart(d.stack[len(d.stack)-1].Kind) {
		d.popFunctionTypeParts(fn)
	}
	fn = addChild(fn, d.popFunctionParams(KindArgumentTuple))
	fn = addChild(fn, d.popFunctionParams(KindReturnType))
	return d.typeNode(fn)
}

// isFunctionTypePart reports whether popFunctionTypeParts pops a node of
// kind k. Most function types have none of these parts: when the stack's
// top is not one, none of the pops can succeed, and popFunctionType skips
// them.
func isFunctionTypePart(k Kind) bool {
	switch k {
	case KindTransferringResultFunctionType, KindIsolatedAnyFunctionType, KindNonIsolatedCallerFunctionType,
		KindGlobalActorFunctionType, KindDifferentiableFunctionType, KindSelfLifetimeDependence,
		KindThrowsAnnotation, KindTypedThrowsAnnotation, KindConcurrentFunctionType, KindAsyncAnnotation:
		return true
	}
	return false
}

func (d *demangler) popFunctionTypeParts(fn *Node) {
	// Swift pops a "transferring" result first, though it prints it last
	// and so loses an "async" mangled before it; we do as Swift does.
	addChild(fn, d.popKind(KindTransferringResultFunctionType))
	addChild(fn, d.popKind(KindIsolatedAnyFunctionType))
	addChild(fn, d.popKind(KindNonIsolatedCallerFunctionType))
	addChild(fn, d.popKind(KindGlobalActorFunctionType))
	addChild(fn, d.popKind(KindDifferentiableFunctionType))
	addChild(fn, d.popKind(KindSelfLifetimeDependence))
	addChild(fn, d.popIf(func(k Kind) bool { return k == KindThrowsAnnotation || k == KindTypedThrowsAnnotation }))
	addChild(fn, d.popKind(KindConcurrentFunctionType))
	addChild(fn, d.popKind(KindAsyncAnnotation))
}

func (d *demangler) popFunctionParams(k Kind) *Node {
	var params *Node
	if d.popKind(KindEmptyList) != nil {
		params = d.typeNode(d.newNode(KindTuple))
	} else {
		params = d.popKind(KindType)
	}
	return d.withChild(k, params)
}

func (d *demangler) popFunctionParamLabels(ty *Node) *Node {
	if !d.oldFunctionTypeMangling && d.popKind(KindEmptyList) != nil {
		return d.newNode(KindLabelList)
	}
	if ty == nil || ty.Kind != KindType {
		return nil
	}
	fn := ty.firstChild()
	if fn.kind() == KindDependentGenericType {
		fn = fn.child(1).firstChild()
	}
	if fn.kind() != KindFunctionType && fn.kind() != KindNoEscapeFunctionType {
		return nil
	}
	first := 0
	for _, k := range [...]Kind{KindTransferringResultFunctionType, KindIsolatedAnyFunctionType, KindNonIsolatedCallerFunctionType,
		KindGlobalActorFunctionType, KindDifferentiableFunctionType, KindSelfLifetimeDependence} {
		if fn.child(first).kind() == k {
			first++
		}
	}
	if k := fn.child(first).kind(); k == KindThrowsAnnotation || k == KindTypedThrowsAnnotation {
		first++
	}
	for _, k := range [...]Kind{KindConcurrentFunctionType, KindAsyncAnnotation, KindTransferringResultFunctionType} {
		if fn.child(first).kind() == k {
			first++
		}
	}
	paramTy := fn.child(first)
	if paramTy.kind() != KindArgumentTuple {
		return nil
	}
	params := paramTy.firstChild().firstChild()
	if params == nil {
		return nil
	}
	numParams := 1
	if params.Kind == KindTuple {
		numParams = len(params.Children)
	}
	if numParams == 0 {
		return nil
	}
	labels := d.newNode(KindLabelList)
	tuple := params
	if d.oldFunctionTypeMangling && tuple.Kind != KindTuple {
		return labels
	}
	hasLabels := false
	for i := 0; i < numParams; i++ {
		var label *Node
		if d.oldFunctionTypeMangling {
			param := tuple.child(i)
			label = d.newNode(KindFirstElementMarker)
			for j, c := range param.Children {
				if c.Kind == KindTupleElementName {
					param.removeChildAt(j)
					label = d.textNode(KindIdentifier, c.Text)
					break
				}
			}
		} else {
			label = d.pop()
		}
		if label == nil || (label.Kind != KindIdentifier && label.Kind != KindFirstElementMarker) {
			return nil
		}
		addChild(labels, label)
		hasLabels = hasLabels || label.Kind != KindFirstElementMarker
	}
	if !hasLabels {
		return d.newNode(KindLabelList)
	}
	if !d.oldFunctionTypeMangling {
		labels.reverseChildren(0)
	}
	return labels
}

// popList pops a list of nodes ending at a FirstElementMarker (or an
// EmptyList for no nodes), calling popOne for each element; it returns the
// elements in mangling order.
func (d *demangler) popList(root *Node, popOne func() *Node) *Node {
	if d.popKind(KindEmptyList) == nil {
		for {
			first := d.popKind(KindFirstElementMarker) != nil
			e := popOne()
			if e == nil {
				return nil
			}
			addChild(root, e)
			if first {
				break
			}
		}
		root.reverseChildren(0)
	}
	return root
}

func (d *demangler) popTuple() *Node {
	root := d.popList(d.newNode(KindTuple), func() *Node {
		elt := d.newNode(KindTupleElement)
		addChild(elt, d.popKind(KindVariadicMarker))
		if id := d.popKind(KindIdentifier); id != nil {
			addChild(elt, d.textNode(KindTupleElementName, id.Text))
		}
		ty := d.popKind(KindType)
		if ty == nil {
			return nil
		}
		return addChild(elt, ty)
	})
	return d.typeNode(root)
}

func (d *demangler) popTypeElement() *Node { return d.popKind(KindType) }

func (d *demangler) popPack() *Node {
	return d.typeNode(d.popList(d.newNode(KindPack), d.popTypeElement))
}

func (d *demangler) popSILPack() *Node {
	var root *Node
	switch d.next() {
	case 'd':
		root = d.newNode(KindSILPackDirect)
	case 'i':
		root = d.newNode(KindSILPackIndirect)
	default:
		return nil
	}
	return d.typeNode(d.popList(root, d.popTypeElement))
}

func (d *demangler) popTypeList() *Node {
	return d.popList(d.newNode(KindTypeList), d.popTypeElement)
}

func (d *demangler) popProtocol() *Node {
	inverse := func(p *Node) *Node {
		if d.nextIf('i') {
			return d.withChild(KindInverse, p)
		}
		return p
	}
	if ty := d.popKind(KindType); ty != nil {
		if len(ty.Children) < 1 || !isProtocolNode(ty) {
			return nil
		}
		return inverse(ty)
	}
	if ref := d.popKind(KindProtocolSymbolicReference); ref != nil {
		return inverse(ref)
	}
	if ref := d.popKind(KindObjectiveCProtocolSymbolicReference); ref != nil {
		return inverse(ref)
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	return inverse(d.typeNode(d.withChildren(KindProtocol, ctx, name)))
}

func isAnyConformance(k Kind) bool {
	switch k {
	case KindConcreteProtocolConformance, KindDependentProtocolConformanceRoot,
		KindDependentProtocolConformanceInherited, KindDependentProtocolConformanceAssociated:
		return true
	}
	return false
}

func isDependentConformance(k Kind) bool {
	return k != KindConcreteProtocolConformance && isAnyConformance(k)
}

func (d *demangler) popAnyProtocolConformanceList() *Node {
	return d.popList(d.newNode(KindAnyProtocolConformanceList), func() *Node { return d.popIf(isAnyConformance) })
}

func (d *demangler) demangleConcreteProtocolConformance() *Node {
	conds := d.popAnyProtocolConformanceList()
	ref := d.popKind(KindProtocolConformanceRefInTypeModule)
	if ref == nil {
		ref = d.popKind(KindProtocolConformanceRefInProtocolModule)
	}
	if ref == nil {
		module := d.popModule()
		proto := d.popProtocol()
		ref = d.withChildren(KindProtocolConformanceRefInOtherModule, proto, module)
	}
	ty := d.popKind(KindType)
	return d.withChildren(KindConcreteProtocolConformance, ty, ref, conds)
}

func (d *demangler) demangleDependentConformanceIndex() *Node {
	i := d.demangleIndex()
	if i <= 0 {
		return nil
	}
	if i == 1 {
		return d.newNode(KindUnknownIndex)
	}
	return d.indexNode(KindIndex, uint64(i-2))
}

func (d *demangler) demangleDependentProtocolConformanceRoot() *Node {
	index := d.demangleDependentConformanceIndex()
	proto := d.popProtocol()
	ty := d.popKind(KindType)
	return d.withChildren(KindDependentProtocolConformanceRoot, ty, proto, index)
}

func (d *demangler) demangleDependentProtocolConformanceInherited() *Node {
	index := d.demangleDependentConformanceIndex()
	proto := d.popProtocol()
	nested := d.popIf(isDependentConformance)
	return d.withChildren(KindDependentProtocolConformanceInherited, nested, proto, index)
}

func (d *demangler) demangleDependentProtocolConformanceAssociated() *Node {
	index := d.demangleDependentConformanceIndex()
	proto := d.popProtocol()
	ty := d.popKind(KindType)
	assoc := d.withChildren(KindDependentAssociatedConformance, ty, proto)
	nested := d.popIf(isDependentConformance)
	return d.withChildren(KindDependentProtocolConformanceAssociated, nested, assoc, index)
}

func (d *demangler) demangleRetroactiveConformance() *Node {
	index := d.demangleIndexAsNode()
	conf := d.popIf(isAnyConformance)
	return d.withChildren(KindRetroactiveConformance, index, conf)
}

func (d *demangler) popRetroactiveConformances() *Node {
	var list *Node
	for {
		c := d.popKind(KindRetroactiveConformance)
		if c == nil {
			break
		}
		if list == nil {
			list = d.newNode(KindTypeList)
		}
		addChild(list, c)
	}
	if list != nil {
		list.reverseChildren(0)
	}
	return list
}

func (d *demangler) demangleBoundGenerics() (lists []*Node, retro *Node, ok bool) {
	retro = d.popRetroactiveConformances()
	lists = d.lists[:0] // callers use the lists before demangling further
	for {
		list := d.newNode(KindTypeList)
		lists = append(lists, list)
		for {
			ty := d.popKind(KindType)
			if ty == nil {
				break
			}
			addChild(list, ty)
		}
		list.reverseChildren(0)
		if d.popKind(KindEmptyList) != nil {
			break
		}
		if d.popKind(KindFirstElementMarker) == nil {
			return nil, nil, false
		}
	}
	return lists, retro, true
}

func (d *demangler) demangleBoundGenericType() *Node {
	lists, retro, ok := d.demangleBoundGenerics()
	if !ok {
		return nil
	}
	nominal := d.popTypeAndGetAnyGeneric()
	if nominal == nil {
		return nil
	}
	bound := d.demangleBoundGenericArgs(nominal, lists, 0)
	if bound == nil {
		return nil
	}
	addChild(bound, retro)
	nty := d.typeNode(bound)
	d.addSubst(nty)
	return nty
}

func nodeConsumesGenericArgs(n *Node) bool {
	switch n.Kind {
	case KindVariable, KindSubscript, KindImplicitClosure, KindExplicitClosure,
		KindDefaultArgumentInitializer, KindInitializer, KindPropertyWrapperBackingInitializer,
		KindPropertyWrapperInitFromProjectedValue, KindStatic:
		return false
	}
	return true
}

func (d *demangler) demangleBoundGenericArgs(nominal *Node, lists []*Node, idx int) *Node {
	if nominal == nil || idx >= len(lists) {
		return nil
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxRecursion {
		return nil
	}
	if nominal.Kind == KindTypeSymbolicReference || nominal.Kind == KindProtocolSymbolicReference {
		remaining := d.newNode(KindTypeList)
		for i := len(lists) - 1; i >= idx; i-- {
			for _, c := range lists[i].Children {
				addChild(remaining, c)
			}
		}
		return d.withChildren(KindBoundGenericOtherNominalType, d.typeNode(nominal), remaining)
	}
	if len(nominal.Children) == 0 {
		return nil
	}
	ctx := nominal.Children[0]
	consumes := nodeConsumesGenericArgs(nominal)
	args := lists[idx]
	if consumes {
		idx++
	}
	if idx < len(lists) {
		var boundParent *Node
		if ctx.Kind == KindExtension {
			boundParent = d.demangleBoundGenericArgs(ctx.child(1), lists, idx)
			boundParent = d.withChildren(KindExtension, ctx.firstChild(), boundParent)
			if len(ctx.Children) == 3 {
				addChild(boundParent, ctx.Children[2])
			}
		} else {
			boundParent = d.demangleBoundGenericArgs(ctx, lists, idx)
		}
		nn := d.withChild(nominal.Kind, boundParent)
		if nn == nil {
			return nil
		}
		for _, c := range nominal.Children[1:] {
			addChild(nn, c)
		}
		nominal = nn
	}
	if !consumes || len(args.Children) == 0 {
		return nominal
	}
	var k Kind
	switch nominal.Kind {
	case KindClass:
		k = KindBoundGenericClass
	case KindStructure:
		k = KindBoundGenericStructure
	case KindEnum:
		k = KindBoundGenericEnum
	case KindProtocol:
		k = KindBoundGenericProtocol
	case KindOtherNominalType:
		k = KindBoundGenericOtherNominalType
	case KindTypeAlias:
		k = KindBoundGenericTypeAlias
	case KindFunction, KindConstructor:
		return d.withChildren(KindBoundGenericFunction, nominal, args)
	default:
		return nil
	}
	return d.withChildren(k, d.typeNode(nominal), args)
}

func (d *demangler) demangleImplParamConvention(k Kind) *Node {
	var attr string
	switch d.next() {
	case 'i':
		attr = "@in"
	case 'c':
		attr = "@in_constant"
	case 'l':
		attr = "@inout"
	case 'b':
		attr = "@inout_aliasable"
	case 'n':
		attr = "@in_guaranteed"
	case 'x':
		attr = "@owned"
	case 'g':
		attr = "@guaranteed"
	case 'e':
		attr = "@deallocating"
	case 'y':
		attr = "@unowned"
	case 'v':
		attr = "@pack_owned"
	case 'p':
		attr = "@pack_guaranteed"
	case 'm':
		attr = "@pack_inout"
	default:
		d.pushBack()
		return nil
	}
	return d.withChild(k, d.textNode(KindImplConvention, attr))
}

func (d *demangler) demangleImplResultConvention(k Kind) *Node {
	var attr string
	switch d.next() {
	case 'r':
		attr = "@out"
	case 'o':
		attr = "@owned"
	case 'd':
		attr = "@unowned"
	case 'u':
		attr = "@unowned_inner_pointer"
	case 'a':
		attr = "@autoreleased"
	case 'k':
		attr = "@pack_out"
	default:
		d.pushBack()
		return nil
	}
	return d.withChild(k, d.textNode(KindImplConvention, attr))
}

func (d *demangler) demangleImplParameterResultDifferentiability() *Node {
	attr := ""
	if d.nextIf('w') {
		attr = "@noDerivative"
	}
	return d.textNode(KindImplParameterResultDifferentiability, attr)
}

func (d *demangler) demangleImplFunctionType() *Node {
	ty := d.newNode(KindImplFunctionType)
	if d.nextIf('s') {
		lists, retro, ok := d.demangleBoundGenerics()
		if !ok {
			return nil
		}
		sig := d.popKind(KindDependentGenericSignature)
		if sig == nil || len(lists) != 1 {
			return nil
		}
		subs := d.newNode(KindImplPatternSubstitutions)
		addChild(subs, sig)
		addChild(subs, lists[0])
		addChild(subs, retro)
		addChild(ty, subs)
	}
	if d.nextIf('I') {
		lists, retro, ok := d.demangleBoundGenerics()
		if !ok || len(lists) != 1 {
			return nil
		}
		subs := d.newNode(KindImplInvocationSubstitutions)
		addChild(subs, lists[0])
		addChild(subs, retro)
		addChild(ty, subs)
	}
	sig := d.popKind(KindDependentGenericSignature)
	if sig != nil && d.nextIf('P') {
		sig = d.changeKind(sig, KindDependentPseudogenericSignature)
	}
	if d.nextIf('e') {
		addChild(ty, d.newNode(KindImplEscaping))
	}
	if d.nextIf('A') {
		addChild(ty, d.newNode(KindImplErasedIsolation))
	}
	switch c := d.peek(); c {
	case 'd', 'l', 'f', 'r':
		d.next()
		addChild(ty, d.indexNode(KindImplDifferentiabilityKind, uint64(c)))
	}
	var cattr string
	switch d.next() {
	case 'y':
		cattr = "@callee_unowned"
	case 'g':
		cattr = "@callee_guaranteed"
	case 'x':
		cattr = "@callee_owned"
	case 't':
		cattr = "@convention(thin)"
	default:
		return nil
	}
	addChild(ty, d.textNode(KindImplConvention, cattr))
	var fconv string
	hasClangType := false
	switch d.next() {
	case 'B':
		fconv = "block"
	case 'C':
		fconv = "c"
	case 'z':
		switch d.next() {
		case 'B':
			hasClangType, fconv = true, "block"
		case 'C':
			hasClangType, fconv = true, "c"
		default:
			d.pushBack()
			d.pushBack()
		}
	case 'M':
		fconv = "method"
	case 'O':
		fconv = "objc_method"
	case 'K':
		fconv = "closure"
	case 'W':
		fconv = "witness_method"
	default:
		d.pushBack()
	}
	if fconv != "" {
		fattr := d.newNode(KindImplFunctionConvention)
		addChild(fattr, d.textNode(KindImplFunctionConventionName, fconv))
		if hasClangType {
			addChild(fattr, d.demangleClangType())
		}
		addChild(ty, fattr)
	}
	if d.nextIf('A') {
		addChild(ty, d.textNode(KindImplFunctionAttribute, "@yield_once"))
	} else if d.nextIf('G') {
		addChild(ty, d.textNode(KindImplFunctionAttribute, "@yield_many"))
	}
	if d.nextIf('h') {
		addChild(ty, d.textNode(KindImplFunctionAttribute, "@Sendable"))
	}
	if d.nextIf('H') {
		addChild(ty, d.textNode(KindImplFunctionAttribute, "@async"))
	}
	if d.nextIf('T') {
		addChild(ty, d.newNode(KindImplTransferringResult))
	}
	addChild(ty, sig)
	numTypes := 0
	for {
		param := d.demangleImplParamConvention(KindImplParameter)
		if param == nil {
			break
		}
		addChild(ty, param)
		if diff := d.demangleImplParameterResultDifferentiability(); diff != nil {
			addChild(param, diff)
		}
		if d.nextIf('T') {
			addChild(param, d.textNode(KindImplParameterTransferring, "transferring"))
		}
		numTypes++
	}
	for {
		res := d.demangleImplResultConvention(KindImplResult)
		if res == nil {
			break
		}
		addChild(ty, res)
		if diff := d.demangleImplParameterResultDifferentiability(); diff != nil {
			addChild(res, diff)
		}
		numTypes++
	}
	for d.nextIf('Y') {
		y := d.demangleImplParamConvention(KindImplYield)
		if y == nil {
			return nil
		}
		addChild(ty, y)
		numTypes++
	}
	if d.nextIf('z') {
		e := d.demangleImplResultConvention(KindImplErrorResult)
		if e == nil {
			return nil
		}
		addChild(ty, e)
		numTypes++
	}
	if !d.nextIf('_') {
		return nil
	}
	for i := 0; i < numTypes; i++ {
		conv := d.popKind(KindType)
		if conv == nil {
			return nil
		}
		addChild(ty.Children[len(ty.Children)-i-1], conv)
	}
	return d.typeNode(ty)
}

func (d *demangler) demangleMetatype() *Node {
	switch d.next() {
	case 'a':
		return d.withPoppedType(KindTypeMetadataAccessFunction)
	case 'A':
		return d.withChild(KindReflectionMetadataAssocTypeDescriptor, d.popProtocolConformance())
	case 'b':
		return d.withPoppedType(KindCanonicalSpecializedGenericTypeMetadataAccessFunction)
	case 'B':
		return d.withChild(KindReflectionMetadataBuiltinDescriptor, d.popKind(KindType))
	case 'c':
		return d.withChild(KindProtocolConformanceDescriptor, d.popProtocolConformance())
	case 'C':
		ty := d.popKind(KindType)
		if ty == nil || !isAnyGeneric(ty.firstChild().kind()) {
			return nil
		}
		return d.withChild(KindReflectionMetadataSuperclassDescriptor, ty.firstChild())
	case 'D':
		return d.withPoppedType(KindTypeMetadataDemanglingCache)
	case 'f':
		return d.withPoppedType(KindFullTypeMetadata)
	case 'F':
		return d.withChild(KindReflectionMetadataFieldDescriptor, d.popKind(KindType))
	case 'g':
		return d.withChild(KindOpaqueTypeDescriptorAccessor, d.pop())
	case 'h':
		return d.withChild(KindOpaqueTypeDescriptorAccessorImpl, d.pop())
	case 'i':
		return d.withPoppedType(KindTypeMetadataInstantiationFunction)
	case 'I':
		return d.withPoppedType(KindTypeMetadataInstantiationCache)
	case 'j':
		return d.withChild(KindOpaqueTypeDescriptorAccessorKey, d.pop())
	case 'J':
		return d.withChild(KindNoncanonicalSpecializedGenericTypeMetadataCache, d.pop())
	case 'k':
		return d.withChild(KindOpaqueTypeDescriptorAccessorVar, d.pop())
	case 'K':
		return d.withChild(KindMetadataInstantiationCache, d.pop())
	case 'l':
		return d.withPoppedType(KindTypeMetadataSingletonInitializationCache)
	case 'L':
		return d.withPoppedType(KindTypeMetadataLazyCache)
	case 'm':
		return d.withPoppedType(KindMetaclass)
	case 'M':
		return d.withPoppedType(KindCanonicalSpecializedGenericMetaclass)
	case 'n':
		return d.withPoppedType(KindNominalTypeDescriptor)
	case 'N':
		return d.withPoppedType(KindNoncanonicalSpecializedGenericTypeMetadata)
	case 'o':
		return d.withPoppedType(KindClassMetadataBaseOffset)
	case 'p':
		return d.withChild(KindProtocolDescriptor, d.popProtocol())
	case 'P':
		return d.withPoppedType(KindGenericTypeMetadataPattern)
	case 'q':
		return d.withChild(KindUniquable, d.pop())
	case 'Q':
		return d.withChild(KindOpaqueTypeDescriptor, d.pop())
	case 'r':
		return d.withPoppedType(KindTypeMetadataCompletionFunction)
	case 's':
		return d.withPoppedType(KindObjCResilientClassStub)
	case 'S':
		return d.withChild(KindProtocolSelfConformanceDescriptor, d.popProtocol())
	case 't':
		return d.withPoppedType(KindFullObjCResilientClassStub)
	case 'u':
		return d.withPoppedType(KindMethodLookupFunction)
	case 'U':
		return d.withPoppedType(KindObjCMetadataUpdateFunction)
	case 'V':
		return d.withChild(KindPropertyDescriptor, d.popIf(isEntity))
	case 'X':
		return d.demanglePrivateContextDescriptor()
	case 'z':
		return d.withPoppedType(KindCanonicalPrespecializedGenericTypeCachingOnceToken)
	}
	return nil
}

func (d *demangler) demanglePrivateContextDescriptor() *Node {
	switch d.next() {
	case 'E':
		return d.withChild(KindExtensionDescriptor, d.popContext())
	case 'M':
		return d.withChild(KindModuleDescriptor, d.popModule())
	case 'Y':
		disc := d.pop()
		if disc == nil {
			return nil
		}
		ctx := d.popContext()
		if ctx == nil {
			return nil
		}
		return d.withChildren(KindAnonymousDescriptor, ctx, disc)
	case 'X':
		return d.withChild(KindAnonymousDescriptor, d.popContext())
	case 'A':
		path := d.popAssocTypePath()
		if path == nil {
			return nil
		}
		base := d.popKind(KindType)
		return d.withChildren(KindAssociatedTypeGenericParamRef, base, path)
	}
	return nil
}

func (d *demangler) demangleArchetype() *Node {
	switch d.next() {
	case 'a':
		ident := d.popKind(KindIdentifier)
		arch := d.popTypeAndGetChild()
		assoc := d.typeNode(d.withChildren(KindAssociatedTypeRef, arch, ident))
		d.addSubst(assoc)
		return assoc
	case 'O':
		return d.withChild(KindOpaqueReturnTypeOf, d.popContext())
	case 'o':
		index := d.demangleIndex()
		lists, retro, ok := d.demangleBoundGenerics()
		if !ok {
			return nil
		}
		name := d.pop()
		if name == nil || index < 0 {
			return nil
		}
		opaque := d.withChildren(KindOpaqueType, name, d.indexNode(KindIndex, uint64(index)))
		bound := d.newNode(KindTypeList)
		for i := len(lists) - 1; i >= 0; i-- {
			addChild(bound, lists[i])
		}
		addChild(opaque, bound)
		addChild(opaque, retro)
		ty := d.typeNode(opaque)
		d.addSubst(ty)
		return ty
	case 'r':
		d.sawOpaqueReturnType = true
		return d.typeNode(d.newNode(KindOpaqueReturnType))
	case 'R':
		d.sawOpaqueReturnType = true
		ord := d.demangleIndex()
		if ord < 0 {
			return nil
		}
		return d.typeNode(d.withChild(KindOpaqueReturnType, d.indexNode(KindOpaqueReturnTypeIndex, uint64(ord))))
	case 'x':
		t := d.demangleAssociatedTypeSimple(nil)
		d.addSubst(t)
		return t
	case 'X':
		t := d.demangleAssociatedTypeCompound(nil)
		d.addSubst(t)
		return t
	case 'y':
		t := d.demangleAssociatedTypeSimple(d.demangleGenericParamIndex())
		d.addSubst(t)
		return t
	case 'Y':
		t := d.demangleAssociatedTypeCompound(d.demangleGenericParamIndex())
		d.addSubst(t)
		return t
	case 'z':
		t := d.demangleAssociatedTypeSimple(d.dependentGenericParamType(0, 0))
		d.addSubst(t)
		return t
	case 'Z':
		t := d.demangleAssociatedTypeCompound(d.dependentGenericParamType(0, 0))
		d.addSubst(t)
		return t
	case 'p':
		count := d.popTypeAndGetChild()
		pattern := d.popTypeAndGetChild()
		return d.typeNode(d.withChildren(KindPackExpansion, pattern, count))
	case 'e':
		pack := d.popTypeAndGetChild()
		level := d.demangleIndex()
		if level < 0 {
			return nil
		}
		return d.typeNode(d.withChildren(KindPackElement, pack, d.indexNode(KindPackElementLevel, uint64(level))))
	case 'P':
		return d.popPack()
	case 'S':
		return d.popSILPack()
	}
	return nil
}

func (d *demangler) demangleAssociatedTypeSimple(base *Node) *Node {
	name := d.popAssocTypeName()
	var baseTy *Node
	if base != nil {
		baseTy = d.typeNode(base)
	} else {
		baseTy = d.popKind(KindType)
	}
	return d.typeNode(d.withChildren(KindDependentMemberType, baseTy, name))
}

func (d *demangler) demangleAssociatedTypeCompound(base *Node) *Node {
	var names []*Node
	for {
		first := d.popKind(KindFirstElementMarker) != nil
		name := d.popAssocTypeName()
		if name == nil {
			return nil
		}
		names = append(names, name)
		if first {
			break
		}
	}
	var baseTy *Node
	if base != nil {
		baseTy = d.typeNode(base)
	} else {
		baseTy = d.popKind(KindType)
	}
	for i := len(names) - 1; i >= 0; i-- {
		dep := addChild(d.newNode(KindDependentMemberType), baseTy)
		baseTy = d.typeNode(addChild(dep, names[i]))
	}
	return baseTy
}

func (d *demangler) popAssocTypeName() *Node {
	proto := d.popKind(KindType)
	if proto != nil && !isProtocolNode(proto) {
		return nil
	}
	if proto == nil {
		proto = d.popKind(KindProtocolSymbolicReference)
	}
	if proto == nil {
		proto = d.popKind(KindObjectiveCProtocolSymbolicReference)
	}
	id := d.popKind(KindIdentifier)
	assoc := d.withChild(KindDependentAssociatedTypeRef, id)
	addChild(assoc, proto)
	return assoc
}

func (d *demangler) popAssocTypePath() *Node {
	path := d.newNode(KindAssocTypePath)
	for {
		first := d.popKind(KindFirstElementMarker) != nil
		assoc := d.popAssocTypeName()
		if assoc == nil {
			return nil
		}
		addChild(path, assoc)
		if first {
			break
		}
	}
	path.reverseChildren(0)
	return path
}

func (d *demangler) dependentGenericParamType(depth, index int) *Node {
	if depth < 0 || index < 0 {
		return nil
	}
	p := d.newNode(KindDependentGenericParamType)
	addChild(p, d.indexNode(KindIndex, uint64(depth)))
	addChild(p, d.indexNode(KindIndex, uint64(index)))
	return p
}

func (d *demangler) demangleGenericParamIndex() *Node {
	if d.nextIf('d') {
		depth := d.demangleIndex() + 1
		index := d.demangleIndex()
		return d.dependentGenericParamType(depth, index)
	}
	if d.nextIf('z') {
		return d.dependentGenericParamType(0, 0)
	}
	if d.nextIf('s') {
		return d.newNode(KindConstrainedExistentialSelf)
	}
	return d.dependentGenericParamType(0, d.demangleIndex()+1)
}

func (d *demangler) popProtocolConformance() *Node {
	sig := d.popKind(KindDependentGenericSignature)
	module := d.popModule()
	proto := d.popProtocol()
	ty := d.popKind(KindType)
	var ident *Node
	if ty == nil {
		ident = d.popKind(KindIdentifier)
		ty = d.popKind(KindType)
	}
	if sig != nil {
		ty = d.typeNode(d.withChildren(KindDependentGenericType, sig, ty))
	}
	conf := d.withChildren(KindProtocolConformance, ty, proto, module)
	addChild(conf, ident)
	return conf
}
