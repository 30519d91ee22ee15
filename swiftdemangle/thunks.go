package swiftdemangle

// The thunk, specialization, witness and entity productions of the
// demangler (the second half of Swift's Demangler.cpp).

func (d *demangler) demangleTypeMangling() *Node {
	ty := d.popKind(KindType)
	labels := d.popFunctionParamLabels(ty)
	tm := d.newNode(KindTypeMangling)
	addChild(tm, labels)
	return addChild(tm, ty)
}

func (d *demangler) demangleThunkOrSpecialization() *Node {
	c := d.next()
	switch c {
	case 'c':
		return d.withChild(KindCurryThunk, d.popIf(isEntity))
	case 'j':
		return d.withChild(KindDispatchThunk, d.popIf(isEntity))
	case 'q':
		return d.withChild(KindMethodDescriptor, d.popIf(isEntity))
	case 'o':
		return d.newNode(KindObjCAttribute)
	case 'O':
		return d.newNode(KindNonObjCAttribute)
	case 'D':
		return d.newNode(KindDynamicAttribute)
	case 'd':
		return d.newNode(KindDirectMethodReferenceAttribute)
	case 'E':
		return d.newNode(KindDistributedThunk)
	case 'F':
		return d.newNode(KindDistributedAccessor)
	case 'a':
		return d.newNode(KindPartialApplyObjCForwarder)
	case 'A':
		return d.newNode(KindPartialApplyForwarder)
	case 'm':
		return d.newNode(KindMergedFunction)
	case 'X':
		return d.newNode(KindDynamicallyReplaceableFunctionVar)
	case 'x':
		return d.newNode(KindDynamicallyReplaceableFunctionKey)
	case 'I':
		return d.newNode(KindDynamicallyReplaceableFunctionImpl)
	case 'Y', 'Q':
		disc := d.demangleIndexAsNode()
		if c == 'Q' {
			return d.withChild(KindAsyncAwaitResumePartialFunction, disc)
		}
		return d.withChild(KindAsyncSuspendResumePartialFunction, disc)
	case 'C':
		return d.withChild(KindCoroutineContinuationPrototype, d.popKind(KindType))
	case 'z', 'Z':
		flag := d.demangleIndexAsNode()
		sig := d.popKind(KindDependentGenericSignature)
		result := d.popKind(KindType)
		impl := d.popKind(KindType)
		k := KindPredefinedObjCAsyncCompletionHandlerImpl
		if c == 'z' {
			k = KindObjCAsyncCompletionHandlerImpl
		}
		n := d.withChildren(k, impl, result, flag)
		if sig != nil {
			addChild(n, sig)
		}
		return n
	case 'V':
		base := d.popIf(isEntity)
		derived := d.popIf(isEntity)
		return d.withChildren(KindVTableThunk, derived, base)
	case 'W':
		entity := d.popIf(isEntity)
		conf := d.popProtocolConformance()
		return d.withChildren(KindProtocolWitness, conf, entity)
	case 'S':
		return d.withChild(KindProtocolSelfConformanceWitness, d.popIf(isEntity))
	case 'R', 'r', 'y':
		k := KindReabstractionThunk
		if c == 'R' {
			k = KindReabstractionThunkHelper
		} else if c == 'y' {
			k = KindReabstractionThunkHelperWithSelf
		}
		thunk := d.newNode(k)
		if sig := d.popKind(KindDependentGenericSignature); sig != nil {
			addChild(thunk, sig)
		}
		if k == KindReabstractionThunkHelperWithSelf {
			addChild(thunk, d.popKind(KindType))
		}
		addChild(thunk, d.popKind(KindType))
		addChild(thunk, d.popKind(KindType))
		return thunk
	case 'g':
		return d.demangleGenericSpecialization(KindGenericSpecialization, nil)
	case 'G':
		return d.demangleGenericSpecialization(KindGenericSpecializationNotReAbstracted, nil)
	case 'B':
		return d.demangleGenericSpecialization(KindGenericSpecializationInResilienceDomain, nil)
	case 's':
		return d.demangleGenericSpecialization(KindGenericSpecializationPrespecialized, nil)
	case 'i':
		return d.demangleGenericSpecialization(KindInlinedGenericFunction, nil)
	case 't':
		return d.demangleGenericSpecializationWithDroppedArguments()
	case 'p', 'P':
		k := KindGenericPartialSpecialization
		if c == 'P' {
			k = KindGenericPartialSpecializationNotReAbstracted
		}
		spec := d.demangleSpecAttributes(k)
		param := d.withChild(KindGenericSpecializationParam, d.popKind(KindType))
		return addChild(spec, param)
	case 'f':
		return d.demangleFunctionSpecialization()
	case 'K', 'k':
		k := KindKeyPathSetterThunkHelper
		if c == 'K' {
			k = KindKeyPathGetterThunkHelper
		}
		serialized := d.nextIf('q')
		var types []*Node
		n := d.pop()
		if n == nil || n.Kind != KindType {
			return nil
		}
		for n != nil && n.Kind == KindType {
			types = append(types, n)
			n = d.pop()
		}
		if n == nil {
			return nil
		}
		var res *Node
		if n.Kind == KindDependentGenericSignature {
			decl := d.pop()
			if decl == nil {
				return nil
			}
			res = d.withChildren(k, decl, n)
		} else {
			res = d.withChild(k, n)
		}
		for i := len(types) - 1; i >= 0; i-- {
			addChild(res, types[i])
		}
		if serialized {
			addChild(res, d.newNode(KindIsSerialized))
		}
		return res
	case 'l':
		name := d.popAssocTypeName()
		if name == nil {
			return nil
		}
		return d.withChild(KindAssociatedTypeDescriptor, name)
	case 'L':
		return d.withChild(KindProtocolRequirementsBaseDescriptor, d.popProtocol())
	case 'M':
		return d.withChild(KindDefaultAssociatedTypeMetadataAccessor, d.popAssocTypeName())
	case 'n':
		req := d.popProtocol()
		conforming := d.popAssocTypePath()
		proto := d.popKind(KindType)
		return d.withChildren(KindAssociatedConformanceDescriptor, proto, conforming, req)
	case 'N':
		req := d.popProtocol()
		path := d.popAssocTypePath()
		proto := d.popKind(KindType)
		return d.withChildren(KindDefaultAssociatedConformanceAccessor, proto, path, req)
	case 'b':
		req := d.popProtocol()
		proto := d.popKind(KindType)
		return d.withChildren(KindBaseConformanceDescriptor, proto, req)
	case 'H', 'h':
		k := KindKeyPathHashThunkHelper
		if c == 'H' {
			k = KindKeyPathEqualsThunkHelper
		}
		serialized := d.nextIf('q')
		var sig *Node
		var types []*Node
		n := d.pop()
		switch {
		case n == nil:
			return nil
		case n.Kind == KindDependentGenericSignature:
			sig = n
		case n.Kind == KindType:
			types = append(types, n)
		default:
			return nil
		}
		for n := d.pop(); n != nil; n = d.pop() {
			if n.Kind != KindType {
				return nil
			}
			types = append(types, n)
		}
		res := d.newNode(k)
		for i := len(types) - 1; i >= 0; i-- {
			addChild(res, types[i])
		}
		addChild(res, sig)
		if serialized {
			addChild(res, d.newNode(KindIsSerialized))
		}
		return res
	case 'v':
		idx := d.demangleIndex()
		if idx < 0 {
			return nil
		}
		if d.next() == 'r' {
			return d.indexNode(KindOutlinedReadOnlyObject, uint64(idx))
		}
		return d.indexNode(KindOutlinedVariable, uint64(idx))
	case 'e':
		params := d.demangleBridgedMethodParams()
		if params == "" {
			return nil
		}
		return d.textNode(KindOutlinedBridgedMethod, params)
	case 'u':
		return d.newNode(KindAsyncFunctionPointer)
	case 'U':
		actor := d.popKind(KindType)
		if actor == nil {
			return nil
		}
		reabs := d.pop()
		if reabs == nil {
			return nil
		}
		return d.withChildren(KindReabstractionThunkHelperWithGlobalActor, reabs, actor)
	case 'J':
		switch d.peek() {
		case 'S':
			d.next()
			return d.demangleAutoDiffSubsetParametersThunk()
		case 'O':
			d.next()
			return d.demangleAutoDiffSelfReorderingReabstractionThunk()
		case 'V':
			d.next()
			return d.demangleAutoDiffFunctionOrSimpleThunk(KindAutoDiffDerivativeVTableThunk)
		default:
			return d.demangleAutoDiffFunctionOrSimpleThunk(KindAutoDiffFunction)
		}
	case 'w':
		switch d.next() {
		case 'b':
			return d.newNode(KindBackDeploymentThunk)
		case 'B':
			return d.newNode(KindBackDeploymentFallback)
		case 'S':
			return d.newNode(KindHasSymbolQuery)
		}
		return nil
	}
	return nil
}

