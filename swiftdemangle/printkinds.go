package swiftdemangle

import "strconv"

// The main switch of the printer: one case per node kind, as in
// NodePrinter::print.

type typePrinting int

const (
	noType typePrinting = iota
	withColon
	functionStyle
)

var valueWitnessNames = func() []string {
	names := make([]string, len(valueWitnessKinds))
	for i, vw := range valueWitnessKinds {
		names[i] = vw[1]
	}
	return names
}()

var simpleChildPrefixes = map[Kind]string{
	KindCurryThunk:                                            "curry thunk of ",
	KindDispatchThunk:                                         "dispatch thunk of ",
	KindMethodDescriptor:                                      "method descriptor for ",
	KindMethodLookupFunction:                                  "method lookup function for ",
	KindObjCMetadataUpdateFunction:                            "ObjC metadata update function for ",
	KindObjCResilientClassStub:                                "ObjC resilient class stub for ",
	KindFullObjCResilientClassStub:                            "full ObjC resilient class stub for ",
	KindOutlinedRetain:                                        "outlined retain of ",
	KindOutlinedRelease:                                       "outlined release of ",
	KindOutlinedInitializeWithTake:                            "outlined init with take of ",
	KindOutlinedInitializeWithCopy:                            "outlined init with copy of ",
	KindOutlinedInitializeWithCopyNoValueWitness:              "outlined init with copy of ",
	KindOutlinedAssignWithTake:                                "outlined assign with take of ",
	KindOutlinedAssignWithTakeNoValueWitness:                  "outlined assign with take of ",
	KindOutlinedAssignWithCopy:                                "outlined assign with copy of ",
	KindOutlinedAssignWithCopyNoValueWitness:                  "outlined assign with copy of ",
	KindOutlinedDestroy:                                       "outlined destroy of ",
	KindOutlinedDestroyNoValueWitness:                         "outlined destroy of ",
	KindOutlinedEnumProjectDataForLoad:                        "outlined enum project data for load of ",
	KindOutlinedEnumTagStore:                                  "outlined enum tag store of ",
	KindOutlinedEnumGetTag:                                    "outlined enum get tag of ",
	KindAsyncRemoved:                                          "async demotion of ",
	KindInOut:                                                 "inout ",
	KindIsolated:                                              "isolated ",
	KindTransferring:                                          "transferring ",
	KindCompileTimeConst:                                      "_const ",
	KindShared:                                                "__shared ",
	KindOwned:                                                 "__owned ",
	KindNoDerivative:                                          "@noDerivative ",
	KindWeak:                                                  "weak ",
	KindUnowned:                                               "unowned ",
	KindUnmanaged:                                             "unowned(unsafe) ",
	KindProtocolSelfConformanceWitnessTable:                   "protocol self-conformance witness table for ",
	KindProtocolWitnessTableAccessor:                          "protocol witness table accessor for ",
	KindProtocolWitnessTable:                                  "protocol witness table for ",
	KindProtocolWitnessTablePattern:                           "protocol witness table pattern for ",
	KindGenericProtocolWitnessTable:                           "generic protocol witness table for ",
	KindGenericProtocolWitnessTableInstantiationFunction:      "instantiation function for generic protocol witness table for ",
	KindResilientProtocolWitnessTable:                         "resilient protocol witness table for ",
	KindProtocolSelfConformanceWitness:                        "protocol self-conformance witness for ",
	KindGenericTypeMetadataPattern:                            "generic type metadata pattern for ",
	KindMetaclass:                                             "metaclass for ",
	KindProtocolSelfConformanceDescriptor:                     "protocol self-conformance descriptor for ",
	KindProtocolConformanceDescriptor:                         "protocol conformance descriptor for ",
	KindProtocolConformanceDescriptorRecord:                   "protocol conformance descriptor runtime record for ",
	KindProtocolDescriptor:                                    "protocol descriptor for ",
	KindProtocolDescriptorRecord:                              "protocol descriptor runtime record for ",
	KindProtocolRequirementsBaseDescriptor:                    "protocol requirements base descriptor for ",
	KindFullTypeMetadata:                                      "full type metadata for ",
	KindTypeMetadata:                                          "type metadata for ",
	KindTypeMetadataAccessFunction:                            "type metadata accessor for ",
	KindTypeMetadataInstantiationCache:                        "type metadata instantiation cache for ",
	KindTypeMetadataInstantiationFunction:                     "type metadata instantiation function for ",
	KindTypeMetadataSingletonInitializationCache:              "type metadata singleton initialization cache for ",
	KindTypeMetadataCompletionFunction:                        "type metadata completion function for ",
	KindTypeMetadataDemanglingCache:                           "demangling cache variable for type metadata for ",
	KindTypeMetadataLazyCache:                                 "lazy cache variable for type metadata for ",
	KindAssociatedTypeDescriptor:                              "associated type descriptor for ",
	KindDefaultAssociatedTypeMetadataAccessor:                 "default associated type metadata accessor for ",
	KindClassMetadataBaseOffset:                               "class metadata base offset for ",
	KindPropertyDescriptor:                                    "property descriptor for ",
	KindNominalTypeDescriptor:                                 "nominal type descriptor for ",
	KindNominalTypeDescriptorRecord:                           "nominal type descriptor runtime record for ",
	KindOpaqueTypeDescriptor:                                  "opaque type descriptor for ",
	KindOpaqueTypeDescriptorRecord:                            "opaque type descriptor runtime record for ",
	KindOpaqueTypeDescriptorAccessor:                          "opaque type descriptor accessor for ",
	KindOpaqueTypeDescriptorAccessorImpl:                      "opaque type descriptor accessor impl for ",
	KindOpaqueTypeDescriptorAccessorKey:                       "opaque type descriptor accessor key for ",
	KindOpaqueTypeDescriptorAccessorVar:                       "opaque type descriptor accessor var for ",
	KindCoroutineContinuationPrototype:                        "coroutine continuation prototype for ",
	KindValueWitnessTable:                                     "value witness table for ",
	KindReflectionMetadataBuiltinDescriptor:                   "reflection metadata builtin descriptor ",
	KindReflectionMetadataFieldDescriptor:                     "reflection metadata field descriptor ",
	KindReflectionMetadataAssocTypeDescriptor:                 "reflection metadata associated type descriptor ",
	KindReflectionMetadataSuperclassDescriptor:                "reflection metadata superclass descriptor ",
	KindModuleDescriptor:                                      "module descriptor ",
	KindAnonymousDescriptor:                                   "anonymous descriptor ",
	KindExtensionDescriptor:                                   "extension descriptor ",
	KindCanonicalSpecializedGenericMetaclass:                  "specialized generic metaclass for ",
	KindCanonicalSpecializedGenericTypeMetadataAccessFunction: "canonical specialized generic type metadata accessor for ",
	KindMetadataInstantiationCache:                            "metadata instantiation cache for ",
	KindNoncanonicalSpecializedGenericTypeMetadata:            "noncanonical specialized generic type metadata for ",
	KindNoncanonicalSpecializedGenericTypeMetadataCache:       "cache variable for noncanonical specialized generic type metadata for ",
	KindCanonicalPrespecializedGenericTypeCachingOnceToken:    "flag for loading of canonical specialized generic type metadata for ",
	KindUniquable:                                             "uniquable ",
	KindPackExpansion:                                         "repeat ",
}

