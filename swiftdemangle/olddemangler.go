package swiftdemangle

import "strconv"

// This file parses the pre-Swift-4 mangling ("_T" not followed by "0", and
// "_Tt" type names still used in Objective-C metadata), following Swift's
// lib/Demangling/OldDemangler.cpp: a recursive-descent parser with one
// substitution table.

const oldMaxDepth = 1024 // as OldDemangler::MaxDepth

type oldDemangler struct {
	d     *demangler // node allocation and limits
	text  string
	subst []*Node
}

func (o *oldDemangler) empty() bool { return len(o.text) == 0 }

func (o *oldDemangler) peek() byte {
	if o.empty() {
		return '.' // an otherwise unused character, as Swift's does
	}
	return o.text[0]
}

func (o *oldDemangler) next() byte {
	c := o.peek()
	if !o.empty() {
		o.text = o.text[1:]
	}
	return c
}

func (o *oldDemangler) nextIf(c byte) bool {
	if o.empty() || o.text[0] != c {
		return false
	}
	o.text = o.text[1:]
	return true
}

func (o *oldDemangler) nextIfStr(s string) bool {
	if len(o.text) < len(s) || o.text[:len(s)] != s {
		return false
	}
	o.text = o.text[len(s):]
	return true
}

func (o *oldDemangler) node(k Kind, children ...*Node) *Node {
	n := o.d.newNode(k)
	if len(children) > 0 {
		n.Children = append(make([]*Node, 0, len(children)), children...)
	}
	return n
}

func (o *oldDemangler) text1(k Kind, s string) *Node { return o.d.textNode(k, s) }

func (o *oldDemangler) index1(k Kind, i uint64) *Node { return o.d.indexNode(k, i) }

func (o *oldDemangler) demangleTopLevel() *Node {
	if !o.nextIfStr("_T") {
		return nil
	}
	top := o.node(KindGlobal)
	switch {
	case o.nextIfStr("TS"):
		for {
			attr := o.demangleSpecializedAttribute(0)
			if attr == nil {
				return nil
			}
			addChild(top, attr)
			o.subst = o.subst[:0] // the header shares no state with the rest
			if !o.nextIfStr("_TTS") {
				break
			}
		}
		if !o.nextIfStr("_T") {
			return nil
		}
	case o.nextIfStr("To"):
		addChild(top, o.node(KindObjCAttribute))
	case o.nextIfStr("TO"):
		addChild(top, o.node(KindNonObjCAttribute))
	case o.nextIfStr("TD"):
		addChild(top, o.node(KindDynamicAttribute))
	case o.nextIfStr("Td"):
		addChild(top, o.node(KindDirectMethodReferenceAttribute))
	case o.nextIfStr("TV"):
		addChild(top, o.node(KindVTableAttribute))
	}
	g := o.demangleGlobal(0)
	if g == nil {
		return nil
	}
	addChild(top, g)
	if !o.empty() {
		addChild(top, o.text1(KindSuffix, o.text))
		o.text = ""
	}
	return top
}

func (o *oldDemangler) demangleNatural() (uint64, bool) {
	if o.empty() {
		return 0, false
	}
	c := o.next()
	if !isDigit(c) {
		return 0, false
	}
	// Like Swift's, this wraps around on overflow: every use of a number
	// is bounded elsewhere (lengths by the text left, counts when printed).
	num := uint64(c - '0')
	for !o.empty() && isDigit(o.peek()) {
		num = 10*num + uint64(o.next()-'0')
	}
	return num, true
}

func (o *oldDemangler) demangleBuiltinSize() (uint64, bool) {
	n, ok := o.demangleNatural()
	return n, ok && o.nextIf('_')
}

func (o *oldDemangler) withType(k Kind, depth int) *Node {
	ty := o.demangleType(depth + 1)
	if ty == nil {
		return nil
	}
	return o.node(k, ty)
}

func (o *oldDemangler) withConformance(k Kind, depth int) *Node {
	c := o.demangleProtocolConformance(depth + 1)
	if c == nil {
		return nil
	}
	return o.node(k, c)
}

