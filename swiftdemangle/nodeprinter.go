package swiftdemangle

import (
	"strconv"
	"strings"
)

// This file prints a node tree, following Swift's lib/Demangling/
// NodePrinter.cpp and its DemangleOptions.

type options struct {
	synthesizeSugarOnTypes        bool
	qualifyEntities               bool
	displayExtensionContexts      bool
	displayUnmangledSuffix        bool
	displayModuleNames            bool
	displayGenericSpecializations bool
	displayProtocolConformances   bool
	displayWhereClauses           bool
	displayEntityTypes            bool
	displayLocalNameContexts      bool
	shortenPartialApply           bool
	shortenThunk                  bool
	shortenValueWitness           bool
	showPrivateDiscriminators     bool
	showFunctionArgumentTypes     bool
	displayStdlibModule           bool
	displayObjCModule             bool
	showAsyncResumePartial        bool

	// Beyond Swift's options, for the styles of symbolic (getsentry): the
	// parameter list can be left out, and so can the return type
	// (with its async/throws) of function types.
	hideFunctionArguments bool
	hideReturnType        bool
}

// fullOptions are swift-demangle's defaults: DemangleOptions() with sugar.
var fullOptions = options{
	synthesizeSugarOnTypes:        true,
	qualifyEntities:               true,
	displayExtensionContexts:      true,
	displayUnmangledSuffix:        true,
	displayModuleNames:            true,
	displayGenericSpecializations: true,
	displayProtocolConformances:   true,
	displayWhereClauses:           true,
	displayEntityTypes:            true,
	displayLocalNameContexts:      true,
	showPrivateDiscriminators:     true,
	showFunctionArgumentTypes:     true,
	displayStdlibModule:           true,
	displayObjCModule:             true,
	showAsyncResumePartial:        true,
}

// simplifiedOptions are DemangleOptions::SimplifiedUIDemangleOptions().
var simplifiedOptions = options{
	synthesizeSugarOnTypes:    true,
	qualifyEntities:           true,
	displayLocalNameContexts:  true,
	shortenPartialApply:       true,
	shortenThunk:              true,
	shortenValueWitness:       true,
	displayStdlibModule:       true,
	displayObjCModule:         true,
	showFunctionArgumentTypes: false,
}

func optionsFor(s Style) options {
	switch s {
	case Simplified:
		return simplifiedOptions
	case SimplifiedTypes:
		o := simplifiedOptions
		o.showFunctionArgumentTypes = true
		o.hideReturnType = true
		return o
	case NameOnly:
		o := simplifiedOptions
		o.hideFunctionArguments = true
		o.hideReturnType = true
		return o
	}
	return fullOptions
}

const printerMaxDepth = 768 // as NodePrinter::MaxDepth

type printer struct {
	buf               []byte
	opts              options
	specPrefixPrinted bool
	invalid           bool
	limit             int
	nested            int // depth of demangling nested in specialization payloads
	// calls counts print calls, shared with nested printers: trees share
	// subtrees, and some subtrees print nothing (module names in the
	// Simplified style), so output size alone does not bound the work.
	calls int
}

// maxPrintCalls bounds the nodes one demangling may visit while printing.
// Real symbols need a few hundred.
const maxPrintCalls = 1 << 18

func (p *printer) w(s string)  { p.buf = append(p.buf, s...) }
func (p *printer) wb(c byte)   { p.buf = append(p.buf, c) }
func (p *printer) wu(n uint64) { p.buf = strconv.AppendUint(p.buf, n, 10) }

func (p *printer) printChildren(n *Node, depth int, sep string) {
	if n == nil {
		return
	}
	for i, c := range n.Children {
		if i > 0 && sep != "" {
			p.w(sep)
		}
		p.print(c, depth+1, false)
	}
}

func genericParameterName(depth, index uint64) string {
	var b []byte
	for {
		b = append(b, byte('A'+index%26))
		index /= 26
		if index == 0 {
			break
		}
	}
	if depth != 0 {
		b = strconv.AppendUint(b, depth, 10)
	}
	return string(b)
}

func (p *printer) printContext(ctx *Node) bool {
	if !p.opts.qualifyEntities {
		return false
	}
	if ctx.Kind == KindModule {
		switch {
		case ctx.Text == "Swift":
			return p.opts.displayStdlibModule
		case ctx.Text == "__C":
			return p.opts.displayObjCModule
		case strings.HasPrefix(ctx.Text, "__lldb_expr_"):
			return true
		}
	}
	return true
}

