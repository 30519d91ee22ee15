//go:build unicorn

// C shims between Unicorn and Go. cgo cannot call the variadic uc_hook_add
// nor take the address of a Go function, so the hooks are registered here
// and forward to exported Go trampolines with an integer handle (never a Go
// pointer) as their user data.

#include <stdint.h>
#include <stdbool.h>
#include <unicorn/unicorn.h>
#include "_cgo_export.h"

static void codeShim(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	emuCodeHook((uintptr_t)user, addr, size);
}

static bool memInvalidShim(uc_engine *uc, uc_mem_type type, uint64_t addr,
                           int size, int64_t value, void *user) {
	return emuMemInvalidHook((uintptr_t)user, (int)type, addr, size);
}

uc_err emuAddCodeHook(uc_engine *uc, uc_hook *hh, uintptr_t handle,
                      uint64_t begin, uint64_t end) {
	return uc_hook_add(uc, hh, UC_HOOK_CODE, (void *)codeShim, (void *)handle,
	                   begin, end);
}

uc_err emuAddMemInvalidHook(uc_engine *uc, uc_hook *hh, uintptr_t handle) {
	return uc_hook_add(uc, hh, UC_HOOK_MEM_INVALID, (void *)memInvalidShim,
	                   (void *)handle, 1, 0);
}

uc_err emuRegReadBatch(uc_engine *uc, int *ids, uint64_t *vals, int n) {
	void *ptrs[64];
	if (n > 64) {
		return UC_ERR_ARG;
	}
	for (int i = 0; i < n; i++) {
		vals[i] = 0; // narrower registers fill only the low bytes
		ptrs[i] = &vals[i];
	}
	return uc_reg_read_batch(uc, ids, ptrs, n);
}