var abstractStorageNames = map[Kind]string{
	KindOwningAddressor:               "owningAddressor",
	KindOwningMutableAddressor:        "owningMutableAddressor",
	KindNativeOwningAddressor:         "nativeOwningAddressor",
	KindNativeOwningMutableAddressor:  "nativeOwningMutableAddressor",
	KindNativePinningAddressor:        "nativePinningAddressor",
	KindNativePinningMutableAddressor: "nativePinningMutableAddressor",
	KindUnsafeAddressor:               "unsafeAddressor",
	KindUnsafeMutableAddressor:        "unsafeMutableAddressor",
	KindGlobalGetter:                  "getter",
	KindGetter:                        "getter",
	KindSetter:                        "setter",
	KindMaterializeForSet:             "materializeForSet",
	KindWillSet:                       "willset",
	KindDidSet:                        "didset",
	KindReadAccessor:                  "read",
	KindModifyAccessor:                "modify",
	KindInitAccessor:                  "init",
}

var thunkPrefixes = map[Kind]string{
	KindMergedFunction:                     "merged ",
	KindDistributedThunk:                   "distributed thunk ",
	KindDistributedAccessor:                "distributed accessor for ",
	KindAccessibleFunctionRecord:           "accessible function runtime record for ",
	KindDynamicallyReplaceableFunctionKey:  "dynamically replaceable key for ",
	KindDynamicallyReplaceableFunctionImpl: "dynamically replaceable thunk for ",
	KindDynamicallyReplaceableFunctionVar:  "dynamically replaceable variable for ",
	KindBackDeploymentThunk:                "back deployment thunk for ",
}

var plainTexts = map[Kind]string{
	KindNonObjCAttribute:               "@nonobjc ",
	KindObjCAttribute:                  "@objc ",
	KindDirectMethodReferenceAttribute: "super ",
	KindDynamicAttribute:               "dynamic ",
	KindVTableAttribute:                "override ",
	KindIsSerialized:                   "serialized",
	KindMetatypeParamsRemoved:          "metatypes-removed",
	KindBuiltinTupleType:               "Builtin.TheTupleType",
	KindUnknownIndex:                   "unknown index",
	KindBackDeploymentFallback:         "back deployment fallback for ",
	KindDynamicSelf:                    "Self",
	KindConstrainedExistentialSelf:     "Self",
	KindImplEscaping:                   "@escaping",
	KindImplErasedIsolation:            "@isolated(any)",
	KindImplTransferringResult:         "transferring",
	KindErrorType:                      "<ERROR TYPE>",
	KindConcurrentFunctionType:         "@Sendable ",
	KindIsolatedAnyFunctionType:        "@isolated(any) ",
	KindNonIsolatedCallerFunctionType:  "nonisolated(nonsending) ",
	KindTransferringResultFunctionType: "transferring ",
	KindAsyncAnnotation:                " async",
	KindThrowsAnnotation:               " throws",
	KindEmptyList:                      " empty-list ",
	KindFirstElementMarker:             " first-element-marker ",
	KindVariadicMarker:                 " variadic-marker ",
	KindOpaqueReturnType:               "some",
	KindAsyncFunctionPointer:           "async function pointer to ",
	KindHasSymbolQuery:                 "#_hasSymbol query for ",
}

var textKinds = map[Kind]bool{
	KindIdentifier: true, KindClangType: true, KindBuiltinTypeName: true,
	KindMetatypeRepresentation: true, KindImplConvention: true, KindImplFunctionAttribute: true,
}

// How print handles a kind that one of the tables above describes.
const (
	printBySwitch      = iota // none: print's switch handles the kind
	printSimpleChild          // simpleChildPrefixes
	printAbstractStore        // abstractStorageNames
	printThunkPrefix          // thunkPrefixes
	printPlainText            // plainTexts
	printNodeText             // textKinds
)

// printByKind merges the tables above, indexed by kind, so that the
// printer's hot path looks a kind up once.
var printByKind [kindCount]struct {
	how  uint8
	text string
}

func init() {
	// Filled in reverse order of precedence: a kind in two tables is
	// printed as the earlier table says.
	for k := range textKinds {
		printByKind[k].how = printNodeText
	}
	for k, s := range plainTexts {
		printByKind[k].how, printByKind[k].text = printPlainText, s
	}
	for k, s := range thunkPrefixes {
		printByKind[k].how, printByKind[k].text = printThunkPrefix, s
	}
	for k, s := range abstractStorageNames {
		printByKind[k].how, printByKind[k].text = printAbstractStore, s
	}
	for k, s := range simpleChildPrefixes {
		printByKind[k].how, printByKind[k].text = printSimpleChild, s
	}
}

