/*
 * What the per-CPU list tests of both platforms share beyond mm_pcp_private.c (written once
 * for both): a bounded wait for a flag (tests/host/test_pcp.c uses it too).
 */
#ifndef TESTS_KERNEL_PCP_CHECK_H
#define TESTS_KERNEL_PCP_CHECK_H

#include "kernel/timer.h"

/* Wait for an atomic flag to become non-zero, at most us microseconds; true if it did. */
static inline bool wait_flag_us(int *flag, u64 us)
{
	u64 end = arch_cycles() + us_to_cycles(us);

	while (!smp_load_acquire(flag))
		if (arch_cycles() > end)
			return false;
		else
			arch_cpu_relax();
	return true;
}

#endif
