/*
 * The generator's reference model: what a caller of the mm API may see. It keeps, for each
 * address space, its mappings (VMAs) and, page by page of the window, whether it is mapped
 * and the tag last written there; the blocks, fills and pins that ops hold; each zone's pcp
 * setting. After every step it checks each op's result against what the model allows, then
 * the state (probing mappings with gup, mm_verify, rss, the counters, every page accounted
 * for). An op alone has one right result (or, where memory runs short or fault injection
 * fires, a documented failure); ops of a phase, issued by several CPUs at once, are checked
 * against the set of results some order of them allows (tests/gen/README.md).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "tests/gen/gen_internal.h"
#include "mm/fail_page_alloc.h"
#include "kernel/panic.h"

/* ---- the model's state ---- */

struct m_vma {
	u32 start, end;		/* window pages */
	bool writable, huge;
};

struct m_mm {
	bool live;
	u8 node;
	struct m_vma vma[MM_MAX_VMAS];
	unsigned int nr_vma;
	bool mapped[GEN_WIN_PAGES];
	u64 tag[GEN_WIN_PAGES];
	struct page *pg[GEN_WIN_PAGES];	/* as last probed */
};

struct m_pin {
	u32 n;			/* 0: none */
	u8 mm, flags;
	u32 addr;
};

/* One zone at the start of a step, quiescent. */
struct zsnap {
	bool present;
	long buddy, pcp, deferred;
	unsigned long nr_free[NR_ORDERS];
	unsigned long high, reserve_normal;
};

static struct model {
	const struct gen_prog *p;
	const struct gen_run_opts *o;
	struct gen_verdict *v;
	struct m_mm mm[GEN_MMS];
	struct m_mm snap[GEN_MMS];	/* the address spaces a step touches, before it */
	struct m_pin pin[GEN_PINS];
	struct m_pin pin0[GEN_PINS];	/* ... before the step */
	int depth[GEN_NODE_ZONES];	/* zone_pcp_disable() nesting */
	bool fail_armed;
	bool deferred_done;
	unsigned long zone_total[GEN_NODE_ZONES];	/* managed + deferred_free */
	unsigned long warn0, bad_page0;
	struct gup_totals gup0;
	/* before the step */
	struct zsnap z[GEN_NODE_ZONES];
	u64 inj0[GEN_CPUS];
	struct fail_page_alloc_stats fpa0;
	unsigned int steps;
	/* remote_home: since the last drain of every list, with only ops alone */
	bool rh_dirty;
	u64 rh0[GEN_NODE_ZONES];
	long rh_free[GEN_NODE_ZONES], rh_alloc[GEN_NODE_ZONES];
	/* pages of blocks and fills the model holds, by pfn: a page given out twice is caught */
	u8 *owner;
	unsigned long owner_pfns;
} M;

static struct gen_verdict *V;

void gen_fail(int op, const char *cls, const char *c_check, const char *fmt, ...)
{
	va_list ap;

	if (V->failed)
		return;
	V->failed = true;
	V->op = op;
	snprintf(V->fail_class, sizeof(V->fail_class), "%s", cls);
	snprintf(V->check_c, sizeof(V->check_c), "%s", c_check ? c_check : "");
	va_start(ap, fmt);
	vsnprintf(V->message, sizeof(V->message), fmt, ap);
	va_end(ap);
}

bool gen_failed(void)
{
	return V->failed;
}

static void data_fail(int op, int m, u32 p, u64 t0, u64 t1, u64 want);

static const struct gen_op *OP(unsigned int i)
{
	return &M.p->ops[i];
}

static u64 win_addr(u32 page)
{
	return GEN_WIN_BASE + (u64)page * PAGE_SIZE;
}

static unsigned int zone_id(const struct zone *zone)
{
	return node_index(zone->node) * MAX_NR_ZONES + (unsigned int)zone->idx;
}

static unsigned int cpu_node_index(unsigned int cpu)
{
	return gen_world.m.nr_nodes > 1 ? gen_world.cpu_node[cpu] : 0;
}

/* ---- pages the model holds, by pfn (the machine's RAM is two small ranges) ---- */

static u8 *owner_slot(const struct page *page)
{
	unsigned long pfn = page_to_pfn(page), lo = GEN_LO_BASE >> PAGE_SHIFT;
	unsigned long hi = GEN_HI_BASE >> PAGE_SHIFT, lo_n = GEN_LO_SIZE(M.p->cfg.deferred) >> PAGE_SHIFT;

	if (pfn >= lo && pfn < lo + lo_n)
		return &M.owner[pfn - lo];
	if (pfn >= hi && pfn < hi + (GEN_HI_SIZE >> PAGE_SHIFT))
		return &M.owner[lo_n + pfn - hi];
	return NULL;
}

/* Mark the 2^order pages of a block held; false if one was already (or is not RAM here). */
static bool own(struct page *page, unsigned int order)
{
	bool ok = true;

	for (unsigned long k = 0; k < (1ul << order); k++) {
		u8 *o = owner_slot(page + k);

		if (!o)
			return false;
		ok &= !*o;
		*o = 1;
	}
	return ok;
}

/* Every page of every block and fill the program holds, once: no page given out twice. */
static void check_owners(int op)
{
	memset(M.owner, 0, M.owner_pfns);
	for (unsigned int b = 0; b < GEN_BLOCKS && !gen_failed(); b++)
		if (gen_h.blk[b].page && !own(gen_h.blk[b].page, gen_h.blk[b].order))
			gen_fail(op, "alloc-twice", NULL, "after op %d: blk[%u] (pfn 0x%lx, order %u) "
				 "overlaps another block or fill the program holds", op, b,
				 (unsigned long)page_to_pfn(gen_h.blk[b].page), gen_h.blk[b].order);
	for (unsigned int g = 0; g < GEN_GROUPS && !gen_failed(); g++)
		for (u32 k = 0; k < gen_h.grp[g].n && !gen_failed(); k++)
			if (!own(gen_h.grp[g].pages[k], gen_h.grp[g].order))
				gen_fail(op, "alloc-twice", NULL, "after op %d: grp[%u] page %u (pfn "
					 "0x%lx) overlaps another block or fill the program holds", op,
					 g, k, (unsigned long)page_to_pfn(gen_h.grp[g].pages[k]));
}

/* ---- the zones, quiescent, before a step ---- */

static void snap_zones(void)
{
	memset(M.z, 0, sizeof(M.z));
	for (unsigned int n = 0; n < gen_world.m.nr_nodes; n++)
		for (int zi = 0; zi < MAX_NR_ZONES; zi++) {
			struct zone *zone = &gen_node(n)->node_zones[zi];
			struct zsnap *z = &M.z[n * MAX_NR_ZONES + zi];

			z->present = zone->managed_pages || zone->deferred_free;
			if (!z->present)
				continue;
			z->buddy = (long)zone_free_pages(zone);
			z->pcp = (long)zone_pcp_count(zone);
			z->deferred = (long)zone->deferred_free;
			for (int o = 0; o <= MAX_ORDER; o++)
				z->nr_free[o] = zone->free_area[o].nr_free;
			z->high = zone->_watermark[WMARK_HIGH];
			z->reserve_normal = zone->lowmem_reserve[ZONE_NORMAL];
		}
}

static enum zone_type gfp_highest(gfp_t gfp)
{
	return (gfp & __GFP_DMA) ? ZONE_DMA : (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL;
}

/* May an allocation of node `node` with gfp take pages from zone id zid? */
static bool zone_allowed(unsigned int zid, unsigned int node, gfp_t gfp)
{
	return M.z[zid].present && zid % MAX_NR_ZONES <= gfp_highest(gfp) &&
	       (!(gfp & __GFP_THISNODE) || zid / MAX_NR_ZONES == node);
}

static unsigned long blocks_from(const struct zsnap *z, unsigned int order)
{
	unsigned long n = 0;

	for (unsigned int o = order; o <= MAX_ORDER; o++)
		n += z->nr_free[o];
	return n;
}

/*
 * Must this allocation succeed, when other ops of its step may take up to `taken` pages
 * meanwhile? Yes if, whatever they do:
 *  - __GFP_MEMALLOC (no watermark) and it may wait (a drain of every CPU's lists, then a
 *    retry): order 0 needs one free page in a zone it may use, wherever it sits (buddy lists,
 *    any CPU's list, not yet initialised); a higher order, alone, a free block of that order
 *    on the buddy lists;
 *  - else a zone it may use stays above its high watermark and reserve by 64 pages after
 *    the request (pages on CPUs' lists count if it may wait), with a block of the order for
 *    a higher order, alone.
 * Otherwise the model does not say: it may fail.
 */
static bool alloc_must_succeed(unsigned int node, gfp_t gfp, unsigned int order, long taken,
			       bool alone)
{
	bool reclaim = gfp & __GFP_DIRECT_RECLAIM;
	long total = 0;

	if (order > MAX_ORDER)
		return false;
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++) {
		const struct zsnap *z = &M.z[zid];
		long avail;

		if (!zone_allowed(zid, node, gfp))
			continue;
		if ((gfp & __GFP_MEMALLOC) && reclaim) {
			total += order ? (alone ? (long)blocks_from(z, order) : 0) :
					 z->buddy + z->pcp + z->deferred;
			continue;
		}
		avail = z->buddy + (reclaim ? z->pcp : 0) - taken - ((1l << order) - 1);
		if (avail > (long)(z->high + z->reserve_normal) + 64 &&
		    (!order || (alone && blocks_from(z, order))))
			return true;
	}
	return (gfp & __GFP_MEMALLOC) && reclaim && total - (order ? 0 : taken) >= 1;
}

