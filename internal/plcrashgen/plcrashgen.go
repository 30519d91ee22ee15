// Package plcrashgen writes and reads PLCrashReporter's .plcrash files
// through the protobuf library itself, for tests: Encode turns a
// plcrash.Report into a file (dynamicpb and proto.Marshal), Decode reads
// one with proto.Unmarshal into a dynamic message. Both work from this
// package's own statement of PLCrashReport.proto's messages as a
// descriptor: field names and numbers as the schema gives them, enums as
// the integers they are on the wire, and every field optional or
// repeated, so that a report missing a required field still decodes.
//
// It is what the tests compare plcrash.Parse with and how they build
// fixture reports; no program imports it.
package plcrashgen

import (
	"errors"
	"fmt"
	"sync"

	"github.com/stackimage/stackimage/plcrash"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

type fieldSpec struct {
	name     string
	num      int32
	typ      descriptorpb.FieldDescriptorProto_Type
	repeated bool
	msg      string // message type name, for TYPE_MESSAGE
}

var (
	tUint64 = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tUint32 = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tInt64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tBool   = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tString = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tMsg    = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

var schemaMessages = []struct {
	name   string
	fields []fieldSpec
}{
	{"CrashReport", []fieldSpec{
		{"system_info", 1, tMsg, false, "SystemInfo"}, {"application_info", 2, tMsg, false, "ApplicationInfo"},
		{"threads", 3, tMsg, true, "Thread"}, {"binary_images", 4, tMsg, true, "BinaryImage"},
		{"exception", 5, tMsg, false, "Exception"}, {"signal", 6, tMsg, false, "Signal"},
		{"process_info", 7, tMsg, false, "ProcessInfo"}, {"machine_info", 8, tMsg, false, "MachineInfo"},
		{"report_info", 9, tMsg, false, "ReportInfo"}, {"custom_data", 10, tString, false, ""},
	}},
	{"Processor", []fieldSpec{{"encoding", 1, tUint64, false, ""}, {"type", 2, tUint64, false, ""}, {"subtype", 3, tUint64, false, ""}}},
	{"SystemInfo", []fieldSpec{
		{"operating_system", 1, tUint64, false, ""}, {"os_version", 2, tString, false, ""},
		{"architecture", 3, tUint64, false, ""}, {"timestamp", 4, tInt64, false, ""}, {"os_build", 5, tString, false, ""},
	}},
	{"ApplicationInfo", []fieldSpec{{"identifier", 1, tString, false, ""}, {"version", 2, tString, false, ""}, {"marketing_version", 3, tString, false, ""}}},
	{"Symbol", []fieldSpec{{"name", 1, tString, false, ""}, {"start_address", 2, tUint64, false, ""}, {"end_address", 3, tUint64, false, ""}}},
	{"Thread", []fieldSpec{
		{"thread_number", 1, tUint32, false, ""}, {"frames", 2, tMsg, true, "StackFrame"},
		{"crashed", 3, tBool, false, ""}, {"registers", 4, tMsg, true, "RegisterValue"},
	}},
	{"StackFrame", []fieldSpec{{"pc", 3, tUint64, false, ""}, {"symbol", 6, tMsg, false, "Symbol"}}},
	{"RegisterValue", []fieldSpec{{"name", 1, tString, false, ""}, {"value", 2, tUint64, false, ""}}},
	{"BinaryImage", []fieldSpec{
		{"base_address", 1, tUint64, false, ""}, {"size", 2, tUint64, false, ""}, {"name", 3, tString, false, ""},
		{"uuid", 4, tBytes, false, ""}, {"code_type", 5, tMsg, false, "Processor"},
	}},
	{"Exception", []fieldSpec{{"name", 1, tString, false, ""}, {"reason", 2, tString, false, ""}, {"frames", 3, tMsg, true, "StackFrame"}}},
	{"Signal", []fieldSpec{
		{"name", 1, tString, false, ""}, {"code", 2, tString, false, ""}, {"address", 3, tUint64, false, ""},
		{"mach_exception", 4, tMsg, false, "MachException"},
	}},
	{"MachException", []fieldSpec{{"type", 1, tUint64, false, ""}, {"codes", 2, tUint64, true, ""}}},
	{"ProcessInfo", []fieldSpec{
		{"process_name", 1, tString, false, ""}, {"process_id", 2, tUint32, false, ""}, {"process_path", 3, tString, false, ""},
		{"parent_process_name", 4, tString, false, ""}, {"parent_process_id", 5, tUint32, false, ""},
		{"native", 6, tBool, false, ""}, {"start_time", 7, tUint64, false, ""},
	}},
	{"MachineInfo", []fieldSpec{
		{"model", 1, tString, false, ""}, {"processor", 2, tMsg, false, "Processor"},
		{"processor_count", 3, tUint32, false, ""}, {"logical_processor_count", 4, tUint32, false, ""},
	}},
	{"ReportInfo", []fieldSpec{{"user_requested", 1, tBool, false, ""}, {"uuid", 2, tBytes, false, ""}}},
}

var (
	schemaOnce sync.Once
	schemaDesc protoreflect.MessageDescriptor
	schemaErr  error
)

// schema returns the CrashReport message descriptor, built once.
func schema() (protoreflect.MessageDescriptor, error) {
	schemaOnce.Do(func() { schemaDesc, schemaErr = buildSchema() })
	return schemaDesc, schemaErr
}

func buildSchema() (protoreflect.MessageDescriptor, error) {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("plcrash_test_schema.proto"),
		Package: proto.String("plcrashtest"),
		Syntax:  proto.String("proto2"),
	}
	for _, m := range schemaMessages {
		dp := &descriptorpb.DescriptorProto{Name: proto.String(m.name)}
		for _, f := range m.fields {
			label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
			if f.repeated {
				label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
			}
			fp := &descriptorpb.FieldDescriptorProto{Name: proto.String(f.name), Number: proto.Int32(f.num), Type: f.typ.Enum(), Label: label.Enum()}
			if f.msg != "" {
				fp.TypeName = proto.String(".plcrashtest." + f.msg)
			}
			dp.Field = append(dp.Field, fp)
		}
		fdp.MessageType = append(fdp.MessageType, dp)
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		return nil, fmt.Errorf("plcrashgen: schema: %w", err)
	}
	return fd.Messages().ByName("CrashReport"), nil
}

// dyn wraps a dynamic message for setting fields by name.
type dyn struct{ m *dynamicpb.Message }

// fd returns the named field; the names are this file's own, so a
// missing one is a mistake here, not in any input.
func (d dyn) fd(name string) protoreflect.FieldDescriptor {
	f := d.m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if f == nil {
		panic("plcrashgen: the schema has no field " + name)
	}
	return f
}
func (d dyn) set(name string, v protoreflect.Value) { d.m.Set(d.fd(name), v) }
func (d dyn) str(name, v string) {
	if v != "" {
		d.set(name, protoreflect.ValueOfString(v))
	}
}
func (d dyn) u64(name string, v uint64) { d.set(name, protoreflect.ValueOfUint64(v)) }
func (d dyn) u32(name string, v uint32) { d.set(name, protoreflect.ValueOfUint32(v)) }
func (d dyn) boolean(name string, v bool) {
	d.set(name, protoreflect.ValueOfBool(v))
}
func (d dyn) msg(name string) dyn {
	return dyn{d.m.Mutable(d.fd(name)).Message().(*dynamicpb.Message)}
}
func (d dyn) add(name string) dyn {
	l := d.m.Mutable(d.fd(name)).List()
	e := l.NewElement()
	l.Append(e)
	return dyn{e.Message().(*dynamicpb.Message)}
}

// Encode writes r as a .plcrash file through the protobuf library: the
// magic, the version byte (r.Version, or plcrash.Version when zero), then
// the CrashReport message, marshalled deterministically. Optional
// messages r lacks are left out.
func Encode(r *plcrash.Report) ([]byte, error) {
	desc, err := schema()
	if err != nil {
		return nil, err
	}
	m := dyn{dynamicpb.NewMessage(desc)}
	s := m.msg("system_info")
	s.u64("operating_system", uint64(r.System.OS))
	s.str("os_version", r.System.OSVersion)
	s.u64("architecture", uint64(r.System.Architecture))
	s.set("timestamp", protoreflect.ValueOfInt64(r.System.Timestamp))
	s.str("os_build", r.System.OSBuild)
	a := m.msg("application_info")
	a.str("identifier", r.Application.Identifier)
	a.str("version", r.Application.Version)
	a.str("marketing_version", r.Application.MarketingVersion)
	frames := func(d dyn, name string, fs []plcrash.Frame) {
		for _, f := range fs {
			fr := d.add(name)
			fr.u64("pc", f.PC)
			if s := f.Symbol; s != nil {
				sm := fr.msg("symbol")
				sm.set("name", protoreflect.ValueOfString(s.Name))
				sm.u64("start_address", s.Start)
				if s.HasEnd {
					sm.u64("end_address", s.End)
				}
			}
		}
	}
	for _, th := range r.Threads {
		tm := m.add("threads")
		tm.u32("thread_number", th.Number)
		frames(tm, "frames", th.Frames)
		tm.boolean("crashed", th.Crashed)
		for _, reg := range th.Registers {
			rm := tm.add("registers")
			rm.set("name", protoreflect.ValueOfString(reg.Name))
			rm.u64("value", reg.Value)
		}
	}
	processor := func(d dyn, p *plcrash.Processor) {
		d.u64("encoding", p.Encoding)
		d.u64("type", p.Type)
		d.u64("subtype", p.Subtype)
	}
	for _, im := range r.Images {
		im2 := m.add("binary_images")
		im2.u64("base_address", im.Base)
		im2.u64("size", im.Size)
		im2.set("name", protoreflect.ValueOfString(im.Name))
		if im.HasUUID {
			im2.set("uuid", protoreflect.ValueOfBytes(im.UUID[:]))
		}
		if im.CodeType != nil {
			processor(im2.msg("code_type"), im.CodeType)
		}
	}
	if e := r.Exception; e != nil {
		em := m.msg("exception")
		em.set("name", protoreflect.ValueOfString(e.Name))
		em.set("reason", protoreflect.ValueOfString(e.Reason))
		frames(em, "frames", e.Frames)
	}
	sg := m.msg("signal")
	sg.set("name", protoreflect.ValueOfString(r.Signal.Name))
	sg.set("code", protoreflect.ValueOfString(r.Signal.Code))
	sg.u64("address", r.Signal.Address)
	if mach := r.Signal.Mach; mach != nil {
		mm := sg.msg("mach_exception")
		mm.u64("type", mach.Type)
		l := mm.m.Mutable(mm.fd("codes")).List()
		for _, c := range mach.Codes {
			l.Append(protoreflect.ValueOfUint64(c))
		}
	}
	if p := r.Process; p != nil {
		pm := m.msg("process_info")
		pm.str("process_name", p.Name)
		pm.u32("process_id", p.PID)
		pm.str("process_path", p.Path)
		pm.str("parent_process_name", p.ParentName)
		pm.u32("parent_process_id", p.ParentPID)
		pm.boolean("native", p.Native)
		if p.HasStartTime {
			pm.u64("start_time", p.StartTime)
		}
	}
	if mi := r.Machine; mi != nil {
		mm := m.msg("machine_info")
		mm.str("model", mi.Model)
		processor(mm.msg("processor"), &mi.Processor)
		mm.u32("processor_count", mi.ProcessorCount)
		mm.u32("logical_processor_count", mi.LogicalProcessorCount)
	}
	if ri := r.Info; ri != nil {
		rm := m.msg("report_info")
		rm.boolean("user_requested", ri.UserRequested)
		if ri.HasUUID {
			rm.set("uuid", protoreflect.ValueOfBytes(ri.UUID[:]))
		}
	}
	m.str("custom_data", r.CustomData)
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.m)
	if err != nil {
		return nil, fmt.Errorf("plcrashgen: marshal: %w", err)
	}
	version := r.Version
	if version == 0 {
		version = plcrash.Version
	}
	return append(append([]byte(plcrash.Magic), version), body...), nil
}