func (o *oldDemangler) demangleGlobal(depth int) *Node {
	if depth > oldMaxDepth || o.empty() || o.d.tooMany {
		return nil
	}
	if o.nextIf('M') {
		switch {
		case o.nextIf('P'):
			return o.withType(KindGenericTypeMetadataPattern, depth)
		case o.nextIf('a'):
			return o.withType(KindTypeMetadataAccessFunction, depth)
		case o.nextIf('L'):
			return o.withType(KindTypeMetadataLazyCache, depth)
		case o.nextIf('m'):
			return o.withType(KindMetaclass, depth)
		case o.nextIf('n'):
			return o.withType(KindNominalTypeDescriptor, depth)
		case o.nextIf('f'):
			return o.withType(KindFullTypeMetadata, depth)
		case o.nextIf('p'):
			p := o.demangleProtocolName(depth + 1)
			if p == nil {
				return nil
			}
			return o.node(KindProtocolDescriptor, p)
		}
		return o.withType(KindTypeMetadata, depth)
	}
	if o.nextIfStr("PA") {
		k := KindPartialApplyForwarder
		if o.nextIf('o') {
			k = KindPartialApplyObjCForwarder
		}
		fwd := o.node(k)
		if o.nextIfStr("__T") {
			g := o.demangleGlobal(depth + 1)
			if g == nil {
				return nil
			}
			addChild(fwd, g)
		}
		return fwd
	}
	if o.nextIf('t') {
		return o.withType(KindTypeMangling, depth)
	}
	if o.nextIf('w') {
		code := string([]byte{o.next(), o.next()})
		for i, vw := range valueWitnessKinds {
			if vw[0] == code {
				ty := o.demangleType(depth + 1)
				if ty == nil {
					return nil
				}
				return o.node(KindValueWitness, o.index1(KindIndex, uint64(i)), ty)
			}
		}
		return nil
	}
	if o.nextIf('W') {
		switch {
		case o.nextIf('V'):
			return o.withType(KindValueWitnessTable, depth)
		case o.nextIf('v'):
			var dir uint64
			switch {
			case o.nextIf('d'):
			case o.nextIf('i'):
				dir = 1
			default:
				return nil
			}
			e := o.demangleEntity(depth + 1)
			if e == nil {
				return nil
			}
			return o.node(KindFieldOffset, o.index1(KindDirectness, dir), e)
		case o.nextIf('P'):
			return o.withConformance(KindProtocolWitnessTable, depth)
		case o.nextIf('G'):
			return o.withConformance(KindGenericProtocolWitnessTable, depth)
		case o.nextIf('I'):
			return o.withConformance(KindGenericProtocolWitnessTableInstantiationFunction, depth)
		case o.peek() == 'l' || o.peek() == 'L':
			k := KindLazyProtocolWitnessTableAccessor
			if o.next() == 'L' {
				k = KindLazyProtocolWitnessTableCacheVariable
			}
			ty := o.demangleType(depth + 1)
			if ty == nil {
				return nil
			}
			c := o.demangleProtocolConformance(depth + 1)
			if c == nil {
				return nil
			}
			return o.node(k, ty, c)
		case o.nextIf('a'):
			return o.withConformance(KindProtocolWitnessTableAccessor, depth)
		case o.nextIf('t'):
			c := o.demangleProtocolConformance(depth + 1)
			if c == nil {
				return nil
			}
			name := o.demangleDeclName(depth + 1)
			if name == nil {
				return nil
			}
			return o.node(KindAssociatedTypeMetadataAccessor, c, name)
		case o.nextIf('T'):
			c := o.demangleProtocolConformance(depth + 1)
			if c == nil {
				return nil
			}
			name := o.demangleDeclName(depth + 1)
			if name == nil {
				return nil
			}
			p := o.demangleProtocolName(depth + 1)
			if p == nil {
				return nil
			}
			return o.node(KindAssociatedTypeWitnessTableAccessor, c, name, p)
		}
		return nil
	}
	if o.nextIf('T') {
		switch {
		case o.nextIf('R'):
			t := o.node(KindReabstractionThunkHelper)
			if !o.demangleReabstractSignature(t, depth+1) {
				return nil
			}
			return t
		case o.nextIf('r'):
			t := o.node(KindReabstractionThunk)
			if !o.demangleReabstractSignature(t, depth+1) {
				return nil
			}
			return t
		case o.nextIf('W'):
			c := o.demangleProtocolConformance(depth + 1)
			if c == nil {
				return nil
			}
			e := o.demangleEntity(depth + 1)
			if e == nil {
				return nil
			}
			return o.node(KindProtocolWitness, c, e)
		}
		return nil
	}
	return o.demangleEntity(depth + 1)
}

func (o *oldDemangler) demangleGenericSpecialization(spec *Node, depth int) *Node {
	if depth > oldMaxDepth {
		return nil
	}
	for !o.nextIf('_') {
		ty := o.demangleType(depth + 1)
		if ty == nil {
			return nil
		}
		param := o.node(KindGenericSpecializationParam, ty)
		for !o.nextIf('_') {
			c := o.demangleProtocolConformance(depth + 1)
			if c == nil {
				return nil
			}
			addChild(param, c)
		}
		addChild(spec, param)
	}
	return spec
}

func (o *oldDemangler) paramKind(v uint64) *Node {
	return o.index1(KindFunctionSignatureSpecializationParamKind, v)
}

func (o *oldDemangler) payload(s string) *Node {
	return o.text1(KindFunctionSignatureSpecializationParamPayload, s)
}

func (o *oldDemangler) readUntil(c byte) (string, bool) {
	for i := 0; i < len(o.text); i++ {
		if o.text[i] == c {
			s := o.text[:i]
			o.text = o.text[i:]
			return s, true
		}
	}
	o.text = ""
	return "", false
}

func (o *oldDemangler) demangleFuncSigSpecializationConstantProp(parent *Node, depth int) bool {
	identProp := func(kind uint64) bool {
		name := o.demangleIdentifier(depth+1, KindUnknown)
		if name == nil || !o.nextIf('_') {
			return false
		}
		addChild(parent, o.paramKind(kind))
		addChild(parent, o.payload(name.Text))
		return true
	}
	numberProp := func(kind uint64) bool {
		s, ok := o.readUntil('_')
		if !ok || !o.nextIf('_') {
			return false
		}
		addChild(parent, o.paramKind(kind))
		addChild(parent, o.payload(s))
		return true
	}
	switch {
	case o.nextIfStr("fr"):
		return identProp(fsConstantPropFunction)
	case o.nextIf('g'):
		return identProp(fsConstantPropGlobal)
	case o.nextIf('i'):
		return numberProp(fsConstantPropInteger)
	case o.nextIfStr("fl"):
		return numberProp(fsConstantPropFloat)
	case o.nextIf('s'):
		if !o.nextIf('e') {
			return false
		}
		var enc string
		switch o.peek() {
		case '0':
			enc = "u8"
		case '1':
			enc = "u16"
		default:
			return false
		}
		o.next()
		if !o.nextIf('v') {
			return false
		}
		str := o.demangleIdentifier(depth+1, KindUnknown)
		if str == nil || !o.nextIf('_') {
			return false
		}
		addChild(parent, o.paramKind(fsConstantPropString))
		addChild(parent, o.payload(enc))
		addChild(parent, o.payload(str.Text))
		return true
	}
	return false
}

func (o *oldDemangler) demangleFuncSigSpecializationClosureProp(parent *Node, depth int) bool {
	name := o.demangleIdentifier(depth+1, KindUnknown)
	if name == nil {
		return false
	}
	addChild(parent, o.paramKind(fsClosureProp))
	addChild(parent, o.payload(name.Text))
	for o.peek() != '_' {
		ty := o.demangleType(depth + 1)
		if ty == nil {
			break
		}
		addChild(parent, ty)
	}
	return o.nextIf('_')
}