func isIdentifier(n *Node, s string) bool { return n.kind() == KindIdentifier && n.Text == s }
func isSwiftModule(n *Node) bool          { return n.kind() == KindModule && n.Text == "Swift" }

func (p *printer) isSimpleType(n *Node) bool {
	switch n.kind() {
	case KindAssociatedType, KindAssociatedTypeRef, KindBoundGenericClass, KindBoundGenericEnum,
		KindBoundGenericStructure, KindBoundGenericProtocol, KindBoundGenericOtherNominalType,
		KindBoundGenericTypeAlias, KindBoundGenericFunction, KindBuiltinTypeName, KindBuiltinTupleType,
		KindClass, KindDependentGenericType, KindDependentMemberType, KindDependentGenericParamType,
		KindDynamicSelf, KindEnum, KindErrorType, KindExistentialMetatype, KindMetatype,
		KindMetatypeRepresentation, KindModule, KindTuple, KindPack, KindSILPackDirect, KindSILPackIndirect,
		KindConstrainedExistentialRequirementList, KindConstrainedExistentialSelf, KindProtocol,
		KindProtocolSymbolicReference, KindReturnType, KindSILBoxType, KindSILBoxTypeWithLayout,
		KindStructure, KindOtherNominalType, KindTupleElementName, KindTypeAlias, KindTypeList,
		KindLabelList, KindTypeSymbolicReference, KindSugaredOptional, KindSugaredArray,
		KindSugaredDictionary, KindSugaredParen:
		return true
	case KindType:
		return p.isSimpleType(n.firstChild())
	case KindProtocolList:
		return n.firstChild().numChildren() <= 1
	case KindProtocolListWithAnyObject:
		return n.firstChild().firstChild().numChildren() == 0
	}
	return false
}

func (p *printer) printWithParens(ty *Node, depth int) {
	parens := !p.isSimpleType(ty)
	if parens {
		p.wb('(')
	}
	p.print(ty, depth+1, false)
	if parens {
		p.wb(')')
	}
}

type sugar int

const (
	sugarNone sugar = iota
	sugarOptional
	sugarIUO
	sugarArray
	sugarDictionary
)

func findSugar(n *Node) sugar {
	if n.numChildren() == 1 && n.Kind == KindType {
		return findSugar(n.firstChild())
	}
	if n.numChildren() != 2 || (n.Kind != KindBoundGenericEnum && n.Kind != KindBoundGenericStructure) {
		return sugarNone
	}
	unbound := n.firstChild().firstChild()
	args := n.child(1)
	name, module := unbound.child(1), unbound.firstChild()
	if n.Kind == KindBoundGenericEnum {
		if isIdentifier(name, "Optional") && args.numChildren() == 1 && isSwiftModule(module) {
			return sugarOptional
		}
		if isIdentifier(name, "ImplicitlyUnwrappedOptional") && args.numChildren() == 1 && isSwiftModule(module) {
			return sugarIUO
		}
		return sugarNone
	}
	if isIdentifier(name, "Array") && args.numChildren() == 1 && isSwiftModule(module) {
		return sugarArray
	}
	if isIdentifier(name, "Dictionary") && args.numChildren() == 2 && isSwiftModule(module) {
		return sugarDictionary
	}
	return sugarNone
}

func (p *printer) printBoundGenericNoSugar(n *Node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	p.print(n.firstChild(), depth+1, false)
	p.wb('<')
	p.printChildren(n.child(1), depth, ", ")
	p.wb('>')
}

func (p *printer) printBoundGeneric(n *Node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	if n.numChildren() != 2 || !p.opts.synthesizeSugarOnTypes || n.Kind == KindBoundGenericClass {
		p.printBoundGenericNoSugar(n, depth)
		return
	}
	if n.Kind == KindBoundGenericProtocol {
		p.printChildren(n.child(1), depth, "")
		p.w(" as ")
		p.print(n.firstChild(), depth+1, false)
		return
	}
	switch s := findSugar(n); s {
	case sugarOptional, sugarIUO:
		p.printWithParens(n.child(1).firstChild(), depth)
		if s == sugarOptional {
			p.wb('?')
		} else {
			p.wb('!')
		}
	case sugarArray:
		p.wb('[')
		p.print(n.child(1).firstChild(), depth+1, false)
		p.wb(']')
	case sugarDictionary:
		p.wb('[')
		p.print(n.child(1).firstChild(), depth+1, false)
		p.w(" : ")
		p.print(n.child(1).child(1), depth+1, false)
		p.wb(']')
	default:
		p.printBoundGenericNoSugar(n, depth)
	}
}

