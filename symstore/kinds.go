package symstore

// A SymbolFileKind is one kind of symbol file Symbols.AddDir and AddFile
// index, for help texts.
type SymbolFileKind struct {
	// Name describes the kind for people.
	Name string
	// Example is a typical path of the kind.
	Example string
}

// SymbolFileKinds lists what AddDir indexes by UUID, in the order AddFile
// tells them apart; every file is matched by the UUID it holds, never by
// its name or path.
var SymbolFileKinds = []SymbolFileKind{
	{"zip or .ipa archive of binaries and dSYMs", "MyApp.dSYMs.zip"},
	{"bitcode symbol map, restoring hidden names", "BCSymbolMaps/UUID.bcsymbolmap"},
	{"symindex file (stackimage index)", "STORE/UUID/arm64.symindex"},
	{"Breakpad .sym file, alone or in a symbol store", "symbols/MyApp/DEBUGID/MyApp.sym"},
	{"Mach-O binary, dylib or framework, thin or fat", "MyApp.app/MyApp"},
	{"dSYM bundle (its DWARF file)", "MyApp.app.dSYM"},
}