func (d *demangler) popAllReversed(n *Node) *Node {
	for {
		c := d.pop()
		if c == nil {
			break
		}
		addChild(n, c)
	}
	n.reverseChildren(0)
	return n
}

func (d *demangler) demangleAutoDiffFunctionOrSimpleThunk(k Kind) *Node {
	res := d.popAllReversed(d.newNode(k))
	res = addChild(res, d.demangleAutoDiffFunctionKind())
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('p') {
		return nil
	}
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('r') {
		return nil
	}
	return res
}

func (d *demangler) demangleAutoDiffFunctionKind() *Node {
	k := d.next()
	if k != 'f' && k != 'r' && k != 'd' && k != 'p' {
		return nil
	}
	return d.indexNode(KindAutoDiffFunctionKind, uint64(k))
}

func (d *demangler) demangleAutoDiffSubsetParametersThunk() *Node {
	res := d.popAllReversed(d.newNode(KindAutoDiffSubsetParametersThunk))
	res = addChild(res, d.demangleAutoDiffFunctionKind())
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('p') {
		return nil
	}
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('r') {
		return nil
	}
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('P') {
		return nil
	}
	return res
}

func (d *demangler) demangleAutoDiffSelfReorderingReabstractionThunk() *Node {
	res := d.newNode(KindAutoDiffSelfReorderingReabstractionThunk)
	addChild(res, d.popKind(KindDependentGenericSignature))
	res = addChild(res, d.popKind(KindType))
	res = addChild(res, d.popKind(KindType))
	if res != nil {
		res.reverseChildren(0)
	}
	return addChild(res, d.demangleAutoDiffFunctionKind())
}

