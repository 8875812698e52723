/*
 * Exhausting a node from every CPU: each CPU takes order-0 pages until NULL onto its own
 * list, then gives them back. Shared by mm_private.c and mm_pcp_private.c (the host runs both).
 */
#ifndef TESTS_KERNEL_MM_EXHAUST_H
#define TESTS_KERNEL_MM_EXHAUST_H

#include "mm/mm.h"
#include "kernel/smp.h"
#include "kernel/list.h"

struct exhaust {
	struct pglist_data *pgdat;
	struct list_head held[MAX_CPUS];
	unsigned long got[MAX_CPUS];
};

/* On each CPU (an smp_call_fn): take pages of e->pgdat until NULL, ignoring watermarks. */
static inline void exhaust_fn(void *arg)
{
	struct exhaust *e = arg;
	unsigned int cpu = arch_cpu_id();
	struct page *page;

	INIT_LIST_HEAD(&e->held[cpu]);
	while ((page = alloc_pages_node(e->pgdat, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NOWARN, 0))) {
		list_add(&page->lru, &e->held[cpu]);
		e->got[cpu]++;
	}
}

/* On each CPU: free what exhaust_fn() took there. */
static inline void release_fn(void *arg)
{
	struct exhaust *e = arg;
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &e->held[arch_cpu_id()], lru)
		__free_pages(page, 0);
}

#endif