/* The most pages op may allocate (page tables included), for what others may take. */
static long op_max_alloc(unsigned int i)
{
	const struct gen_op *op = OP(i);
	long regions = (long)(op->len / GEN_REGION_PAGES) + 2;

	switch (op->kind) {
	case GEN_ALLOC:
		return op->order <= MAX_ORDER ? 1l << op->order : 0;
	case GEN_FILL:
		return 1l << 30;
	case GEN_MM_CREATE:
		return 2 + 16;
	case GEN_MMAP:
		return (op->flags & GEN_MAP_POP) ? (long)op->len + GEN_REGION_PAGES + 4 * regions : 0;
	case GEN_FAULT:
		return GEN_REGION_PAGES + 4;
	case GEN_WRITE: case GEN_READ: case GEN_PIN:
		return (GEN_REGION_PAGES + 4) * regions *
		       ((op->kind == GEN_PIN && (op->flags & GEN_PIN_LONG)) ? 2 : 1);
	}
	return 0;
}

/*
 * Memory short for an op that allocates inside mm/ (mm_create, faults, gup, migration
 * copies; GFP_USER/GFP_KERNEL on the machine's zonelists): fewer than need + 64 pages above
 * the zones' high watermarks, or, for 2 MiB copies (huge_need()), fewer free blocks of
 * order 9 than it may need. The model then allows -ENOMEM (or NULL, or a short count).
 */
static bool mem_short(long need, long huge_blocks)
{
	long above = 0, blocks = 0;

	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++) {
		const struct zsnap *z = &M.z[zid];
		long a;

		if (!z->present)
			continue;
		a = MAX(0l, z->buddy + z->pcp - (long)(z->high + z->reserve_normal));
		above += a;
		/* a 2 MiB page comes from one zone: a free block there, and room above its mark */
		if (a >= (long)pageblock_nr_pages + 64)
			blocks += MIN((long)blocks_from(z, pageblock_order),
				      (a - 64) / (long)pageblock_nr_pages);
	}
	return above < need + 64 || blocks < huge_blocks;
}

/* ---- the plan: what a step's ops may do, decided before it runs ---- */

static void plan_slot(struct gen_plan *pl, int *owner, unsigned int i, unsigned int key)
{
	if (owner[key] < 0)
		owner[key] = OP(i)->cpu;
	else if (owner[key] != OP(i)->cpu)
		pl->skip[i] = true;	/* another CPU's in this phase */
}

/* The key of the slot an op holds or releases (blocks, fills, pins; mm create/destroy). */
static int op_slot_key(const struct gen_op *op)
{
	switch (op->kind) {
	case GEN_ALLOC: case GEN_FREE: case GEN_REF: return op->slot;
	case GEN_FILL: case GEN_FREE_SOME: return GEN_BLOCKS + op->slot;
	case GEN_PIN: case GEN_UNPIN: return GEN_BLOCKS + GEN_GROUPS + op->slot;
	}
	return -1;
}

static int op_mm(const struct gen_op *op)
{
	switch (op->kind) {
	case GEN_MM_CREATE: case GEN_MM_DESTROY: return op->slot;
	case GEN_MMAP: case GEN_MUNMAP: case GEN_FAULT: case GEN_WRITE: case GEN_READ:
	case GEN_PIN: return op->mm;
	}
	return -1;
}

static unsigned int mm_cpus(const struct gen_plan *pl, int m)
{
	unsigned int mask = 0;

	for (unsigned int i = pl->first; i < pl->first + pl->n; i++)
		if (!pl->skip[i] && op_mm(OP(i)) == m)
			mask |= 1u << OP(i)->cpu;
	return (unsigned int)__builtin_popcount(mask);
}

/*
 * The rules of a phase (several CPUs): each block, fill and pin slot is one CPU's (the first
 * to name it); an address space created or destroyed in it is that CPU's alone; a shared one
 * changes its mappings at most once (one mmap or munmap); fault injection is set, and
 * mm_verify() runs, only alone (mm_verify() wants a quiet allocator: in a phase it may only
 * race with the deferred init, which it reports as busy); zone_pcp_enable() never below 0.
 */
void model_plan(struct gen_plan *pl)
{
	int owner[GEN_BLOCKS + GEN_GROUPS + GEN_PINS], mm_owner[GEN_MMS], enables[GEN_NODE_ZONES];
	bool vma_op[GEN_MMS] = { false }, others_deferred = true;
	unsigned int verify = 0;

	pl->alone = pl->n == 1;
	memset(owner, 0xff, sizeof(owner));
	memset(mm_owner, 0xff, sizeof(mm_owner));
	memset(enables, 0, sizeof(enables));
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *op = OP(i);

		pl->skip[i] = false;
		if (op->kind == GEN_PCP_ENABLE && op->node < GEN_NODE_ZONES &&
		    enables[op->node]++ >= M.depth[op->node])
			pl->skip[i] = true;
		if (pl->alone)
			continue;
		if (op_slot_key(op) >= 0)
			plan_slot(pl, owner, i, (unsigned int)op_slot_key(op));
		if ((op->kind == GEN_MM_CREATE || op->kind == GEN_MM_DESTROY) && mm_owner[op->slot] < 0)
			mm_owner[op->slot] = op->cpu;
		if (op->kind == GEN_FAIL)
			pl->skip[i] = true;
		verify += op->kind == GEN_VERIFY;
		others_deferred &= op->kind == GEN_VERIFY || op->kind == GEN_DEFERRED_INIT;
	}
	if (pl->alone)
		return;
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *op = OP(i);
		int m = op_mm(op);

		if (m >= 0 && mm_owner[m] >= 0 && mm_owner[m] != op->cpu)
			pl->skip[i] = true;
		if (op->kind == GEN_VERIFY && (verify > 1 || !others_deferred))
			pl->skip[i] = true;
	}
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *op = OP(i);

		if (pl->skip[i] || (op->kind != GEN_MMAP && op->kind != GEN_MUNMAP) ||
		    mm_cpus(pl, op->mm) < 2)
			continue;
		if (vma_op[op->mm])
			pl->skip[i] = true;
		vma_op[op->mm] = true;
	}
}

/* ---- before a step ---- */

void model_before(const struct gen_plan *pl)
{
	snap_zones();
	for (unsigned int c = 0; c < GEN_CPUS; c++)
		M.inj0[c] = gen_cpu_injected(c);
	fail_page_alloc_read_stats(&M.fpa0);
	memcpy(M.pin0, M.pin, sizeof(M.pin0));
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		int m = op_mm(OP(i));

		if (m >= 0)
			M.snap[m] = M.mm[m];
	}
}

/* ---- checking an op's result ---- */

/* Failures injected on op i's CPU during it (alone) or during its phase. */
static u64 injected(const struct gen_plan *pl, unsigned int i)
{
	if (pl->alone)
		return gen_res[i].inj;
	return gen_cpu_injected(OP(i)->cpu) - M.inj0[OP(i)->cpu];
}

/*
 * Pages other ops of the step may take while op i runs: what an allocation or a fill of the
 * phase got (a failed allocation holds nothing), the most any other op may allocate inside
 * mm/, even for a moment.
 */
static long taken_by_others(const struct gen_plan *pl, unsigned int i)
{
	long t = 0;

	for (unsigned int k = pl->first; k < pl->first + pl->n; k++) {
		const struct gen_op *o = OP(k);

		if (k == i || pl->skip[k] || !gen_res[k].ran)
			continue;
		if (o->kind == GEN_ALLOC)
			t += gen_res[k].page ? 1l << o->order : 0;
		else if (o->kind == GEN_FILL)
			t += gen_res[k].ret << o->order;
		else
			t += op_max_alloc(k);
	}
	return t;
}

static void expect(unsigned int i, u8 kind, long a, long b, long c)
{
	gen_res[i].exp = (struct gen_exp){ kind, a, b, c };
}

static bool check_block(unsigned int i, struct page *page, unsigned int node, gfp_t gfp,
			unsigned int order)
{
	const struct gen_op *op = OP(i);
	unsigned int zid = zone_id(page_zone(page));

	if (!zone_allowed(zid, node, gfp))
		gen_fail((int)i, "alloc-zone", NULL, "op %u: %s order %u on node%u got pfn 0x%lx "
			 "in node%u zone %u, which it may not use", i, gen_gfps[op->gfp].name, order,
			 node, (unsigned long)page_to_pfn(page), zid / MAX_NR_ZONES,
			 zid % MAX_NR_ZONES);
	else if (page_to_pfn(page) & ((1ul << order) - 1))
		gen_fail((int)i, "alloc-align", NULL, "op %u: order-%u block at pfn 0x%lx is not "
			 "aligned", i, order, (unsigned long)page_to_pfn(page));
	else if (page_pgdat(page)->machine == &gen_world.m && node_index(page_pgdat(page)) !=
		 cpu_node_index(op->cpu) && pcp_allowed_order(order))
		M.rh_alloc[zid] += 1l << order;
	else
		return true;
	return false;
}

/* fail_page_alloc's counters around an op alone: what an allocation may change. */
static void check_fpa_alloc(unsigned int i, bool got)
{
	const struct gen_op *op = OP(i);
	struct fail_page_alloc_stats s;
	u64 elig, failed;

	fail_page_alloc_read_stats(&s);
	elig = s.eligible - M.fpa0.eligible;
	failed = s.failed - M.fpa0.failed;
	if (op->order > MAX_ORDER && (elig || failed)) {
		char c[256];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, fpa1.eligible - fpa0.eligible, 0);\n"
			 "KT_EXPECT_EQ(t, fpa1.failed - fpa0.failed, 0);");
		snprintf(V->check_pre, sizeof(V->check_pre), "fail_page_alloc_read_stats(&fpa0);");
		gen_fail((int)i, "fail_page_alloc-counters", c, "op %u: an order-%u request (above "
			 "MAX_ORDER %u) changed fail_page_alloc's counters: eligible +%llu, failed "
			 "+%llu (it must be refused before injection looks at it)", i, op->order,
			 MAX_ORDER, (unsigned long long)elig, (unsigned long long)failed);
	} else if (elig > 1 || failed > elig || failed != gen_res[i].inj || (failed && got)) {
		gen_fail((int)i, "fail_page_alloc-counters", NULL, "op %u: one allocation: eligible "
			 "+%llu, failed +%llu, this CPU's failures +%llu, result %s", i,
			 (unsigned long long)elig, (unsigned long long)failed,
			 (unsigned long long)gen_res[i].inj, got ? "a page" : "NULL");
	}
}