func (o *oldDemangler) demangleFunctionSignatureSpecialization(spec *Node, depth int) *Node {
	for !o.nextIf('_') {
		if o.empty() {
			return nil
		}
		param := o.node(KindFunctionSignatureSpecializationParam)
		switch {
		case o.nextIfStr("n_"):
		case o.nextIfStr("cp"):
			if !o.demangleFuncSigSpecializationConstantProp(param, depth+1) {
				return nil
			}
		case o.nextIfStr("cl"):
			if !o.demangleFuncSigSpecializationClosureProp(param, depth+1) {
				return nil
			}
		case o.nextIfStr("i_"):
			addChild(param, o.paramKind(fsBoxToValue))
		case o.nextIfStr("k_"):
			addChild(param, o.paramKind(fsBoxToStack))
		case o.nextIfStr("r_"):
			addChild(param, o.paramKind(fsInOutToOut))
		default:
			var v uint64
			if o.nextIf('d') {
				v |= fsDead
			}
			if o.nextIf('g') {
				v |= fsOwnedToGuaranteed
			}
			if o.nextIf('o') {
				v |= fsGuaranteedToOwned
			}
			if o.nextIf('s') {
				v |= fsSROA
			}
			if !o.nextIf('_') || v == 0 {
				return nil
			}
			addChild(param, o.paramKind(v))
		}
		addChild(spec, param)
	}
	return spec
}

func (o *oldDemangler) demangleSpecializedAttribute(depth int) *Node {
	if c := o.peek(); c == 'g' || c == 'r' {
		o.next()
		spec := o.node(pick(c == 'g', KindGenericSpecialization, KindGenericSpecializationNotReAbstracted))
		if o.nextIf('q') {
			addChild(spec, o.node(KindIsSerialized))
		}
		addChild(spec, o.index1(KindSpecializationPassID, uint64(o.next()-'0')))
		return o.demangleGenericSpecialization(spec, depth+1)
	}
	if o.nextIf('f') {
		spec := o.node(KindFunctionSignatureSpecialization)
		if o.nextIf('q') {
			addChild(spec, o.node(KindIsSerialized))
		}
		addChild(spec, o.index1(KindSpecializationPassID, uint64(o.next()-'0')))
		return o.demangleFunctionSignatureSpecialization(spec, depth+1)
	}
	return nil
}

func (o *oldDemangler) demangleDeclName(depth int) *Node {
	if o.nextIf('L') {
		disc := o.demangleIndexAsNode()
		if disc == nil {
			return nil
		}
		name := o.demangleIdentifier(depth+1, KindUnknown)
		if name == nil {
			return nil
		}
		return o.node(KindLocalDeclName, disc, name)
	}
	if o.nextIf('P') {
		disc := o.demangleIdentifier(depth+1, KindUnknown)
		if disc == nil {
			return nil
		}
		name := o.demangleIdentifier(depth+1, KindUnknown)
		if name == nil {
			return nil
		}
		return o.node(KindPrivateDeclName, disc, name)
	}
	return o.demangleIdentifier(depth+1, KindUnknown)
}

// demangleIdentifier reads an identifier; kind KindUnknown means "any":
// an Identifier, or an operator.
func (o *oldDemangler) demangleIdentifier(depth int, kind Kind) *Node {
	if o.empty() {
		return nil
	}
	punycoded := o.nextIf('X')
	isOperator := false
	if o.nextIf('o') {
		isOperator = true
		if kind != KindUnknown {
			return nil
		}
		switch o.next() {
		case 'p':
			kind = KindPrefixOperator
		case 'P':
			kind = KindPostfixOperator
		case 'i':
			kind = KindInfixOperator
		default:
			return nil
		}
	}
	if kind == KindUnknown {
		kind = KindIdentifier
	}
	n, ok := o.demangleNatural()
	if !ok || n > uint64(len(o.text)) {
		return nil
	}
	ident := o.text[:n]
	o.text = o.text[n:]
	if punycoded {
		s, ok := decodePunycodeUTF8(ident)
		if !ok {
			return nil
		}
		ident = s
	}
	if ident == "" {
		return nil
	}
	if isOperator {
		op := make([]byte, 0, len(ident))
		for i := 0; i < len(ident); i++ {
			c := ident[i]
			if c >= 0x80 {
				op = append(op, c)
				continue
			}
			if !isLower(c) || opCharTable[c-'a'] == ' ' {
				return nil
			}
			op = append(op, opCharTable[c-'a'])
		}
		ident = string(op)
	}
	return o.text1(kind, ident)
}

func (o *oldDemangler) demangleIndex() (uint64, bool) {
	if o.nextIf('_') {
		return 0, true
	}
	if n, ok := o.demangleNatural(); ok {
		if !o.nextIf('_') {
			return 0, false
		}
		return n + 1, true
	}
	return 0, false
}

func (o *oldDemangler) demangleIndexAsNode() *Node {
	i, ok := o.demangleIndex()
	if !ok {
		return nil
	}
	return o.index1(KindNumber, i)
}

func (o *oldDemangler) swiftType(k Kind, name string) *Node {
	return o.node(k, o.text1(KindModule, "Swift"), o.text1(KindIdentifier, name))
}

var oldStandardTypes = map[byte]stdType{
	'a': {KindStructure, "Array"},
	'b': {KindStructure, "Bool"},
	'c': {KindStructure, "UnicodeScalar"},
	'd': {KindStructure, "Double"},
	'f': {KindStructure, "Float"},
	'i': {KindStructure, "Int"},
	'V': {KindStructure, "UnsafeRawPointer"},
	'v': {KindStructure, "UnsafeMutableRawPointer"},
	'P': {KindStructure, "UnsafePointer"},
	'p': {KindStructure, "UnsafeMutablePointer"},
	'q': {KindEnum, "Optional"},
	'Q': {KindEnum, "ImplicitlyUnwrappedOptional"},
	'R': {KindStructure, "UnsafeBufferPointer"},
	'r': {KindStructure, "UnsafeMutableBufferPointer"},
	'S': {KindStructure, "String"},
	'u': {KindStructure, "UInt"},
}

func (o *oldDemangler) demangleSubstitutionIndex() *Node {
	if o.empty() {
		return nil
	}
	if o.nextIf('o') {
		return o.text1(KindModule, "__C")
	}
	if o.nextIf('C') {
		return o.text1(KindModule, "__C_Synthesized")
	}
	if t, ok := oldStandardTypes[o.peek()]; ok {
		o.next()
		return o.swiftType(t.kind, t.name)
	}
	i, ok := o.demangleIndex()
	if !ok || i >= uint64(len(o.subst)) {
		return nil
	}
	return o.subst[i]
}

