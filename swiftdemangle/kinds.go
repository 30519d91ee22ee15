// The node kinds of the demangling tree, one for each of Swift's
// lib/Demangling node kinds (include/swift/Demangling/DemangleNodes.def).

package swiftdemangle

// The node kinds, named as Swift's demangler names them.
const (
	KindUnknown Kind = iota
	KindAllocator
	KindAnonymousContext
	KindAnyProtocolConformanceList
	KindArgumentTuple
	KindAssociatedType
	KindAssociatedTypeRef
	KindAssociatedTypeMetadataAccessor
	KindDefaultAssociatedTypeMetadataAccessor
	KindAccessorAttachedMacroExpansion
	KindAssociatedTypeWitnessTableAccessor
	KindBaseWitnessTableAccessor
	KindAutoClosureType
	KindBodyAttachedMacroExpansion
	KindBoundGenericClass
	KindBoundGenericEnum
	KindBoundGenericStructure
	KindBoundGenericProtocol
	KindBoundGenericOtherNominalType
	KindBoundGenericTypeAlias
	KindBoundGenericFunction
	KindBuiltinTypeName
	KindBuiltinTupleType
	KindCFunctionPointer
	KindClangType
	KindClass
	KindClassMetadataBaseOffset
	KindConcreteProtocolConformance
	KindConformanceAttachedMacroExpansion
	KindConstructor
	KindCoroutineContinuationPrototype
	KindDeallocator
	KindDeclContext
	KindDefaultArgumentInitializer
	KindDependentAssociatedConformance
	KindDependentAssociatedTypeRef
	KindDependentGenericConformanceRequirement
	KindDependentGenericInverseConformanceRequirement
	KindDependentGenericParamCount
	KindDependentGenericParamType
	KindDependentGenericSameTypeRequirement
	KindDependentGenericSameShapeRequirement
	KindDependentGenericLayoutRequirement
	KindDependentGenericParamPackMarker
	KindDependentGenericSignature
	KindDependentGenericType
	KindDependentMemberType
	KindDependentPseudogenericSignature
	KindDependentProtocolConformanceRoot
	KindDependentProtocolConformanceInherited
	KindDependentProtocolConformanceAssociated
	KindDestructor
	KindDidSet
	KindDirectness
	KindDistributedThunk
	KindDistributedAccessor
	KindDroppedArgument
	KindDynamicAttribute
	KindDirectMethodReferenceAttribute
	KindDynamicSelf
	KindDynamicallyReplaceableFunctionImpl
	KindDynamicallyReplaceableFunctionKey
	KindDynamicallyReplaceableFunctionVar
	KindEnum
	KindEnumCase
	KindErrorType
	KindEscapingAutoClosureType
	KindNoEscapeFunctionType
	KindConcurrentFunctionType
	KindGlobalActorFunctionType
	KindDifferentiableFunctionType
	KindExistentialMetatype
	KindExplicitClosure
	KindExtension
	KindExtensionAttachedMacroExpansion
	KindFieldOffset
	KindFreestandingMacroExpansion
	KindFullTypeMetadata
	KindFunction
	KindFunctionSignatureSpecialization
	KindFunctionSignatureSpecializationParam
	KindFunctionSignatureSpecializationReturn
	KindFunctionSignatureSpecializationParamKind
	KindFunctionSignatureSpecializationParamPayload
	KindFunctionType
	KindConstrainedExistential
	KindConstrainedExistentialRequirementList
	KindConstrainedExistentialSelf
	KindGenericPartialSpecialization
	KindGenericPartialSpecializationNotReAbstracted
	KindGenericProtocolWitnessTable
	KindGenericProtocolWitnessTableInstantiationFunction
	KindResilientProtocolWitnessTable
	KindGenericSpecialization
	KindGenericSpecializationNotReAbstracted
	KindGenericSpecializationInResilienceDomain
	KindGenericSpecializationParam
	KindGenericSpecializationPrespecialized
	KindInlinedGenericFunction
	KindGenericTypeMetadataPattern
	KindGetter
	KindGlobal
	KindGlobalGetter
	KindIdentifier
	KindIndex
	KindIVarInitializer
	KindIVarDestroyer
	KindImplEscaping
	KindImplConvention
	KindImplDifferentiabilityKind
	KindImplErasedIsolation
	KindImplTransferringResult
	KindImplParameterResultDifferentiability
	KindImplParameterTransferring
	KindImplFunctionAttribute
	KindImplFunctionConvention
	KindImplFunctionConventionName
	KindImplFunctionType
	KindImplCoroutineKind
	KindImplInvocationSubstitutions
	KindImplicitClosure
	KindImplParameter
	KindImplPatternSubstitutions
	KindImplResult
	KindImplYield
	KindImplErrorResult
	KindInOut
	KindInfixOperator
	KindInitializer
	KindInitAccessor
	KindIsolated
	KindIsolatedAnyFunctionType
	KindNonIsolatedCallerFunctionType
	KindTransferring
	KindTransferringResultFunctionType
	KindKeyPathGetterThunkHelper
	KindKeyPathSetterThunkHelper
	KindKeyPathEqualsThunkHelper
	KindKeyPathHashThunkHelper
	KindLazyProtocolWitnessTableAccessor
	KindLazyProtocolWitnessTableCacheVariable
	KindLocalDeclName
	KindMacro
	KindMacroExpansionUniqueName
	KindMaterializeForSet
	KindMemberAttachedMacroExpansion
	KindMemberAttributeAttachedMacroExpansion
	KindMergedFunction
	KindMetatype
	KindMetatypeRepresentation
	KindMetaclass
	KindMethodLookupFunction
	KindObjCMetadataUpdateFunction
	KindObjCResilientClassStub
	KindFullObjCResilientClassStub
	KindModifyAccessor
	KindModule
	KindNativeOwningAddressor
	KindNativeOwningMutableAddressor
	KindNativePinningAddressor
	KindNativePinningMutableAddressor
	KindNominalTypeDescriptor
	KindNominalTypeDescriptorRecord
	KindNonObjCAttribute
	KindNumber
	KindObjCAsyncCompletionHandlerImpl
	KindPredefinedObjCAsyncCompletionHandlerImpl
	KindObjCAttribute
	KindObjCBlock
	KindEscapingObjCBlock
	KindOtherNominalType
	KindOwningAddressor
	KindOwningMutableAddressor
	KindPartialApplyForwarder
	KindPartialApplyObjCForwarder
	KindPeerAttachedMacroExpansion
	KindPostfixOperator
	KindPreambleAttachedMacroExpansion
	KindPrefixOperator
	KindPrivateDeclName
	KindPropertyDescriptor
	KindPropertyWrapperBackingInitializer
	KindPropertyWrapperInitFromProjectedValue
	KindProtocol
	KindProtocolSymbolicReference
	KindProtocolConformance
	KindProtocolConformanceRefInTypeModule
	KindProtocolConformanceRefInProtocolModule
	KindProtocolConformanceRefInOtherModule
	KindProtocolDescriptor
	KindProtocolDescriptorRecord
	KindProtocolConformanceDescriptor
	KindProtocolConformanceDescriptorRecord
	KindProtocolList
	KindProtocolListWithClass
	KindProtocolListWithAnyObject
	KindProtocolSelfConformanceDescriptor
	KindProtocolSelfConformanceWitness
	KindProtocolSelfConformanceWitnessTable
	KindProtocolWitness
	KindProtocolWitnessTable
	KindProtocolWitnessTableAccessor
	KindProtocolWitnessTablePattern
	KindReabstractionThunk
	KindReabstractionThunkHelper
	KindReabstractionThunkHelperWithSelf
	KindReabstractionThunkHelperWithGlobalActor
	KindReadAccessor
	KindRelatedEntityDeclName
	KindRetroactiveConformance
	KindReturnType
	KindShared
	KindOwned
	KindSILBoxType
	KindSILBoxTypeWithLayout
	KindSILBoxLayout
	KindSILBoxMutableField
	KindSILBoxImmutableField
	KindSetter
	KindSpecializationPassID
	KindIsSerialized
	KindStatic
	KindStructure
	KindSubscript
	KindSuffix
	KindThinFunctionType
	KindTuple
	KindTupleElement
	KindTupleElementName
	KindPack
	KindSILPackDirect
	KindSILPackIndirect
	KindPackExpansion
	KindPackElement
	KindPackElementLevel
	KindType
	KindTypeSymbolicReference
	KindTypeAlias
	KindTypeList
	KindTypeMangling
	KindTypeMetadata
	KindTypeMetadataAccessFunction
	KindTypeMetadataCompletionFunction
	KindTypeMetadataInstantiationCache
	KindTypeMetadataInstantiationFunction
	KindTypeMetadataSingletonInitializationCache
	KindTypeMetadataDemanglingCache
	KindTypeMetadataLazyCache
	KindUncurriedFunctionType
	KindUnknownIndex
	KindWeak
	KindUnowned
	KindUnmanaged
	KindUnsafeAddressor
	KindUnsafeMutableAddressor
	KindValueWitness
	KindValueWitnessTable
	KindVariable
	KindVTableThunk
	KindVTableAttribute
	KindWillSet
	KindReflectionMetadataBuiltinDescriptor
	KindReflectionMetadataFieldDescriptor
	KindReflectionMetadataAssocTypeDescriptor
	KindReflectionMetadataSuperclassDescriptor
	KindGenericTypeParamDecl
	KindCurryThunk
	KindDispatchThunk
	KindMethodDescriptor
	KindProtocolRequirementsBaseDescriptor
	KindAssociatedConformanceDescriptor
	KindDefaultAssociatedConformanceAccessor
	KindBaseConformanceDescriptor
	KindAssociatedTypeDescriptor
	KindAsyncAnnotation
	KindThrowsAnnotation
	KindTypedThrowsAnnotation
	KindEmptyList
	KindFirstElementMarker
	KindVariadicMarker
	KindOutlinedBridgedMethod
	KindOutlinedCopy
	KindOutlinedConsume
	KindOutlinedRetain
	KindOutlinedRelease
	KindOutlinedInitializeWithTake
	KindOutlinedInitializeWithCopy
	KindOutlinedAssignWithTake
	KindOutlinedAssignWithCopy
	KindOutlinedDestroy
	KindOutlinedVariable
	KindOutlinedReadOnlyObject
	KindAssocTypePath
	KindLabelList
	KindModuleDescriptor
	KindExtensionDescriptor
	KindAnonymousDescriptor
	KindAssociatedTypeGenericParamRef
	KindSugaredOptional
	KindSugaredArray
	KindSugaredDictionary
	KindSugaredParen
	KindAccessorFunctionReference
	KindOpaqueType
	KindOpaqueTypeDescriptorSymbolicReference
	KindOpaqueTypeDescriptor
	KindOpaqueTypeDescriptorRecord
	KindOpaqueTypeDescriptorAccessor
	KindOpaqueTypeDescriptorAccessorImpl
	KindOpaqueTypeDescriptorAccessorKey
	KindOpaqueTypeDescriptorAccessorVar
	KindOpaqueReturnType
	KindOpaqueReturnTypeOf
	KindCanonicalSpecializedGenericMetaclass
	KindCanonicalSpecializedGenericTypeMetadataAccessFunction
	KindMetadataInstantiationCache
	KindNoncanonicalSpecializedGenericTypeMetadata
	KindNoncanonicalSpecializedGenericTypeMetadataCache
	KindGlobalVariableOnceFunction
	KindGlobalVariableOnceToken
	KindGlobalVariableOnceDeclList
	KindCanonicalPrespecializedGenericTypeCachingOnceToken
	KindAsyncFunctionPointer
	KindAutoDiffFunction
	KindAutoDiffFunctionKind
	KindAutoDiffSelfReorderingReabstractionThunk
	KindAutoDiffSubsetParametersThunk
	KindAutoDiffDerivativeVTableThunk
	KindDifferentiabilityWitness
	KindNoDerivative
	KindIndexSubset
	KindAsyncAwaitResumePartialFunction
	KindAsyncSuspendResumePartialFunction
	KindAccessibleFunctionRecord
	KindCompileTimeConst
	KindBackDeploymentThunk
	KindBackDeploymentFallback
	KindExtendedExistentialTypeShape
	KindUniquable
	KindUniqueExtendedExistentialTypeShapeSymbolicReference
	KindNonUniqueExtendedExistentialTypeShapeSymbolicReference
	KindSymbolicExtendedExistentialType
	KindMetatypeParamsRemoved
	KindHasSymbolQuery
	KindOpaqueReturnTypeIndex
	KindOpaqueReturnTypeParent
	KindOutlinedEnumTagStore
	KindOutlinedEnumProjectDataForLoad
	KindOutlinedEnumGetTag
	KindAsyncRemoved
	KindObjectiveCProtocolSymbolicReference
	KindParamLifetimeDependence
	KindSelfLifetimeDependence
	KindOutlinedInitializeWithCopyNoValueWitness
	KindOutlinedAssignWithTakeNoValueWitness
	KindOutlinedAssignWithCopyNoValueWitness
	KindOutlinedDestroyNoValueWitness
	KindInverse
)

