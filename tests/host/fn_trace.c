/*
 * Which functions of the kernel's sources a scenario runs, for the reading lists of
 * docs/pcp.md (`mmtest --fn-trace SCENARIO`, checked by tests/bench/pair_trace.py --check).
 * In the fntrace and fntrace-release builds of tests/host/host.mk, compiled with
 * -finstrument-functions, every function of mm/ and kernel/ calls
 * __cyg_profile_func_enter() on entry, inlined or not; while a scenario runs, this records
 * each function's address once, from every CPU thread, and prints them (the caller names them
 * with nm). Not a profiler: no counts, no order. In the other builds nothing calls the hooks.
 */
#include <stdio.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/smp.h"

#define FN_TRACE_SLOTS 4096	/* a power of 2, far above the functions of mm/ and kernel/ */

static void *fn_seen[FN_TRACE_SLOTS];	/* open addressing; written with compare-and-swap */
static int fn_tracing;			/* atomic: record now */

void __cyg_profile_func_enter(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *call_site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	unsigned long i = ((unsigned long)fn >> 4) * 0x9e3779b97f4a7c15ul;

	if (!__atomic_load_n(&fn_tracing, __ATOMIC_RELAXED))
		return;
	for (unsigned int n = 0; n < FN_TRACE_SLOTS; n++, i++) {
		void *old = NULL, **slot = &fn_seen[i & (FN_TRACE_SLOTS - 1)];

		if (__atomic_load_n(slot, __ATOMIC_RELAXED) == fn ||
		    __atomic_compare_exchange_n(slot, &old, fn, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED) || old == fn)
			return;
	}
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
}

struct drain_scene {
	struct pglist_data *pgdat;
	struct zone *zone;
	int filled;	/* atomic */
	int listed;	/* cpu1's pages when the drain began */
};

/* cpu1 fills its list (allocations, then frees) and goes idle, taking IPIs; cpu0 then drains
 * every CPU's lists of the zone, recorded. */
static void *drain_scene_cpu(void *p)
{
	struct drain_scene *d = *(struct drain_scene **)p;

	if (arch_cpu_id() == 1) {
		struct page *pages[16];
		unsigned long n = alloc_until_null(d->pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));

		free_all(pages, n, 0);
		smp_store_release(&d->filled, 1);
		return NULL;
	}
	while (!smp_load_acquire(&d->filled))
		arch_cpu_relax();
	d->listed = READ_ONCE(d->zone->pcp[1].count);
	__atomic_store_n(&fn_tracing, 1, __ATOMIC_SEQ_CST);
	drain_all_pages(d->zone);
	__atomic_store_n(&fn_tracing, 0, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The remote drain of docs/pcp.md's reading list (b): CPU 0 drains CPU 1's list of a zone,
 * in lock model `model`. */
static int fn_trace_drain(enum pcp_lock_model model)
{
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	struct drain_scene d = { .pgdat = test_node_create_model(map, ARRAY_SIZE(map), 2, model) };
	struct drain_scene *args[2] = { &d, &d };

	if (!d.pgdat)
		return 2;
	zone_pcp_update(d.pgdat, 2);
	d.zone = &d.pgdat->node_zones[ZONE_DMA32];
	run_on_cpus(2, drain_scene_cpu, args, sizeof(args[0]));
	if (!d.listed || zone_pcp_count(d.zone)) {
		fprintf(stderr, "fn-trace: drain %s: cpu1 had %d pages listed, %lu are after the "
			"drain\n", pcp_lock_model_name(model), d.listed, zone_pcp_count(d.zone));
		return 1;
	}
	test_node_destroy(d.pgdat);
	return 0;
}

/* mmtest --fn-trace drain-irqoff|drain-irqsave|drain-trylock: the addresses, one a line,
 * after this function's own (to map them with nm: the binary is position-independent). */
int fn_trace_main(int argc, char **argv)
{
	int model = argc > 0 && !strncmp(argv[0], "drain-", 6) ? pcp_lock_model_parse(argv[0] + 6) : -1;
	int ret;

	if (model < 0) {
		fprintf(stderr, "usage: mmtest --fn-trace drain-irqoff|drain-irqsave|drain-trylock\n");
		return 2;
	}
	ret = fn_trace_drain((enum pcp_lock_model)model);
	printf("fn_trace_main %lx\n", (unsigned long)fn_trace_main);	/* the load offset */
	for (unsigned int i = 0; i < FN_TRACE_SLOTS; i++)
		if (fn_seen[i])
			printf("%lx\n", (unsigned long)fn_seen[i]);
	return ret;
}
