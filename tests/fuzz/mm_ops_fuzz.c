/*
 * libFuzzer target for the mm API: the input is a program of the mm API generator
 * (tests/gen), decoded by gen_decode() (one op at a time, on CPU 0: allocations, frees,
 * references, fills, address spaces, mappings, faults, gups, pins, drains, per-CPU list
 * settings, fault injection), run on a fresh private machine by the host shim and checked
 * against the generator's reference model after every step (tests/gen/README.md). Any model
 * failure aborts with its class and message; a bad_page() report, WARN_ON or panic too.
 */
#include <stdio.h>
#include <stdlib.h>
#include "tests/gen/mm_gen.h"
#include "tests/host/shim/shim.h"

/* The decoder puts every op on CPU 0: no CPU threads (those are the host harness's). */
void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *d, size_t size)
{
	static struct gen_prog prog;
	static bool ready;
	const struct gen_run_opts o = { .sched = GEN_SCHED_SERIAL };
	struct gen_verdict v;

	if (!ready) {
		host_phys_init(4ull << 30 | 512ull << 20);
		ready = true;
	}
	gen_decode(&prog, d, size);
	if (!prog.nr_ops)
		return 0;
	gen_run(&prog, &o, &v);
	if (v.failed) {
		printf("mm_ops: %s after op %d: %s\n", v.fail_class, v.op, v.message);
		fflush(stdout);
		abort();
	}
	return 0;
}