func childOfKind(n *Node, k Kind) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Kind == k {
			return c
		}
	}
	return nil
}

func (p *printer) printFunctionParameters(labels, paramType *Node, depth int, showTypes bool) {
	if paramType.kind() != KindArgumentTuple {
		p.invalid = true
		return
	}
	if p.opts.hideFunctionArguments {
		return
	}
	params := paramType.firstChild().firstChild()
	if params == nil {
		p.invalid = true
		return
	}
	if params.Kind != KindTuple {
		if showTypes {
			p.wb('(')
			p.print(params, depth+1, false)
			p.wb(')')
		} else {
			p.w("(_:)")
		}
		return
	}
	hasLabels := labels.numChildren() > 0
	p.wb('(')
	for i, param := range params.Children {
		if i > 0 && showTypes {
			p.w(", ")
		}
		if hasLabels {
			label := labels.child(i)
			if label.kind() == KindIdentifier {
				p.w(label.Text)
			} else {
				p.wb('_')
			}
			p.wb(':')
			if showTypes {
				p.wb(' ')
			}
		} else if !showTypes {
			if l := childOfKind(param, KindTupleElementName); l != nil {
				p.w(l.Text)
				p.wb(':')
			} else {
				p.w("_:")
			}
		}
		if showTypes {
			p.print(param, depth+1, false)
		}
	}
	p.wb(')')
}

func (p *printer) printFunctionType(labels, n *Node, depth int) {
	if n.numChildren() < 2 {
		p.invalid = true
		return
	}
	convention := func(name string) {
		p.w("@convention(")
		p.w(name)
		if n.firstChild().Kind == KindClangType {
			p.w(", mangledCType: \"")
			p.print(n.firstChild(), depth+1, false)
			p.wb('"')
		}
		p.w(") ")
	}
	switch n.Kind {
	case KindFunctionType, KindUncurriedFunctionType, KindNoEscapeFunctionType:
	case KindAutoClosureType, KindEscapingAutoClosureType:
		p.w("@autoclosure ")
	case KindThinFunctionType:
		p.w("@convention(thin) ")
	case KindCFunctionPointer:
		convention("c")
	case KindEscapingObjCBlock:
		p.w("@escaping ")
		convention("block")
	case KindObjCBlock:
		convention("block")
	}
	argIndex := n.numChildren() - 2
	start := 0
	isSendable, isAsync, transferringResult := false, false, false
	var diffKind byte
	if n.child(start).kind() == KindClangType {
		start++
	}
	if n.child(start).kind() == KindIsolatedAnyFunctionType {
		p.print(n.child(start), depth+1, false)
		start++
	}
	if n.child(start).kind() == KindNonIsolatedCallerFunctionType {
		p.print(n.child(start), depth+1, false)
		start++
	}
	if n.child(start).kind() == KindGlobalActorFunctionType {
		p.print(n.child(start), depth+1, false)
		start++
	}
	if n.child(start).kind() == KindDifferentiableFunctionType {
		diffKind = byte(n.child(start).Index)
		start++
	}
	if n.child(start).kind() == KindSelfLifetimeDependence {
		p.print(n.child(start), depth+1, false)
		start++
	}
	var thrown *Node
	if k := n.child(start).kind(); k == KindThrowsAnnotation || k == KindTypedThrowsAnnotation {
		thrown = n.child(start)
		start++
	}
	if n.child(start).kind() == KindConcurrentFunctionType {
		start++
		isSendable = true
	}
	if n.child(start).kind() == KindAsyncAnnotation {
		start++
		isAsync = true
	}
	if n.child(start).kind() == KindTransferringResultFunctionType {
		transferringResult = true
	}
	switch diffKind {
	case 'f':
		p.w("@differentiable(_forward) ")
	case 'r':
		p.w("@differentiable(reverse) ")
	case 'l':
		p.w("@differentiable(_linear) ")
	case 'd':
		p.w("@differentiable ")
	}
	if isSendable {
		p.w("@Sendable ")
	}
	p.printFunctionParameters(labels, n.child(argIndex), depth, p.opts.showFunctionArgumentTypes)
	if !p.opts.showFunctionArgumentTypes || p.opts.hideReturnType {
		return
	}
	if isAsync {
		p.w(" async")
	}
	if thrown != nil {
		p.print(thrown, depth+1, false)
	}
	p.w(" -> ")
	if transferringResult {
		p.w("transferring ")
	}
	p.print(n.child(argIndex+1), depth+1, false)
}