static void check_alloc(const struct gen_plan *pl, unsigned int i)
{
	const struct gen_op *op = OP(i);
	struct op_res *r = &gen_res[i];
	gfp_t gfp = gen_gfps[op->gfp].gfp;
	bool must = !injected(pl, i) &&
		    alloc_must_succeed(op->node, gfp, op->order, taken_by_others(pl, i), pl->alone);

	if (op->order > MAX_ORDER)
		expect(i, EXP_NULL, 0, 0, 0);
	else if (must)
		expect(i, EXP_NONNULL, 0, 0, 0);
	if (pl->alone)
		check_fpa_alloc(i, r->page);
	if (op->order > MAX_ORDER && r->page) {
		gen_fail((int)i, "alloc-order", NULL, "op %u: order %u > MAX_ORDER "
			 "returned a block", i, op->order);
	} else if (must && !r->page) {
		char c[128];

		snprintf(c, sizeof(c), "KT_EXPECT_NOT_NULL(t, s.blk[%u]);", op->slot);
		gen_fail((int)i, "alloc-must-succeed", c, "op %u: %s order %u on node%u returned "
			 "NULL with free pages it may use (pages on any CPU's list count for an "
			 "allocation that may wait: its slow path drains them), none injected",
			 i, gen_gfps[op->gfp].name, op->order, op->node);
	} else if (r->page && check_block(i, r->page, op->node, gfp, op->order) && r->bad_words) {
		gen_fail((int)i, "alloc-zero", NULL, "op %u: __GFP_ZERO block has %llu nonzero words",
			 i, (unsigned long long)r->bad_words);
	}
}

static void check_free(unsigned int i, struct page *page, unsigned int order, unsigned int cpu)
{
	unsigned int zid = zone_id(page_zone(page));

	if (node_index(page_pgdat(page)) != cpu_node_index(cpu) && pcp_allowed_order(order) &&
	    pcp_enabled)
		M.rh_free[zid] += 1l << order;
}

/* A fill stops at NULL; one that may wait, without watermarks, only with nothing left. */
static void check_fill(const struct gen_plan *pl, unsigned int i)
{
	const struct gen_op *op = OP(i);
	const struct op_res *r = &gen_res[i];
	gfp_t gfp = gen_gfps[op->gfp].gfp;
	long left = 0;

	for (long k = 0; k < r->ret && !gen_failed(); k++)
		check_block(i, r->fill[k], op->node, gfp, op->order);
	if (!pl->alone || op->order || injected(pl, i) || r->ret == GEN_FILL_MAX ||
	    !((gfp & __GFP_MEMALLOC) && (gfp & __GFP_DIRECT_RECLAIM)))
		return;
	snap_zones();
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++)
		if (zone_allowed(zid, op->node, gfp))
			left += M.z[zid].buddy + M.z[zid].pcp + M.z[zid].deferred;
	if (left)
		gen_fail((int)i, "alloc-must-succeed", NULL, "op %u: a fill with %s stopped after "
			 "%ld pages while %ld free pages were left in zones it may use", i,
			 gen_gfps[op->gfp].name, r->ret, left);
}

static void check_free_some(const struct gen_plan *pl, unsigned int i)
{
	const struct gen_op *op = OP(i);
	const struct h_group *g = &gen_h.grp[op->slot];
	const struct op_res *r = &gen_res[i];

	/* The freed pages' pointers are past n until the next fill of the slot (in a phase, the
	 * same CPU may have made one): only alone do they count for remote_home. */
	for (long k = 0; pl->alone && k < r->ret; k++)
		check_free(i, g->pages[g->n + (u32)k], g->order, op->cpu);
	if (r->bad_words)
		gen_fail((int)i, "block-corrupted", NULL, "op %u: %llu pages of grp[%u] lost the tag "
			 "written when they were allocated", i, (unsigned long long)r->bad_words,
			 op->slot);
}

/* ---- address spaces: the work of one step, then the probe ---- */

enum { W_UNMAP, W_MAP, W_GROW, W_MAYBE };

/*
 * An address space during a step. Touched by one CPU, ops apply one by one, each checked
 * against the state the ones before it left. Shared by several CPUs (a phase), ops are
 * checked against `snap` and the phase's one change of mappings (`vop`), in any order.
 * W_GROW: a page the first fault of a 2 MiB region may have mapped with it (a huge page) or
 * not (4 KiB pages): all W_GROW pages of a region are mapped, or none. W_MAYBE: mapped or not.
 */
struct work {
	bool used, live, shared;
	bool refused;			/* a munmap was refused: it needed a VMA more than fit */
	int vop;			/* shared: the phase's mmap/munmap op, or -1 */
	struct m_vma vma[MM_MAX_VMAS];
	unsigned int nr_vma;
	u8 st[GEN_WIN_PAGES];
	u64 tag[GEN_WIN_PAGES];
	bool written[GEN_WIN_PAGES];	/* by this step (shared: tags of several writes allowed) */
	bool touched[GEN_REGIONS];
};
static struct work W[GEN_MMS];

static int vma_find(const struct m_vma *v, unsigned int n, u32 p)
{
	for (unsigned int k = 0; k < n; k++)
		if (p >= v[k].start && p < v[k].end)
			return (int)k;
	return -1;
}

static void touch(struct work *w, u32 a, u32 n)
{
	for (u32 r = a / GEN_REGION_PAGES; r < GEN_REGIONS && r * GEN_REGION_PAGES < a + n; r++)
		w->touched[r] = true;
}

static void work_init(int m)
{
	struct work *w = &W[m];
	const struct m_mm *mm = &M.mm[m];

	w->used = true;
	w->live = mm->live;
	w->shared = false;
	w->refused = false;
	w->vop = -1;
	memcpy(w->vma, mm->vma, sizeof(w->vma));
	w->nr_vma = mm->nr_vma;
	for (u32 p = 0; p < GEN_WIN_PAGES; p++) {
		w->st[p] = mm->mapped[p] ? W_MAP : W_UNMAP;
		w->tag[p] = mm->tag[p];
		w->written[p] = false;
	}
	memset(w->touched, 0, sizeof(w->touched));
}

/* The region of p lies inside one huge mapping, and has no page mapped (for sure) yet. */
static bool region_may_grow(const struct work *w, u32 p)
{
	u32 r0 = ALIGN_DOWN(p, GEN_REGION_PAGES);
	int k = vma_find(w->vma, w->nr_vma, p);

	if (k < 0 || !w->vma[k].huge || w->vma[k].start > r0 || w->vma[k].end < r0 + GEN_REGION_PAGES)
		return false;
	for (u32 q = r0; q < r0 + GEN_REGION_PAGES; q++)
		if (w->st[q] == W_MAP)
			return false;
	return true;
}

/* A 2 MiB fault may map the whole region at r0: each of its unmapped pages may come with it. */
static void region_grows(struct work *w, u32 r0)
{
	for (u32 q = r0; q < r0 + GEN_REGION_PAGES; q++)
		if (w->st[q] == W_UNMAP) {
			w->st[q] = W_GROW;
			w->tag[q] = 0;
		}
}

/* p is mapped now (a fault, or gup faulting it in); its 2 MiB region may have come with it. */
static void access_page(struct work *w, u32 p)
{
	u32 r0 = ALIGN_DOWN(p, GEN_REGION_PAGES);
	bool grow = w->st[p] != W_MAP && region_may_grow(w, p);

	if (w->st[p] != W_MAP) {
		w->st[p] = W_MAP;
		w->tag[p] = 0;
	}
	if (grow)
		region_grows(w, r0);
	touch(w, p, 1);
}

/*
 * munmap of window pages [s, e) from the table: the new table, or false if it would need one
 * more VMA than MM_MAX_VMAS (a hole inside one VMA of a full table): then, as Linux's
 * munmap(), nothing changes (-ENOMEM).
 */
static bool munmap_table(struct m_vma *v, unsigned int *n, u32 s, u32 e)
{
	for (unsigned int k = 0; k < *n; k++)
		if (v[k].start < s && e < v[k].end && *n == MM_MAX_VMAS)
			return false;
	for (unsigned int k = 0; k < *n;) {
		struct m_vma *x = &v[k];

		if (e <= x->start || x->end <= s) {
			k++;
		} else if (s <= x->start && x->end <= e) {
			*x = v[--*n];
		} else if (x->start < s && e < x->end) {
			v[(*n)++] = (struct m_vma){ e, x->end, x->writable, x->huge };
			x->end = s;
			k++;
		} else {
			if (x->start < s)
				x->end = s;
			else
				x->start = e;
			k++;
		}
	}
	return true;
}

/* mm_munmap()'s argument rules, as Linux's munmap(): page-aligned start, a length, not past
 * USER_VA_END (the length is rounded up to pages). */
static bool munmap_args_ok(const struct gen_op *op)
{
	u64 start, len;

	gen_op_range(op, &start, &len);
	return !(start % PAGE_SIZE) && start <= USER_VA_END && len && len <= USER_VA_END - start;
}

/* The window pages a munmap names: false if none (empty, wrapping, or outside). */
static bool munmap_pages(const struct gen_op *op, u32 *s, u32 *e)
{
	u64 start, len, end, wend = GEN_WIN_BASE + (u64)GEN_WIN_PAGES * PAGE_SIZE;

	gen_op_range(op, &start, &len);
	end = start + len;
	if (!len || end < start)
		return false;
	end = MIN(end, USER_VA_END);
	if (end <= GEN_WIN_BASE || start >= wend)
		return false;
	start = MAX(start, GEN_WIN_BASE);
	end = MIN(end, wend);
	*s = (u32)((start - GEN_WIN_BASE) >> PAGE_SHIFT);
	*e = (u32)((end - GEN_WIN_BASE + PAGE_SIZE - 1) >> PAGE_SHIFT);
	return *s < *e;
}