var kindNames = [...]string{
	KindUnknown:                                          "Unknown",
	KindAllocator:                                        "Allocator",
	KindAnonymousContext:                                 "AnonymousContext",
	KindAnyProtocolConformanceList:                       "AnyProtocolConformanceList",
	KindArgumentTuple:                                    "ArgumentTuple",
	KindAssociatedType:                                   "AssociatedType",
	KindAssociatedTypeRef:                                "AssociatedTypeRef",
	KindAssociatedTypeMetadataAccessor:                   "AssociatedTypeMetadataAccessor",
	KindDefaultAssociatedTypeMetadataAccessor:            "DefaultAssociatedTypeMetadataAccessor",
	KindAccessorAttachedMacroExpansion:                   "AccessorAttachedMacroExpansion",
	KindAssociatedTypeWitnessTableAccessor:               "AssociatedTypeWitnessTableAccessor",
	KindBaseWitnessTableAccessor:                         "BaseWitnessTableAccessor",
	KindAutoClosureType:                                  "AutoClosureType",
	KindBodyAttachedMacroExpansion:                       "BodyAttachedMacroExpansion",
	KindBoundGenericClass:                                "BoundGenericClass",
	KindBoundGenericEnum:                                 "BoundGenericEnum",
	KindBoundGenericStructure:                            "BoundGenericStructure",
	KindBoundGenericProtocol:                             "BoundGenericProtocol",
	KindBoundGenericOtherNominalType:                     "BoundGenericOtherNominalType",
	KindBoundGenericTypeAlias:                            "BoundGenericTypeAlias",
	KindBoundGenericFunction:                             "BoundGenericFunction",
	KindBuiltinTypeName:                                  "BuiltinTypeName",
	KindBuiltinTupleType:                                 "BuiltinTupleType",
	KindCFunctionPointer:                                 "CFunctionPointer",
	KindClangType:                                        "ClangType",
	KindClass:                                            "Class",
	KindClassMetadataBaseOffset:                          "ClassMetadataBaseOffset",
	KindConcreteProtocolConformance:                      "ConcreteProtocolConformance",
	KindConformanceAttachedMacroExpansion:                "ConformanceAttachedMacroExpansion",
	KindConstructor:                                      "Constructor",
	KindCoroutineContinuationPrototype:                   "CoroutineContinuationPrototype",
	KindDeallocator:                                      "Deallocator",
	KindDeclContext:                                      "DeclContext",
	KindDefaultArgumentInitializer:                       "DefaultArgumentInitializer",
	KindDependentAssociatedConformance:                   "DependentAssociatedConformance",
	KindDependentAssociatedTypeRef:                       "DependentAssociatedTypeRef",
	KindDependentGenericConformanceRequirement:           "DependentGenericConformanceRequirement",
	KindDependentGenericInverseConformanceRequirement:    "DependentGenericInverseConformanceRequirement",
	KindDependentGenericParamCount:                       "DependentGenericParamCount",
	KindDependentGenericParamType:                        "DependentGenericParamType",
	KindDependentGenericSameTypeRequirement:              "DependentGenericSameTypeRequirement",
	KindDependentGenericSameShapeRequirement:             "DependentGenericSameShapeRequirement",
	KindDependentGenericLayoutRequirement:                "DependentGenericLayoutRequirement",
	KindDependentGenericParamPackMarker:                  "DependentGenericParamPackMarker",
	KindDependentGenericSignature:                        "DependentGenericSignature",
	KindDependentGenericType:                             "DependentGenericType",
	KindDependentMemberType:                              "DependentMemberType",
	KindDependentPseudogenericSignature:                  "DependentPseudogenericSignature",
	KindDependentProtocolConformanceRoot:                 "DependentProtocolConformanceRoot",
	KindDependentProtocolConformanceInherited:            "DependentProtocolConformanceInherited",
	KindDependentProtocolConformanceAssociated:           "DependentProtocolConformanceAssociated",
	KindDestructor:                                       "Destructor",
	KindDidSet:                                           "DidSet",
	KindDirectness:                                       "Directness",
	KindDistributedThunk:                                 "DistributedThunk",
	KindDistributedAccessor:                              "DistributedAccessor",
	KindDroppedArgument:                                  "DroppedArgument",
	KindDynamicAttribute:                                 "DynamicAttribute",
	KindDirectMethodReferenceAttribute:                   "DirectMethodReferenceAttribute",
	KindDynamicSelf:                                      "DynamicSelf",
	KindDynamicallyReplaceableFunctionImpl:               "DynamicallyReplaceableFunctionImpl",
	KindDynamicallyReplaceableFunctionKey:                "DynamicallyReplaceableFunctionKey",
	KindDynamicallyReplaceableFunctionVar:                "DynamicallyReplaceableFunctionVar",
	KindEnum:                                             "Enum",
	KindEnumCase:                                         "EnumCase",
	KindErrorType:                                        "ErrorType",
	KindEscapingAutoClosureType:                          "EscapingAutoClosureType",
	KindNoEscapeFunctionType:                             "NoEscapeFunctionType",
	KindConcurrentFunctionType:                           "ConcurrentFunctionType",
	KindGlobalActorFunctionType:                          "GlobalActorFunctionType",
	KindDifferentiableFunctionType:                       "DifferentiableFunctionType",
	KindExistentialMetatype:                              "ExistentialMetatype",
	KindExplicitClosure:                                  "ExplicitClosure",
	KindExtension:                                        "Extension",
	KindExtensionAttachedMacroExpansion:                  "ExtensionAttachedMacroExpansion",
	KindFieldOffset:                                      "FieldOffset",
	KindFreestandingMacroExpansion:                       "FreestandingMacroExpansion",
	KindFullTypeMetadata:                                 "FullTypeMetadata",
	KindFunction:                                         "Function",
	KindFunctionSignatureSpecialization:                  "FunctionSignatureSpecialization",
	KindFunctionSignatureSpecializationParam:             "FunctionSignatureSpecializationParam",
	KindFunctionSignatureSpecializationReturn:            "FunctionSignatureSpecializationReturn",
	KindFunctionSignatureSpecializationParamKind:         "FunctionSignatureSpecializationParamKind",
	KindFunctionSignatureSpecializationParamPayload:      "FunctionSignatureSpecializationParamPayload",
	KindFunctionType:                                     "FunctionType",
	KindConstrainedExistential:                           "ConstrainedExistential",
	KindConstrainedExistentialRequirementList:            "ConstrainedExistentialRequirementList",
	KindConstrainedExistentialSelf:                       "ConstrainedExistentialSelf",
	KindGenericPartialSpecialization:                     "GenericPartialSpecialization",
	KindGenericPartialSpecializationNotReAbstracted:      "GenericPartialSpecializationNotReAbstracted",
	KindGenericProtocolWitnessTable:                      "GenericProtocolWitnessTable",
	KindGenericProtocolWitnessTableInstantiationFunction: "GenericProtocolWitnessTableInstantiationFunction",
	KindResilientProtocolWitnessTable:                    "ResilientProtocolWitnessTable",
	KindGenericSpecialization:                            "GenericSpecialization",
	KindGenericSpecializationNotReAbstracted:             "GenericSpecializationNotReAbstracted",
	KindGenericSpecializationInResilienceDomain:          "GenericSpecializationInResilienceDomain",
	KindGenericSpecializationParam:                       "GenericSpecializationParam",
	KindGenericSpecializationPrespecialized:              "GenericSpecializationPrespecialized",
	KindInlinedGenericFunction:                           "InlinedGenericFunction",
	KindGenericTypeMetadataPattern:                       "GenericTypeMetadataPattern",
	KindGetter:                                           "Getter",
	KindGlobal:                                           "Global",
	KindGlobalGetter:                                     "GlobalGetter",
	KindIdentifier:                                       "Identifier",
	KindIndex:                                            "Index",
	KindIVarInitializer:                                  "IVarInitializer",
	KindIVarDestroyer:                                    "IVarDestroyer",
	KindImplEscaping:                                     "ImplEscaping",
	KindImplConvention:                                   "ImplConvention",
	KindImplDifferentiabilityKind:                        "ImplDifferentiabilityKind",
	KindImplErasedIsolation:                              "ImplErasedIsolation",
	KindImplTransferringResult:                           "ImplTransferringResult",
	KindImplParameterResultDifferentiability:             "ImplParameterResultDifferentiability",
	KindImplParameterTransferring:                        "ImplParameterTransferring",
	KindImplFunctionAttribute:                            "ImplFunctionAttribute",
	KindImplFunctionConvention:                           "ImplFunctionConvention",
	KindImplFunctionConventionName:                       "ImplFunctionConventionName",
	KindImplFunctionType:                                 "ImplFunctionType",
	KindImplCoroutineKind:                                "ImplCoroutineKind",
	KindImplInvocationSubstitutions:                      "ImplInvocationSubstitutions",
	KindImplicitClosure:                                  "ImplicitClosure",
	KindImplParameter:                                    "ImplParameter",
	KindImplPatternSubstitutions:                         "ImplPatternSubstitutions",
	KindImplResult:                                       "ImplResult",
	KindImplYield:                                        "ImplYield",
	KindImplErrorResult:                                  "ImplErrorResult",
	KindInOut:                                            "InOut",
	KindInfixOperator:                                    "InfixOperator",
	KindInitializer:                                      "Initializer",
	KindInitAccessor:                                     "InitAccessor",
	KindIsolated:                                         "Isolated",
	KindIsolatedAnyFunctionType:                          "IsolatedAnyFunctionType",
	KindNonIsolatedCallerFunctionType:                    "NonIsolatedCallerFunctionType",
	KindTransferring:                                     "Transferring",
	KindTransferringResultFunctionType:                   "TransferringResultFunctionType",
	KindKeyPathGetterThunkHelper:                         "KeyPathGetterThunkHelper",
	KindKeyPathSetterThunkHelper:                         "KeyPathSetterThunkHelper",
	KindKeyPathEqualsThunkHelper:                         "KeyPathEqualsThunkHelper",
	KindKeyPathHashThunkHelper:                           "KeyPathHashThunkHelper",
	KindLazyProtocolWitnessTableAccessor:                 "LazyProtocolWitnessTableAccessor",
	KindLazyProtocolWitnessTableCacheVariable:            "LazyProtocolWitnessTableCacheVariable",
	KindLocalDeclName:                                    "LocalDeclName",
	KindMacro:                                            "Macro",
	KindMacroExpansionUniqueName:                         "MacroExpansionUniqueName",
	KindMaterializeForSet:                                "MaterializeForSet",
	KindMemberAttachedMacroExpansion:                     "MemberAttachedMacroExpansion",
	KindMemberAttributeAttachedMacroExpansion:            "MemberAttributeAttachedMacroExpansion",
	KindMergedFunction:                                   "MergedFunction",
	KindMetatype:                                         "Metatype",
	KindMetatypeRepresentation:                           "MetatypeRepresentation",
	KindMetaclass:                                        "Metaclass",
	KindMethodLookupFunction:                             "MethodLookupFunction",
	KindObjCMetadataUpdateFunction:                       "ObjCMetadataUpdateFunction",
	KindObjCResilientClassStub:                           "ObjCResilientClassStub",
	KindFullObjCResilientClassStub:                       "FullObjCResilientClassStub",
	KindModifyAccessor:                                   "ModifyAccessor",
	KindModule:                                           "Module",
	KindNativeOwningAddressor:                            "NativeOwningAddressor",
	KindNativeOwningMutableAddressor:                     "NativeOwningMutableAddressor",
	KindNativePinningAddressor:                           "NativePinningAddressor",
	KindNativePinningMutableAddressor:                    "NativePinningMutableAddressor",
	KindNominalTypeDescriptor:                            "NominalTypeDescriptor",
	KindNominalTypeDescriptorRecord:                      "NominalTypeDescriptorRecord",
	KindNonObjCAttribute:                                 "NonObjCAttribute",
	KindNumber:                                           "Number",
	KindObjCAsyncCompletionHandlerImpl:                   "ObjCAsyncCompletionHandlerImpl",
	KindPredefinedObjCAsyncCompletionHandlerImpl:         "PredefinedObjCAsyncCompletionHandlerImpl",
	KindObjCAttribute:                                    "ObjCAttribute",
	KindObjCBlock:                                        "ObjCBlock",
	KindEscapingObjCBlock:                                "EscapingObjCBlock",
	KindOtherNominalType:                                 "OtherNominalType",
	KindOwningAddressor:                                  "OwningAddressor",
	KindOwningMutableAddressor:                           "OwningMutableAddressor",
	KindPartialApplyForwarder:                            "PartialApplyForwarder",
	KindPartialApplyObjCForwarder:                        "PartialApplyObjCForwarder",
	KindPeerAttachedMacroExpansion:                       "PeerAttachedMacroExpansion",
	KindPostfixOperator:                                  "PostfixOperator",
	KindPreambleAttachedMacroExpansion:                   "PreambleAttachedMacroExpansion",
	KindPrefixOperator:                                   "PrefixOperator",
	KindPrivateDeclName:                                  "PrivateDeclName",
	KindPropertyDescriptor:                               "PropertyDescriptor",
	KindPropertyWrapperBackingInitializer:                "PropertyWrapperBackingInitializer",
	KindPropertyWrapperInitFromProjectedValue:            "PropertyWrapperInitFromProjectedValue",
	KindProtocol:                                         "Protocol",
	KindProtocolSymbolicReference:                        "ProtocolSymbolicReference",
	KindProtocolConformance:                              "ProtocolConformance",
	KindProtocolConformanceRefInTypeModule:               "ProtocolConformanceRefInTypeModule",
	KindProtocolConformanceRefInProtocolModule:           "ProtocolConformanceRefInProtocolModule",
	KindProtocolConformanceRefInOtherModule:              "ProtocolConformanceRefInOtherModule",
	KindProtocolDescriptor:                               "ProtocolDescriptor",
	KindProtocolDescriptorRecord:                         "ProtocolDescriptorRecord",
	KindProtocolConformanceDescriptor:                    "ProtocolConformanceDescriptor",
	KindProtocolConformanceDescriptorRecord:              "ProtocolConformanceDescriptorRecord",
	KindProtocolList:                                     "ProtocolList",
	KindProtocolListWithClass:                            "ProtocolListWithClass",
	KindProtocolListWithAnyObject:                        "ProtocolListWithAnyObject",
	KindProtocolSelfConformanceDescriptor:                "ProtocolSelfConformanceDescriptor",
	KindProtocolSelfConformanceWitness:                   "ProtocolSelfConformanceWitness",
	KindProtocolSelfConformanceWitnessTable:              "ProtocolSelfConformanceWitnessTable",
	KindProtocolWitness:                                  "ProtocolWitness",
	KindProtocolWitnessTable:                             "ProtocolWitnessTable",
	KindProtocolWitnessTableAccessor:                     "ProtocolWitnessTableAccessor",
	KindProtocolWitnessTablePattern:                      "ProtocolWitnessTablePattern",
	KindReabstractionThunk:                               "ReabstractionThunk",
	KindReabstractionThunkHelper:                         "ReabstractionThunkHelper",
	KindReabstractionThunkHelperWithSelf:                 "ReabstractionThunkHelperWithSelf",
	KindReabstractionThunkHelperWithGlobalActor:          "ReabstractionThunkHelperWithGlobalActor",
	KindReadAccessor:                                     "ReadAccessor",
	KindRelatedEntityDeclName:                            "RelatedEntityDeclName",
	KindRetroactiveConformance:                           "RetroactiveConformance",
	KindReturnType:                                       "ReturnType",
	KindShared:                                           "Shared",
	KindOwned:                                            "Owned",
	KindSILBoxType:                                       "SILBoxType",
	KindSILBoxTypeWithLayout:                             "SILBoxTypeWithLayout",
	KindSILBoxLayout:                                     "SILBoxLayout",
	KindSILBoxMutableField:                               "SILBoxMutableField",
	KindSILBoxImmutableField:                             "SILBoxImmutableField",
	KindSetter:                                           "Setter",
	KindSpecializationPassID:                             "SpecializationPassID",
	KindIsSerialized:                                     "IsSerialized",
	KindStatic:                                           "Static",
	KindStructure:                                        "Structure",
	KindSubscript:                                        "Subscript",
	KindSuffix:                                           "Suffix",
	KindThinFunctionType:                                 "ThinFunctionType",
	KindTuple:                                            "Tuple",
	KindTupleElement:                                     "TupleElement",
	KindTupleElementName:                                 "TupleElementName",
	KindPack:                                             "Pack",
	KindSILPackDirect:                                    "SILPackDirect",
	KindSILPackIndirect:                                  "SILPackIndirect",
	KindPackExpansion:                                    "PackExpansion",
	KindPackElement:                                      "PackElement",
	KindPackElementLevel:                                 "PackElementLevel",
	KindType:                                             "Type",
	KindTypeSymbolicReference:                            "TypeSymbolicReference",
	KindTypeAlias:                                        "TypeAlias",
	KindTypeList:                                         "TypeList",
	KindTypeMangling:                                     "TypeMangling",
	KindTypeMetadata:                                     "TypeMetadata",
	KindTypeMetadataAccessFunction:                       "TypeMetadataAccessFunction",
	KindTypeMetadataCompletionFunction:                   "TypeMetadataCompletionFunction",
	KindTypeMetadataInstantiationCache:                   "TypeMetadataInstantiationCache",
	KindTypeMetadataInstantiationFunction:                "TypeMetadataInstantiationFunction",
	KindTypeMetadataSingletonInitializationCache:         "TypeMetadataSingletonInitializationCache",
	KindTypeMetadataDemanglingCache:                      "TypeMetadataDemanglingCache",
	KindTypeMetadataLazyCache:                            "TypeMetadataLazyCache",
	KindUncurriedFunctionType:                            "UncurriedFunctionType",
	KindUnknownIndex:                                     "UnknownIndex",
	KindWeak:                                             "Weak",
	KindUnowned:                                          "Unowned",
	KindUnmanaged:                                        "Unmanaged",
	KindUnsafeAddressor:                                  "UnsafeAddressor",
	KindUnsafeMutableAddressor:                           "UnsafeMutableAddressor",
	KindValueWitness:                                     "ValueWitness",
	KindValueWitnessTable:                                "ValueWitnessTable",
	KindVariable:                                         "Variable",
	KindVTableThunk:                                      "VTableThunk",
	KindVTableAttribute:                                  "VTableAttribute",
	KindWillSet:                                          "WillSet",
	KindReflectionMetadataBuiltinDescriptor:              "ReflectionMetadataBuiltinDescriptor",
	KindReflectionMetadataFieldDescriptor:                "ReflectionMetadataFieldDescriptor",
	KindReflectionMetadataAssocTypeDescriptor:            "ReflectionMetadataAssocTypeDescriptor",
	KindReflectionMetadataSuperclassDescriptor:           "ReflectionMetadataSuperclassDescriptor",
	KindGenericTypeParamDecl:                             "GenericTypeParamDecl",
	KindCurryThunk:                                       "CurryThunk",
	KindDispatchThunk:                                    "DispatchThunk",
	KindMethodDescriptor:                                 "MethodDescriptor",
	KindProtocolRequirementsBaseDescriptor:               "ProtocolRequirementsBaseDescriptor",
	KindAssociatedConformanceDescriptor:                  "AssociatedConformanceDescriptor",
	KindDefaultAssociatedConformanceAccessor:             "DefaultAssociatedConformanceAccessor",
	KindBaseConformanceDescriptor:                        "BaseConformanceDescriptor",
	KindAssociatedTypeDescriptor:                         "AssociatedTypeDescriptor",
	KindAsyncAnnotation:                                  "AsyncAnnotation",
	KindThrowsAnnotation:                                 "ThrowsAnnotation",
	KindTypedThrowsAnnotation:                            "TypedThrowsAnnotation",
	KindEmptyList:                                        "EmptyList",
	KindFirstElementMarker:                               "FirstElementMarker",
	KindVariadicMarker:                                   "VariadicMarker",
	KindOutlinedBridgedMethod:                            "OutlinedBridgedMethod",
	KindOutlinedCopy:                                     "OutlinedCopy",
	KindOutlinedConsume:                                  "OutlinedConsume",
	KindOutlinedRetain:                                   "OutlinedRetain",
	KindOutlinedRelease:                                  "OutlinedRelease",
	KindOutlinedInitializeWithTake:                       "OutlinedInitializeWithTake",
	KindOutlinedInitializeWithCopy:                       "OutlinedInitializeWithCopy",
	KindOutlinedAssignWithTake:                           "OutlinedAssignWithTake",
	KindOutlinedAssignWithCopy:                           "OutlinedAssignWithCopy",
	KindOutlinedDestroy:                                  "OutlinedDestroy",
	KindOutlinedVariable:                                 "OutlinedVariable",
	KindOutlinedReadOnlyObject:                           "OutlinedReadOnlyObject",
	KindAssocTypePath:                                    "AssocTypePath",
	KindLabelList:                                        "LabelList",
	KindModuleDescriptor:                                 "ModuleDescriptor",
	KindExtensionDescriptor:                              "ExtensionDescriptor",
	KindAnonymousDescriptor:                              "AnonymousDescriptor",
	KindAssociatedTypeGenericParamRef:                    "AssociatedTypeGenericParamRef",
	KindSugaredOptional:                                  "SugaredOptional",
	KindSugaredArray:                                     "SugaredArray",
	KindSugaredDictionary:                                "SugaredDictionary",
	KindSugaredParen:                                     "SugaredParen",
	KindAccessorFunctionReference:                        "AccessorFunctionReference",
	KindOpaqueType:                                       "OpaqueType",
	KindOpaqueTypeDescriptorSymbolicReference:            "OpaqueTypeDescriptorSymbolicReference",
	KindOpaqueTypeDescriptor:                             "OpaqueTypeDescriptor",
	KindOpaqueTypeDescriptorRecord:                       "OpaqueTypeDescriptorRecord",
	KindOpaqueTypeDescriptorAccessor:                     "OpaqueTypeDescriptorAccessor",
	KindOpaqueTypeDescriptorAccessorImpl:                 "OpaqueTypeDescriptorAccessorImpl",
	KindOpaqueTypeDescriptorAccessorKey:                  "OpaqueTypeDescriptorAccessorKey",
	KindOpaqueTypeDescriptorAccessorVar:                  "OpaqueTypeDescriptorAccessorVar",
	KindOpaqueReturnType:                                 "OpaqueReturnType",
	KindOpaqueReturnTypeOf:                               "OpaqueReturnTypeOf",
	KindCanonicalSpecializedGenericMetaclass:             "CanonicalSpecializedGenericMetaclass",
	KindCanonicalSpecializedGenericTypeMetadataAccessFunction:  "CanonicalSpecializedGenericTypeMetadataAccessFunction",
	KindMetadataInstantiationCache:                             "MetadataInstantiationCache",
	KindNoncanonicalSpecializedGenericTypeMetadata:             "NoncanonicalSpecializedGenericTypeMetadata",
	KindNoncanonicalSpecializedGenericTypeMetadataCache:        "NoncanonicalSpecializedGenericTypeMetadataCache",
	KindGlobalVariableOnceFunction:                             "GlobalVariableOnceFunction",
	KindGlobalVariableOnceToken:                                "GlobalVariableOnceToken",
	KindGlobalVariableOnceDeclList:                             "GlobalVariableOnceDeclList",
	KindCanonicalPrespecializedGenericTypeCachingOnceToken:     "CanonicalPrespecializedGenericTypeCachingOnceToken",
	KindAsyncFunctionPointer:                                   "AsyncFunctionPointer",
	KindAutoDiffFunction:                                       "AutoDiffFunction",
	KindAutoDiffFunctionKind:                                   "AutoDiffFunctionKind",
	KindAutoDiffSelfReorderingReabstractionThunk:               "AutoDiffSelfReorderingReabstractionThunk",
	KindAutoDiffSubsetParametersThunk:                          "AutoDiffSubsetParametersThunk",
	KindAutoDiffDerivativeVTableThunk:                          "AutoDiffDerivativeVTableThunk",
	KindDifferentiabilityWitness:                               "DifferentiabilityWitness",
	KindNoDerivative:                                           "NoDerivative",
	KindIndexSubset:                                            "IndexSubset",
	KindAsyncAwaitResumePartialFunction:                        "AsyncAwaitResumePartialFunction",
	KindAsyncSuspendResumePartialFunction:                      "AsyncSuspendResumePartialFunction",
	KindAccessibleFunctionRecord:                               "AccessibleFunctionRecord",
	KindCompileTimeConst:                                       "CompileTimeConst",
	KindBackDeploymentThunk:                                    "BackDeploymentThunk",
	KindBackDeploymentFallback:                                 "BackDeploymentFallback",
	KindExtendedExistentialTypeShape:                           "ExtendedExistentialTypeShape",
	KindUniquable:                                              "Uniquable",
	KindUniqueExtendedExistentialTypeShapeSymbolicReference:    "UniqueExtendedExistentialTypeShapeSymbolicReference",
	KindNonUniqueExtendedExistentialTypeShapeSymbolicReference: "NonUniqueExtendedExistentialTypeShapeSymbolicReference",
	KindSymbolicExtendedExistentialType:                        "SymbolicExtendedExistentialType",
	KindMetatypeParamsRemoved:                                  "MetatypeParamsRemoved",
	KindHasSymbolQuery:                                         "HasSymbolQuery",
	KindOpaqueReturnTypeIndex:                                  "OpaqueReturnTypeIndex",
	KindOpaqueReturnTypeParent:                                 "OpaqueReturnTypeParent",
	KindOutlinedEnumTagStore:                                   "OutlinedEnumTagStore",
	KindOutlinedEnumProjectDataForLoad:                         "OutlinedEnumProjectDataForLoad",
	KindOutlinedEnumGetTag:                                     "OutlinedEnumGetTag",
	KindAsyncRemoved:                                           "AsyncRemoved",
	KindObjectiveCProtocolSymbolicReference:                    "ObjectiveCProtocolSymbolicReference",
	KindParamLifetimeDependence:                                "ParamLifetimeDependence",
	KindSelfLifetimeDependence:                                 "SelfLifetimeDependence",
	KindOutlinedInitializeWithCopyNoValueWitness:               "OutlinedInitializeWithCopyNoValueWitness",
	KindOutlinedAssignWithTakeNoValueWitness:                   "OutlinedAssignWithTakeNoValueWitness",
	KindOutlinedAssignWithCopyNoValueWitness:                   "OutlinedAssignWithCopyNoValueWitness",
	KindOutlinedDestroyNoValueWitness:                          "OutlinedDestroyNoValueWitness",
	KindInverse:                                                "Inverse",
}