func (o *oldDemangler) demangleModule(depth int) *Node {
	if o.nextIf('s') {
		return o.text1(KindModule, "Swift")
	}
	if o.nextIf('S') {
		m := o.demangleSubstitutionIndex()
		if m == nil || m.Kind != KindModule {
			return nil
		}
		return m
	}
	m := o.demangleIdentifier(depth+1, KindModule)
	if m == nil {
		return nil
	}
	o.subst = append(o.subst, m)
	return m
}

func (o *oldDemangler) demangleDeclarationName(k Kind, depth int) *Node {
	ctx := o.demangleContext(depth + 1)
	if ctx == nil {
		return nil
	}
	name := o.demangleDeclName(depth + 1)
	if name == nil {
		return nil
	}
	decl := o.node(k, ctx, name)
	o.subst = append(o.subst, decl)
	return decl
}

func (o *oldDemangler) demangleProtocolName(depth int) *Node {
	p := o.demangleProtocolNameImpl(depth)
	if p == nil {
		return nil
	}
	return o.node(KindType, p)
}

func (o *oldDemangler) demangleProtocolNameGivenContext(ctx *Node, depth int) *Node {
	name := o.demangleDeclName(depth + 1)
	if name == nil {
		return nil
	}
	p := o.node(KindProtocol, ctx, name)
	o.subst = append(o.subst, p)
	return p
}

func (o *oldDemangler) demangleProtocolNameImpl(depth int) *Node {
	if depth > oldMaxDepth {
		return nil
	}
	if o.nextIf('S') {
		sub := o.demangleSubstitutionIndex()
		switch sub.kind() {
		case KindProtocol:
			return sub
		case KindModule:
			return o.demangleProtocolNameGivenContext(sub, depth+1)
		}
		return nil
	}
	if o.nextIf('s') {
		return o.demangleProtocolNameGivenContext(o.text1(KindModule, "Swift"), depth+1)
	}
	return o.demangleDeclarationName(KindProtocol, depth+1)
}

func (o *oldDemangler) demangleNominalType(depth int) *Node {
	switch {
	case o.nextIf('S'):
		return o.demangleSubstitutionIndex()
	case o.nextIf('V'):
		return o.demangleDeclarationName(KindStructure, depth+1)
	case o.nextIf('O'):
		return o.demangleDeclarationName(KindEnum, depth+1)
	case o.nextIf('C'):
		return o.demangleDeclarationName(KindClass, depth+1)
	case o.nextIf('P'):
		return o.demangleDeclarationName(KindProtocol, depth+1)
	}
	return nil
}

func (o *oldDemangler) demangleBoundGenericArgs(nominal *Node, depth int) *Node {
	if depth > oldMaxDepth || nominal.numChildren() == 0 {
		return nil
	}
	parent := nominal.Children[0]
	if k := parent.Kind; k != KindModule && k != KindFunction && k != KindExtension {
		parent = o.demangleBoundGenericArgs(parent, depth+1)
		if parent == nil {
			return nil
		}
		res := o.node(nominal.Kind, parent)
		res.Children = append(res.Children, nominal.Children[1:]...)
		nominal = res
	}
	args := o.node(KindTypeList)
	for !o.nextIf('_') {
		ty := o.demangleType(depth + 1)
		if ty == nil {
			return nil
		}
		addChild(args, ty)
		if o.empty() {
			return nil
		}
	}
	if len(args.Children) == 0 {
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
	default:
		return nil
	}
	return o.node(k, o.node(KindType, nominal), args)
}

func (o *oldDemangler) demangleBoundGenericType(depth int) *Node {
	nominal := o.demangleNominalType(depth + 1)
	if nominal == nil {
		return nil
	}
	return o.demangleBoundGenericArgs(nominal, depth+1)
}

func isOldStartOfEntity(c byte) bool {
	switch c {
	case 'F', 'I', 'v', 'P', 's', 'Z', 'C', 'V', 'O':
		return true
	}
	return false
}

func (o *oldDemangler) demangleContext(depth int) *Node {
	if o.empty() || depth > oldMaxDepth {
		return nil
	}
	switch {
	case o.nextIf('E'):
		module := o.demangleModule(depth + 1)
		if module == nil {
			return nil
		}
		ty := o.demangleContext(depth + 1)
		if ty == nil {
			return nil
		}
		return o.node(KindExtension, module, ty)
	case o.nextIf('e'):
		module := o.demangleModule(depth + 1)
		if module == nil {
			return nil
		}
		sig := o.demangleGenericSignature(depth+1, false)
		if sig == nil {
			return nil
		}
		ty := o.demangleContext(depth + 1)
		if ty == nil {
			return nil
		}
		return o.node(KindExtension, module, ty, sig)
	case o.nextIf('S'):
		return o.demangleSubstitutionIndex()
	case o.nextIf('s'):
		return o.text1(KindModule, "Swift")
	case o.nextIf('G'):
		return o.demangleBoundGenericType(depth + 1)
	case isOldStartOfEntity(o.peek()):
		return o.demangleEntity(depth + 1)
	}
	return o.demangleModule(depth + 1)
}

func (o *oldDemangler) demangleProtocolList(depth int) *Node {
	list := o.node(KindTypeList)
	for !o.nextIf('_') {
		p := o.demangleProtocolName(depth + 1)
		if p == nil {
			return nil
		}
		addChild(list, p)
	}
	return o.node(KindProtocolList, list)
}

func (o *oldDemangler) demangleProtocolConformance(depth int) *Node {
	ty := o.demangleType(depth + 1)
	if ty == nil {
		return nil
	}
	p := o.demangleProtocolName(depth + 1)
	if p == nil {
		return nil
	}
	ctx := o.demangleContext(depth + 1)
	if ctx == nil {
		return nil
	}
	return o.node(KindProtocolConformance, ty, p, ctx)
}

