package crashreport

import "testing"

// TestKSCrashReportVersion checks both forms of KSCrash's report.version
// and that an odd one is left empty without failing the report.
func TestKSCrashReportVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		want    string
	}{
		{name: "object", version: `{"major": 2, "minor": 0}`, want: "2.0"},
		{name: "object without minor", version: `{"major": 2}`, want: "2.0"},
		{name: "string", version: `"3.3.0"`, want: "3.3.0"},
		{name: "number", version: `3`, want: "3"},
		{name: "array", version: `[1, 2]`, want: ""},
		{name: "object without major", version: `{"minor": 1}`, want: ""},
		{name: "absent", version: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := `{"process_name": "App"`
			if tt.version != "" {
				report += `, "version": ` + tt.version
			}
			report += "}"
			data := `{"report": ` + report + `, "crash": {"threads": []}, "binary_images": []}`
			r, err := ParseKSCrash([]byte(data))
			if err != nil {
				t.Fatalf("ParseKSCrash: %v", err)
			}
			if r.ReportVersion != tt.want {
				t.Errorf("ReportVersion = %q, want %q", r.ReportVersion, tt.want)
			}
			if r.Process != "App" {
				t.Errorf("Process = %q, want %q: the version must not spoil the report object", r.Process, "App")
			}
		})
	}
}