// contextKinds marks the kinds that can be the context of another entity.
var contextKinds = [...]bool{
	KindAllocator:                             true,
	KindAnonymousContext:                      true,
	KindAccessorAttachedMacroExpansion:        true,
	KindBodyAttachedMacroExpansion:            true,
	KindClass:                                 true,
	KindConformanceAttachedMacroExpansion:     true,
	KindConstructor:                           true,
	KindDeallocator:                           true,
	KindDefaultArgumentInitializer:            true,
	KindDestructor:                            true,
	KindDidSet:                                true,
	KindEnum:                                  true,
	KindExplicitClosure:                       true,
	KindExtension:                             true,
	KindExtensionAttachedMacroExpansion:       true,
	KindFreestandingMacroExpansion:            true,
	KindFunction:                              true,
	KindGetter:                                true,
	KindGlobalGetter:                          true,
	KindIVarInitializer:                       true,
	KindIVarDestroyer:                         true,
	KindImplicitClosure:                       true,
	KindInitializer:                           true,
	KindInitAccessor:                          true,
	KindMacro:                                 true,
	KindMacroExpansionUniqueName:              true,
	KindMaterializeForSet:                     true,
	KindMemberAttachedMacroExpansion:          true,
	KindMemberAttributeAttachedMacroExpansion: true,
	KindModifyAccessor:                        true,
	KindModule:                                true,
	KindNativeOwningAddressor:                 true,
	KindNativeOwningMutableAddressor:          true,
	KindNativePinningAddressor:                true,
	KindNativePinningMutableAddressor:         true,
	KindOtherNominalType:                      true,
	KindOwningAddressor:                       true,
	KindOwningMutableAddressor:                true,
	KindPeerAttachedMacroExpansion:            true,
	KindPreambleAttachedMacroExpansion:        true,
	KindPropertyWrapperBackingInitializer:     true,
	KindPropertyWrapperInitFromProjectedValue: true,
	KindProtocol:                              true,
	KindProtocolSymbolicReference:             true,
	KindReadAccessor:                          true,
	KindSetter:                                true,
	KindStatic:                                true,
	KindStructure:                             true,
	KindSubscript:                             true,
	KindTypeSymbolicReference:                 true,
	KindTypeAlias:                             true,
	KindUnsafeAddressor:                       true,
	KindUnsafeMutableAddressor:                true,
	KindVariable:                              true,
	KindWillSet:                               true,
	KindOpaqueReturnTypeOf:                    true,
	KindAutoDiffFunction:                      true,
	KindBuiltinTupleType:                      true,
	kindCount - 1:                             false,
}

const kindCount = KindInverse + 1