func (p *printer) print(n *Node, depth int, asPrefixContext bool) *Node {
	p.calls++
	if depth > printerMaxDepth || len(p.buf) > p.limit || p.calls > maxPrintCalls {
		p.invalid = true
		return nil
	}
	if n == nil {
		p.invalid = true
		return nil
	}
	k := n.Kind
	if k >= kindCount {
		p.invalid = true
		return nil
	}
	switch e := &printByKind[k]; e.how {
	case printSimpleChild:
		p.w(e.text)
		p.print(n.firstChild(), depth+1, false)
		return nil
	case printAbstractStore:
		return p.printAbstractStorage(n.firstChild(), depth, asPrefixContext, e.text)
	case printThunkPrefix:
		if !p.opts.shortenThunk {
			p.w(e.text)
		}
		return nil
	case printPlainText:
		p.w(e.text)
		return nil
	case printNodeText:
		p.w(n.Text)
		return nil
	}
	switch k {
	case KindStatic:
		p.w("static ")
		p.print(n.firstChild(), depth+1, false)
	case KindOutlinedBridgedMethod:
		p.w("outlined bridged method (")
		p.w(n.Text)
		p.w(") of ")
	case KindOutlinedCopy, KindOutlinedConsume:
		if k == KindOutlinedCopy {
			p.w("outlined copy of ")
		} else {
			p.w("outlined consume of ")
		}
		p.print(n.firstChild(), depth+1, false)
		if n.numChildren() > 1 {
			p.print(n.child(1), depth+1, false)
		}
	case KindOutlinedVariable:
		p.w("outlined variable #")
		p.wu(n.Index)
		p.w(" of ")
	case KindOutlinedReadOnlyObject:
		p.w("outlined read-only object #")
		p.wu(n.Index)
		p.w(" of ")
	case KindDirectness:
		if n.Index == 0 {
			p.w("direct ")
		} else {
			p.w("indirect ")
		}
	case KindAnonymousContext:
		if p.opts.qualifyEntities && p.opts.displayExtensionContexts {
			p.print(n.child(1), depth+1, false)
			p.w(".(unknown context at ")
			p.print(n.firstChild(), depth+1, false)
			p.wb(')')
			if n.numChildren() >= 3 && n.child(2).numChildren() > 0 {
				p.wb('<')
				p.print(n.child(2), depth+1, false)
				p.wb('>')
			}
		}
	case KindExtension:
		if p.opts.qualifyEntities && p.opts.displayExtensionContexts {
			p.w("(extension in ")
			p.print(n.firstChild(), depth+1, true)
			p.w("):")
		}
		p.print(n.child(1), depth+1, false)
		if n.numChildren() == 3 {
			p.print(n.child(2), depth+1, false)
		}
	case KindVariable:
		return p.printEntity(n, depth, asPrefixContext, withColon, true, "", -1, "")
	case KindFunction, KindBoundGenericFunction:
		return p.printEntity(n, depth, asPrefixContext, functionStyle, true, "", -1, "")
	case KindSubscript:
		return p.printEntity(n, depth, asPrefixContext, functionStyle, false, "", -1, "subscript")
	case KindMacro:
		tp := functionStyle
		if n.numChildren() == 3 {
			tp = withColon
		}
		return p.printEntity(n, depth, asPrefixContext, tp, true, "", -1, "")
	case KindAccessorAttachedMacroExpansion, KindMemberAttributeAttachedMacroExpansion,
		KindMemberAttachedMacroExpansion, KindPeerAttachedMacroExpansion,
		KindConformanceAttachedMacroExpansion, KindExtensionAttachedMacroExpansion,
		KindPreambleAttachedMacroExpansion, KindBodyAttachedMacroExpansion:
		role := map[Kind]string{
			KindAccessorAttachedMacroExpansion:        "accessor",
			KindMemberAttributeAttachedMacroExpansion: "member attribute",
			KindMemberAttachedMacroExpansion:          "member",
			KindPeerAttachedMacroExpansion:            "peer",
			KindConformanceAttachedMacroExpansion:     "conformance",
			KindExtensionAttachedMacroExpansion:       "extension",
			KindPreambleAttachedMacroExpansion:        "preamble",
			KindBodyAttachedMacroExpansion:            "body",
		}[k]
		q := printer{opts: p.opts, limit: p.limit, nested: p.nested, calls: p.calls}
		q.print(n.child(2), depth+1, false)
		p.calls = q.calls
		return p.printEntity(n, depth, asPrefixContext, noType, true,
			role+" macro @"+string(q.buf)+" expansion #", int(n.child(3).Index)+1, "")
	case KindFreestandingMacroExpansion:
		return p.printEntity(n, depth, asPrefixContext, noType, true, "freestanding macro expansion #", int(n.child(2).Index)+1, "")
	case KindMacroExpansionUniqueName:
		return p.printEntity(n, depth, asPrefixContext, noType, true, "unique name #", int(n.child(2).Index)+1, "")
	case KindGenericTypeParamDecl:
		return p.printEntity(n, depth, asPrefixContext, noType, true, "", -1, "")
	case KindExplicitClosure, KindImplicitClosure:
		tp := noType
		if p.opts.showFunctionArgumentTypes {
			tp = functionStyle
		}
		name := "closure #"
		if k == KindImplicitClosure {
			name = "implicit closure #"
		}
		return p.printEntity(n, depth, asPrefixContext, tp, false, name, int(n.child(1).Index)+1, "")
	case KindGlobal:
		p.printChildren(n, depth, "")
	case KindSuffix:
		if p.opts.displayUnmangledSuffix {
			p.w(" with unmangled suffix ")
			p.w(quoted(n.Text))
		}
	case KindInitializer:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "variable initialization expression", -1, "")
	case KindPropertyWrapperBackingInitializer:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "property wrapper backing initializer", -1, "")
	case KindPropertyWrapperInitFromProjectedValue:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "property wrapper init from projected value", -1, "")
	case KindDefaultArgumentInitializer:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "default argument ", int(n.child(1).Index), "")
	case KindDeclContext, KindType:
		p.print(n.firstChild(), depth+1, false)
	case KindTypeMangling:
		if n.firstChild().kind() == KindLabelList {
			p.printFunctionType(n.firstChild(), n.child(1).firstChild(), depth)
		} else {
			p.print(n.firstChild(), depth+1, false)
		}
	case KindClass, KindStructure, KindEnum, KindProtocol, KindTypeAlias, KindOtherNominalType:
		return p.printEntity(n, depth, asPrefixContext, noType, true, "", -1, "")
	case KindLocalDeclName:
		p.print(n.child(1), depth+1, false)
		if p.opts.displayLocalNameContexts {
			p.w(" #")
			p.wu(n.firstChild().Index + 1)
		}
	case KindPrivateDeclName:
		if n.numChildren() > 1 {
			if p.opts.showPrivateDiscriminators {
				p.wb('(')
			}
			p.print(n.child(1), depth+1, false)
			if p.opts.showPrivateDiscriminators {
				p.w(" in ")
				p.w(n.firstChild().text())
				p.wb(')')
			}
		} else if p.opts.showPrivateDiscriminators {
			p.w("(in ")
			p.w(n.firstChild().text())
			p.wb(')')
		}
	case KindRelatedEntityDeclName:
		p.w("related decl '")
		p.w(n.firstChild().text())
		p.w("' for ")
		p.print(n.child(1), depth+1, false)
	case KindModule:
		if p.opts.displayModuleNames {
			p.w(n.Text)
		}
	case KindIndex, KindNumber, KindSpecializationPassID:
		p.wu(n.Index)
	case KindFunctionType, KindUncurriedFunctionType, KindNoEscapeFunctionType, KindAutoClosureType,
		KindEscapingAutoClosureType, KindThinFunctionType, KindCFunctionPointer, KindObjCBlock,
		KindEscapingObjCBlock:
		p.printFunctionType(nil, n, depth)
	case KindArgumentTuple:
		p.printFunctionParameters(nil, n, depth, p.opts.showFunctionArgumentTypes)
	case KindTuple:
		p.wb('(')
		p.printChildren(n, depth, ", ")
		p.wb(')')
	case KindTupleElement:
		if l := childOfKind(n, KindTupleElementName); l != nil {
			p.w(l.Text)
			p.w(": ")
		}
		ty := childOfKind(n, KindType)
		if ty == nil {
			p.invalid = true
			return nil
		}
		p.print(ty, depth+1, false)
		if childOfKind(n, KindVariadicMarker) != nil {
			p.w("...")
		}
	case KindTupleElementName:
		p.w(n.Text)
		p.w(": ")
	case KindPack:
		p.w("Pack{")
		p.printChildren(n, depth, ", ")
		p.wb('}')
	case KindSILPackDirect, KindSILPackIndirect:
		if k == KindSILPackDirect {
			p.w("@direct")
		} else {
			p.w("@indirect")
		}
		p.w(" Pack{")
		p.printChildren(n, depth, ", ")
		p.wb('}')
	case KindPackElement:
		p.w("/* level: ")
		p.wu(n.child(1).Index)
		p.w(" */ each ")
		p.print(n.firstChild(), depth+1, false)
	case KindReturnType:
		if n.numChildren() == 0 {
			p.w(n.Text)
		} else {
			p.printChildren(n, depth, "")
		}
	case KindRetroactiveConformance:
		if n.numChildren() == 2 {
			p.w("retroactive @ ")
			p.print(n.firstChild(), depth+1, false)
			p.print(n.child(1), depth+1, false)
		}
	case KindParamLifetimeDependence:
		p.w("lifetime dependence: ")
		if n.firstChild().Index == lifetimeInherit {
			p.w("inherit ")
		} else {
			p.w("scope ")
		}
		p.print(n.child(1), depth+1, false)
	case KindSelfLifetimeDependence:
		p.w("(self lifetime dependence: ")
		if n.Index == lifetimeInherit {
			p.w("inherit) ")
		} else {
			p.w("scope) ")
		}
	case KindFunctionSignatureSpecialization:
		p.printSpecializationPrefix(n, "function signature specialization", depth, "")
	case KindGenericPartialSpecialization:
		p.printSpecializationPrefix(n, "generic partial specialization", depth, "Signature = ")
	case KindGenericPartialSpecializationNotReAbstracted:
		p.printSpecializationPrefix(n, "generic not-reabstracted partial specialization", depth, "Signature = ")
	case KindGenericSpecialization, KindGenericSpecializationInResilienceDomain:
		p.printSpecializationPrefix(n, "generic specialization", depth, "")
	case KindGenericSpecializationPrespecialized:
		p.printSpecializationPrefix(n, "generic pre-specialization", depth, "")
	case KindGenericSpecializationNotReAbstracted:
		p.printSpecializationPrefix(n, "generic not re-abstracted specialization", depth, "")
	case KindInlinedGenericFunction:
		p.printSpecializationPrefix(n, "inlined generic function", depth, "")
	case KindGenericSpecializationParam:
		p.print(n.firstChild(), depth+1, false)
		for i := 1; i < n.numChildren(); i++ {
			if i == 1 {
				p.w(" with ")
			} else {
				p.w(" and ")
			}
			p.print(n.Children[i], depth+1, false)
		}
	case KindFunctionSignatureSpecializationParamPayload:
		if s := p.demangleNested(n.Text); s != "" {
			p.w(s)
		} else {
			p.w(n.Text)
		}
	case KindFunctionSignatureSpecializationParamKind:
		p.printParamKind(n.Index)
	case KindInfixOperator:
		p.w(n.Text)
		p.w(" infix")
	case KindPrefixOperator:
		p.w(n.Text)
		p.w(" prefix")
	case KindPostfixOperator:
		p.w(n.Text)
		p.w(" postfix")
	case KindLazyProtocolWitnessTableAccessor, KindLazyProtocolWitnessTableCacheVariable:
		if k == KindLazyProtocolWitnessTableAccessor {
			p.w("lazy protocol witness table accessor for type ")
		} else {
			p.w("lazy protocol witness table cache variable for type ")
		}
		p.print(n.firstChild(), depth+1, false)
		p.w(" and conformance ")
		p.print(n.child(1), depth+1, false)
	case KindVTableThunk:
		p.w("vtable thunk for ")
		p.print(n.child(1), depth+1, false)
		p.w(" dispatching to ")
		p.print(n.firstChild(), depth+1, false)
	case KindProtocolWitness:
		p.w("protocol witness for ")
		p.print(n.child(1), depth+1, false)
		p.w(" in conformance ")
		p.print(n.firstChild(), depth+1, false)
	case KindPartialApplyForwarder, KindPartialApplyObjCForwarder:
		switch {
		case p.opts.shortenPartialApply:
			p.w("partial apply")
		case k == KindPartialApplyForwarder:
			p.w("partial apply forwarder")
		default:
			p.w("partial apply ObjC forwarder")
		}
		if n.numChildren() > 0 {
			p.w(" for ")
			p.printChildren(n, depth, "")
		}
	case KindKeyPathGetterThunkHelper, KindKeyPathSetterThunkHelper:
		if k == KindKeyPathGetterThunkHelper {
			p.w("key path getter for ")
		} else {
			p.w("key path setter for ")
		}
		p.print(n.firstChild(), depth+1, false)
		p.w(" : ")
		for _, c := range n.Children[1:] {
			if c.Kind == KindIsSerialized {
				p.w(", ")
			}
			p.print(c, depth+1, false)
		}
	case KindKeyPathEqualsThunkHelper, KindKeyPathHashThunkHelper:
		p.w("key path index ")
		if k == KindKeyPathEqualsThunkHelper {
			p.w("equality")
		} else {
			p.w("hash")
		}
		p.w(" operator for ")
		last := n.numChildren()
		lastChild := n.child(last - 1)
		if lastChild.kind() == KindIsSerialized {
			last--
			lastChild = n.child(last - 1)
		}
		if lastChild.kind() == KindDependentGenericSignature {
			p.print(lastChild, depth+1, false)
			last--
		}
		p.wb('(')
		for i := 0; i < last; i++ {
			if i != 0 {
				p.w(", ")
			}
			p.print(n.child(i), depth+1, false)
		}
		p.wb(')')
	case KindFieldOffset:
		p.print(n.firstChild(), depth+1, false)
		p.w("field offset for ")
		p.print(n.child(1), depth+1, false)
	case KindEnumCase:
		p.w("enum case for ")
		p.print(n.firstChild(), depth+1, false)
	case KindReabstractionThunk, KindReabstractionThunkHelper:
		if p.opts.shortenThunk {
			p.w("thunk for ")
			p.print(n.lastChild(), depth+1, false)
			return nil
		}
		p.w("reabstraction thunk ")
		if k == KindReabstractionThunkHelper {
			p.w("helper ")
		}
		idx := 0
		if n.numChildren() == 3 {
			idx = 1
			p.print(n.firstChild(), depth+1, false)
			p.wb(' ')
		}
		p.w("from ")
		p.print(n.child(idx+1), depth+1, false)
		p.w(" to ")
		p.print(n.child(idx), depth+1, false)
	case KindReabstractionThunkHelperWithGlobalActor:
		p.print(n.firstChild(), depth+1, false)
		p.w(" with global actor constraint ")
		p.print(n.child(1), depth+1, false)
	case KindReabstractionThunkHelperWithSelf:
		p.w("reabstraction thunk ")
		idx := 0
		if n.numChildren() == 4 {
			idx = 1
			p.print(n.firstChild(), depth+1, false)
			p.wb(' ')
		}
		p.w("from ")
		p.print(n.child(idx+2), depth+1, false)
		p.w(" to ")
		p.print(n.child(idx+1), depth+1, false)
		p.w(" self ")
		p.print(n.child(idx), depth+1, false)
	case KindAutoDiffFunction, KindAutoDiffDerivativeVTableThunk:
		end := 0
		for end < n.numChildren() && n.Children[end].Kind != KindAutoDiffFunctionKind {
			end++
		}
		if end+2 >= n.numChildren() {
			p.invalid = true
			return nil
		}
		if k == KindAutoDiffDerivativeVTableThunk {
			p.w("vtable thunk for ")
		}
		p.print(n.child(end), depth+1, false)
		p.w(" of ")
		var sig *Node
		for i := 0; i < end; i++ {
			if i == end-1 && n.Children[i].Kind == KindDependentGenericSignature {
				sig = n.Children[i]
				break
			}
			p.print(n.Children[i], depth+1, false)
		}
		if p.opts.shortenThunk {
			return nil
		}
		p.w(" with respect to parameters ")
		p.print(n.child(end+1), depth+1, false)
		p.w(" and results ")
		p.print(n.child(end+2), depth+1, false)
		if sig != nil && p.opts.displayWhereClauses {
			p.w(" with ")
			p.print(sig, depth+1, false)
		}
	case KindAutoDiffSelfReorderingReabstractionThunk:
		if n.numChildren() < 3 {
			p.invalid = true
			return nil
		}
		p.w("autodiff self-reordering reabstraction thunk ")
		from, to := n.Children[0], n.Children[1]
		if p.opts.shortenThunk {
			p.w("for ")
			p.print(from, depth+1, false)
			return nil
		}
		i := 2
		var sig *Node
		if n.Children[i].Kind == KindDependentGenericSignature {
			sig = n.Children[i]
			i++
		}
		p.w("for ")
		p.print(n.child(i), depth+1, false)
		if sig != nil {
			p.print(sig, depth+1, false)
			p.wb(' ')
		}
		p.w(" from ")
		p.print(from, depth+1, false)
		p.w(" to ")
		p.print(to, depth+1, false)
	case KindAutoDiffSubsetParametersThunk:
		cur := n.numChildren() - 1
		if cur < 4 {
			p.invalid = true
			return nil
		}
		p.w("autodiff subset parameters thunk for ")
		toParams := n.Children[cur]
		results := n.Children[cur-1]
		params := n.Children[cur-2]
		kind := n.Children[cur-3]
		cur -= 4
		p.print(kind, depth+1, false)
		p.w(" from ")
		if cur == 0 {
			p.print(n.firstChild(), depth+1, false)
		} else {
			for i := 0; i < cur; i++ {
				p.print(n.Children[i], depth+1, false)
			}
		}
		if p.opts.shortenThunk {
			return nil
		}
		p.w(" with respect to parameters ")
		p.print(params, depth+1, false)
		p.w(" and results ")
		p.print(results, depth+1, false)
		p.w(" to parameters ")
		p.print(toParams, depth+1, false)
		if cur > 0 {
			p.w(" of type ")
			p.print(n.Children[cur], depth+1, false)
		}
	case KindAutoDiffFunctionKind:
		switch n.Index {
		case 'f':
			p.w("forward-mode derivative")
		case 'r':
			p.w("reverse-mode derivative")
		case 'd':
			p.w("differential")
		case 'p':
			p.w("pullback")
		}
	case KindDifferentiabilityWitness:
		back := 3
		if n.lastChild().kind() == KindDependentGenericSignature {
			back = 4
		}
		ki := n.numChildren() - back
		if ki < 0 {
			p.invalid = true
			return nil
		}
		switch n.Children[ki].Index {
		case 'f':
			p.w("forward-mode")
		case 'r':
			p.w("reverse-mode")
		case 'd':
			p.w("normal")
		case 'l':
			p.w("linear")
		}
		p.w(" differentiability witness for ")
		idx := 0
		for idx < n.numChildren() && n.Children[idx].Kind != KindIndex {
			p.print(n.Children[idx], depth+1, false)
			idx++
		}
		idx++
		p.w(" with respect to parameters ")
		p.print(n.child(idx), depth+1, false)
		p.w(" and results ")
		p.print(n.child(idx+1), depth+1, false)
		if idx+2 < n.numChildren() {
			p.w(" with ")
			p.print(n.child(idx+2), depth+1, false)
		}
	case KindIndexSubset:
		p.wb('{')
		any := false
		for i := 0; i < len(n.Text); i++ {
			if n.Text[i] != 'S' {
				continue
			}
			if any {
				p.w(", ")
			}
			p.wu(uint64(i))
			any = true
		}
		p.wb('}')
	case KindTypeSymbolicReference, KindOpaqueTypeDescriptorSymbolicReference, KindProtocolSymbolicReference,
		KindUniqueExtendedExistentialTypeShapeSymbolicReference,
		KindNonUniqueExtendedExistentialTypeShapeSymbolicReference, KindObjectiveCProtocolSymbolicReference:
		// Never built: symbolic references are refused while parsing.
		p.invalid = true
	case KindAssociatedConformanceDescriptor, KindDefaultAssociatedConformanceAccessor:
		if k == KindAssociatedConformanceDescriptor {
			p.w("associated conformance descriptor for ")
		} else {
			p.w("default associated conformance accessor for ")
		}
		p.print(n.firstChild(), depth+1, false)
		p.wb('.')
		p.print(n.child(1), depth+1, false)
		p.w(": ")
		p.print(n.child(2), depth+1, false)
	case KindAssociatedTypeMetadataAccessor:
		p.w("associated type metadata accessor for ")
		p.print(n.child(1), depth+1, false)
		p.w(" in ")
		p.print(n.firstChild(), depth+1, false)
	case KindBaseConformanceDescriptor:
		p.w("base conformance descriptor for ")
		p.print(n.firstChild(), depth+1, false)
		p.w(": ")
		p.print(n.child(1), depth+1, false)
	case KindAssociatedTypeWitnessTableAccessor:
		p.w("associated type witness table accessor for ")
		p.print(n.child(1), depth+1, false)
		p.w(" : ")
		p.print(n.child(2), depth+1, false)
		p.w(" in ")
		p.print(n.firstChild(), depth+1, false)
	case KindBaseWitnessTableAccessor:
		p.w("base witness table accessor for ")
		p.print(n.child(1), depth+1, false)
		p.w(" in ")
		p.print(n.firstChild(), depth+1, false)
	case KindValueWitness:
		i := n.firstChild().Index
		if i >= uint64(len(valueWitnessNames)) {
			p.invalid = true
			return nil
		}
		p.w(valueWitnessNames[i])
		if p.opts.shortenValueWitness {
			p.w(" for ")
		} else {
			p.w(" value witness for ")
		}
		p.print(n.child(1), depth+1, false)
	case KindBoundGenericClass, KindBoundGenericStructure, KindBoundGenericEnum, KindBoundGenericProtocol,
		KindBoundGenericOtherNominalType, KindBoundGenericTypeAlias:
		p.printBoundGeneric(n, depth)
	case KindSILBoxType:
		p.w("@box ")
		p.print(n.firstChild(), depth+1, false)
	case KindMetatype:
		idx := 0
		if n.numChildren() == 2 {
			p.print(n.firstChild(), depth+1, false)
			p.wb(' ')
			idx++
		}
		ty := n.child(idx).firstChild()
		p.printWithParens(ty, depth)
		if isExistentialType(ty) {
			p.w(".Protocol")
		} else {
			p.w(".Type")
		}
	case KindConstrainedExistential:
		p.w("any ")
		p.print(n.firstChild(), depth+1, false)
		p.wb('<')
		p.print(n.child(1), depth+1, false)
		p.wb('>')
	case KindConstrainedExistentialRequirementList:
		p.printChildren(n, depth, ", ")
	case KindExistentialMetatype:
		idx := 0
		if n.numChildren() == 2 {
			p.print(n.firstChild(), depth+1, false)
			p.wb(' ')
			idx++
		}
		p.print(n.child(idx), depth+1, false)
		p.w(".Type")
	case KindAssociatedTypeRef:
		p.print(n.firstChild(), depth+1, false)
		p.wb('.')
		p.w(n.child(1).text())
	case KindProtocolList:
		list := n.firstChild()
		if list == nil {
			return nil
		}
		if list.numChildren() == 0 {
			p.w("Any")
		} else {
			p.printChildren(list, depth, " & ")
		}
	case KindProtocolListWithClass:
		if n.numChildren() < 2 {
			return nil
		}
		p.print(n.child(1), depth+1, false)
		p.w(" & ")
		if n.firstChild().numChildren() < 1 {
			return nil
		}
		p.printChildren(n.firstChild().firstChild(), depth, " & ")
	case KindProtocolListWithAnyObject:
		if n.numChildren() < 1 || n.firstChild().numChildren() < 1 {
			return nil
		}
		list := n.firstChild().firstChild()
		if list.numChildren() > 0 {
			p.printChildren(list, depth, " & ")
			p.w(" & ")
		}
		if p.opts.qualifyEntities && p.opts.displayStdlibModule {
			p.w("Swift.")
		}
		p.w("AnyObject")
	case KindAssociatedType, KindOpaqueReturnTypeIndex, KindOpaqueReturnTypeParent, KindLabelList,
		KindDroppedArgument:
	case KindAllocator:
		name := "init"
		if n.firstChild().kind() == KindClass {
			name = "__allocating_init"
		}
		return p.printEntity(n, depth, asPrefixContext, functionStyle, false, name, -1, "")
	case KindConstructor:
		return p.printEntity(n, depth, asPrefixContext, functionStyle, n.numChildren() > 2, "init", -1, "")
	case KindDestructor:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "deinit", -1, "")
	case KindDeallocator:
		name := "deinit"
		if n.firstChild().kind() == KindClass {
			name = "__deallocating_deinit"
		}
		return p.printEntity(n, depth, asPrefixContext, noType, false, name, -1, "")
	case KindIVarInitializer:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "__ivar_initializer", -1, "")
	case KindIVarDestroyer:
		return p.printEntity(n, depth, asPrefixContext, noType, false, "__ivar_destroyer", -1, "")
	case KindProtocolConformance:
		if n.numChildren() == 4 {
			p.w("property behavior storage of ")
			p.print(n.child(2), depth+1, false)
			p.w(" in ")
			p.print(n.firstChild(), depth+1, false)
			p.w(" : ")
			p.print(n.child(1), depth+1, false)
		} else {
			p.print(n.firstChild(), depth+1, false)
			if p.opts.displayProtocolConformances {
				p.w(" : ")
				p.print(n.child(1), depth+1, false)
				p.w(" in ")
				p.print(n.child(2), depth+1, false)
			}
		}
	case KindTypeList:
		p.printChildren(n, depth, "")
	case KindImplDifferentiabilityKind:
		p.w("@differentiable")
		switch n.Index {
		case 'l':
			p.w("(_linear)")
		case 'f':
			p.w("(_forward)")
		case 'r':
			p.w("(reverse)")
		}
	case KindImplParameterResultDifferentiability, KindImplParameterTransferring:
		if n.Text != "" {
			p.w(n.Text)
			p.wb(' ')
		}
	case KindImplFunctionConvention:
		p.w("@convention(")
		p.w(n.firstChild().text())
		if n.numChildren() == 2 {
			p.w(", mangledCType: \"")
			p.print(n.child(1), depth+1, false)
			p.wb('"')
		}
		p.wb(')')
	case KindImplErrorResult:
		p.w("@error ")
		p.printChildren(n, depth, " ")
	case KindImplYield:
		p.w("@yields ")
		p.printChildren(n, depth, " ")
	case KindImplParameter, KindImplResult:
		p.print(n.firstChild(), depth+1, false)
		p.wb(' ')
		switch n.numChildren() {
		case 3:
			p.print(n.child(1), depth+1, false)
		case 4:
			p.print(n.child(1), depth+1, false)
			p.print(n.child(2), depth+1, false)
		}
		p.print(n.lastChild(), depth+1, false)
	case KindImplFunctionType:
		p.printImplFunctionType(n, depth)
	case KindImplInvocationSubstitutions:
		p.w("for <")
		p.printChildren(n.firstChild(), depth, ", ")
		p.wb('>')
	case KindImplPatternSubstitutions:
		p.w("@substituted ")
		p.print(n.firstChild(), depth+1, false)
		p.w(" for <")
		p.printChildren(n.child(1), depth, ", ")
		p.wb('>')
	case KindDependentPseudogenericSignature, KindDependentGenericSignature:
		p.printGenericSignature(n, depth)
	case KindDependentGenericConformanceRequirement:
		p.print(n.firstChild(), depth+1, false)
		p.w(": ")
		p.print(n.child(1), depth+1, false)
	case KindDependentGenericInverseConformanceRequirement:
		p.print(n.firstChild(), depth+1, false)
		p.w(": ~")
		switch n.child(1).Index {
		case 0:
			p.w("Swift.Copyable")
		case 1:
			p.w("Swift.Escapable")
		default:
			p.w("Swift.<bit ")
			p.wu(n.child(1).Index)
			p.wb('>')
		}
	case KindInverse:
		p.w("~")
		p.print(n.firstChild(), depth+1, false)
	case KindDependentGenericLayoutRequirement:
		p.print(n.firstChild(), depth+1, false)
		p.w(": ")
		var name string
		switch n.child(1).text() {
		case "U":
			name = "_UnknownLayout"
		case "R":
			name = "_RefCountedObject"
		case "N":
			name = "_NativeRefCountedObject"
		case "C":
			name = "AnyObject"
		case "D":
			name = "_NativeClass"
		case "T", "E", "e":
			name = "_Trivial"
		case "M", "m":
			name = "_TrivialAtMost"
		case "B":
			name = "_BridgeObject"
		case "S":
			name = "_TrivialStride"
		}
		p.w(name)
		if n.numChildren() > 2 {
			p.wb('(')
			p.print(n.child(2), depth+1, false)
			if n.numChildren() > 3 {
				p.w(", ")
				p.print(n.child(3), depth+1, false)
			}
			p.wb(')')
		}
	case KindDependentGenericSameTypeRequirement:
		p.print(n.firstChild(), depth+1, false)
		p.w(" == ")
		p.print(n.child(1), depth+1, false)
	case KindDependentGenericSameShapeRequirement:
		p.print(n.firstChild(), depth+1, false)
		p.w(".shape == ")
		p.print(n.child(1), depth+1, false)
		p.w(".shape")
	case KindDependentGenericParamType:
		p.w(genericParameterName(n.firstChild().Index, n.child(1).Index))
	case KindDependentGenericType:
		p.print(n.firstChild(), depth+1, false)
		if needSpaceBeforeType(n.child(1)) {
			p.wb(' ')
		}
		p.print(n.child(1), depth+1, false)
	case KindDependentMemberType:
		p.print(n.firstChild(), depth+1, false)
		p.wb('.')
		p.print(n.child(1), depth+1, false)
	case KindDependentAssociatedTypeRef:
		if n.numChildren() > 1 {
			p.print(n.child(1), depth+1, false)
			p.wb('.')
		}
		p.print(n.firstChild(), depth+1, false)
	case KindDifferentiableFunctionType:
		p.w("@differentiable")
		switch n.Index {
		case 'f':
			p.w("(_forward)")
		case 'r':
			p.w("(reverse)")
		case 'l':
			p.w("(_linear)")
		}
		p.wb(' ')
	case KindGlobalActorFunctionType:
		if n.numChildren() > 0 {
			p.wb('@')
			p.print(n.firstChild(), depth+1, false)
			p.wb(' ')
		}
	case KindTypedThrowsAnnotation:
		p.w(" throws(")
		if n.numChildren() == 1 {
			p.print(n.firstChild(), depth+1, false)
		}
		p.wb(')')
	case KindSILBoxTypeWithLayout:
		layout := n.firstChild()
		var args *Node
		if n.numChildren() == 3 {
			p.print(n.child(1), depth+1, false)
			p.wb(' ')
			args = n.child(2)
		}
		p.print(layout, depth+1, false)
		if args != nil {
			p.w(" <")
			p.printChildren(args, depth, ", ")
			p.wb('>')
		}
	case KindSILBoxLayout:
		p.wb('{')
		for i, c := range n.Children {
			if i > 0 {
				p.wb(',')
			}
			p.wb(' ')
			p.print(c, depth+1, false)
		}
		p.w(" }")
	case KindSILBoxImmutableField, KindSILBoxMutableField:
		if k == KindSILBoxImmutableField {
			p.w("let ")
		} else {
			p.w("var ")
		}
		p.print(n.firstChild(), depth+1, false)
	case KindAssocTypePath:
		p.printChildren(n, depth, ".")
	case KindAssociatedTypeGenericParamRef:
		p.w("generic parameter reference for associated type ")
		p.printChildren(n, depth, "")
	case KindAnyProtocolConformanceList:
		p.printChildren(n, depth, "")
	case KindConcreteProtocolConformance:
		p.w("concrete protocol conformance ")
		if n.HasIndex() {
			p.wb('#')
			p.wu(n.Index)
			p.wb(' ')
		}
		p.printChildren(n, depth, "")
	case KindDependentAssociatedConformance:
		p.w("dependent associated conformance ")
		p.printChildren(n, depth, "")
	case KindDependentProtocolConformanceAssociated, KindDependentProtocolConformanceInherited,
		KindDependentProtocolConformanceRoot:
		switch k {
		case KindDependentProtocolConformanceAssociated:
			p.w("dependent associated protocol conformance ")
		case KindDependentProtocolConformanceInherited:
			p.w("dependent inherited protocol conformance ")
		default:
			p.w("dependent root protocol conformance ")
		}
		if idx := n.child(2); idx.HasIndex() {
			p.wb('#')
			p.wu(idx.Index)
			p.wb(' ')
		}
		p.print(n.firstChild(), depth+1, false)
		p.print(n.child(1), depth+1, false)
	case KindProtocolConformanceRefInTypeModule:
		p.w("protocol conformance ref (type's module) ")
		p.printChildren(n, depth, "")
	case KindProtocolConformanceRefInProtocolModule:
		p.w("protocol conformance ref (protocol's module) ")
		p.printChildren(n, depth, "")
	case KindProtocolConformanceRefInOtherModule:
		p.w("protocol conformance ref (retroactive) ")
		p.printChildren(n, depth, "")
	case KindSugaredOptional:
		p.printWithParens(n.firstChild(), depth)
		p.wb('?')
	case KindSugaredArray:
		p.wb('[')
		p.print(n.firstChild(), depth+1, false)
		p.wb(']')
	case KindSugaredDictionary:
		p.wb('[')
		p.print(n.firstChild(), depth+1, false)
		p.w(" : ")
		p.print(n.child(1), depth+1, false)
		p.wb(']')
	case KindSugaredParen:
		p.wb('(')
		p.print(n.firstChild(), depth+1, false)
		p.wb(')')
	case KindOpaqueReturnTypeOf:
		p.w("<<opaque return type of ")
		p.printChildren(n, depth, "")
		p.w(">>")
	case KindOpaqueType:
		p.print(n.firstChild(), depth+1, false)
		p.wb('.')
		p.print(n.child(1), depth+1, false)
	case KindAccessorFunctionReference:
		p.w("accessor function at ")
		p.wu(n.Index)
	case KindGlobalVariableOnceToken, KindGlobalVariableOnceFunction:
		if k == KindGlobalVariableOnceToken {
			p.w("one-time initialization token for ")
		} else {
			p.w("one-time initialization function for ")
		}
		p.printContext(n.firstChild())
		p.print(n.child(1), depth+1, false)
	case KindGlobalVariableOnceDeclList:
		if n.numChildren() == 1 {
			p.print(n.firstChild(), depth+1, false)
		} else {
			p.wb('(')
			p.printChildren(n, depth, ", ")
			p.wb(')')
		}
	case KindPredefinedObjCAsyncCompletionHandlerImpl, KindObjCAsyncCompletionHandlerImpl:
		if k == KindPredefinedObjCAsyncCompletionHandlerImpl {
			p.w("predefined ")
		}
		p.w("@objc completion handler block implementation for ")
		if n.numChildren() >= 4 {
			p.print(n.child(3), depth+1, false)
		}
		p.print(n.firstChild(), depth+1, false)
		p.w(" with result type ")
		p.print(n.child(1), depth+1, false)
		switch n.child(2).Index {
		case 0:
		case 1:
			p.w(" nonzero on error")
		case 2:
			p.w(" zero on error")
		default:
			p.w(" <invalid error flag>")
		}
	case KindAsyncAwaitResumePartialFunction, KindAsyncSuspendResumePartialFunction:
		if p.opts.showAsyncResumePartial {
			p.wb('(')
			p.print(n.firstChild(), depth+1, false)
			p.wb(')')
			if k == KindAsyncAwaitResumePartialFunction {
				p.w(" await resume partial function for ")
			} else {
				p.w(" suspend resume partial function for ")
			}
		}
	case KindExtendedExistentialTypeShape:
		saved := p.opts.displayWhereClauses
		p.opts.displayWhereClauses = true
		var sig, ty *Node
		if n.numChildren() == 2 {
			sig, ty = n.firstChild(), n.child(1)
		} else {
			ty = n.firstChild()
		}
		p.w("existential shape for ")
		if sig != nil {
			p.print(sig, depth+1, false)
			p.wb(' ')
		}
		p.w("any ")
		p.print(ty, depth+1, false)
		p.opts.displayWhereClauses = saved
	default:
		// A kind the printer has no form for (e.g. PackElementLevel on its
		// own): Swift's printer would abort; we refuse the tree.
		p.invalid = true
	}
	return nil
}

