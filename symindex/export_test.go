package symindex

// StoredDemangled returns the demangled form of the linkage name the file
// stores, and whether it stores one: Demangle's answer without its
// fallback to demangling.
func (ix *Index) StoredDemangled(linkage string) (string, bool) {
	id, ok := ix.stringID(linkage)
	if !ok || !ix.loadDemangled(id) {
		return "", false
	}
	if slot := ix.cacheSlot(1, id); slot != nil {
		if p := slot.Load(); p != nil {
			return *p, true
		}
	}
	return "", false
}