func (o *oldDemangler) demangleEntity(depth int) *Node {
	if depth > oldMaxDepth {
		return nil
	}
	isStatic := o.nextIf('Z')
	var basic Kind
	switch {
	case o.nextIf('F'):
		basic = KindFunction
	case o.nextIf('v'):
		basic = KindVariable
	case o.nextIf('I'):
		basic = KindInitializer
	case o.nextIf('i'):
		basic = KindSubscript
	default:
		return o.demangleNominalType(depth + 1)
	}
	ctx := o.demangleContext(depth + 1)
	if ctx == nil {
		return nil
	}
	var kind Kind
	hasType, wrap := true, false
	var name *Node
	declName := func() bool {
		name = o.demangleDeclName(depth + 1)
		return name != nil
	}
	c := o.peek()
	switch {
	case o.empty():
		return nil
	case o.nextIf('D'):
		kind, hasType = KindDeallocator, false
	case o.nextIf('d'):
		kind, hasType = KindDestructor, false
	case o.nextIf('e'):
		kind, hasType = KindIVarInitializer, false
	case o.nextIf('E'):
		kind, hasType = KindIVarDestroyer, false
	case o.nextIf('C'):
		kind = KindAllocator
	case o.nextIf('c'):
		kind = KindConstructor
	case c == 'a' || c == 'l': // mutable and immutable addressors
		o.next()
		wrap = true
		mutable := c == 'a'
		switch {
		case o.nextIf('O'):
			kind = pick(mutable, KindOwningMutableAddressor, KindOwningAddressor)
		case o.nextIf('o'):
			kind = pick(mutable, KindNativeOwningMutableAddressor, KindNativeOwningAddressor)
		case o.nextIf('p'):
			kind = pick(mutable, KindNativePinningMutableAddressor, KindNativePinningAddressor)
		case o.nextIf('u'):
			kind = pick(mutable, KindUnsafeMutableAddressor, KindUnsafeAddressor)
		default:
			return nil
		}
		if !declName() {
			return nil
		}
	case oldAccessors[c] != KindUnknown:
		o.next()
		wrap, kind = true, oldAccessors[c]
		if !declName() {
			return nil
		}
	case o.nextIf('U'):
		kind = KindExplicitClosure
		if name = o.demangleIndexAsNode(); name == nil {
			return nil
		}
	case o.nextIf('u'):
		kind = KindImplicitClosure
		if name = o.demangleIndexAsNode(); name == nil {
			return nil
		}
	case basic == KindInitializer:
		switch {
		case o.nextIf('A'):
			kind = KindDefaultArgumentInitializer
			if name = o.demangleIndexAsNode(); name == nil {
				return nil
			}
		case o.nextIf('i'):
			kind = KindInitializer
		default:
			return nil
		}
		hasType = false
	default:
		kind = basic
		if !declName() {
			return nil
		}
	}
	entity := o.node(kind)
	if wrap {
		isSubscript := false
		switch name.Kind {
		case KindIdentifier:
			if name.Text == "subscript" {
				isSubscript, name = true, nil
			}
		case KindPrivateDeclName:
			if name.numChildren() > 1 && name.child(1).Text == "subscript" {
				isSubscript = true
				name = o.node(KindPrivateDeclName, name.firstChild())
			}
		}
		wrapped := o.node(pick(isSubscript, KindSubscript, KindVariable), ctx)
		if !isSubscript {
			addChild(wrapped, name)
		}
		if hasType {
			ty := o.demangleType(depth + 1)
			if ty == nil {
				return nil
			}
			addChild(wrapped, ty)
		}
		if isSubscript && name != nil {
			addChild(wrapped, name)
		}
		addChild(entity, wrapped)
	} else {
		addChild(entity, ctx)
		if name != nil {
			addChild(entity, name)
		}
		if hasType {
			ty := o.demangleType(depth + 1)
			if ty == nil {
				return nil
			}
			addChild(entity, ty)
		}
	}
	if isStatic {
		return o.node(KindStatic, entity)
	}
	return entity
}

// oldAccessors are the accessor entity names of the old mangling.
var oldAccessors = [256]Kind{'g': KindGetter, 'G': KindGlobalGetter, 's': KindSetter,
	'm': KindMaterializeForSet, 'w': KindWillSet, 'W': KindDidSet, 'r': KindReadAccessor, 'M': KindModifyAccessor}

func pick(cond bool, a, b Kind) Kind {
	if cond {
		return a
	}
	return b
}

func (o *oldDemangler) genericParamType(depth, index uint64) *Node {
	return o.node(KindDependentGenericParamType, o.index1(KindIndex, depth), o.index1(KindIndex, index))
}

func (o *oldDemangler) demangleGenericParamIndex() *Node {
	switch {
	case o.nextIf('d'):
		d, ok := o.demangleIndex()
		if !ok {
			return nil
		}
		i, ok := o.demangleIndex()
		if !ok {
			return nil
		}
		return o.genericParamType(d+1, i)
	case o.nextIf('x'):
		return o.genericParamType(0, 0)
	}
	i, ok := o.demangleIndex()
	if !ok {
		return nil
	}
	return o.genericParamType(0, i+1)
}

func (o *oldDemangler) demangleDependentMemberTypeName(base *Node, depth int) *Node {
	var assoc *Node
	if o.nextIf('S') {
		assoc = o.demangleSubstitutionIndex()
		if assoc.kind() != KindDependentAssociatedTypeRef {
			return nil
		}
	} else {
		var proto *Node
		if o.nextIf('P') {
			if proto = o.demangleProtocolName(depth + 1); proto == nil {
				return nil
			}
		}
		id := o.demangleIdentifier(depth+1, KindUnknown)
		if id == nil {
			return nil
		}
		assoc = o.node(KindDependentAssociatedTypeRef, id)
		if proto != nil {
			addChild(assoc, proto)
		}
		o.subst = append(o.subst, assoc)
	}
	return o.node(KindDependentMemberType, base, assoc)
}

func (o *oldDemangler) demangleAssociatedTypeSimple(depth int) *Node {
	base := o.demangleGenericParamIndex()
	if base == nil {
		return nil
	}
	return o.demangleDependentMemberTypeName(o.node(KindType, base), depth+1)
}

