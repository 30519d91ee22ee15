package minidump

// CrashpadInfo is Crashpad's MinidumpCrashpadInfo stream (see Crashpad's
// minidump/minidump_extensions.h): the report's ids, the process-wide
// simple annotations, and per-module annotations.
type CrashpadInfo struct {
	Version  uint32
	ReportID [16]byte // a UUID, as stored
	ClientID [16]byte
	// SimpleAnnotations are the process's key/value annotations.
	SimpleAnnotations map[string]string
	Modules           []CrashpadModuleInfo
}

// CrashpadModuleInfo is a MinidumpModuleCrashpadInfo: annotations a module
// registered with Crashpad.
type CrashpadModuleInfo struct {
	// ModuleIndex is the module's index in the module list.
	ModuleIndex       int
	ListAnnotations   []string
	SimpleAnnotations map[string]string
	Annotations       []Annotation
}

// An Annotation is a MinidumpAnnotation: a named, typed value.
type Annotation struct {
	Name  string
	Type  uint16 // AnnotationString (1), a user-defined type (0x8000 and up), or another
	Value []byte
}

// AnnotationString is the type of an annotation whose value is a string.
const AnnotationString = 1

func (r *reader) crashpadInfo(errs *[]error) *CrashpadInfo {
	s := r.Stream(StreamCrashpadInfo)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < crashpadInfoSize {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is shorter than MinidumpCrashpadInfo (%d)", len(data), crashpadInfoSize))
		return nil
	}
	// version, report_id, client_id, simple_annotations, module_list.
	ci := &CrashpadInfo{Version: le.Uint32(data)}
	copy(ci.ReportID[:], data[4:20])
	copy(ci.ClientID[:], data[20:36])
	ci.SimpleAnnotations = r.stringDictionary(s, int64(s.Offset)+36, readLocation(data[36:]), errs)

	loc := readLocation(data[44:])
	if loc.Size == 0 {
		return ci
	}
	list, err := r.readLocationData(s, int64(s.Offset)+44, loc, r.size, "module info list")
	if err != nil {
		*errs = append(*errs, err)
		return ci
	}
	links, count := r.countedEntries(s, int64(loc.RVA), list, crashpadLinkSize, "module info list", errs)
	for i := 0; i < count; i++ {
		l := links[i*crashpadLinkSize:]
		at := int64(loc.RVA) + 4 + int64(i*crashpadLinkSize)
		mi := CrashpadModuleInfo{ModuleIndex: int(le.Uint32(l))}
		mloc := readLocation(l[4:])
		b, err := r.readLocationData(s, at+4, mloc, r.size, "module info")
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		if len(b) < crashpadModSize {
			*errs = append(*errs, r.errf(s, int64(mloc.RVA), "module info of %d bytes is shorter than %d", len(b), crashpadModSize))
			continue
		}
		// version, list_annotations, simple_annotations, annotation_objects.
		mi.ListAnnotations = r.stringList(s, int64(mloc.RVA)+4, readLocation(b[4:]), errs)
		mi.SimpleAnnotations = r.stringDictionary(s, int64(mloc.RVA)+12, readLocation(b[12:]), errs)
		mi.Annotations = r.annotationObjects(s, int64(mloc.RVA)+20, readLocation(b[20:]), errs)
		ci.Modules = append(ci.Modules, mi)
	}
	return ci
}

// countedEntries reads a 32-bit count and the entries that follow it in b,
// which was read from off; a count larger than b holds is cut.
func (r *reader) countedEntries(s *Stream, off int64, b []byte, size int, what string, errs *[]error) ([]byte, int) {
	if len(b) < 4 {
		*errs = append(*errs, r.errf(s, off, "%s of %d bytes is too short for its count", what, len(b)))
		return nil, 0
	}
	count := uint64(le.Uint32(b))
	if avail := uint64(len(b)-4) / uint64(size); count > avail {
		*errs = append(*errs, r.errf(s, off, "%s count %d × %d bytes does not fit in its %d bytes; reading %d",
			what, count, size, len(b)-4, avail))
		count = avail
	}
	return b[4:], int(count)
}

// stringDictionary reads a MinidumpSimpleStringDictionary: a count, then
// key and value RVAs of MinidumpUTF8Strings.
func (r *reader) stringDictionary(s *Stream, at int64, loc location, errs *[]error) map[string]string {
	if loc.Size == 0 {
		return nil
	}
	b, err := r.readLocationData(s, at, loc, r.size, "string dictionary")
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count := r.countedEntries(s, int64(loc.RVA), b, 8, "string dictionary", errs)
	m := make(map[string]string)
	for i := 0; i < count; i++ {
		e := entries[i*8:]
		eat := int64(loc.RVA) + 4 + int64(i*8)
		k, err := r.readUTF8String(s, eat, le.Uint32(e))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		v, err := r.readUTF8String(s, eat+4, le.Uint32(e[4:]))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		m[k] = v
	}
	return m
}

// stringList reads a MinidumpRVAList of MinidumpUTF8Strings.
func (r *reader) stringList(s *Stream, at int64, loc location, errs *[]error) []string {
	if loc.Size == 0 {
		return nil
	}
	b, err := r.readLocationData(s, at, loc, r.size, "string list")
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count := r.countedEntries(s, int64(loc.RVA), b, 4, "string list", errs)
	var list []string
	for i := 0; i < count; i++ {
		v, err := r.readUTF8String(s, int64(loc.RVA)+4+int64(i*4), le.Uint32(entries[i*4:]))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		list = append(list, v)
	}
	return list
}

// annotationObjects reads a MinidumpAnnotationList.
func (r *reader) annotationObjects(s *Stream, at int64, loc location, errs *[]error) []Annotation {
	if loc.Size == 0 {
		return nil
	}
	b, err := r.readLocationData(s, at, loc, r.size, "annotation list")
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count := r.countedEntries(s, int64(loc.RVA), b, annotationObjSize, "annotation list", errs)
	var list []Annotation
	for i := 0; i < count; i++ {
		e := entries[i*annotationObjSize:]
		eat := int64(loc.RVA) + 4 + int64(i*annotationObjSize)
		// name (RVA of a MinidumpUTF8String), type, reserved, value (RVA of
		// a MinidumpByteArray).
		name, err := r.readUTF8String(s, eat, le.Uint32(e))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		val, err := r.readByteArray(s, eat+8, le.Uint32(e[8:]))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		list = append(list, Annotation{Name: name, Type: le.Uint16(e[4:]), Value: val})
	}
	return list
}