/* The expected result of mm_mmap_anon() on the table w has (0, or -EINVAL). */
static long mmap_expect(const struct work *w, const struct gen_op *op, u32 *s, u32 *e)
{
	u64 start, len;

	gen_op_range(op, &start, &len);
	if (!gen_mmap_args_ok(start, len, op->flags & GEN_MAP_HUGE))
		return -EINVAL;
	*s = (u32)((start - GEN_WIN_BASE) >> PAGE_SHIFT);
	*e = *s + (u32)(len >> PAGE_SHIFT);
	if (w->nr_vma == MM_MAX_VMAS)
		return -EINVAL;
	for (unsigned int k = 0; k < w->nr_vma; k++)
		if (*s < w->vma[k].end && w->vma[k].start < *e)
			return -EINVAL;
	return 0;
}

/*
 * 2 MiB blocks op i cannot do without (for mem_short()): only a long-term pin's migration
 * copies of 2 MiB pages (its faults may have taken a block each, and each copy needs one
 * more). A fault, populate or pin that finds no free block maps 4 KiB pages instead
 * (mm/vm.c's fallback, Linux's VM_FAULT_FALLBACK): no -ENOMEM for want of a block.
 */
static long huge_need(const struct work *w, unsigned int i)
{
	const struct gen_op *op = OP(i);
	long n = 0;

	if (op->kind != GEN_PIN || !(op->flags & GEN_PIN_LONG))
		return 0;
	for (u32 r = op->addr / GEN_REGION_PAGES; r < GEN_REGIONS &&
	     r * GEN_REGION_PAGES < op->addr + MAX(op->len, 1u); r++) {
		int k = vma_find(w->vma, w->nr_vma, MAX(r * GEN_REGION_PAGES, op->addr));

		n += k >= 0 && w->vma[k].huge;
	}
	return 2 * n;
}

/*
 * May op i fail for want of memory? Its 2 MiB pages need free order-9 blocks, and each
 * smaller allocation meanwhile may split one: one that falls back to another migratetype's
 * free list takes the largest block there (__rmqueue_fallback(), as Linux's), and the 2 MiB
 * fault's own page tables are such allocations. So each region counts one block more, and
 * each other allocating op of the phase one more.
 */
static bool op_mayfail(const struct gen_plan *pl, const struct work *w, unsigned int i)
{
	long huge = huge_need(w, i), splits = huge;

	if (!pl->alone)
		for (unsigned int k = pl->first; k < pl->first + pl->n; k++) {
			if (k == i || pl->skip[k])
				continue;
			if (op_mm(OP(k)) >= 0)
				huge += huge_need(&W[op_mm(OP(k))], k);
			splits += op_max_alloc(k) > 0;
		}
	return injected(pl, i) || mem_short(op_max_alloc(i) + taken_by_others(pl, i),
					    huge ? huge + splits : 0);
}

/* Could a FOLL_LONGTERM pin find a page of [a, a+n) of mm m held by someone else: a held
 * plain pin or reference (the same 2 MiB region is enough: one huge page), or, in a phase,
 * another CPU's gup of it? Then migration may be unable to move it: -EBUSY is allowed. */
static bool longterm_may_be_busy(const struct gen_plan *pl, unsigned int i, int m, u32 a, u32 n)
{
	u32 r0 = a / GEN_REGION_PAGES, r1 = (a + n - 1) / GEN_REGION_PAGES;

	/* Held: when the phase began (another CPU may unpin meanwhile), or taken since by this
	 * CPU's earlier ops (the model has applied them: M.pin). */
	for (unsigned int s = 0; s < 2 * GEN_PINS; s++) {
		const struct m_pin *pin = s < GEN_PINS ? &M.pin[s] : &M.pin0[s - GEN_PINS];

		if (pin->n && pin->mm == m && !(pin->flags & GEN_PIN_LONG) &&
		    pin->addr / GEN_REGION_PAGES <= r1 && (pin->addr + pin->n - 1) / GEN_REGION_PAGES >= r0)
			return true;
	}
	for (unsigned int k = pl->first; !pl->alone && k < pl->first + pl->n; k++) {
		const struct gen_op *o = OP(k);

		if (k == i || pl->skip[k] || o->cpu == OP(i)->cpu || o->mm != m ||
		    (o->kind != GEN_WRITE && o->kind != GEN_READ && o->kind != GEN_PIN))
			continue;
		if (o->addr / GEN_REGION_PAGES <= r1 && (o->addr + o->len - 1) / GEN_REGION_PAGES >= r0)
			return true;
	}
	return false;
}

/* Page p of w, for an access needing `write`: 2 sure, 1 maybe (the phase's mmap or munmap
 * may come first), 0 no. */
static int page_ok(const struct work *w, u32 p, bool write)
{
	const struct gen_op *v = w->vop >= 0 ? OP((unsigned int)w->vop) : NULL;
	int k = vma_find(w->vma, w->nr_vma, p);
	bool ok = k >= 0 && (!write || w->vma[k].writable);
	u32 s, e;

	if (v && v->kind == GEN_MUNMAP && munmap_args_ok(v) && munmap_pages(v, &s, &e) &&
	    p >= s && p < e)
		return ok ? 1 : 0;
	if (v && v->kind == GEN_MMAP && !ok && (gen_res[w->vop].ret == 0 ||
	    (gen_res[w->vop].ret == -ENOMEM && (v->flags & GEN_MAP_POP))) &&	/* (it stays) */
	    mmap_expect(w, v, &s, &e) == 0 && p >= s && p < e && (!write || (v->flags & GEN_MAP_WRITE)))
		return 1;
	return ok ? 2 : 0;
}

/* What a gup of [a, a+n) may return: a count in [lo, hi], 0 standing for -EFAULT. */
static void gup_bounds(const struct work *w, u32 a, u32 n, bool write, long *lo, long *hi)
{
	u32 k = 0;

	while (k < n && page_ok(w, a + k, write) == 2)
		k++;
	*lo = k;
	while (k < n && page_ok(w, a + k, write) >= 1)
		k++;
	*hi = k;
}

static void check_gup_count(const struct gen_plan *pl, unsigned int i, struct work *w, int m)
{
	const struct gen_op *op = OP(i);
	long ret = gen_res[i].ret, lo, hi;
	bool write = op->kind == GEN_WRITE || (op->kind == GEN_PIN && (op->flags & GEN_PIN_WRITE));
	bool longterm = op->kind == GEN_PIN && (op->flags & GEN_PIN_LONG);
	bool mayfail = op_mayfail(pl, w, i);
	bool busy = longterm && longterm_may_be_busy(pl, i, m, op->addr, op->len);
	bool ok;

	gup_bounds(w, op->addr, op->len, write, &lo, &hi);
	ok = (ret > 0 && ret >= lo && ret <= hi) || (ret == -EFAULT && lo == 0);
	ok |= (mayfail || busy) && ret > 0 && ret < lo;
	ok |= mayfail && ret == -ENOMEM;
	ok |= busy && ret == -EBUSY;
	if (lo == hi && !mayfail && !busy)
		expect(i, EXP_EQ, lo ? lo : -EFAULT, 0, 0);
	else if (!mayfail && !busy)
		expect(i, EXP_RANGE, lo ? lo : 1, hi, lo ? 0 : -EFAULT);
	if (!ok) {
		char c[128];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.ret[%u], %ld);", i, lo ? lo : -EFAULT);
		gen_fail((int)i, longterm ? "gup-longterm-count" : "gup-count", lo == hi ? c : NULL,
			 "op %u: %s returned %ld; the model allows %ld..%ld pages%s%s%s", i,
			 gen_kind_names[op->kind], ret, lo, hi, lo ? "" : " (0: -EFAULT)",
			 mayfail ? ", or fewer / -ENOMEM (memory short or injected)" : "",
			 busy ? ", or fewer / -EBUSY (a page in range may be held)" : "");
	}
}

/* Tags a read of p may see in a shared address space: the one before the phase, or one a
 * write of the phase stored there. */
static bool tag_allowed_shared(const struct gen_plan *pl, int m, u32 p, u64 tag)
{
	const struct m_mm *s = &M.snap[m];

	if (tag == (s->mapped[p] ? s->tag[p] : 0))
		return true;
	for (unsigned int k = pl->first; k < pl->first + pl->n; k++) {
		const struct gen_op *o = OP(k);

		if (o->kind == GEN_WRITE && o->mm == m && !pl->skip[k] && gen_res[k].ran &&
		    p >= o->addr && (long)(p - o->addr) < gen_res[k].ret && tag == GEN_TAG(k, p - o->addr))
			return true;
	}
	return false;
}

/* What a read (GEN_READ, GEN_PIN) saw in each page; for a longterm pin, no MOVABLE page. */
static void check_seen(const struct gen_plan *pl, unsigned int i, struct work *w, int m)
{
	const struct gen_op *op = OP(i);
	const struct op_res *r = &gen_res[i];

	for (long k = 0; k < r->ret && !gen_failed(); k++) {
		u32 p = op->addr + (u32)k;
		u64 want = w->st[p] == W_MAP ? w->tag[p] : 0;
		bool ok = w->shared ? tag_allowed_shared(pl, m, p, r->seen[k]) : r->seen[k] == want;

		if (!ok && !w->shared) {
			data_fail((int)i, m, p, r->seen[k], r->seen[k], want);
		} else if (!ok)
			gen_fail((int)i, "data", NULL, "op %u: page %ld (0x%llx) of mm[%d] holds tag "
				 "0x%llx; the model says 0x%llx%s", i, k, (unsigned long long)win_addr(p),
				 m, (unsigned long long)r->seen[k], (unsigned long long)want,
				 w->shared ? " (or a tag written by the phase)" : "");
		else if (op->kind == GEN_PIN && (op->flags & GEN_PIN_LONG) &&
			 compound_head(r->pages[k])->mt == MIGRATE_MOVABLE)
			gen_fail((int)i, "gup-longterm-movable", NULL, "op %u: FOLL_LONGTERM pinned a "
				 "MOVABLE page at 0x%llx", i, (unsigned long long)win_addr(p));
	}
}