func (d *demangler) demangleDifferentiabilityWitness() *Node {
	res := d.newNode(KindDifferentiabilityWitness)
	sig := d.popKind(KindDependentGenericSignature)
	res = d.popAllReversed(res)
	var kind byte
	switch c := d.next(); c {
	case 'f', 'r', 'd', 'l':
		kind = c
	default:
		return nil
	}
	res = addChild(res, d.indexNode(KindIndex, uint64(kind)))
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('p') {
		return nil
	}
	res = addChild(res, d.demangleIndexSubset())
	if !d.nextIf('r') {
		return nil
	}
	addChild(res, sig)
	return res
}

func (d *demangler) demangleIndexSubset() *Node {
	start := d.pos
	for c := d.peek(); c == 'S' || c == 'U'; c = d.peek() {
		d.next()
	}
	if d.pos == start {
		return nil
	}
	return d.textNode(KindIndexSubset, d.text[start:d.pos])
}

func (d *demangler) demangleDifferentiableFunctionType() *Node {
	switch c := d.next(); c {
	case 'f', 'r', 'd', 'l':
		return d.indexNode(KindDifferentiableFunctionType, uint64(c))
	}
	return nil
}

func (d *demangler) demangleBridgedMethodParams() string {
	if d.nextIf('_') {
		return ""
	}
	var s []byte
	switch k := d.next(); k {
	case 'o', 'p', 'a', 'm':
		s = append(s, k)
	default:
		return ""
	}
	for !d.nextIf('_') {
		c := d.next()
		if c != 'n' && c != 'b' && c != 'g' {
			return ""
		}
		s = append(s, c)
	}
	return string(s)
}

func (d *demangler) demangleGenericSpecializationWithDroppedArguments() *Node {
	d.pushBack()
	var dropped []*Node
	for d.nextIf('t') {
		n := d.demangleNatural()
		idx := uint64(0)
		if n >= 0 {
			idx = uint64(n) + 1
		}
		dropped = append(dropped, d.indexNode(KindDroppedArgument, idx))
	}
	var k Kind
	switch d.next() {
	case 'g':
		k = KindGenericSpecialization
	case 'G':
		k = KindGenericSpecializationNotReAbstracted
	case 'B':
		k = KindGenericSpecializationInResilienceDomain
	default:
		return nil
	}
	return d.demangleGenericSpecialization(k, dropped)
}

func (d *demangler) demangleGenericSpecialization(k Kind, dropped []*Node) *Node {
	spec := d.demangleSpecAttributes(k)
	if spec == nil {
		return nil
	}
	for _, n := range dropped {
		addChild(spec, n)
	}
	list := d.popTypeList()
	if list == nil {
		return nil
	}
	for _, ty := range list.Children {
		addChild(spec, d.withChild(KindGenericSpecializationParam, ty))
	}
	return spec
}

// FunctionSigSpecializationParamKind values (Swift's Demangle.h).
const (
	fsConstantPropFunction = 0
	fsConstantPropGlobal   = 1
	fsConstantPropInteger  = 2
	fsConstantPropFloat    = 3
	fsConstantPropString   = 4
	fsClosureProp          = 5
	fsBoxToValue           = 6
	fsBoxToStack           = 7
	fsInOutToOut           = 8
	fsConstantPropKeyPath  = 9

	fsDead                 = 1 << 6
	fsOwnedToGuaranteed    = 1 << 7
	fsSROA                 = 1 << 8
	fsGuaranteedToOwned    = 1 << 9
	fsExistentialToGeneric = 1 << 10
)

func (d *demangler) demangleFunctionSpecialization() *Node {
	spec := d.demangleSpecAttributes(KindFunctionSignatureSpecialization)
	for spec != nil && !d.nextIf('_') {
		spec = addChild(spec, d.demangleFuncSpecParam(KindFunctionSignatureSpecializationParam))
	}
	if !d.nextIf('n') {
		spec = addChild(spec, d.demangleFuncSpecParam(KindFunctionSignatureSpecializationReturn))
	}
	if spec == nil {
		return nil
	}
	for i := len(spec.Children) - 1; i >= 0; i-- {
		param := spec.Children[i]
		if param.Kind != KindFunctionSignatureSpecializationParam || len(param.Children) == 0 {
			continue
		}
		kind := param.Children[0].Index
		switch kind {
		case fsConstantPropFunction, fsConstantPropGlobal, fsConstantPropString,
			fsConstantPropKeyPath, fsClosureProp:
			fixed := len(param.Children)
			for {
				ty := d.popKind(KindType)
				if ty == nil {
					break
				}
				if kind != fsClosureProp && kind != fsConstantPropKeyPath {
					return nil
				}
				addChild(param, ty)
			}
			name := d.popKind(KindIdentifier)
			if name == nil {
				return nil
			}
			text := name.Text
			if kind == fsConstantPropString && len(text) > 0 && text[0] == '_' {
				text = text[1:] // '_' escapes a leading digit or '_'
			}
			addChild(param, d.textNode(KindFunctionSignatureSpecializationParamPayload, text))
			param.reverseChildren(fixed)
		}
	}
	return spec
}

func (d *demangler) paramKind(param *Node, v uint64) *Node {
	return addChild(param, d.indexNode(KindFunctionSignatureSpecializationParamKind, v))
}

