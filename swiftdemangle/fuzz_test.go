package swiftdemangle

import (
	"errors"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testtool"
)

// appSymbols are names of the kinds iOS app binaries are full of: methods,
// closures, specializations, thunks, accessors, async partial functions.
var appSymbols = []string{
	"_$s5MyApp14ViewControllerC11viewDidLoadyyFTo",
	"_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_",
	"_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_TA",
	"_$s5MyApp14ViewControllerC3foo3barySi_tF",
	"_$s5MyApp14ViewControllerC3foo3barySi_tF.cold.1",
	"$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n",
	"_$s8mangling14varargsVsArray3arr1nySaySiGd_SStF",
	"$s7ranking22propertyVersusFunctionyyAA1P_p_xtAaCRzlFyAaC_pcAaC_pcfu_",
	"$s8mangling10HasVarInitV5stateSbvpZfiSbyKXKfu_",
	"$s10Speediness17NetworkQualityCLIO3run10sequentialAC6ResultVSb_tYaKFZTf4nd_nTQ0_",
	"$s3foo3barC3bas3zimyAaEC_tFTo",
	"$s4main3fooyySiFyyXEfU_TA.1",
	"$s8mangling24InstanceAndClassPropertyV8propertySivg",
	"$s8mangling12GenericUnionO3FooyACyxGSicAEmlF",
	"$sSo17OS_dispatch_queueC4sync7executeyyyXE_tFTOTA",
	"$s4test3StrCACycfC",
	"$s12SharedDomain7ServiceC06streamC0_4bodyACXDScSyxG_yxYaYbKYCcts8SendableRzlFZyycAA06StreamC0CYbcfu_yycfu0_Tm",
	"$s18OrderedCollections0A10DictionaryV20uniqueKeysWithValuesACyxq_Gqd___tcSTRd__x_q_t7ElementRtd__lufC6TaggedAHVy8SportsUI0J23ParticipantRowViewModelVSSG_ALs15LazyMapSequenceVySayALGAM_ALtGTt0g5Tf4g_n",
	"$sxIeghHr_xs5Error_pIegHrzo_s8SendableRzs5NeverORs_r0_lTRTATQ0_",
	"_T08mangling3ZimC4zangyx_qd__tlF",
	"$s5Actor02MyA0C17testAsyncFunctionyyYaKFTY0_",
}

func FuzzDemangle(f *testing.F) {
	for _, s := range appSymbols {
		f.Add(s)
	}
	for _, s := range []string{"$s", "_T", "_Tt", "$sSDyS2iGSDyA2AG", "$s" + strings.Repeat("S2048i", 4), "$s0059xxxxxxxxxxxxxxx_ttttttttBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBee"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 4096 {
			return // symbol names are shorter; keep each run quick
		}
		root, err := Parse(name)
		if errors.Is(err, errInternal) {
			t.Fatalf("Parse(%q) panicked: %v", name, err)
		}
		defer func() {
			if printPanics.Load() != 0 {
				t.Fatalf("printing %q panicked", name)
			}
		}()
		for _, style := range []Style{Full, Simplified, NameOnly, SimplifiedTypes} {
			s, derr := Demangle(name, style)
			if (derr == nil) != (err == nil) && derr == nil {
				t.Fatalf("Demangle(%q) succeeded where Parse failed: %v", name, err)
			}
			if len(s) > MaxOutput {
				t.Fatalf("Demangle(%q, %d) printed %d bytes, more than MaxOutput", name, style, len(s))
			}
			if root != nil && derr == nil && root.String(style) != s {
				t.Fatalf("Parse(%q).String(%d) differs from Demangle", name, style)
			}
		}
	})
}

func BenchmarkDemangle(b *testing.B) {
	for _, style := range []struct {
		name  string
		style Style
	}{{"Simplified", Simplified}, {"Full", Full}} {
		b.Run(style.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			cpu0 := testtool.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, s := range appSymbols {
					if _, err := Demangle(s, style.style); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "symbols/s")
			if cpu := testtool.CPUTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(n)/cpu.Seconds(), "symbols/cpu-s")
			}
		})
	}
}