/*
 * A FOLL_WRITE gup that stopped at a page of a read-only VMA: mm/gup.c's slow path faults the
 * page in before it checks the write permission (Linux checks the VMA first and maps
 * nothing: check_vma_flags()). The model lets the page, and its 2 MiB region, be mapped or
 * not; the report lists this as a difference from Linux, not a failure. The page may be one
 * another op's 2 MiB fault may have mapped (W_GROW): its own 4 KiB fault (its VMA no longer
 * a whole 2 MiB after the phase's munmap) may map it alone, so it leaves that set.
 */
static void write_denied(struct work *w, unsigned int i)
{
	const struct gen_op *op = OP(i);
	u32 p = op->addr + (u32)MAX(gen_res[i].ret, 0l), r0 = ALIGN_DOWN(p, GEN_REGION_PAGES);
	int k = vma_find(w->vma, w->nr_vma, p);
	bool grow;

	if (p >= op->addr + op->len || k < 0 || w->vma[k].writable ||
	    (w->st[p] != W_UNMAP && w->st[p] != W_GROW))
		return;
	grow = region_may_grow(w, p);
	w->st[p] = W_MAYBE;
	w->tag[p] = 0;
	if (grow)
		region_grows(w, r0);
}

/* A successful gup of [a, a + ret): the pages are mapped now (a write stores its tags). */
static void gup_done(unsigned int i, struct work *w)
{
	const struct gen_op *op = OP(i);
	bool write = op->kind == GEN_WRITE || (op->kind == GEN_PIN && (op->flags & GEN_PIN_WRITE));

	for (long k = 0; k < gen_res[i].ret; k++) {
		u32 p = op->addr + (u32)k;

		if (!w->shared)
			access_page(w, p);
		if (op->kind == GEN_WRITE && !w->shared) {
			w->tag[p] = GEN_TAG(i, k);
			w->written[p] = true;
		}
	}
	if (gen_res[i].ret > 0 && op->kind == GEN_PIN)
		M.pin[op->slot] = (struct m_pin){ (u32)gen_res[i].ret, op->mm, op->flags, op->addr };
	if (write && !w->shared)
		write_denied(w, i);
	touch(w, op->addr, op->len);
}

/* ---- address-space ops of one CPU: one by one ---- */

static void check_mm_create(const struct gen_plan *pl, unsigned int i, struct work *w)
{
	const struct gen_op *op = OP(i);
	struct mm_struct *mm = gen_h.mm[op->slot];	/* (a later op of the phase may have
							 * destroyed it: checked alone only) */

	if (!gen_res[i].ret) {
		if (!op_mayfail(pl, w, i))
			gen_fail((int)i, "mm_create-must-succeed", NULL, "op %u: mm_create() returned "
				 "NULL with memory free and nothing injected", i);
		return;
	}
	if (!op_mayfail(pl, w, i))
		expect(i, EXP_NONNULL, 0, 0, 0);
	w->live = true;
	w->nr_vma = 0;
	memset(w->st, W_UNMAP, sizeof(w->st));
	memset(w->touched, 1, sizeof(w->touched));	/* a new mm: probe it all */
	if (pl->alone && (mm->rss || mm->nr_vmas || mm->nr_pt_pages != 1))
		gen_fail((int)i, "mm_create", NULL, "op %u: a new mm has rss %ld, %u VMAs, %ld "
			 "page-table pages", i, mm->rss, mm->nr_vmas, mm->nr_pt_pages);
	M.mm[op->slot].node = op->node;
}

static void do_mmap(const struct gen_plan *pl, unsigned int i, struct work *w, bool check)
{
	const struct gen_op *op = OP(i);
	long ret = gen_res[i].ret, want;
	bool mayfail = (op->flags & GEN_MAP_POP) && op_mayfail(pl, w, i);
	u32 s = 0, e = 0;

	want = mmap_expect(w, op, &s, &e);
	if (check && !mayfail)
		expect(i, EXP_EQ, want, 0, 0);
	if (check && ret != want && !(want == 0 && mayfail && ret == -ENOMEM)) {
		char c[96];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.ret[%u], %ld);", i, want);
		gen_fail((int)i, "mmap", c, "op %u: mm_mmap_anon() returned %ld, the model says %ld",
			 i, ret, want);
		return;
	}
	if (want)
		return;
	w->vma[w->nr_vma++] = (struct m_vma){ s, e, op->flags & GEN_MAP_WRITE, op->flags & GEN_MAP_HUGE };
	for (u32 p = s; (op->flags & GEN_MAP_POP) && p < e; p++) {
		w->st[p] = ret == 0 ? W_MAP : W_MAYBE;
		w->tag[p] = 0;
	}
	touch(w, s, e - s);
}

/* Check a munmap's result: -EINVAL for bad arguments, -ENOMEM if refused, else 0. */
static void check_munmap_ret(unsigned int i, long want)
{
	char c[96];

	expect(i, EXP_EQ, want, 0, 0);
	if (gen_res[i].ret == want)
		return;
	snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.ret[%u], %ld);", i, want);
	gen_fail((int)i, "munmap", c, "op %u: mm_munmap() returned %ld, the model says %ld%s", i,
		 gen_res[i].ret, want, want == -ENOMEM ? " (it needs one VMA more than "
		 "MM_MAX_VMAS)" : want == -EINVAL ? " (bad arguments)" : "");
}

static void do_munmap(unsigned int i, struct work *w, bool check)
{
	u32 s, e;

	if (!munmap_args_ok(OP(i))) {
		if (check)
			check_munmap_ret(i, -EINVAL);
		return;
	}
	if (!munmap_pages(OP(i), &s, &e)) {
		if (check)
			check_munmap_ret(i, 0);
		return;		/* nothing in the window: nothing changes */
	}
	if (!munmap_table(w->vma, &w->nr_vma, s, e)) {
		w->refused = true;	/* refused (a full table): nothing changes */
		if (check)
			check_munmap_ret(i, -ENOMEM);
		return;
	}
	if (check)
		check_munmap_ret(i, 0);
	for (u32 p = s; p < e; p++)
		w->st[p] = W_UNMAP;
	touch(w, s, e - s);
}

static void do_fault_private(const struct gen_plan *pl, unsigned int i, struct work *w)
{
	const struct gen_op *op = OP(i);
	long ret = gen_res[i].ret, want = vma_find(w->vma, w->nr_vma, op->addr) >= 0 ? 0 : -EFAULT;
	bool mayfail = !want && op_mayfail(pl, w, i);

	if (!mayfail)
		expect(i, EXP_EQ, want, 0, 0);
	if (ret != want && !(mayfail && ret == -ENOMEM)) {
		char c[96];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.ret[%u], %ld);", i, want);
		gen_fail((int)i, "fault", c, "op %u: handle_mm_fault() returned %ld, the model says "
			 "%ld", i, ret, want);
	}
	if (ret == 0)
		access_page(w, op->addr);
	touch(w, op->addr, 1);
}

static void mm_op_private(const struct gen_plan *pl, unsigned int i, int m)
{
	struct work *w = &W[m];

	switch (OP(i)->kind) {
	case GEN_MM_CREATE:
		check_mm_create(pl, i, w);
		break;
	case GEN_MM_DESTROY:
		w->live = false;
		w->nr_vma = 0;
		memset(w->st, W_UNMAP, sizeof(w->st));
		break;
	case GEN_MMAP:
		do_mmap(pl, i, w, true);
		break;
	case GEN_MUNMAP:
		do_munmap(i, w, true);
		break;
	case GEN_FAULT:
		do_fault_private(pl, i, w);
		break;
	default:	/* gup */
		check_gup_count(pl, i, w, m);
		if (OP(i)->kind != GEN_WRITE)
			check_seen(pl, i, w, m);
		gup_done(i, w);
	}
}

/* ---- an address space several CPUs used in one phase ---- */

static bool region_grow_ok(const struct m_vma *v, unsigned int n, const struct m_mm *snap, u32 p)
{
	u32 r0 = ALIGN_DOWN(p, GEN_REGION_PAGES);
	int k = vma_find(v, n, p);

	if (k < 0 || !v[k].huge || v[k].start > r0 || v[k].end < r0 + GEN_REGION_PAGES)
		return false;
	for (u32 q = r0; q < r0 + GEN_REGION_PAGES; q++)
		if (snap->mapped[q])
			return false;
	return true;
}

/* Each op's result against the phase's sets (pass 1). */
static void shared_check_ops(const struct gen_plan *pl, int m, struct work *w)
{
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *op = OP(i);
		long ret = gen_res[i].ret;

		if (pl->skip[i] || !gen_res[i].ran || op_mm(op) != m || gen_failed())
			continue;
		if (op->kind == GEN_FAULT) {
			int ok = page_ok(w, op->addr, false);
			bool mayfail = op_mayfail(pl, w, i);

			if (ok == 2 && !mayfail)
				expect(i, EXP_EQ, 0, 0, 0);
			if (!((ret == 0 && ok) || (ret == -EFAULT && ok < 2) || (mayfail && ret == -ENOMEM)))
				gen_fail((int)i, "fault", NULL, "op %u: handle_mm_fault() returned %ld "
					 "in a phase (page %s)", i, ret, ok == 2 ? "mapped by a VMA all "
					 "along" : ok ? "in the phase's mmap/munmap" : "in no VMA");
			touch(w, op->addr, 1);
		} else if (op->kind == GEN_WRITE || op->kind == GEN_READ || op->kind == GEN_PIN) {
			check_gup_count(pl, i, w, m);
			gup_done(i, w);
		} else if (op->kind == GEN_MMAP) {
			struct work tmp = *w;

			do_mmap(pl, i, &tmp, true);
		}
	}
}