func (d *demangler) demangleFuncSpecParam(k Kind) *Node {
	param := d.newNode(k)
	switch d.next() {
	case 'n':
		return param
	case 'c':
		return d.paramKind(param, fsClosureProp)
	case 'p':
		switch d.next() {
		case 'f':
			return d.paramKind(param, fsConstantPropFunction)
		case 'g':
			return d.paramKind(param, fsConstantPropGlobal)
		case 'i':
			return d.addFuncSpecParamNumber(param, fsConstantPropInteger)
		case 'd':
			return d.addFuncSpecParamNumber(param, fsConstantPropFloat)
		case 's':
			var enc string
			switch d.next() {
			case 'b':
				enc = "u8"
			case 'w':
				enc = "u16"
			case 'c':
				enc = "objc"
			default:
				return nil
			}
			d.paramKind(param, fsConstantPropString)
			return addChild(param, d.textNode(KindFunctionSignatureSpecializationParamPayload, enc))
		case 'k':
			return d.paramKind(param, fsConstantPropKeyPath)
		}
		return nil
	case 'e':
		v := uint64(fsExistentialToGeneric)
		if d.nextIf('D') {
			v |= fsDead
		}
		if d.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if d.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if d.nextIf('X') {
			v |= fsSROA
		}
		return d.paramKind(param, v)
	case 'd':
		v := uint64(fsDead)
		if d.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if d.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if d.nextIf('X') {
			v |= fsSROA
		}
		return d.paramKind(param, v)
	case 'g':
		v := uint64(fsOwnedToGuaranteed)
		if d.nextIf('X') {
			v |= fsSROA
		}
		return d.paramKind(param, v)
	case 'o':
		v := uint64(fsGuaranteedToOwned)
		if d.nextIf('X') {
			v |= fsSROA
		}
		return d.paramKind(param, v)
	case 'x':
		return d.paramKind(param, fsSROA)
	case 'i':
		return d.paramKind(param, fsBoxToValue)
	case 's':
		return d.paramKind(param, fsBoxToStack)
	case 'r':
		return d.paramKind(param, fsInOutToOut)
	}
	return nil
}

func (d *demangler) addFuncSpecParamNumber(param *Node, kind uint64) *Node {
	d.paramKind(param, kind)
	start := d.pos
	for isDigit(d.peek()) {
		d.next()
	}
	if d.pos == start {
		return nil
	}
	return addChild(param, d.textNode(KindFunctionSignatureSpecializationParamPayload, d.text[start:d.pos]))
}

func (d *demangler) demangleSpecAttributes(k Kind) *Node {
	metatypesRemoved := d.nextIf('m')
	serialized := d.nextIf('q')
	asyncRemoved := d.nextIf('a')
	pass := int(d.next()) - '0'
	if pass < 0 || pass >= maxSpecPass {
		return nil
	}
	spec := d.newNode(k)
	if metatypesRemoved {
		addChild(spec, d.newNode(KindMetatypeParamsRemoved))
	}
	if serialized {
		addChild(spec, d.newNode(KindIsSerialized))
	}
	if asyncRemoved {
		addChild(spec, d.newNode(KindAsyncRemoved))
	}
	addChild(spec, d.indexNode(KindSpecializationPassID, uint64(pass)))
	return spec
}

