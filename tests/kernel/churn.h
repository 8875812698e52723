/*
 * Random allocation churn: orders 0-3 (with high_orders, 1 allocation in 16 of order 0-5), up
 * to CHURN_HELD blocks held at a time, each step an allocation or a free picked by a 64-bit
 * LCG. One walk for the fail_page_alloc cases of the kernel (fail_page_alloc.c) and of the
 * host (tests/host/test_fail_page_alloc.c), and for the pcp stress and remote-drain churners
 * of both (mm_pcp_private.c).
 */
#ifndef TESTS_KERNEL_CHURN_H
#define TESTS_KERNEL_CHURN_H

#include "mm/mm.h"

#define CHURN_HELD 32

struct churn {
	u64 x;				/* the LCG's state: the caller seeds it */
	unsigned int n;			/* blocks held */
	bool high_orders;		/* 1 allocation in 16 of order 0-5, not 0-3 */
	struct page *held[CHURN_HELD];
	u8 order[CHURN_HELD];
};

static inline u64 churn_next(struct churn *c)
{
	return c->x = c->x * 6364136223846793005ull + 1442695040888963407ull;
}

/*
 * One step: allocate (gfp, or gfp_alt on a random half of the allocations) from pgdat, or
 * the local node if NULL, or free a held block at random. Returns 1 for an allocation that
 * succeeded, -1 for one that failed, 0 for a free.
 */
static inline int churn_step(struct churn *c, struct pglist_data *pgdat, gfp_t gfp, gfp_t gfp_alt)
{
	u64 x = churn_next(c);

	if (c->n < CHURN_HELD && (c->n == 0 || ((x >> 40) & 1))) {
		unsigned int order = c->high_orders && (x >> 48) % 16 == 0 ?
				     (unsigned int)((x >> 52) % 6) : (unsigned int)((x >> 20) % 4);
		gfp_t g = ((x >> 30) & 1 ? gfp_alt : gfp) | __GFP_NOWARN;
		struct page *page = pgdat ? alloc_pages_node(pgdat, g, order) : alloc_pages(g, order);

		if (!page)
			return -1;
		c->order[c->n] = (u8)order;
		c->held[c->n++] = page;
		return 1;
	} else {
		unsigned int k = (unsigned int)((x >> 24) % c->n);

		__free_pages(c->held[k], c->order[k]);
		c->held[k] = c->held[--c->n];
		c->order[k] = c->order[c->n];
		return 0;
	}
}

/* Free everything still held. */
static inline void churn_release(struct churn *c)
{
	while (c->n) {
		c->n--;
		__free_pages(c->held[c->n], c->order[c->n]);
	}
}

#endif
