package plcrash

import "google.golang.org/protobuf/encoding/protowire"

// The field numbers of PLCrashReport.proto, message by message, and the
// names errors give them. A number a message does not list is skipped, as
// protocol buffers require of unknown fields.

// plcrash.CrashReport
const (
	fReportSystemInfo  protowire.Number = 1
	fReportAppInfo     protowire.Number = 2
	fReportThreads     protowire.Number = 3
	fReportImages      protowire.Number = 4
	fReportException   protowire.Number = 5
	fReportSignal      protowire.Number = 6
	fReportProcessInfo protowire.Number = 7
	fReportMachineInfo protowire.Number = 8
	fReportInfo        protowire.Number = 9
	fReportCustomData  protowire.Number = 10
)

// CrashReport.SystemInfo
const (
	fSystemOS           protowire.Number = 1
	fSystemOSVersion    protowire.Number = 2
	fSystemArchitecture protowire.Number = 3
	fSystemTimestamp    protowire.Number = 4
	fSystemOSBuild      protowire.Number = 5
)

// CrashReport.ApplicationInfo
const (
	fAppIdentifier       protowire.Number = 1
	fAppVersion          protowire.Number = 2
	fAppMarketingVersion protowire.Number = 3
)

// CrashReport.Symbol
const (
	fSymbolName  protowire.Number = 1
	fSymbolStart protowire.Number = 2
	fSymbolEnd   protowire.Number = 3
)

// CrashReport.Thread, Thread.StackFrame and Thread.RegisterValue
const (
	fThreadNumber    protowire.Number = 1
	fThreadFrames    protowire.Number = 2
	fThreadCrashed   protowire.Number = 3
	fThreadRegisters protowire.Number = 4

	fFramePC     protowire.Number = 3
	fFrameSymbol protowire.Number = 6

	fRegisterName  protowire.Number = 1
	fRegisterValue protowire.Number = 2
)

// CrashReport.BinaryImage and CrashReport.Processor
const (
	fImageBase     protowire.Number = 1
	fImageSize     protowire.Number = 2
	fImageName     protowire.Number = 3
	fImageUUID     protowire.Number = 4
	fImageCodeType protowire.Number = 5

	fProcessorEncoding protowire.Number = 1
	fProcessorType     protowire.Number = 2
	fProcessorSubtype  protowire.Number = 3
)

// CrashReport.Exception
const (
	fExceptionName   protowire.Number = 1
	fExceptionReason protowire.Number = 2
	fExceptionFrames protowire.Number = 3
)

// CrashReport.Signal and Signal.MachException
const (
	fSignalName    protowire.Number = 1
	fSignalCode    protowire.Number = 2
	fSignalAddress protowire.Number = 3
	fSignalMach    protowire.Number = 4

	fMachType  protowire.Number = 1
	fMachCodes protowire.Number = 2
)

// CrashReport.ProcessInfo
const (
	fProcessName       protowire.Number = 1
	fProcessID         protowire.Number = 2
	fProcessPath       protowire.Number = 3
	fProcessParentName protowire.Number = 4
	fProcessParentID   protowire.Number = 5
	fProcessNative     protowire.Number = 6
	fProcessStartTime  protowire.Number = 7
)

// CrashReport.MachineInfo
const (
	fMachineModel        protowire.Number = 1
	fMachineProcessor    protowire.Number = 2
	fMachineProcessors   protowire.Number = 3
	fMachineLogicalCount protowire.Number = 4
)

// CrashReport.ReportInfo
const (
	fInfoUserRequested protowire.Number = 1
	fInfoUUID          protowire.Number = 2
)

// message names a message's fields for errors and says which wire type
// each known field has.
type message struct {
	fields map[protowire.Number]fieldInfo
}

type fieldInfo struct {
	name string
	typ  protowire.Type
	// packed says a repeated varint field may come packed, as one
	// length-delimited run of varints.
	packed bool
}

const (
	varint = protowire.VarintType
	bytes_ = protowire.BytesType
)

