// names.c gives C functions the symbol names the Swift compiler emits
// (an asm label sets the exact Mach-O symbol), so that the command's tests
// and README can show Swift frames symbolicated without a Swift toolchain.
// Built by build.sh.

#define SWIFT_NAME(mangled) __asm__("_" mangled)

// specialized static CrashClass.pleaseCrash() (module iOSCrashingTest)
__attribute__((noinline)) int please_crash(int x) SWIFT_NAME("$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n");
// closure #1 in ViewController.viewDidLoad()
__attribute__((noinline)) int view_did_load_closure(int x) SWIFT_NAME("$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_");
// @objc ViewController.viewDidLoad()
__attribute__((noinline)) int view_did_load_objc(int x) SWIFT_NAME("$s5MyApp14ViewControllerC11viewDidLoadyyFTo");

int please_crash(int x) { return *(volatile int *)(long)x; }
int view_did_load_closure(int x) { return please_crash(x) + 1; }
int view_did_load_objc(int x) { return view_did_load_closure(x) + 2; }

void start(void) { view_did_load_objc(0); for (;;); }