/* Mark the pages op i reached (pass 3): mapped, and their regions may have grown. A page
 * in the phase's munmap was reached before it: unmapped now, but a 2 MiB fault there may have
 * mapped its region whole, and the munmap split it (the rest of the region stays mapped). */
static void shared_reached(const struct work *w0, struct work *w, const struct m_mm *snap,
			   u32 a, long n, u32 us, u32 ue)
{
	for (long k = 0; k < n; k++) {
		u32 p = a + (u32)k, r0 = ALIGN_DOWN(p, GEN_REGION_PAGES);
		bool grow = region_grow_ok(w0->vma, w0->nr_vma, snap, p) ||
			    region_grow_ok(w->vma, w->nr_vma, snap, p);

		if ((p < us || p >= ue) && w->st[p] != W_MAP) {
			w->st[p] = W_MAP;
			w->tag[p] = 0;
		}
		for (u32 q = r0; grow && q < r0 + GEN_REGION_PAGES; q++)
			if (w->st[q] == W_UNMAP && !(q >= us && q < ue)) {
				w->st[q] = W_GROW;
				w->tag[q] = 0;
			}
	}
}

static void mm_ops_shared(const struct gen_plan *pl, int m)
{
	struct work *w = &W[m], w0;
	const struct m_mm *snap = &M.snap[m];
	u32 us = 0, ue = 0, s, e;

	w->shared = true;
	for (unsigned int i = pl->first; i < pl->first + pl->n && w->vop < 0; i++)
		if (!pl->skip[i] && gen_res[i].ran && OP(i)->mm == m &&
		    (OP(i)->kind == GEN_MMAP || OP(i)->kind == GEN_MUNMAP))
			w->vop = (int)i;
	shared_check_ops(pl, m, w);
	w0 = *w;
	if (w->vop >= 0 && OP(w->vop)->kind == GEN_MUNMAP) {
		struct work tmp = *w;	/* (a copy: the result only) */

		do_munmap((unsigned int)w->vop, &tmp, true);
	}
	if (w->vop >= 0 && OP(w->vop)->kind == GEN_MUNMAP && munmap_args_ok(OP(w->vop)) &&
	    munmap_pages(OP(w->vop), &s, &e) &&
	    !(w->refused = !munmap_table(w->vma, &w->nr_vma, s, e))) {
		us = s;
		ue = e;
		for (u32 p = s; p < e; p++)
			w->st[p] = W_UNMAP;
		touch(w, s, e - s);
	} else if (w->vop >= 0 && OP(w->vop)->kind == GEN_MMAP) {
		do_mmap(pl, (unsigned int)w->vop, w, false);
	}
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *op = OP(i);

		if (pl->skip[i] || !gen_res[i].ran || op->mm != m || op_mm(op) != m)
			continue;
		if (op->kind == GEN_FAULT && gen_res[i].ret == 0)
			shared_reached(&w0, w, snap, op->addr, 1, us, ue);
		else if ((op->kind == GEN_WRITE || op->kind == GEN_READ || op->kind == GEN_PIN) &&
			 gen_res[i].ret > 0)
			shared_reached(&w0, w, snap, op->addr, gen_res[i].ret, us, ue);
	}
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++)
		if (!pl->skip[i] && gen_res[i].ran && OP(i)->mm == m &&
		    (OP(i)->kind == GEN_WRITE || (OP(i)->kind == GEN_PIN && (OP(i)->flags & GEN_PIN_WRITE))))
			write_denied(w, i);
	for (unsigned int i = pl->first; i < pl->first + pl->n && !gen_failed(); i++)
		if (!pl->skip[i] && gen_res[i].ran && op_mm(OP(i)) == m &&
		    (OP(i)->kind == GEN_READ || OP(i)->kind == GEN_PIN))
			check_seen(pl, i, w, m);
}

/* ---- the probe: what each page of the touched regions maps, against the work ---- */

/* Page p of mm through gup's lockless walk (no fault): its page and tag words, or false. */
static bool probe(struct mm_struct *mm, u32 p, struct page **pg, u64 *t0, u64 *t1)
{
	const u64 *w;

	if (get_user_pages_fast(mm, win_addr(p), 1, FOLL_FAST_ONLY, pg) != 1)
		return false;
	w = page_address(*pg);
	*t0 = w[0];
	*t1 = w[PAGE_SIZE / 8 - 1];
	put_user_pages(pg, 1);
	return true;
}

static void mapping_fail(int op, int m, u32 p, bool mapped, const char *why)
{
	char c[256];

	snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, probe(s.mm[%d], 0x%llx), %s);", m,
		 (unsigned long long)win_addr(p), mapped ? "-EFAULT" : "1");
	gen_fail(op, "mapping", c, "after op %d: page 0x%llx of mm[%d] is %smapped; %s", op,
		 (unsigned long long)win_addr(p), m, mapped ? "" : "not ", why);
}

static void data_fail(int op, int m, u32 p, u64 t0, u64 t1, u64 want)
{
	char c[160];

	snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, peek(s.mm[%d], 0x%llx), 0x%llxull);", m,
		 (unsigned long long)win_addr(p), (unsigned long long)want);
	gen_fail(op, "data", c, "after op %d: page 0x%llx of mm[%d] holds tags 0x%llx/0x%llx; the "
		 "model says 0x%llx", op, (unsigned long long)win_addr(p), m,
		 (unsigned long long)t0, (unsigned long long)t1, (unsigned long long)want);
}

/* One region: probe, compare, and take what was seen as the model's state. */
static void resolve_region(const struct gen_plan *pl, int op, int m, u32 r)
{
	struct work *w = &W[m];
	struct m_mm *mm = &M.mm[m];
	unsigned int grow_mapped = 0, grow_unmapped = 0;
	u32 first_on = 0, first_off = 0;

	for (u32 p = r * GEN_REGION_PAGES; p < (r + 1) * GEN_REGION_PAGES && !gen_failed(); p++) {
		struct page *pg = NULL;
		u64 t0 = 0, t1 = 0;
		bool on = probe(gen_h.mm[m], p, &pg, &t0, &t1);

		if (on && w->st[p] == W_UNMAP)
			mapping_fail(op, m, p, true, vma_find(w->vma, w->nr_vma, p) < 0 ?
				     "it is in no VMA" : "the model has it unmapped (munmap, or never "
				     "touched)");
		else if (!on && w->st[p] == W_MAP)
			mapping_fail(op, m, p, false, "the model has it mapped");
		else if (on && (t0 != t1 || !(w->shared ? tag_allowed_shared(pl, m, p, t0) :
					     t0 == (w->st[p] == W_MAP ? w->tag[p] : 0))))
			data_fail(op, m, p, t0, t1, w->tag[p]);
		if (w->st[p] == W_GROW && on && !grow_mapped++)
			first_on = p;
		else if (w->st[p] == W_GROW && !on && !grow_unmapped++)
			first_off = p;
		mm->mapped[p] = on;
		mm->tag[p] = on ? t0 : 0;
		mm->pg[p] = on ? pg : NULL;
	}
	if (grow_mapped && grow_unmapped && !gen_failed())
		gen_fail(op, "mapping-huge", NULL, "after op %d: region 0x%llx of mm[%d]: %u pages "
			 "mapped (0x%llx first) and %u not (0x%llx first), where one 2 MiB fault maps "
			 "all or none", op, (unsigned long long)win_addr(r * GEN_REGION_PAGES), m,
			 grow_mapped, (unsigned long long)win_addr(first_on), grow_unmapped,
			 (unsigned long long)win_addr(first_off));
}

static int cmp_vma(const void *a, const void *b)
{
	const struct vm_area *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void check_vma_table(int op, int m)
{
	const struct work *w = &W[m];
	const struct mm_struct *mm = gen_h.mm[m];
	struct vm_area have[MM_MAX_VMAS], want[MM_MAX_VMAS];
	unsigned int n = MIN(mm->nr_vmas, (unsigned int)MM_MAX_VMAS);

	memcpy(have, mm->vmas, sizeof(have));
	for (unsigned int k = 0; k < w->nr_vma; k++)
		want[k] = (struct vm_area){ win_addr(w->vma[k].start), win_addr(w->vma[k].end),
					    w->vma[k].writable, w->vma[k].huge };
	qsort(have, n, sizeof(have[0]), cmp_vma);
	qsort(want, w->nr_vma, sizeof(want[0]), cmp_vma);
	for (unsigned int k = 0; k < n && n == w->nr_vma; k++)
		if (have[k].start != want[k].start || have[k].end != want[k].end ||
		    have[k].writable != want[k].writable)
			n = ~0u;
	if (n != w->nr_vma) {
		char c[96];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.mm[%d]->nr_vmas, %u);", m, w->nr_vma);
		gen_fail(op, w->refused ? "vma-table-full" : "vma-table", c, "after op %d: mm[%d] has "
			 "%u VMAs (first 0x%llx-0x%llx), the model %u (first 0x%llx-0x%llx)%s", op, m,
			 mm->nr_vmas,
			 (unsigned long long)have[0].start, (unsigned long long)have[0].end,
			 w->nr_vma, (unsigned long long)(w->nr_vma ? want[0].start : 0),
			 (unsigned long long)(w->nr_vma ? want[0].end : 0), w->refused ? "; the munmap "
			 "needed one VMA more than MM_MAX_VMAS: it must fail and change nothing (Linux: "
			 "-ENOMEM)" : "");
	}
}

static long model_rss(int m)
{
	long n = 0;

	for (u32 p = 0; p < GEN_WIN_PAGES; p++)
		n += M.mm[m].mapped[p];
	return n;
}