// Decode decodes a .plcrash file with the protobuf library's own decoder
// (proto.Unmarshal into a dynamic message of the schema above) and maps
// it onto plcrash.Report field by field, with none of plcrash.Parse's
// code: the independent reading tests compare Parse with.
func Decode(data []byte) (*plcrash.Report, error) {
	desc, err := schema()
	if err != nil {
		return nil, err
	}
	header := len(plcrash.Magic) + 1
	if len(data) < header || string(data[:len(plcrash.Magic)]) != plcrash.Magic {
		return nil, errors.New("plcrashgen: not a .plcrash file")
	}
	m := dynamicpb.NewMessage(desc)
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(data[header:], m); err != nil {
		return nil, fmt.Errorf("plcrashgen: %w", err)
	}
	get := func(m protoreflect.Message, name string) protoreflect.Value {
		return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	has := func(m protoreflect.Message, name string) bool {
		return m.Has(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	sub := func(m protoreflect.Message, name string) protoreflect.Message { return get(m, name).Message() }
	r := &plcrash.Report{Version: data[len(plcrash.Magic)]}
	s := sub(m, "system_info")
	r.System = plcrash.SystemInfo{OS: plcrash.OperatingSystem(get(s, "operating_system").Uint()), OSVersion: get(s, "os_version").String(),
		Architecture: plcrash.Architecture(get(s, "architecture").Uint()), Timestamp: get(s, "timestamp").Int(), OSBuild: get(s, "os_build").String()}
	if !has(s, "operating_system") {
		r.System.OS = plcrash.OSUnknown
	}
	if !has(s, "architecture") {
		r.System.Architecture = plcrash.ArchUnknown
	}
	a := sub(m, "application_info")
	r.Application = plcrash.ApplicationInfo{Identifier: get(a, "identifier").String(), Version: get(a, "version").String(), MarketingVersion: get(a, "marketing_version").String()}
	frames := func(l protoreflect.List) []plcrash.Frame {
		var out []plcrash.Frame
		for i := 0; i < l.Len(); i++ {
			fm := l.Get(i).Message()
			f := plcrash.Frame{PC: get(fm, "pc").Uint()}
			if has(fm, "symbol") {
				sm := sub(fm, "symbol")
				f.Symbol = &plcrash.Symbol{Name: get(sm, "name").String(), Start: get(sm, "start_address").Uint(),
					End: get(sm, "end_address").Uint(), HasEnd: has(sm, "end_address")}
			}
			out = append(out, f)
		}
		return out
	}
	processor := func(pm protoreflect.Message) plcrash.Processor {
		return plcrash.Processor{Encoding: get(pm, "encoding").Uint(), Type: get(pm, "type").Uint(), Subtype: get(pm, "subtype").Uint()}
	}
	threads := get(m, "threads").List()
	for i := 0; i < threads.Len(); i++ {
		tm := threads.Get(i).Message()
		th := plcrash.Thread{Number: uint32(get(tm, "thread_number").Uint()), Crashed: get(tm, "crashed").Bool(), Frames: frames(get(tm, "frames").List())}
		regs := get(tm, "registers").List()
		for j := 0; j < regs.Len(); j++ {
			rm := regs.Get(j).Message()
			th.Registers = append(th.Registers, plcrash.Register{Name: get(rm, "name").String(), Value: get(rm, "value").Uint()})
		}
		r.Threads = append(r.Threads, th)
	}
	images := get(m, "binary_images").List()
	for i := 0; i < images.Len(); i++ {
		im := images.Get(i).Message()
		bi := plcrash.BinaryImage{Base: get(im, "base_address").Uint(), Size: get(im, "size").Uint(), Name: get(im, "name").String()}
		if u := get(im, "uuid").Bytes(); len(u) == 16 {
			copy(bi.UUID[:], u)
			bi.HasUUID = true
		}
		if has(im, "code_type") {
			p := processor(sub(im, "code_type"))
			bi.CodeType = &p
		}
		r.Images = append(r.Images, bi)
	}
	if has(m, "exception") {
		em := sub(m, "exception")
		r.Exception = &plcrash.Exception{Name: get(em, "name").String(), Reason: get(em, "reason").String(), Frames: frames(get(em, "frames").List())}
	}
	sg := sub(m, "signal")
	r.Signal = plcrash.Signal{Name: get(sg, "name").String(), Code: get(sg, "code").String(), Address: get(sg, "address").Uint()}
	if has(sg, "mach_exception") {
		mm := sub(sg, "mach_exception")
		r.Signal.Mach = &plcrash.MachException{Type: get(mm, "type").Uint()}
		codes := get(mm, "codes").List()
		for i := 0; i < codes.Len(); i++ {
			r.Signal.Mach.Codes = append(r.Signal.Mach.Codes, codes.Get(i).Uint())
		}
	}
	if has(m, "process_info") {
		pm := sub(m, "process_info")
		r.Process = &plcrash.ProcessInfo{Name: get(pm, "process_name").String(), PID: uint32(get(pm, "process_id").Uint()),
			Path: get(pm, "process_path").String(), ParentName: get(pm, "parent_process_name").String(),
			ParentPID: uint32(get(pm, "parent_process_id").Uint()), Native: get(pm, "native").Bool(),
			StartTime: get(pm, "start_time").Uint(), HasStartTime: has(pm, "start_time")}
	}
	if has(m, "machine_info") {
		mm := sub(m, "machine_info")
		r.Machine = &plcrash.MachineInfo{Model: get(mm, "model").String(), Processor: processor(sub(mm, "processor")),
			ProcessorCount: uint32(get(mm, "processor_count").Uint()), LogicalProcessorCount: uint32(get(mm, "logical_processor_count").Uint())}
	}
	if has(m, "report_info") {
		rm := sub(m, "report_info")
		r.Info = &plcrash.ReportInfo{UserRequested: get(rm, "user_requested").Bool()}
		if u := get(rm, "uuid").Bytes(); len(u) == 16 {
			copy(r.Info.UUID[:], u)
			r.Info.HasUUID = true
		}
	}
	r.CustomData = get(m, "custom_data").String()
	return r, nil
}