func (p *printer) printParamKind(raw uint64) {
	printed := false
	and := func(s string) {
		if printed {
			p.w(" and ")
		}
		printed = true
		p.w(s)
	}
	if raw&fsExistentialToGeneric != 0 {
		and("Existential To Protocol Constrained Generic")
	}
	if raw&fsDead != 0 {
		and("Dead")
	}
	if raw&fsOwnedToGuaranteed != 0 {
		and("Owned To Guaranteed")
	}
	if raw&fsGuaranteedToOwned != 0 {
		and("Guaranteed To Owned")
	}
	if raw&fsSROA != 0 {
		and("Exploded")
		return
	}
	if printed {
		return
	}
	switch raw {
	case fsBoxToValue:
		p.w("Value Promoted from Box")
	case fsBoxToStack:
		p.w("Stack Promoted from Box")
	case fsInOutToOut:
		p.w("InOut Converted to Out")
	case fsConstantPropFunction:
		p.w("Constant Propagated Function")
	case fsConstantPropGlobal:
		p.w("Constant Propagated Global")
	case fsConstantPropInteger:
		p.w("Constant Propagated Integer")
	case fsConstantPropFloat:
		p.w("Constant Propagated Float")
	case fsConstantPropString:
		p.w("Constant Propagated String")
	case fsConstantPropKeyPath:
		p.w("Constant Propagated KeyPath")
	case fsClosureProp:
		p.w("Closure Propagated")
	}
}