static void resolve_mm(const struct gen_plan *pl, int op, int m)
{
	struct work *w = &W[m];
	struct m_mm *mm = &M.mm[m];

	mm->live = w->live && gen_h.mm[m];
	if (!mm->live) {
		memset(mm->mapped, 0, sizeof(mm->mapped));
		mm->nr_vma = 0;
		return;
	}
	check_vma_table(op, m);
	memcpy(mm->vma, w->vma, sizeof(mm->vma));
	mm->nr_vma = w->nr_vma;
	for (u32 r = 0; r < GEN_REGIONS && !gen_failed(); r++)
		if (w->touched[r])
			resolve_region(pl, op, m, r);
	if (!gen_failed() && gen_h.mm[m]->rss != model_rss(m)) {
		char c[96];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.mm[%d]->rss, %ld);", m, model_rss(m));
		gen_fail(op, "rss", c, "after op %d: mm[%d]->rss is %ld, %ld pages are mapped", op,
			 m, gen_h.mm[m]->rss, model_rss(m));
	}
}

/* ---- ops that are not about an address space ---- */

static void check_drained(unsigned int i, struct zone *zone, unsigned int cpu)
{
	int count = READ_ONCE(zone->pcp[cpu].count);

	if (count) {
		char c[160];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.m->node[%u]->node_zones[%u].pcp[%u].count, 0);",
			 node_index(zone->node), (unsigned int)zone->idx, cpu);
		gen_fail((int)i, "drain", c, "op %u: after %s, cpu%u's list of node%u %s still "
			 "holds %d pages", i, gen_kind_names[OP(i)->kind], cpu,
			 node_index(zone->node), zone->name, count);
	}
}

/*
 * remote_home counts the pages of a zone that CPUs of other nodes had on their lists and
 * sent back to it (mm.h). Once every list is empty, each page such a CPU freed onto its list
 * has either been allocated again by it or gone home: so, over steps alone since the last
 * time every list was empty, remote_home grew by at least (pages remote CPUs freed to their
 * lists) - (pages remote CPUs may have allocated from the zone).
 */
static void check_remote_home(unsigned int i)
{
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES && !M.rh_dirty; zid++) {
		struct zone *zone = gen_zone(zid);
		struct numa_stats st;
		long home;

		if (!zone)
			continue;
		zone_numa_stats(zone, &st);
		home = (long)(st.remote_home - M.rh0[zid]);
		if (home < M.rh_free[zid] - M.rh_alloc[zid]) {
			char c[200];

			snprintf(c, sizeof(c), "zone_numa_stats(&s.m->node[%u]->node_zones[%u], &st);\n"
				 "KT_EXPECT_GE(t, st.remote_home, %llu);", zid / MAX_NR_ZONES,
				 zid % MAX_NR_ZONES, (unsigned long long)(M.rh0[zid] + (u64)(M.rh_free[zid] -
				 M.rh_alloc[zid])));
			gen_fail((int)i, "counter-remote_home", c, "op %u: node%u %s: CPUs of other "
				 "nodes freed %ld pages to their lists and allocated at most %ld from "
				 "it; every list is empty now, yet remote_home grew by %ld", i,
				 zid / MAX_NR_ZONES, zone->name, M.rh_free[zid], M.rh_alloc[zid], home);
		}
	}
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++) {
		struct numa_stats st;

		if (gen_zone(zid)) {
			zone_numa_stats(gen_zone(zid), &st);
			M.rh0[zid] = st.remote_home;
		}
		M.rh_free[zid] = M.rh_alloc[zid] = 0;
	}
	M.rh_dirty = false;
}

/* Pages an op alone may allocate inside mm/ (faults, page tables, mm_create, migration):
 * from its CPU's own node first, but from any other when that one is short. */
static void rh_internal_allocs(unsigned int i)
{
	const struct gen_op *op = OP(i);

	if (op->kind == GEN_ALLOC || op->kind == GEN_FILL || !gen_res[i].ran)
		return;		/* (explicit allocations are counted page by page: check_block) */
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++)
		if (zid / MAX_NR_ZONES != cpu_node_index(op->cpu))
			M.rh_alloc[zid] += op_max_alloc(i);
}

static void check_drain(unsigned int i)
{
	const struct gen_op *op = OP(i);
	struct zone *zone = gen_zone(op->node);

	switch (op->flags & 3) {
	case GEN_DRAIN_LOCAL:
		check_drained(i, zone, op->cpu);
		return;
	case GEN_DRAIN_ZONE:
		for (unsigned int c = 0; c < GEN_CPUS && !gen_failed(); c++)
			check_drained(i, zone, c);
		return;
	}
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES && !gen_failed(); zid++)
		for (unsigned int c = 0; gen_zone(zid) && c < GEN_CPUS && !gen_failed(); c++)
			if ((op->flags & 3) == GEN_DRAIN_MACHINE || c == op->len % GEN_CPUS)
				check_drained(i, gen_zone(zid), c);
	if ((op->flags & 3) == GEN_DRAIN_MACHINE && !gen_failed())
		check_remote_home(i);
}

static void check_other(const struct gen_plan *pl, unsigned int i)
{
	const struct gen_op *op = OP(i);
	struct op_res *r = &gen_res[i];

	switch (op->kind) {
	case GEN_ALLOC:
		check_alloc(pl, i);
		break;
	case GEN_FREE:
		check_free(i, r->page, (unsigned int)r->ret, op->cpu);
		if (r->bad_words)
			gen_fail((int)i, "block-corrupted", NULL, "op %u: blk[%u] lost the tag written "
				 "when it was allocated (0x%llx): someone wrote into a held block", i,
				 op->slot, (unsigned long long)r->tag);
		break;
	case GEN_FILL:
		check_fill(pl, i);
		break;
	case GEN_FREE_SOME:
		check_free_some(pl, i);
		break;
	case GEN_UNPIN:
		M.pin[op->slot].n = 0;
		break;
	case GEN_PCP_DISABLE:
		M.depth[op->node]++;
		break;
	case GEN_PCP_ENABLE:
		M.depth[op->node]--;
		break;
	case GEN_FAIL:
		M.fail_armed = op->flags && op->len;
		break;
	case GEN_DRAIN:
		if (pl->alone)
			check_drain(i);
		break;
	case GEN_VERIFY:
		if (!pl->alone)
			break;
		expect(i, EXP_EQ, 0, 0, 0);
		if (r->ret) {
			char c[64];

			snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, s.ret[%u], 0);", i);
			gen_fail((int)i, "mm_verify", c, "op %u: mm_verify(node%u) found %ld problems",
				 i, op->node, r->ret);
		}
		break;
	case GEN_DEFERRED_INIT:
		if (pl->alone && node_deferred_pages(gen_node(op->node)))
			gen_fail((int)i, "deferred", NULL, "op %u: node%u has %lu deferred pages after "
				 "deferred_init_memmap()", i, op->node, node_deferred_pages(gen_node(op->node)));
		if (pl->alone && !M.deferred_done && !machine_deferred_pages(&gen_world.m)) {
			deferred_init_done(&gen_world.m);
			M.deferred_done = true;
		}
		break;
	}
}

/* ---- the state after a step ---- */

/* Distinct data pages (compound heads) mapped or pinned: a small pointer set. */
#define HEADS (1u << 16)
static struct page *heads[HEADS];

static long add_head(struct page *page)
{
	struct page *head = compound_head(page);
	u32 h = (u32)(((uintptr_t)head >> 5) * 0x9e3779b1u) & (HEADS - 1);

	while (heads[h] && heads[h] != head)
		h = (h + 1) & (HEADS - 1);
	if (heads[h])
		return 0;
	heads[h] = head;
	return 1l << head->order;
}

/* Pages the model knows are allocated: blocks, fills, each mm's own pages and page tables,
 * and every data page mapped or pinned (a 2 MiB page counts whole while any of it is). */
static long held_pages(void)
{
	long n = 0;

	memset(heads, 0, sizeof(heads));
	for (unsigned int b = 0; b < GEN_BLOCKS; b++)
		if (gen_h.blk[b].page)
			n += 1l << gen_h.blk[b].order;
	for (unsigned int g = 0; g < GEN_GROUPS; g++)
		n += (long)gen_h.grp[g].n << gen_h.grp[g].order;
	for (unsigned int m = 0; m < GEN_MMS; m++) {
		struct mm_struct *mm = gen_h.mm[m];

		if (!mm)
			continue;
		n += 1 + (1l << mm->stats_order) + mm->nr_pt_pages;
		for (u32 p = 0; p < GEN_WIN_PAGES; p++)
			if (M.mm[m].mapped[p])
				n += add_head(M.mm[m].pg[p]);
	}
	for (unsigned int s = 0; s < GEN_PINS; s++)
		for (u32 k = 0; k < gen_h.pin[s].n; k++)
			n += add_head(gen_h.pin[s].pages[k]);
	return n;
}

static const char *zone_check_c(unsigned int zid)
{
	static char c[128];

	snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, zone_pcp_count(&s.m->node[%u]->node_zones[%u]), 0);",
		 zid / MAX_NR_ZONES, zid % MAX_NR_ZONES);
	return c;
}

static void check_pcp(int op)
{
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES && !gen_failed(); zid++) {
		struct zone *zone = gen_zone(zid);

		if (!zone)
			continue;
		if (zone->pcp_disable_depth != M.depth[zid] ||
		    (M.depth[zid] && zone_pcp_count(zone)))
			gen_fail(op, "pcp-disabled", M.depth[zid] && zone_pcp_count(zone) ?
				 zone_check_c(zid) : NULL, "after op %d: node%u %s: disable depth %d "
				 "(model %d), %lu pages on its lists (a disabled zone's lists stay empty)",
				 op, zid / MAX_NR_ZONES, zone->name, zone->pcp_disable_depth,
				 M.depth[zid], zone_pcp_count(zone));
		for (unsigned int c = 0; c < GEN_CPUS && !gen_failed(); c++) {
			int high = M.depth[zid] ? 0 : zone->pageset_high;
			int batch = M.depth[zid] ? 1 : zone->pageset_batch;

			if (zone->pcp[c].high != high || zone->pcp[c].batch != batch)
				gen_fail(op, "pcp-high-batch", NULL, "after op %d: node%u %s cpu%u: high "
					 "%d batch %d, expected %d %d (depth %d)", op, zid / MAX_NR_ZONES,
					 zone->name, c, zone->pcp[c].high, zone->pcp[c].batch, high,
					 batch, M.depth[zid]);
		}
	}
}