func (d *demangler) demangleWitness() *Node {
	c := d.next()
	switch c {
	case 'C':
		return d.withChild(KindEnumCase, d.popIf(isEntity))
	case 'V':
		return d.withChild(KindValueWitnessTable, d.popKind(KindType))
	case 'v':
		var dir uint64
		switch d.next() {
		case 'd':
			dir = 0
		case 'i':
			dir = 1
		default:
			return nil
		}
		return d.withChildren(KindFieldOffset, d.indexNode(KindDirectness, dir), d.popIf(isEntity))
	case 'S':
		return d.withChild(KindProtocolSelfConformanceWitnessTable, d.popProtocol())
	case 'P':
		return d.withChild(KindProtocolWitnessTable, d.popProtocolConformance())
	case 'p':
		return d.withChild(KindProtocolWitnessTablePattern, d.popProtocolConformance())
	case 'G':
		return d.withChild(KindGenericProtocolWitnessTable, d.popProtocolConformance())
	case 'I':
		return d.withChild(KindGenericProtocolWitnessTableInstantiationFunction, d.popProtocolConformance())
	case 'r':
		return d.withChild(KindResilientProtocolWitnessTable, d.popProtocolConformance())
	case 'l', 'L':
		conf := d.popProtocolConformance()
		ty := d.popKind(KindType)
		if c == 'l' {
			return d.withChildren(KindLazyProtocolWitnessTableAccessor, ty, conf)
		}
		return d.withChildren(KindLazyProtocolWitnessTableCacheVariable, ty, conf)
	case 'a':
		return d.withChild(KindProtocolWitnessTableAccessor, d.popProtocolConformance())
	case 't':
		name := d.popIf(isDeclName)
		conf := d.popProtocolConformance()
		return d.withChildren(KindAssociatedTypeMetadataAccessor, conf, name)
	case 'T':
		proto := d.popKind(KindType)
		conforming := d.popAssocTypePath()
		conf := d.popProtocolConformance()
		return d.withChildren(KindAssociatedTypeWitnessTableAccessor, conf, conforming, proto)
	case 'b':
		proto := d.popKind(KindType)
		conf := d.popProtocolConformance()
		return d.withChildren(KindBaseWitnessTableAccessor, conf, proto)
	case 'O':
		var k Kind
		switch d.next() {
		case 'y':
			k = KindOutlinedCopy
		case 'e':
			k = KindOutlinedConsume
		case 'r':
			k = KindOutlinedRetain
		case 's':
			k = KindOutlinedRelease
		case 'b':
			k = KindOutlinedInitializeWithTake
		case 'c':
			k = KindOutlinedInitializeWithCopy
		case 'd':
			k = KindOutlinedAssignWithTake
		case 'f':
			k = KindOutlinedAssignWithCopy
		case 'h':
			k = KindOutlinedDestroy
		case 'g':
			k = KindOutlinedEnumGetTag
		case 'i':
			k = KindOutlinedEnumTagStore
		case 'j':
			k = KindOutlinedEnumProjectDataForLoad
		case 'C':
			k = KindOutlinedInitializeWithCopyNoValueWitness
		case 'D':
			k = KindOutlinedAssignWithTakeNoValueWitness
		case 'F':
			k = KindOutlinedAssignWithCopyNoValueWitness
		case 'H':
			k = KindOutlinedDestroyNoValueWitness
		default:
			return nil
		}
		if k == KindOutlinedEnumTagStore || k == KindOutlinedEnumProjectDataForLoad {
			// These carry an enum case index after the type.
			sig := d.popKind(KindDependentGenericSignature)
			ty := d.popKind(KindType)
			idx := d.demangleIndexAsNode()
			if sig != nil {
				return d.withChildren(k, ty, sig, idx)
			}
			return d.withChildren(k, ty, idx)
		}
		if sig := d.popKind(KindDependentGenericSignature); sig != nil {
			return d.withChildren(k, d.popKind(KindType), sig)
		}
		return d.withChild(k, d.popKind(KindType))
	case 'Z', 'z':
		list := d.newNode(KindGlobalVariableOnceDeclList)
		var vars []*Node
		for d.popKind(KindFirstElementMarker) != nil {
			id := d.popIf(isDeclName)
			if id == nil {
				return nil
			}
			vars = append(vars, id)
		}
		for i := len(vars) - 1; i >= 0; i-- {
			addChild(list, vars[i])
		}
		ctx := d.popContext()
		if ctx == nil {
			return nil
		}
		if c == 'Z' {
			return d.withChildren(KindGlobalVariableOnceFunction, ctx, list)
		}
		return d.withChildren(KindGlobalVariableOnceToken, ctx, list)
	case 'J':
		return d.demangleDifferentiabilityWitness()
	}
	return nil
}

func (d *demangler) demangleSpecialType() *Node {
	c := d.next()
	switch c {
	case 'E':
		return d.popFunctionType(KindNoEscapeFunctionType, false)
	case 'A':
		return d.popFunctionType(KindEscapingAutoClosureType, false)
	case 'f':
		return d.popFunctionType(KindThinFunctionType, false)
	case 'K':
		return d.popFunctionType(KindAutoClosureType, false)
	case 'U':
		return d.popFunctionType(KindUncurriedFunctionType, false)
	case 'L':
		return d.popFunctionType(KindEscapingObjCBlock, false)
	case 'B':
		return d.popFunctionType(KindObjCBlock, false)
	case 'C':
		return d.popFunctionType(KindCFunctionPointer, false)
	case 'g', 'G':
		ty := d.popKind(KindType)
		var sig *Node
		if c == 'G' {
			sig = d.popKind(KindDependentGenericSignature)
		}
		if sig != nil {
			return d.withChildren(KindExtendedExistentialTypeShape, sig, ty)
		}
		return d.withChild(KindExtendedExistentialTypeShape, ty)
	case 'j':
		return nil // needs a symbolic reference, which we never resolve
	case 'z':
		switch d.next() {
		case 'B':
			return d.popFunctionType(KindObjCBlock, true)
		case 'C':
			return d.popFunctionType(KindCFunctionPointer, true)
		}
		return nil
	case 'o':
		return d.typeNode(d.withChild(KindUnowned, d.popKind(KindType)))
	case 'u':
		return d.typeNode(d.withChild(KindUnmanaged, d.popKind(KindType)))
	case 'w':
		return d.typeNode(d.withChild(KindWeak, d.popKind(KindType)))
	case 'b':
		return d.typeNode(d.withChild(KindSILBoxType, d.popKind(KindType)))
	case 'D':
		return d.typeNode(d.withChild(KindDynamicSelf, d.popKind(KindType)))
	case 'M', 'm':
		mtr := d.demangleMetatypeRepresentation()
		ty := d.popKind(KindType)
		if c == 'M' {
			return d.typeNode(d.withChildren(KindMetatype, mtr, ty))
		}
		return d.typeNode(d.withChildren(KindExistentialMetatype, mtr, ty))
	case 'P':
		reqs := d.demangleConstrainedExistentialRequirementList()
		base := d.popKind(KindType)
		return d.typeNode(d.withChildren(KindConstrainedExistential, base, reqs))
	case 'p':
		return d.typeNode(d.withChild(KindExistentialMetatype, d.popKind(KindType)))
	case 'c':
		super := d.popKind(KindType)
		protos := d.demangleProtocolList()
		return d.typeNode(d.withChildren(KindProtocolListWithClass, protos, super))
	case 'l':
		return d.typeNode(d.withChild(KindProtocolListWithAnyObject, d.demangleProtocolList()))
	case 'X', 'x':
		var sig, args *Node
		if c == 'X' {
			sig = d.popKind(KindDependentGenericSignature)
			if sig == nil {
				return nil
			}
			args = d.popTypeList()
			if args == nil {
				return nil
			}
		}
		fields := d.popTypeList()
		if fields == nil {
			return nil
		}
		layout := d.newNode(KindSILBoxLayout)
		for _, f := range fields.Children {
			k := KindSILBoxImmutableField
			if f.firstChild().kind() == KindInOut {
				k = KindSILBoxMutableField
				f = d.typeNode(f.firstChild().firstChild())
			}
			addChild(layout, d.withChild(k, f))
		}
		box := d.newNode(KindSILBoxTypeWithLayout)
		addChild(box, layout)
		if sig != nil {
			addChild(box, sig)
			addChild(box, args)
		}
		return d.typeNode(box)
	case 'Y':
		return d.demangleAnyGenericType(KindOtherNominalType)
	case 'Z':
		types := d.popTypeList()
		name := d.popKind(KindIdentifier)
		parent := d.popContext()
		anon := d.newNode(KindAnonymousContext)
		anon = addChild(anon, name)
		anon = addChild(anon, parent)
		return addChild(anon, types)
	case 'e':
		return d.typeNode(d.newNode(KindErrorType))
	case 'S':
		switch d.next() {
		case 'q':
			return d.typeNode(d.withChild(KindSugaredOptional, d.popKind(KindType)))
		case 'a':
			return d.typeNode(d.withChild(KindSugaredArray, d.popKind(KindType)))
		case 'D':
			value := d.popKind(KindType)
			key := d.popKind(KindType)
			return d.typeNode(d.withChildren(KindSugaredDictionary, key, value))
		case 'p':
			return d.typeNode(d.withChild(KindSugaredParen, d.popKind(KindType)))
		}
		return nil
	}
	return nil
}