func (p *printer) printAbstractStorage(n *Node, depth int, asPrefixContext bool, extra string) *Node {
	switch n.kind() {
	case KindVariable:
		return p.printEntity(n, depth, asPrefixContext, withColon, true, extra, -1, "")
	case KindSubscript:
		return p.printEntity(n, depth, asPrefixContext, withColon, false, extra, -1, "subscript")
	}
	p.invalid = true
	return nil
}

func (p *printer) printEntity(entity *Node, depth int, asPrefixContext bool, tp typePrinting,
	hasName bool, extraName string, extraIndex int, overwriteName string) *Node {
	var genericArgs *Node
	if entity.Kind == KindBoundGenericFunction {
		genericArgs = entity.child(1)
		entity = entity.firstChild()
	}
	if entity.numChildren() == 0 || (hasName && entity.numChildren() < 2) {
		p.invalid = true
		return nil
	}
	multiWord := containsByte(extraName, ' ')
	localName := hasName && entity.child(1).Kind == KindLocalDeclName
	if localName && p.opts.displayLocalNameContexts {
		multiWord = true
	}
	if asPrefixContext && (tp != noType || multiWord) {
		return entity
	}
	var postfix *Node
	ctx := entity.firstChild()
	if p.printContext(ctx) {
		if multiWord {
			postfix = ctx
		} else {
			pos := len(p.buf)
			postfix = p.print(ctx, depth+1, true)
			if len(p.buf) != pos {
				p.wb('.')
			}
		}
	}
	if hasName || overwriteName != "" {
		if extraName != "" && multiWord {
			p.w(extraName)
			if extraIndex >= 0 {
				p.w(itoa(extraIndex))
			}
			p.w(" of ")
			extraName, extraIndex = "", -1
		}
		pos := len(p.buf)
		if overwriteName != "" {
			p.w(overwriteName)
		} else {
			if name := entity.child(1); name.Kind != KindPrivateDeclName {
				p.print(name, depth+1, false)
			}
			if private := childOfKind(entity, KindPrivateDeclName); private != nil {
				p.print(private, depth+1, false)
			}
		}
		if len(p.buf) != pos && extraName != "" {
			p.wb('.')
		}
	}
	if extraName != "" {
		p.w(extraName)
		if extraIndex >= 0 {
			p.w(itoa(extraIndex))
		}
	}
	if tp != noType {
		ty := childOfKind(entity, KindType)
		if ty == nil {
			p.invalid = true
			return nil
		}
		ty = ty.firstChild()
		if tp == functionStyle {
			t := ty
			for t.kind() == KindDependentGenericType {
				t = t.child(1).firstChild()
			}
			switch t.kind() {
			case KindFunctionType, KindNoEscapeFunctionType, KindUncurriedFunctionType,
				KindCFunctionPointer, KindThinFunctionType:
			default:
				tp = withColon
			}
		}
		if tp == withColon {
			if p.opts.displayEntityTypes {
				p.w(" : ")
				p.printEntityType(entity, ty, genericArgs, depth)
			}
		} else {
			if multiWord || needSpaceBeforeType(ty) {
				if !p.opts.hideFunctionArguments || ty.kind() == KindDependentGenericType || genericArgs != nil {
					p.wb(' ')
				}
			}
			p.printEntityType(entity, ty, genericArgs, depth)
		}
	}
	if !asPrefixContext && postfix != nil && (!localName || p.opts.displayLocalNameContexts) {
		switch entity.Kind {
		case KindDefaultArgumentInitializer, KindInitializer, KindPropertyWrapperBackingInitializer,
			KindPropertyWrapperInitFromProjectedValue:
			p.w(" of ")
		default:
			p.w(" in ")
		}
		p.print(postfix, depth+1, false)
		postfix = nil
	}
	return postfix
}

func (p *printer) printEntityType(entity, ty, genericArgs *Node, depth int) {
	labels := childOfKind(entity, KindLabelList)
	if labels == nil && genericArgs == nil {
		p.print(ty, depth+1, false)
		return
	}
	if genericArgs != nil {
		p.wb('<')
		p.printChildren(genericArgs, depth, ", ")
		p.wb('>')
	}
	if ty.kind() == KindDependentGenericType {
		if genericArgs == nil {
			p.print(ty.firstChild(), depth+1, false)
		}
		dep := ty.child(1)
		if needSpaceBeforeType(dep) {
			p.wb(' ')
		}
		ty = dep.firstChild()
	}
	p.printFunctionType(labels, ty, depth)
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }
