package metrickit

import "bytes"

// detectKeys are keys only MetricKit's JSON has: a payload's arrays of
// diagnostics and a call stack tree's members.
var detectKeys = [][]byte{
	[]byte(`"callStackRootFrames"`),
	[]byte(`"callStackTree"`),
	[]byte(`"callStackPerThread"`),
	[]byte(`"crashDiagnostics"`),
	[]byte(`"hangDiagnostics"`),
	[]byte(`"cpuExceptionDiagnostics"`),
	[]byte(`"diskWriteExceptionDiagnostics"`),
	[]byte(`"appLaunchDiagnostics"`),
}

// Detect reports whether head, the first bytes of an input, is MetricKit
// JSON: an object or array naming one of a payload's arrays of
// diagnostics or a call stack tree's members. Apple's .ips and KSCrash
// reports, stackimage snapshots and the aggregate stream format name
// none of them.
func Detect(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) == 0 || head[0] != '{' && head[0] != '[' {
		return false
	}
	for _, k := range detectKeys {
		if bytes.Contains(head, k) {
			return true
		}
	}
	return false
}
