/*
 * Host microbenchmark of an order-0 alloc+free pair (mmtest --bench buddy|pcp [pairs]),
 * for `valgrind --tool=callgrind --toggle-collect=bench_pairs_loop`: instructions per
 * pair = Ir of bench_pairs_loop / pairs. Poisoning off; DEBUG_VM as built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/harness.h"

__attribute__((noinline)) void bench_pairs_loop(struct pglist_data *pgdat, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__free_pages(alloc_pages_node(pgdat, GFP_KERNEL, 0), 0);
}

int host_bench(int argc, char **argv)
{
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	bool buddy = argc > 0 && !strcmp(argv[0], "buddy");
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);
	u64 start;

	if (!pgdat)
		return 2;
	zone_pcp_update(pgdat, 1);
	pgdat->poison = false;
	pcp_enabled = !buddy;
	bench_pairs_loop(pgdat, 1000);		/* warm up: refill the list once */
	start = arch_cycles();
	bench_pairs_loop(pgdat, n);
	printf("%s: %lu order-0 alloc+free pairs, %.1f ns per pair (DEBUG_VM %d)\n",
	       buddy ? "buddy only" : "pcp", n, (double)(arch_cycles() - start) / (double)n,
	       CONFIG_DEBUG_VM);
	return mm_verify(pgdat) ? 1 : 0;
}