func (o *oldDemangler) demangleAssociatedTypeCompound(depth int) *Node {
	base := o.demangleGenericParamIndex()
	if base == nil {
		return nil
	}
	for !o.nextIf('_') {
		base = o.demangleDependentMemberTypeName(o.node(KindType, base), depth+1)
		if base == nil {
			return nil
		}
	}
	return base
}

func (o *oldDemangler) demangleDependentType(depth int) *Node {
	if o.empty() {
		return nil
	}
	if c := o.peek(); c != 'd' && c != '_' && !isDigit(c) {
		base := o.demangleType(depth + 1)
		if base == nil {
			return nil
		}
		return o.demangleDependentMemberTypeName(base, depth+1)
	}
	return o.demangleGenericParamIndex()
}

func (o *oldDemangler) demangleConstrainedType(depth int) *Node {
	var ty *Node
	switch {
	case o.nextIf('w'):
		ty = o.demangleAssociatedTypeSimple(depth + 1)
	case o.nextIf('W'):
		ty = o.demangleAssociatedTypeCompound(depth + 1)
	default:
		ty = o.demangleGenericParamIndex()
	}
	if ty == nil {
		return nil
	}
	return o.node(KindType, ty)
}

func (o *oldDemangler) demangleGenericSignature(depth int, pseudo bool) *Node {
	sig := o.node(pick(pseudo, KindDependentPseudogenericSignature, KindDependentGenericSignature))
	counted := false
	for o.peek() != 'R' && o.peek() != 'r' {
		var count uint64
		if o.nextIf('z') {
			count = 0
		} else if i, ok := o.demangleIndex(); ok {
			count = i + 1
		} else {
			return nil
		}
		addChild(sig, o.index1(KindDependentGenericParamCount, count))
		counted = true
		if o.d.tooMany {
			return nil
		}
	}
	if !counted {
		addChild(sig, o.index1(KindDependentGenericParamCount, 1))
	}
	if o.nextIf('r') {
		return sig
	}
	if !o.nextIf('R') {
		return nil
	}
	for !o.nextIf('r') {
		req := o.demangleGenericRequirement(depth + 1)
		if req == nil {
			return nil
		}
		addChild(sig, req)
	}
	return sig
}

