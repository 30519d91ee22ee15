package minidump_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/minidump"
)

// A dump is written for an arm64 iOS process and read back: the crashed
// thread's registers, the module holding its pc with its debug id, and the
// crash reason.
func Example() {
	regs := archregs.NewRegisters(archregs.ARM64)
	regs.Set("pc", 0x1_0000_4321)
	regs.Set("sp", 0x16f_e000_00)
	uuid := [16]byte{0x67, 0xe9, 0x24, 0x7c, 0x81, 0x4e, 0x39, 0x2b, 0xa0, 0x27, 0xdb, 0xde, 0x67, 0x48, 0xfc, 0xbf}
	var buf bytes.Buffer
	err := minidump.Write(&buf, &minidump.WriterInput{
		Arch: archregs.ARM64, Platform: minidump.PlatformIOS, MajorVersion: 17, MinorVersion: 4, OSBuild: "21E236",
		Threads:   []minidump.WriterThread{{ID: 7, Registers: regs}},
		Modules:   []minidump.WriterModule{{Base: 0x1_0000_0000, Size: 0x8000, Path: "/private/var/containers/Bundle/Application/App.app/App", UUID: uuid}},
		Exception: &minidump.WriterException{ThreadID: 7, Code: 1, Flags: 1, Address: 0x10},
	})
	if err != nil {
		log.Fatal(err)
	}

	d, err := minidump.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	th := d.CrashedThread()
	pc, _ := th.Registers().PC()
	m := d.ModuleAt(pc)
	fmt.Println(d.OSName, d.OSVersion, d.OSBuild, d.Arch)
	fmt.Printf("thread %d pc %#x in %s+%#x\n", th.ID, pc, m.Name, pc-m.Base)
	fmt.Println("debug id", m.DebugID)
	fmt.Println(d.Exception.Reason, "at", fmt.Sprintf("%#x", d.Exception.Address))
	// Output:
	// iOS 17.4.0 21E236 arm64
	// thread 7 pc 0x100004321 in App+0x4321
	// debug id 67E9247C814E392BA027DBDE6748FCBF0
	// EXC_BAD_ACCESS / KERN_INVALID_ADDRESS at 0x10
}