func (d *demangler) demangleMetatypeRepresentation() *Node {
	switch d.next() {
	case 't':
		return d.textNode(KindMetatypeRepresentation, "@thin")
	case 'T':
		return d.textNode(KindMetatypeRepresentation, "@thick")
	case 'o':
		return d.textNode(KindMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (d *demangler) demangleAccessor(child *Node) *Node {
	var k Kind
	switch d.next() {
	case 'm':
		k = KindMaterializeForSet
	case 's':
		k = KindSetter
	case 'g':
		k = KindGetter
	case 'G':
		k = KindGlobalGetter
	case 'w':
		k = KindWillSet
	case 'W':
		k = KindDidSet
	case 'r':
		k = KindReadAccessor
	case 'M':
		k = KindModifyAccessor
	case 'i':
		k = KindInitAccessor
	case 'a':
		switch d.next() {
		case 'O':
			k = KindOwningMutableAddressor
		case 'o':
			k = KindNativeOwningMutableAddressor
		case 'P':
			k = KindNativePinningMutableAddressor
		case 'u':
			k = KindUnsafeMutableAddressor
		default:
			return nil
		}
	case 'l':
		switch d.next() {
		case 'O':
			k = KindOwningAddressor
		case 'o':
			k = KindNativeOwningAddressor
		case 'p':
			k = KindNativePinningAddressor
		case 'u':
			k = KindUnsafeAddressor
		default:
			return nil
		}
	case 'p': // the variable or subscript itself
		return child
	default:
		return nil
	}
	return d.withChild(k, child)
}

func (d *demangler) demangleFunctionEntity() *Node {
	const (
		argsNone = iota
		argsTypeAndMaybePrivateName
		argsTypeAndIndex
		argsIndex
	)
	var k Kind
	args := argsNone
	switch d.next() {
	case 'D':
		k = KindDeallocator
	case 'd':
		k = KindDestructor
	case 'E':
		k = KindIVarDestroyer
	case 'e':
		k = KindIVarInitializer
	case 'i':
		k = KindInitializer
	case 'C':
		k, args = KindAllocator, argsTypeAndMaybePrivateName
	case 'c':
		k, args = KindConstructor, argsTypeAndMaybePrivateName
	case 'U':
		k, args = KindExplicitClosure, argsTypeAndIndex
	case 'u':
		k, args = KindImplicitClosure, argsTypeAndIndex
	case 'A':
		k, args = KindDefaultArgumentInitializer, argsIndex
	case 'm':
		return d.demangleEntity(KindMacro)
	case 'M':
		return d.demangleMacroExpansion()
	case 'p':
		return d.demangleEntity(KindGenericTypeParamDecl)
	case 'P':
		k = KindPropertyWrapperBackingInitializer
	case 'W':
		k = KindPropertyWrapperInitFromProjectedValue
	default:
		return nil
	}
	var nameOrIndex, paramType, labels *Node
	switch args {
	case argsTypeAndMaybePrivateName:
		nameOrIndex = d.popKind(KindPrivateDeclName)
		paramType = d.popKind(KindType)
		labels = d.popFunctionParamLabels(paramType)
	case argsTypeAndIndex:
		nameOrIndex = d.demangleIndexAsNode()
		paramType = d.popKind(KindType)
	case argsIndex:
		nameOrIndex = d.demangleIndexAsNode()
	}
	entity := d.withChild(k, d.popContext())
	switch args {
	case argsIndex:
		entity = addChild(entity, nameOrIndex)
	case argsTypeAndMaybePrivateName:
		addChild(entity, labels)
		entity = addChild(entity, paramType)
		addChild(entity, nameOrIndex)
	case argsTypeAndIndex:
		entity = addChild(entity, nameOrIndex)
		entity = addChild(entity, paramType)
	}
	return entity
}

func (d *demangler) demangleEntity(k Kind) *Node {
	ty := d.popKind(KindType)
	labels := d.popFunctionParamLabels(ty)
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	var res *Node
	if labels != nil {
		res = d.withChildren(k, ctx, name, labels, ty)
	} else {
		res = d.withChildren(k, ctx, name, ty)
	}
	return d.opaqueParents(res, ty)
}

func (d *demangler) demangleVariable() *Node {
	return d.demangleAccessor(d.demangleEntity(KindVariable))
}

func (d *demangler) demangleSubscript() *Node {
	private := d.popKind(KindPrivateDeclName)
	ty := d.popKind(KindType)
	labels := d.popFunctionParamLabels(ty)
	ctx := d.popContext()
	if ty == nil {
		return nil
	}
	sub := d.newNode(KindSubscript)
	sub = addChild(sub, ctx)
	addChild(sub, labels)
	sub = addChild(sub, ty)
	addChild(sub, private)
	sub = d.opaqueParents(sub, ty)
	return d.demangleAccessor(sub)
}

func (d *demangler) demangleProtocolList() *Node {
	list := d.newNode(KindTypeList)
	protos := d.withChild(KindProtocolList, list)
	if d.popList(list, d.popProtocol) == nil {
		return nil
	}
	return protos
}

func (d *demangler) demangleConstrainedExistentialRequirementList() *Node {
	list := d.newNode(KindConstrainedExistentialRequirementList)
	for {
		first := d.popKind(KindFirstElementMarker) != nil
		req := d.popIf(isRequirement)
		if req == nil {
			return nil
		}
		addChild(list, req)
		if first {
			break
		}
	}
	list.reverseChildren(0)
	return list
}

func (d *demangler) demangleGenericSignature(hasParamCounts bool) *Node {
	sig := d.newNode(KindDependentGenericSignature)
	if hasParamCounts {
		for !d.nextIf('l') {
			count := 0
			if !d.nextIf('z') {
				count = d.demangleIndex() + 1
			}
			if count < 0 || d.pos > len(d.text) {
				return nil
			}
			addChild(sig, d.indexNode(KindDependentGenericParamCount, uint64(count)))
		}
	} else {
		addChild(sig, d.indexNode(KindDependentGenericParamCount, 1))
	}
	numCounts := len(sig.Children)
	for {
		req := d.popIf(isRequirement)
		if req == nil {
			break
		}
		addChild(sig, req)
	}
	sig.reverseChildren(numCounts)
	return sig
}

func (d *demangler) demangleGenericRequirement() *Node {
	const (
		tGeneric = iota
		tAssoc
		tCompoundAssoc
		tSubstitution
	)
	const (
		cProtocol = iota
		cBaseClass
		cSameType
		cSameShape
		cLayout
		cPackMarker
		cInverse
	)
	var tk, ck int
	switch d.next() {
	case 'v':
		ck, tk = cPackMarker, tGeneric
	case 'c':
		ck, tk = cBaseClass, tAssoc
	case 'C':
		ck, tk = cBaseClass, tCompoundAssoc
	case 'b':
		ck, tk = cBaseClass, tGeneric
	case 'B':
		ck, tk = cBaseClass, tSubstitution
	case 't':
		ck, tk = cSameType, tAssoc
	case 'T':
		ck, tk = cSameType, tCompoundAssoc
	case 's':
		ck, tk = cSameType, tGeneric
	case 'S':
		ck, tk = cSameType, tSubstitution
	case 'm':
		ck, tk = cLayout, tAssoc
	case 'M':
		ck, tk = cLayout, tCompoundAssoc
	case 'l':
		ck, tk = cLayout, tGeneric
	case 'L':
		ck, tk = cLayout, tSubstitution
	case 'p':
		ck, tk = cProtocol, tAssoc
	case 'P':
		ck, tk = cProtocol, tCompoundAssoc
	case 'Q':
		ck, tk = cProtocol, tSubstitution
	case 'h':
		ck, tk = cSameShape, tGeneric
	case 'i':
		ck, tk = cInverse, tGeneric
	case 'I':
		ck, tk = cInverse, tSubstitution
	default:
		ck, tk = cProtocol, tGeneric
		d.pushBack()
	}
	var constr *Node
	switch tk {
	case tGeneric:
		constr = d.typeNode(d.demangleGenericParamIndex())
	case tAssoc:
		constr = d.demangleAssociatedTypeSimple(d.demangleGenericParamIndex())
		d.addSubst(constr)
	case tCompoundAssoc:
		constr = d.demangleAssociatedTypeCompound(d.demangleGenericParamIndex())
		d.addSubst(constr)
	case tSubstitution:
		constr = d.popKind(KindType)
	}
	switch ck {
	case cPackMarker:
		return d.withChild(KindDependentGenericParamPackMarker, constr)
	case cProtocol:
		return d.withChildren(KindDependentGenericConformanceRequirement, constr, d.popProtocol())
	case cInverse:
		return d.withChildren(KindDependentGenericInverseConformanceRequirement, constr, d.demangleIndexAsNode())
	case cBaseClass:
		return d.withChildren(KindDependentGenericConformanceRequirement, constr, d.popKind(KindType))
	case cSameType:
		return d.withChildren(KindDependentGenericSameTypeRequirement, constr, d.popKind(KindType))
	case cSameShape:
		return d.withChildren(KindDependentGenericSameShapeRequirement, constr, d.popKind(KindType))
	}
	// Layout.
	c := d.next()
	var size, align *Node
	switch c {
	case 'U', 'R', 'N', 'C', 'D', 'T', 'B':
	case 'E', 'M':
		size = d.demangleIndexAsNode()
		if size == nil {
			return nil
		}
		align = d.demangleIndexAsNode()
	case 'e', 'm', 'S':
		size = d.demangleIndexAsNode()
		if size == nil {
			return nil
		}
	default:
		return nil
	}
	req := d.withChildren(KindDependentGenericLayoutRequirement, constr, d.textNode(KindIdentifier, string(c)))
	addChild(req, size)
	addChild(req, align)
	return req
}

func (d *demangler) demangleGenericType() *Node {
	sig := d.popKind(KindDependentGenericSignature)
	ty := d.popKind(KindType)
	return d.typeNode(d.withChildren(KindDependentGenericType, sig, ty))
}

// valueWitnessKinds is Swift's ValueWitnessMangling.def: each two-letter
// code and the name NodePrinter shows.
var valueWitnessKinds = [...][2]string{
	{"al", "allocateBuffer"},
	{"ca", "assignWithCopy"},
	{"ta", "assignWithTake"},
	{"de", "deallocateBuffer"},
	{"xx", "destroy"},
	{"XX", "destroyBuffer"},
	{"Xx", "destroyArray"},
	{"CP", "initializeBufferWithCopyOfBuffer"},
	{"Cp", "initializeBufferWithCopy"},
	{"cp", "initializeWithCopy"},
	{"Tk", "initializeBufferWithTake"},
	{"tk", "initializeWithTake"},
	{"pr", "projectBuffer"},
	{"TK", "initializeBufferWithTakeOfBuffer"},
	{"Cc", "initializeArrayWithCopy"},
	{"Tt", "initializeArrayWithTakeFrontToBack"},
	{"tT", "initializeArrayWithTakeBackToFront"},
	{"xs", "storeExtraInhabitant"},
	{"xg", "getExtraInhabitantIndex"},
	{"ug", "getEnumTag"},
	{"up", "destructiveProjectEnumData"},
	{"ui", "destructiveInjectEnumTag"},
	{"et", "getEnumTagSinglePayload"},
	{"st", "storeEnumTagSinglePayload"},
}

func (d *demangler) demangleValueWitness() *Node {
	code := string([]byte{d.next(), d.next()})
	for i, vw := range valueWitnessKinds {
		if vw[0] == code {
			n := d.newNode(KindValueWitness)
			addChild(n, d.indexNode(KindIndex, uint64(i)))
			return addChild(n, d.popKind(KindType))
		}
	}
	return nil
}

func isMacroExpansion(k Kind) bool {
	switch k {
	case KindAccessorAttachedMacroExpansion, KindMemberAttributeAttachedMacroExpansion,
		KindFreestandingMacroExpansion, KindMemberAttachedMacroExpansion,
		KindPeerAttachedMacroExpansion, KindConformanceAttachedMacroExpansion,
		KindExtensionAttachedMacroExpansion, KindPreambleAttachedMacroExpansion,
		KindBodyAttachedMacroExpansion:
		return true
	}
	return false
}

func (d *demangler) demangleMacroExpansion() *Node {
	var k Kind
	attached, freestanding := true, false
	switch d.next() {
	case 'a':
		k = KindAccessorAttachedMacroExpansion
	case 'r':
		k = KindMemberAttributeAttachedMacroExpansion
	case 'm':
		k = KindMemberAttachedMacroExpansion
	case 'p':
		k = KindPeerAttachedMacroExpansion
	case 'c':
		k = KindConformanceAttachedMacroExpansion
	case 'e':
		k = KindExtensionAttachedMacroExpansion
	case 'q':
		k = KindPreambleAttachedMacroExpansion
	case 'b':
		k = KindBodyAttachedMacroExpansion
	case 'f':
		k, attached, freestanding = KindFreestandingMacroExpansion, false, true
	case 'u':
		k, attached = KindMacroExpansionUniqueName, false
	default:
		return nil
	}
	macroName := d.popKind(KindIdentifier)
	var private, attachedName *Node
	if freestanding {
		private = d.popKind(KindPrivateDeclName)
	}
	if attached {
		attachedName = d.popIf(isDeclName)
	}
	ctx := d.popIf(isMacroExpansion)
	if ctx == nil {
		ctx = d.popContext()
	}
	disc := d.demangleIndexAsNode()
	var res *Node
	if attached {
		res = d.withChildren(k, ctx, attachedName, macroName, disc)
	} else {
		res = d.withChildren(k, ctx, macroName, disc)
	}
	if private != nil {
		addChild(res, private)
	}
	return res
}