func (p *printer) printImplFunctionType(fn *Node, depth int) {
	var patternSubs, invocationSubs, transferringResult *Node
	const (
		attrs = iota
		inputs
		results
	)
	state := attrs
	transition := func(to int) {
		for ; state < to; state++ {
			switch state {
			case attrs:
				if patternSubs != nil {
					p.w("@substituted ")
					p.print(patternSubs.firstChild(), depth+1, false)
					p.wb(' ')
				}
				p.wb('(')
			case inputs:
				p.w(") -> ")
				if transferringResult != nil {
					p.print(transferringResult, depth+1, false)
					p.wb(' ')
				}
				p.wb('(')
			}
		}
	}
	for _, c := range fn.Children {
		switch c.Kind {
		case KindImplParameter:
			if state == inputs {
				p.w(", ")
			}
			transition(inputs)
			p.print(c, depth+1, false)
		case KindImplResult, KindImplYield, KindImplErrorResult:
			if state == results {
				p.w(", ")
			}
			transition(results)
			p.print(c, depth+1, false)
		case KindImplPatternSubstitutions:
			patternSubs = c
		case KindImplInvocationSubstitutions:
			invocationSubs = c
		case KindImplTransferringResult:
			transferringResult = c
		default:
			p.print(c, depth+1, false)
			p.wb(' ')
		}
	}
	transition(results)
	p.wb(')')
	if patternSubs != nil {
		p.w(" for <")
		p.printChildren(patternSubs.child(1), depth, "")
		p.wb('>')
	}
	if invocationSubs != nil {
		p.w(" for <")
		p.printChildren(invocationSubs.firstChild(), depth, "")
		p.wb('>')
	}
}

func (p *printer) printGenericSignature(n *Node, depth int) {
	p.wb('<')
	num := n.numChildren()
	numParams := 0
	for numParams < num && n.Children[numParams].Kind == KindDependentGenericParamCount {
		numParams++
	}
	firstReq := numParams
	for firstReq < num {
		c := n.Children[firstReq]
		if c.Kind == KindType {
			c = c.firstChild()
		}
		if c.kind() != KindDependentGenericParamPackMarker {
			break
		}
		firstReq++
	}
	isPack := func(depth, index uint64) bool {
		for i := numParams; i < firstReq; i++ {
			c := n.Children[i]
			if c.Kind != KindDependentGenericParamPackMarker {
				continue
			}
			c = c.firstChild()
			if c.kind() != KindType {
				continue
			}
			c = c.firstChild()
			if c.kind() != KindDependentGenericParamType {
				continue
			}
			if index == c.firstChild().Index && depth == c.child(1).Index {
				return true
			}
		}
		return false
	}
	for gpDepth := 0; gpDepth < numParams; gpDepth++ {
		if gpDepth != 0 {
			p.w("><")
		}
		count := n.Children[gpDepth].Index
		for index := uint64(0); index < count; index++ {
			if index != 0 {
				p.w(", ")
			}
			if index >= 128 {
				p.w("...")
				break
			}
			if isPack(uint64(gpDepth), index) {
				p.w("each ")
			}
			p.w(genericParameterName(uint64(gpDepth), index))
		}
	}
	if firstReq != num && p.opts.displayWhereClauses {
		p.w(" where ")
		for i := firstReq; i < num; i++ {
			if i > firstReq {
				p.w(", ")
			}
			p.print(n.Children[i], depth+1, false)
		}
	}
	p.wb('>')
}