func (o *oldDemangler) demangleMetatypeRepresentation() *Node {
	switch {
	case o.nextIf('t'):
		return o.text1(KindMetatypeRepresentation, "@thin")
	case o.nextIf('T'):
		return o.text1(KindMetatypeRepresentation, "@thick")
	case o.nextIf('o'):
		return o.text1(KindMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (o *oldDemangler) demangleGenericRequirement(depth int) *Node {
	constrained := o.demangleConstrainedType(depth + 1)
	if constrained == nil {
		return nil
	}
	if o.nextIf('z') {
		second := o.demangleType(depth + 1)
		if second == nil {
			return nil
		}
		return o.node(KindDependentGenericSameTypeRequirement, constrained, second)
	}
	if o.nextIf('l') {
		c := o.next()
		var size, align uint64
		hasSize, hasAlign := false, false
		var ok bool
		switch c {
		case 'U', 'R', 'N', 'T', 'B':
		case 'E', 'M':
			if size, ok = o.demangleNatural(); !ok || !o.nextIf('_') {
				return nil
			}
			if align, ok = o.demangleNatural(); !ok {
				return nil
			}
			hasSize, hasAlign = true, true
		case 'e', 'm', 'S':
			if size, ok = o.demangleNatural(); !ok {
				return nil
			}
			hasSize = true
		default:
			return nil
		}
		req := o.node(KindDependentGenericLayoutRequirement, constrained, o.text1(KindIdentifier, string(c)))
		if hasSize {
			addChild(req, o.index1(KindNumber, size))
			if hasAlign {
				addChild(req, o.index1(KindNumber, align))
			}
		}
		return req
	}
	if o.empty() {
		return nil
	}
	var constraint *Node
	switch o.peek() {
	case 'C':
		if constraint = o.demangleType(depth + 1); constraint == nil {
			return nil
		}
	case 'S':
		o.next()
		sub := o.demangleSubstitutionIndex()
		var name *Node
		switch sub.kind() {
		case KindProtocol, KindClass:
			name = sub
		case KindModule:
			if name = o.demangleProtocolNameGivenContext(sub, depth+1); name == nil {
				return nil
			}
		default:
			return nil
		}
		constraint = o.node(KindType, name)
	default:
		if constraint = o.demangleProtocolName(depth + 1); constraint == nil {
			return nil
		}
	}
	return o.node(KindDependentGenericConformanceRequirement, constrained, constraint)
}

func (o *oldDemangler) demangleArchetypeType(depth int) *Node {
	if depth > oldMaxDepth {
		return nil
	}
	assoc := func(root *Node) *Node {
		name := o.demangleIdentifier(depth+1, KindUnknown)
		if name == nil {
			return nil
		}
		a := o.node(KindAssociatedTypeRef, root, name)
		o.subst = append(o.subst, a)
		return a
	}
	switch {
	case o.nextIf('Q'):
		root := o.demangleArchetypeType(depth + 1)
		if root == nil {
			return nil
		}
		return assoc(root)
	case o.nextIf('S'):
		sub := o.demangleSubstitutionIndex()
		if sub == nil {
			return nil
		}
		return assoc(sub)
	case o.nextIf('s'):
		return assoc(o.text1(KindModule, "Swift"))
	}
	return nil
}

func (o *oldDemangler) demangleTuple(variadic bool, depth int) *Node {
	tuple := o.node(KindTuple)
	var elt *Node
	for !o.nextIf('_') {
		if o.empty() {
			return nil
		}
		elt = o.node(KindTupleElement)
		if c := o.peek(); isDigit(c) || c == 'o' {
			label := o.demangleIdentifier(depth+1, KindTupleElementName)
			if label == nil {
				return nil
			}
			addChild(elt, label)
		}
		ty := o.demangleType(depth + 1)
		if ty == nil {
			return nil
		}
		addChild(elt, ty)
		addChild(tuple, elt)
	}
	if variadic && elt != nil {
		elt.Children = append([]*Node{o.node(KindVariadicMarker)}, elt.Children...)
	}
	return tuple
}

func (o *oldDemangler) demangleType(depth int) *Node {
	ty := o.demangleTypeImpl(depth)
	if ty == nil {
		return nil
	}
	return o.node(KindType, ty)
}

func (o *oldDemangler) demangleFunctionType(k Kind, depth int) *Node {
	throws, concurrent, async := false, false, false
	var diffKind byte
	var globalActor *Node
	if !o.empty() {
		throws = o.nextIf('z')
		concurrent = o.nextIf('y')
		async = o.nextIf('Z')
		if o.nextIf('D') {
			switch c := o.next(); c {
			case 'f', 'r', 'd', 'l':
				diffKind = c
			default:
				return nil
			}
		}
		if o.nextIf('Y') {
			if globalActor = o.demangleType(depth + 1); globalActor == nil {
				return nil
			}
		}
	}
	in := o.demangleType(depth + 1)
	if in == nil {
		return nil
	}
	out := o.demangleType(depth + 1)
	if out == nil {
		return nil
	}
	block := o.node(k)
	if throws {
		addChild(block, o.node(KindThrowsAnnotation))
	}
	if async {
		addChild(block, o.node(KindAsyncAnnotation))
	}
	if concurrent {
		addChild(block, o.node(KindConcurrentFunctionType))
	}
	if diffKind != 0 {
		addChild(block, o.index1(KindDifferentiableFunctionType, uint64(diffKind)))
	}
	if globalActor != nil {
		addChild(block, o.node(KindGlobalActorFunctionType, globalActor))
	}
	addChild(block, o.node(KindArgumentTuple, in))
	addChild(block, o.node(KindReturnType, out))
	return block
}

func (o *oldDemangler) demangleTypeImpl(depth int) *Node {
	if depth > oldMaxDepth || o.empty() || o.d.tooMany {
		return nil
	}
	c := o.next()
	switch c {
	case 'B':
		if o.empty() {
			return nil
		}
		switch c := o.next(); c {
		case 'b':
			return o.text1(KindBuiltinTypeName, "Builtin.BridgeObject")
		case 'B':
			return o.text1(KindBuiltinTypeName, "Builtin.UnsafeValueBuffer")
		case 'f', 'i':
			if size, ok := o.demangleBuiltinSize(); ok {
				return o.text1(KindBuiltinTypeName, "Builtin."+map[byte]string{'f': "FPIEEE", 'i': "Int"}[c]+strconv.FormatUint(size, 10))
			}
			return nil
		case 'v':
			elts, ok := o.demangleNatural()
			if !ok || !o.nextIf('B') {
				return nil
			}
			vec := "Builtin.Vec" + strconv.FormatUint(elts, 10)
			switch {
			case o.nextIf('i'):
				size, ok := o.demangleBuiltinSize()
				if !ok {
					return nil
				}
				return o.text1(KindBuiltinTypeName, vec+"xInt"+strconv.FormatUint(size, 10))
			case o.nextIf('f'):
				size, ok := o.demangleBuiltinSize()
				if !ok {
					return nil
				}
				return o.text1(KindBuiltinTypeName, vec+"xFPIEEE"+strconv.FormatUint(size, 10))
			case o.nextIf('p'):
				return o.text1(KindBuiltinTypeName, vec+"xRawPointer")
			}
			return nil
		case 'O':
			return o.text1(KindBuiltinTypeName, "Builtin.UnknownObject")
		case 'o':
			return o.text1(KindBuiltinTypeName, "Builtin.NativeObject")
		case 'p':
			return o.text1(KindBuiltinTypeName, "Builtin.RawPointer")
		case 't':
			return o.text1(KindBuiltinTypeName, "Builtin.SILToken")
		case 'w':
			return o.text1(KindBuiltinTypeName, "Builtin.Word")
		}
		return nil
	case 'a':
		return o.demangleDeclarationName(KindTypeAlias, depth+1)
	case 'b':
		return o.demangleFunctionType(KindObjCBlock, depth+1)
	case 'c':
		return o.demangleFunctionType(KindCFunctionPointer, depth+1)
	case 'D':
		return o.withType(KindDynamicSelf, depth)
	case 'E':
		if !o.nextIf('R') || !o.nextIf('R') {
			return nil
		}
		return o.text1(KindErrorType, "")
	case 'F':
		return o.demangleFunctionType(KindFunctionType, depth+1)
	case 'f':
		return o.demangleFunctionType(KindUncurriedFunctionType, depth+1)
	case 'G':
		return o.demangleBoundGenericType(depth + 1)
	case 'K':
		return o.demangleFunctionType(KindAutoClosureType, depth+1)
	case 'M':
		return o.withType(KindMetatype, depth)
	case 'P':
		if o.nextIf('M') {
			return o.withType(KindExistentialMetatype, depth)
		}
		return o.demangleProtocolList(depth + 1)
	case 'Q':
		if o.nextIf('u') {
			return o.node(KindOpaqueReturnType)
		}
		if o.nextIf('U') {
			i, ok := o.demangleIndex()
			if !ok {
				return nil
			}
			return o.node(KindOpaqueReturnType, o.index1(KindOpaqueReturnTypeIndex, i))
		}
		return o.demangleArchetypeType(depth + 1)
	case 'q':
		return o.demangleDependentType(depth + 1)
	case 'x':
		return o.genericParamType(0, 0)
	case 'w':
		return o.demangleAssociatedTypeSimple(depth + 1)
	case 'W':
		return o.demangleAssociatedTypeCompound(depth + 1)
	case 'R', 'k':
		ty := o.demangleTypeImpl(depth + 1)
		if ty == nil {
			return nil
		}
		return o.node(pick(c == 'R', KindInOut, KindNoDerivative), ty)
	case 'S':
		return o.demangleSubstitutionIndex()
	case 'T', 't':
		return o.demangleTuple(c == 't', depth+1)
	case 'u':
		sig := o.demangleGenericSignature(depth+1, false)
		if sig == nil {
			return nil
		}
		sub := o.demangleType(depth + 1)
		if sub == nil {
			return nil
		}
		return o.node(KindDependentGenericType, sig, sub)
	case 'X':
		return o.demangleSpecialType(depth)
	case 'C', 'V', 'O':
		return o.demangleDeclarationName(map[byte]Kind{'C': KindClass, 'V': KindStructure, 'O': KindEnum}[c], depth+1)
	}
	return nil
}

func (o *oldDemangler) demangleSpecialType(depth int) *Node {
	switch {
	case o.nextIf('b'):
		return o.withType(KindSILBoxType, depth)
	case o.nextIf('B'):
		var sig *Node
		if o.nextIf('G') {
			if sig = o.demangleGenericSignature(depth, false); sig == nil {
				return nil
			}
		}
		layout := o.node(KindSILBoxLayout)
		for !o.nextIf('_') {
			var k Kind
			switch {
			case o.nextIf('m'):
				k = KindSILBoxMutableField
			case o.nextIf('i'):
				k = KindSILBoxImmutableField
			default:
				return nil
			}
			ty := o.demangleType(depth + 1)
			if ty == nil {
				return nil
			}
			addChild(layout, o.node(k, ty))
		}
		box := o.node(KindSILBoxTypeWithLayout, layout)
		if sig != nil {
			args := o.node(KindTypeList)
			for !o.nextIf('_') {
				ty := o.demangleType(depth + 1)
				if ty == nil {
					return nil
				}
				addChild(args, ty)
			}
			addChild(box, sig)
			addChild(box, args)
		}
		return box
	case o.nextIf('M'):
		repr := o.demangleMetatypeRepresentation()
		if repr == nil {
			return nil
		}
		ty := o.demangleType(depth + 1)
		if ty == nil {
			return nil
		}
		return o.node(KindMetatype, repr, ty)
	case o.nextIf('P'):
		if o.nextIf('M') {
			repr := o.demangleMetatypeRepresentation()
			if repr == nil {
				return nil
			}
			ty := o.demangleType(depth + 1)
			if ty == nil {
				return nil
			}
			return o.node(KindExistentialMetatype, repr, ty)
		}
		return o.demangleProtocolList(depth + 1)
	case o.nextIf('f'):
		return o.demangleFunctionType(KindThinFunctionType, depth+1)
	case o.nextIf('o'):
		return o.withType(KindUnowned, depth)
	case o.nextIf('u'):
		return o.withType(KindUnmanaged, depth)
	case o.nextIf('w'):
		return o.withType(KindWeak, depth)
	case o.nextIf('F'):
		return o.demangleImplFunctionType(depth + 1)
	}
	return nil
}

func (o *oldDemangler) demangleReabstractSignature(sig *Node, depth int) bool {
	if o.nextIf('G') {
		g := o.demangleGenericSignature(depth+1, false)
		if g == nil {
			return false
		}
		addChild(sig, g)
	}
	src := o.demangleType(depth + 1)
	if src == nil {
		return false
	}
	addChild(sig, src)
	dst := o.demangleType(depth + 1)
	if dst == nil {
		return false
	}
	addChild(sig, dst)
	return true
}

const (
	convCallee = iota
	convParameter
	convResult
)

var oldImplConventions = map[byte][3]string{
	'a': {"", "", "@autoreleased"},
	'd': {"@callee_unowned", "@unowned", "@unowned"},
	'D': {"", "", "@unowned_inner_pointer"},
	'g': {"@callee_guaranteed", "@guaranteed", ""},
	'e': {"", "@deallocating", ""},
	'i': {"", "@in", "@out"},
	'l': {"", "@inout", ""},
	'o': {"@callee_owned", "@owned", "@owned"},
}

func (o *oldDemangler) demangleImplConvention(ctx int) string {
	if conv, ok := oldImplConventions[o.peek()]; ok && !o.empty() {
		o.next()
		return conv[ctx]
	}
	return ""
}

func (o *oldDemangler) demangleImplFunctionType(depth int) *Node {
	ty := o.node(KindImplFunctionType)
	attr := ""
	if o.nextIf('t') {
		attr = "@convention(thin)"
	} else {
		attr = o.demangleImplConvention(convCallee)
	}
	if attr == "" {
		return nil
	}
	addChild(ty, o.text1(KindImplConvention, attr))
	if o.nextIf('C') {
		var name string
		switch {
		case o.nextIf('b'):
			name = "block"
		case o.nextIf('c'):
			name = "c"
		case o.nextIf('m'):
			name = "method"
		case o.nextIf('O'):
			name = "objc_method"
		case o.nextIf('w'):
			name = "witness_method"
		default:
			return nil
		}
		addChild(ty, o.node(KindImplFunctionConvention, o.text1(KindImplFunctionConventionName, name)))
	}
	if o.nextIf('h') {
		addChild(ty, o.text1(KindImplFunctionAttribute, "@Sendable"))
	}
	if o.nextIf('H') {
		addChild(ty, o.text1(KindImplFunctionAttribute, "@async"))
	}
	if o.peek() == 'G' || o.peek() == 'g' {
		pseudo := o.next() == 'g'
		g := o.demangleGenericSignature(depth+1, pseudo)
		if g == nil {
			return nil
		}
		addChild(ty, g)
	}
	if !o.nextIf('_') {
		return nil
	}
	for !o.nextIf('_') {
		p := o.demangleImplParameterOrResult(KindImplParameter, depth+1)
		if p == nil {
			return nil
		}
		addChild(ty, p)
	}
	for !o.nextIf('_') {
		r := o.demangleImplParameterOrResult(KindImplResult, depth+1)
		if r == nil {
			return nil
		}
		addChild(ty, r)
	}
	return ty
}

func (o *oldDemangler) demangleImplParameterOrResult(k Kind, depth int) *Node {
	if o.nextIf('z') {
		if k != KindImplResult {
			return nil
		}
		k = KindImplErrorResult
	}
	ctx := convParameter
	if k != KindImplParameter {
		ctx = convResult
	}
	conv := o.demangleImplConvention(ctx)
	if conv == "" {
		return nil
	}
	ty := o.demangleType(depth + 1)
	if ty == nil {
		return nil
	}
	return o.node(k, o.text1(KindImplConvention, conv), ty)
}