static void check_counters(int op)
{
	struct gup_totals g;
	struct fail_page_alloc_stats s;
	u64 pinned = 0, inj = 0;

	gup_read_totals(&g);
	for (unsigned int k = 0; k < GEN_PINS; k++)
		if (!(gen_h.pin[k].flags & GEN_PIN_GET))
			pinned += gen_h.pin[k].n;
	if ((g.pins_acquired - M.gup0.pins_acquired) - (g.pins_released - M.gup0.pins_released) !=
	    pinned)
		gen_fail(op, "counter-gup", NULL, "after op %d: gup totals say %llu pins held, the "
			 "program holds %llu", op, (unsigned long long)((g.pins_acquired -
			 M.gup0.pins_acquired) - (g.pins_released - M.gup0.pins_released)),
			 (unsigned long long)pinned);
	fail_page_alloc_read_stats(&s);
	for (unsigned int c = 0; c < GEN_CPUS; c++)
		inj += gen_cpu_injected(c) - M.inj0[c];
	if (s.failed - M.fpa0.failed != inj || s.failed - M.fpa0.failed > s.eligible - M.fpa0.eligible)
		gen_fail(op, "fail_page_alloc-counters", NULL, "after op %d: fail_page_alloc failed "
			 "+%llu, eligible +%llu, the CPUs' own failure counts +%llu", op,
			 (unsigned long long)(s.failed - M.fpa0.failed),
			 (unsigned long long)(s.eligible - M.fpa0.eligible), (unsigned long long)inj);
}

static void check_state(int op)
{
	unsigned long managed = 0, free = 0, bad = 0;
	long held;

	for (unsigned int n = 0; n < gen_world.m.nr_nodes; n++)
		bad += gen_node(n)->bad_pages;
	if (bad || taint_count(TAINT_BAD_PAGE) != M.bad_page0)
		gen_fail(op, "bad-page", NULL, "after op %d: %lu bad page reports", op, bad);
	else if (taint_count(TAINT_WARN) != M.warn0)
		gen_fail(op, "warn", NULL, "after op %d: a WARN_ON fired", op);
	else if (mm_verify_machine(&gen_world.m))
		gen_fail(op, "mm_verify", "KT_EXPECT_EQ(t, mm_verify_machine(s.m), 0);",
			 "after op %d: mm_verify found problems (console: mm_verify lines)", op);
	if (gen_failed())
		return;
	check_owners(op);
	check_pcp(op);
	check_counters(op);
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES && !gen_failed(); zid++) {
		const struct zone *zone;

		if (zid / MAX_NR_ZONES >= gen_world.m.nr_nodes)
			break;
		zone = &gen_node(zid / MAX_NR_ZONES)->node_zones[zid % MAX_NR_ZONES];
		if (zone->managed_pages + zone->deferred_free != M.zone_total[zid])
			gen_fail(op, "deferred", NULL, "after op %d: node%u %s: managed %lu + deferred "
				 "%lu != %lu at the start", op, zid / MAX_NR_ZONES, zone->name,
				 zone->managed_pages, zone->deferred_free, M.zone_total[zid]);
	}
	if (gen_failed())
		return;
	for (unsigned int n = 0; n < gen_world.m.nr_nodes; n++) {
		managed += node_managed_pages(gen_node(n));
		free += node_free_pages(gen_node(n));
	}
	held = held_pages();
	if ((long)(managed - free) != held) {
		char c[160];

		snprintf(c, sizeof(c), "KT_EXPECT_EQ(t, machine_managed_pages(s.m) - "
			 "machine_free_pages(s.m), %ld);", held);
		gen_fail(op, "conservation", c, "after op %d: %lu managed - %lu free = %ld pages in "
			 "use, but the program holds %ld (blocks, fills, mms, page tables, mapped and "
			 "pinned pages)", op, managed, free, (long)(managed - free), held);
	}
}

/* ---- a step ---- */

void model_begin(const struct gen_prog *p, const struct gen_run_opts *o, struct gen_verdict *v)
{
	unsigned long pfns = (GEN_LO_SIZE(p->cfg.deferred) + GEN_HI_SIZE) >> PAGE_SHIFT;

	V = v;
	free(M.owner);
	memset(&M, 0, sizeof(M));
	M.p = p;
	M.o = o;
	M.v = v;
	M.owner = calloc(pfns, 1);
	M.owner_pfns = pfns;
	M.warn0 = taint_count(TAINT_WARN);
	M.bad_page0 = taint_count(TAINT_BAD_PAGE);
	gup_read_totals(&M.gup0);
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++) {
		const struct zone *zone;
		struct numa_stats st;

		if (zid / MAX_NR_ZONES >= gen_world.m.nr_nodes)
			break;
		zone = &gen_node(zid / MAX_NR_ZONES)->node_zones[zid % MAX_NR_ZONES];
		M.zone_total[zid] = zone->managed_pages + zone->deferred_free;
		if (gen_zone(zid)) {
			zone_numa_stats(gen_zone(zid), &st);
			M.rh0[zid] = st.remote_home;
		}
	}
	M.rh_dirty = true;	/* until every list has been drained once */
	M.deferred_done = !p->cfg.deferred;
}

bool model_after(const struct gen_plan *pl)
{
	int last = (int)(pl->first + pl->n - 1);

	memset(W, 0, sizeof(W));
	for (unsigned int i = pl->first; i < pl->first + pl->n; i++)
		if (op_mm(OP(i)) >= 0 && !W[op_mm(OP(i))].used)
			work_init(op_mm(OP(i)));
	if (!pl->alone)
		M.rh_dirty = true;
	else
		rh_internal_allocs(pl->first);
	for (unsigned int i = pl->first; i < pl->first + pl->n && !gen_failed(); i++) {
		int m = op_mm(OP(i));

		if (pl->skip[i] || !gen_res[i].ran)
			continue;
		if (m < 0)
			check_other(pl, i);
		else if (pl->alone || mm_cpus(pl, m) < 2)
			mm_op_private(pl, i, m);
	}
	for (int m = 0; m < GEN_MMS && !gen_failed(); m++)
		if (W[m].used && !pl->alone && mm_cpus(pl, m) >= 2)
			mm_ops_shared(pl, m);
	for (int m = 0; m < GEN_MMS && !gen_failed(); m++)
		if (W[m].used)
			resolve_mm(pl, last, m);
	if (!gen_failed())
		check_state(last);
	if (!gen_failed() && (!pl->alone || ++M.steps % 16 == 0))
		model_full_check(last);
	gen_free_old_fills();
	return !gen_failed();
}

bool model_full_check(int op)
{
	for (int m = 0; m < GEN_MMS && !gen_failed(); m++) {
		if (!M.mm[m].live)
			continue;
		work_init(m);
		for (u32 r = 0; r < GEN_REGIONS; r++)
			W[m].touched[r] = true;
		resolve_mm(NULL, op, m);
	}
	return !gen_failed();
}

/*
 * The end: release everything the program still holds (on CPU 0, in this order: pins, blocks,
 * fills, address spaces, disabled zones, fault injection), drain every list, and check that
 * every page came back: free == managed, nothing pinned, mm_verify clean.
 */
static void release_all(void)
{
	for (unsigned int s = 0; s < GEN_PINS; s++)
		if (gen_h.pin[s].n) {
			if (gen_h.pin[s].flags & GEN_PIN_GET)
				put_user_pages(gen_h.pin[s].pages, gen_h.pin[s].n);
			else
				unpin_user_pages(gen_h.pin[s].pages, gen_h.pin[s].n);
			gen_h.pin[s].n = 0;
		}
	for (unsigned int b = 0; b < GEN_BLOCKS; b++)
		if (gen_h.blk[b].page) {
			while (gen_h.blk[b].refs--)
				put_page(gen_h.blk[b].page);
			__free_pages(gen_h.blk[b].page, gen_h.blk[b].order);
			gen_h.blk[b].page = NULL;
		}
	for (unsigned int g = 0; g < GEN_GROUPS; g++) {
		while (gen_h.grp[g].n)
			__free_pages(gen_h.grp[g].pages[--gen_h.grp[g].n], gen_h.grp[g].order);
		free(gen_h.grp[g].pages);
		gen_h.grp[g].pages = NULL;
	}
	for (unsigned int m = 0; m < GEN_MMS; m++)
		if (gen_h.mm[m]) {
			mm_destroy(gen_h.mm[m]);
			gen_h.mm[m] = NULL;
		}
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES; zid++)
		for (; gen_zone(zid) && M.depth[zid] > 0; M.depth[zid]--)
			zone_pcp_enable(gen_zone(zid));
	fail_page_alloc_configure(NULL);
	drain_all_pages_machine(&gen_world.m);
}

bool model_finish(void)
{
	int op = (int)M.p->nr_ops;

	if (!model_full_check(op - 1))
		return false;
	release_all();
	memset(M.mm, 0, sizeof(M.mm));
	memset(M.pin, 0, sizeof(M.pin));
	snap_zones();
	for (unsigned int c = 0; c < GEN_CPUS; c++)
		M.inj0[c] = gen_cpu_injected(c);
	fail_page_alloc_read_stats(&M.fpa0);
	check_state(op);
	for (unsigned int zid = 0; zid < GEN_NODE_ZONES && !gen_failed(); zid++)
		if (gen_zone(zid) && zone_pcp_count(gen_zone(zid)))
			gen_fail(op, "drain", "KT_EXPECT_EQ(t, machine_free_pages(s.m), machine_managed_pages(s.m));",
				 "at the end: %lu pages still on node%u %s's lists after "
				 "drain_all_pages_machine()", zone_pcp_count(gen_zone(zid)),
				 zid / MAX_NR_ZONES, gen_zone(zid)->name);
	free(M.owner);
	M.owner = NULL;
	return !gen_failed();
}