func (p *printer) demangleNested(text string) string {
	if p.nested >= 8 {
		return ""
	}
	root, err := parse(text)
	if err != nil {
		return ""
	}
	q := printer{opts: p.opts, limit: p.limit, nested: p.nested + 1, calls: p.calls}
	s, ok := q.printRoot(root)
	p.calls = q.calls
	if !ok {
		return ""
	}
	return s
}

func (p *printer) printFunctionSigSpecializationParams(n *Node, depth int) {
	idx, end := 0, n.numChildren()
	next := func() *Node {
		c := n.child(idx)
		idx++
		return c
	}
	for idx < end {
		v := n.Children[idx].Index
		switch v {
		case fsBoxToValue, fsBoxToStack, fsInOutToOut:
			p.print(next(), depth+1, false)
		case fsConstantPropFunction, fsConstantPropGlobal:
			p.wb('[')
			p.print(next(), depth+1, false)
			p.w(" : ")
			text := next().text()
			if s := p.demangleNested(text); s != "" {
				p.w(s)
			} else {
				p.w(text)
			}
			p.wb(']')
		case fsConstantPropInteger, fsConstantPropFloat:
			p.wb('[')
			p.print(next(), depth+1, false)
			p.w(" : ")
			p.print(next(), depth+1, false)
			p.wb(']')
		case fsConstantPropString:
			p.wb('[')
			p.print(next(), depth+1, false)
			p.w(" : ")
			p.print(next(), depth+1, false)
			p.wb('\'')
			p.print(next(), depth+1, false)
			p.wb('\'')
			p.wb(']')
		case fsConstantPropKeyPath:
			p.wb('[')
			p.print(next(), depth+1, false)
			p.w(" : ")
			p.print(next(), depth+1, false)
			p.wb('<')
			p.print(next(), depth+1, false)
			p.wb(',')
			p.print(next(), depth+1, false)
			p.w(">]")
		case fsClosureProp:
			p.wb('[')
			p.print(next(), depth+1, false)
			p.w(" : ")
			p.print(next(), depth+1, false)
			p.w(", Argument Types : [")
			for idx < end {
				c := n.Children[idx]
				if c.Kind != KindType {
					break
				}
				p.print(c, depth+1, false)
				idx++
				if idx < end && n.Children[idx].HasText() {
					p.w(", ")
				}
			}
			p.wb(']')
		default:
			p.print(next(), depth+1, false)
		}
	}
}

func (p *printer) printSpecializationPrefix(n *Node, desc string, depth int, paramPrefix string) {
	if !p.opts.displayGenericSpecializations {
		if !p.specPrefixPrinted {
			p.w("specialized ")
			p.specPrefixPrinted = true
		}
		return
	}
	p.w(desc)
	p.w(" <")
	sep := ""
	argNum := 0
	for _, c := range n.Children {
		switch c.Kind {
		case KindSpecializationPassID, KindMetatypeParamsRemoved, KindDroppedArgument:
		case KindIsSerialized:
			p.w(sep)
			sep = ", "
			p.print(c, depth+1, false)
		default:
			if len(c.Children) > 0 {
				p.w(sep)
				p.w(paramPrefix)
				sep = ", "
				switch c.Kind {
				case KindFunctionSignatureSpecializationParam:
					p.w("Arg[")
					p.w(strconv.Itoa(argNum))
					p.w("] = ")
					p.printFunctionSigSpecializationParams(c, depth)
				case KindFunctionSignatureSpecializationReturn:
					p.w("Return = ")
					p.printFunctionSigSpecializationParams(c, depth)
				default:
					p.print(c, depth+1, false)
				}
			}
			argNum++
		}
	}
	p.w("> of ")
}

func needSpaceBeforeType(n *Node) bool {
	switch n.kind() {
	case KindType:
		return needSpaceBeforeType(n.firstChild())
	case KindFunctionType, KindNoEscapeFunctionType, KindUncurriedFunctionType, KindDependentGenericType:
		return false
	}
	return true
}

func isExistentialType(n *Node) bool {
	switch n.kind() {
	case KindExistentialMetatype, KindProtocolList, KindProtocolListWithClass, KindProtocolListWithAnyObject:
		return true
	}
	return false
}

func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case 0:
			b.WriteString(`\0`)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (p *printer) printRoot(root *Node) (string, bool) {
	p.print(root, 0, false)
	if p.invalid {
		return "", false
	}
	return string(p.buf), true
}
