package crashreport

import (
	"bytes"
	"encoding/json"

	"github.com/stackimage/stackimage/internal/lazyregexp"
)

// detectWindow is how much of a text report Detect looks at: the header
// and the first thread are well within it.
const detectWindow = 64 << 10

// textMarkers are lines only a text crash report has.
var textMarkers = lazyregexp.New(`(?m)^(Incident Identifier:|Process:\s|Exception Type:|Crashed Thread:|Binary Images:|Thread \d+( Crashed)?::?)`)

// hangMarkers are lines of macOS sample and spindump hang reports, which
// share "Process:" and "Binary Images:" with a .crash but are call graphs,
// read by package hangreport.
// A spindump thread heading ("  Thread 0x1a2b ... 10 samples (1-10)")
// marks a listing of spindump's processes pasted without its header.
var hangMarkers = lazyregexp.New(`(?m)^(Analysis of sampling |Sampling process \d+ for |Call graph:\r?$|Data Source:\s|[ \t]+Thread 0x[0-9a-fA-F]+[ \t].*\b\d+ samples? \()`)

// Detect tells which format data is in, from its content: JSON whose
// first line is an object with "bug_type" is .ips; a JSON object with
// "crash" together with "binary_images" or "report" (or an array of such
// objects) is KSCrash; text with the lines of an Apple crash report
// ("Incident Identifier:", "Process:", "Binary Images:", "Thread 0
// Crashed:") is .crash, unless it has the lines of a sample or spindump
// report ("Analysis of sampling", "Call graph:", "Data Source:"). A
// truncated report is still recognized as long as its first key or header
// line survives.
func Detect(data []byte) (Format, bool) {
	data = bytes.TrimLeft(data, "\ufeff \t\r\n")
	if len(data) == 0 {
		return "", false
	}
	if data[0] == '{' || data[0] == '[' {
		line := data
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line = data[:nl]
		}
		var meta map[string]json.RawMessage
		if json.Unmarshal(line, &meta) == nil {
			if _, ok := meta["bug_type"]; ok {
				if body := bytes.TrimSpace(data[len(line):]); len(body) > 0 {
					return ipsReportBody(body)
				}
			}
		}
		if isKSCrash(data) {
			return FormatKSCrash, true
		}
		if _, ok := meta["bug_type"]; ok {
			// The metadata line alone: an .ips cut right after it.
			return FormatIPS, true
		}
		return "", false
	}
	window := data
	if len(window) > detectWindow {
		window = window[:detectWindow]
	}
	if textMarkers.Match(window) && !hangMarkers.Match(window) {
		return FormatCrash, true
	}
	return "", false
}

// ipsReportBody tells whether an .ips report's body, after its metadata line, is
// a crash report's: JSON (iOS 15 and later) or the text of a .crash
// (bug_type 109, before iOS 15). A microstackshot or spindump report
// (bug_type 145, 202, 288) also puts text after the line, with the lines
// of a call graph ("Data Source: Microstackshots"); package hangreport
// reads those.
func ipsReportBody(body []byte) (Format, bool) {
	if body[0] == '{' {
		return FormatIPS, true
	}
	if len(body) > detectWindow {
		body = body[:detectWindow]
	}
	if textMarkers.Match(body) && !hangMarkers.Match(body) {
		return FormatIPS, true
	}
	return "", false
}

// isKSCrash reports whether data's top-level object (or the first object
// of a top-level array) has KSCrash's keys. It reads keys until the input
// ends or breaks, so a truncated report still counts.
func isKSCrash(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	if tok == json.Delim('[') {
		if tok, err = dec.Token(); err != nil {
			return false
		}
	}
	if tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, ok := tok.(string)
		if !ok {
			break
		}
		seen[key] = true
		if seen["binary_images"] || seen["crash"] && seen["report"] {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return seen["crash"] && (seen["binary_images"] || seen["report"]) || seen["binary_images"]
}