var (
	reportMsg = message{map[protowire.Number]fieldInfo{
		fReportSystemInfo: {"system_info", bytes_, false}, fReportAppInfo: {"application_info", bytes_, false},
		fReportThreads: {"threads", bytes_, false}, fReportImages: {"binary_images", bytes_, false},
		fReportException: {"exception", bytes_, false}, fReportSignal: {"signal", bytes_, false},
		fReportProcessInfo: {"process_info", bytes_, false}, fReportMachineInfo: {"machine_info", bytes_, false},
		fReportInfo: {"report_info", bytes_, false}, fReportCustomData: {"custom_data", bytes_, false},
	}}
	systemMsg = message{map[protowire.Number]fieldInfo{
		fSystemOS: {"operating_system", varint, false}, fSystemOSVersion: {"os_version", bytes_, false},
		fSystemArchitecture: {"architecture", varint, false}, fSystemTimestamp: {"timestamp", varint, false},
		fSystemOSBuild: {"os_build", bytes_, false},
	}}
	appMsg = message{map[protowire.Number]fieldInfo{
		fAppIdentifier: {"identifier", bytes_, false}, fAppVersion: {"version", bytes_, false},
		fAppMarketingVersion: {"marketing_version", bytes_, false},
	}}
	symbolMsg = message{map[protowire.Number]fieldInfo{
		fSymbolName: {"name", bytes_, false}, fSymbolStart: {"start_address", varint, false}, fSymbolEnd: {"end_address", varint, false},
	}}
	threadMsg = message{map[protowire.Number]fieldInfo{
		fThreadNumber: {"thread_number", varint, false}, fThreadFrames: {"frames", bytes_, false},
		fThreadCrashed: {"crashed", varint, false}, fThreadRegisters: {"registers", bytes_, false},
	}}
	frameMsg = message{map[protowire.Number]fieldInfo{
		fFramePC: {"pc", varint, false}, fFrameSymbol: {"symbol", bytes_, false},
	}}
	registerMsg = message{map[protowire.Number]fieldInfo{
		fRegisterName: {"name", bytes_, false}, fRegisterValue: {"value", varint, false},
	}}
	imageMsg = message{map[protowire.Number]fieldInfo{
		fImageBase: {"base_address", varint, false}, fImageSize: {"size", varint, false}, fImageName: {"name", bytes_, false},
		fImageUUID: {"uuid", bytes_, false}, fImageCodeType: {"code_type", bytes_, false},
	}}
	processorMsg = message{map[protowire.Number]fieldInfo{
		fProcessorEncoding: {"encoding", varint, false}, fProcessorType: {"type", varint, false}, fProcessorSubtype: {"subtype", varint, false},
	}}
	exceptionMsg = message{map[protowire.Number]fieldInfo{
		fExceptionName: {"name", bytes_, false}, fExceptionReason: {"reason", bytes_, false}, fExceptionFrames: {"frames", bytes_, false},
	}}
	signalMsg = message{map[protowire.Number]fieldInfo{
		fSignalName: {"name", bytes_, false}, fSignalCode: {"code", bytes_, false}, fSignalAddress: {"address", varint, false},
		fSignalMach: {"mach_exception", bytes_, false},
	}}
	// codes is a repeated uint64: proto2 writes it unpacked (one varint
	// per code), but a reader must accept the packed form too.
	machMsg = message{map[protowire.Number]fieldInfo{
		fMachType: {"type", varint, false}, fMachCodes: {"codes", varint, true},
	}}
	processMsg = message{map[protowire.Number]fieldInfo{
		fProcessName: {"process_name", bytes_, false}, fProcessID: {"process_id", varint, false}, fProcessPath: {"process_path", bytes_, false},
		fProcessParentName: {"parent_process_name", bytes_, false}, fProcessParentID: {"parent_process_id", varint, false},
		fProcessNative: {"native", varint, false}, fProcessStartTime: {"start_time", varint, false},
	}}
	machineMsg = message{map[protowire.Number]fieldInfo{
		fMachineModel: {"model", bytes_, false}, fMachineProcessor: {"processor", bytes_, false},
		fMachineProcessors: {"processor_count", varint, false}, fMachineLogicalCount: {"logical_processor_count", varint, false},
	}}
	reportInfoMsg = message{map[protowire.Number]fieldInfo{
		fInfoUserRequested: {"user_requested", varint, false}, fInfoUUID: {"uuid", bytes_, false},
	}}
)
