/*
 * Per-CPU page lists (PCP): per zone and CPU, a cache of free order-0..3 (and pageblock)
 * blocks so most allocations and frees skip zone->lock; Linux v6.4 rules, with its three
 * lock models, one per allocator instance. Here: sizing, what a hit does not need (refills,
 * spills), drains. The hit paths are mm/pcp.h; checks and counters mm/debug.c.
 */
#include "mm/pcp.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "kernel/cmdline.h"
#include "kernel/smp.h"
#include "kernel/string.h"

/* Written at boot, and by benchmarks and tests while no other CPU allocates: a plain read. */
bool pcp_enabled __read_mostly = true;
CMDLINE_BOOL("pcp.enable", pcp_enabled, "0: no per-CPU page lists, every page via zone->lock");

enum pcp_lock_model pcp_lock_default = PCP_LOCK_TRYLOCK;

static const char *const lock_model_names[] = { "irqoff", "irqsave", "trylock" };

const char *pcp_lock_model_name(enum pcp_lock_model m)
{
	return lock_model_names[m];
}

int pcp_lock_model_parse(const char *name)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(lock_model_names); i++)
		if (name && !strcmp(name, lock_model_names[i]))
			return (int)i;
	return -1;
}

static int set_lock_default(const char *name)
{
	int m = pcp_lock_model_parse(name);

	if (m < 0)
		return -1;
	pcp_lock_default = (enum pcp_lock_model)m;
	return 0;
}
CMDLINE_FUNC("pcp.lock", set_lock_default, "irqoff|irqsave|trylock: how the per-CPU page lists "
	     "are protected, fixed for the allocator's life (default trylock)");

/* ---- sizing ---- */

static int rounddown_pow_of_two(int n)
{
	return 1 << (31 - __builtin_clz((unsigned int)n));
}

/*
 * batch: a quarter of the zone's pages per 1024, at most 256 / 4 = 64 (1 MiB worth), then
 * rounded to 2^n - 1 (so refills of different CPUs do not all alias the same cache colours):
 * a zone of 1 GiB or more gives 63, 512 MiB gives 31. At least 1.
 */
int zone_batchsize(const struct zone *zone)
{
	int batch = (int)MIN(zone->managed_pages >> 10, 256ul) / 4;

	if (batch < 1)
		batch = 1;
	batch = rounddown_pow_of_two(batch + batch / 2) - 1;
	return MAX(batch, 1);
}

/* high: the zone's low watermark shared among the CPUs (so that full pcps never push the
 * zone below it), but at least 4 batches. */
int zone_highsize(const struct zone *zone, int batch, unsigned int nr_cpus)
{
	int high = (int)(zone->_watermark[WMARK_LOW] / MAX(nr_cpus, 1u));

	return MAX(high, batch * 4);
}

/* Write high and batch into every pcp of zone. zone->pcp_batch_high_lock held. */
static void __pageset_set_high_and_batch(struct zone *zone, int high, int batch)
{
	assert_spin_locked(&zone->pcp_batch_high_lock);
	for (unsigned int cpu = 0; cpu < zone->node->nr_cpus; cpu++) {
		WRITE_ONCE(zone->pcp[cpu].high, high);
		WRITE_ONCE(zone->pcp[cpu].batch, batch);
	}
}

/*
 * The CPUs among the first nr_cpus that share node pgdat's zones' high: those on the node,
 * or all of them if the node has none (CPU-less) - Linux's zone_highsize() split.
 */
unsigned int node_split_cpus(const struct pglist_data *pgdat, unsigned int nr_cpus)
{
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		n += machine_cpu_nid(pgdat->machine, cpu) == (unsigned int)pgdat->nid;
	return n ? n : nr_cpus;
}

void zone_pcp_update(struct pglist_data *pgdat, unsigned int nr_cpus)
{
	nr_cpus = node_split_cpus(pgdat, nr_cpus);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		int batch = zone_batchsize(zone);

		if (!zone->pcp)
			continue;
		spin_lock(&zone->pcp_batch_high_lock);
		zone->pageset_batch = batch;
		zone->pageset_high = zone_highsize(zone, batch, nr_cpus);
		if (!zone->pcp_disable_depth)
			__pageset_set_high_and_batch(zone, zone->pageset_high, batch);
		spin_unlock(&zone->pcp_batch_high_lock);
	}
}

/* Every zone of a node with memory gets nr_cpus pcps, from the node's own memory, in the
 * machine's lock model, with the boot pageset (high 0, batch 1: every free spills) until
 * zone_pcp_update() computes the real values. */
int pcp_node_init(struct pglist_data *pgdat, struct memblock *mb)
{
	int nid = pgdat->machine->nr_nodes > 1 ? (int)node_index(pgdat) : -1; /* 1 node: anywhere */

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		u64 pcp;

		if (!pgdat->node_end_pfn)
			break;	/* memoryless: no zone will ever have pages */
		pcp = memblock_alloc_node(mb, pgdat->nr_cpus * sizeof(*zone->pcp), CACHELINE_SIZE,
					  nid);
		if (!pcp)
			return -1;
		zone->pcp = arch_phys_to_virt(pcp);
		zone->pcp_lock = pgdat->machine->pcp_lock;
		spin_lock_init(&zone->pcp_batch_high_lock, "pcp_batch_high", 0);
		for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++) {
			spin_lock_init(&zone->pcp[cpu].lock, "pcp", 0);
			zone->pcp[cpu].high = BOOT_PAGESET_HIGH;
			zone->pcp[cpu].batch = BOOT_PAGESET_BATCH;
			for (int i = 0; i < NR_PCP_LISTS; i++)
				INIT_LIST_HEAD(&zone->pcp[cpu].lists[i]);
		}
	}
	return 0;
}

/* ---- spilling to the buddy lists ---- */

/*
 * The pages a CPU frees go to its own list for the page's zone, whatever node the zone is
 * on (free_unref_page()). Pages of a remote zone stay there until this CPU allocates from
 * that zone, or they spill or are drained: count the pages that went home that way.
 */
static void count_remote_home(struct zone *zone, struct per_cpu_pages *pcp, int pages)
{
	unsigned int cpu = (unsigned int)(pcp - zone->pcp);

	if (machine_cpu_nid(zone->node->machine, cpu) != (unsigned int)zone->node->nid)
		zone->pcp[cpu].stats.remote_home += (u64)pages;
}

/*
 * Give `count` base pages of pcp back to the buddy lists under one zone->lock hold. Lists
 * are visited round-robin starting with pindex (the one just freed to), each emptied from
 * its tail (the coldest pages) before moving on; empty lists at either end shrink the
 * window. count is clamped to pcp->count, or the loop would spin on empty lists.
 * Caller holds pcp (its lock, or interrupts off in the irqoff model).
 */
static void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp,
			       int pindex)
{
	int min_pindex = 0, max_pindex = NR_PCP_LISTS - 1, listed = pcp->count;
	unsigned long flags;

	pcp_assert_held(zone, pcp);
	count = MIN(pcp->count, count);
	pindex--;
	flags = spin_lock_irqsave(&zone->lock);
	while (count > 0) {
		struct list_head *list;
		int nr_pages;

		for (;;) {
			if (++pindex > max_pindex)
				pindex = min_pindex;
			list = &pcp->lists[pindex];
			if (!list_empty(list))
				break;
			if (pindex == max_pindex)
				max_pindex--;
			if (pindex == min_pindex)
				min_pindex++;
		}
		nr_pages = 1 << pindex_to_order((unsigned int)pindex);
		do {
			struct page *page = list_last_entry(list, struct page, lru);

			list_del(&page->lru);
			__clear_page_flag(page, PG_pcp);
			count -= nr_pages;
			WRITE_ONCE(pcp->count, pcp->count - nr_pages);
			__free_one_page(page, page->pfn, zone, pindex_to_order((unsigned int)pindex),
					page->mt);
		} while (count > 0 && !list_empty(list));
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	count_remote_home(zone, pcp, listed - pcp->count);	/* whole blocks: may be > count */
}

/* When count reaches this, spill. 0 (boot pageset, pcp disabled, free_high) spills now. */
static int nr_pcp_high(struct per_cpu_pages *pcp, bool free_high)
{
	int high = READ_ONCE(pcp->high);

	return (!high || free_high) ? 0 : high;
}

/*
 * How much to spill. free_high: everything. Boot pageset (high < batch): one block.
 * Otherwise batch << free_factor, clamped to [batch, high - batch] so at least batch pages
 * stay for the next allocations; while that doubling still fits, free_factor grows, so a
 * run of frees without allocations spills batch, 2 batch, 4 batch, ... (at most
 * batch << PCP_BATCH_SCALE_MAX).
 */
static int nr_pcp_free(struct per_cpu_pages *pcp, int high, bool free_high)
{
	int batch = READ_ONCE(pcp->batch), min_nr_free, max_nr_free;

	if (free_high)
		return pcp->count;
	if (high < batch)
		return 1;
	min_nr_free = batch;
	max_nr_free = high - batch;
	batch <<= pcp->free_factor;
	if (batch < max_nr_free && pcp->free_factor < PCP_BATCH_SCALE_MAX)
		pcp->free_factor++;
	return CLAMP(batch, min_nr_free, max_nr_free);
}

/*
 * The rest of a free that brought count to high, or of an order 1..3 one while frees
 * dominate (free_factor > 0): free_unref_page_commit() in mm/pcp.h said so. Spill
 * nr_pcp_free() pages, starting with the list just freed to, then let go of the caller's
 * hold (model, flags): under that same hold, so that no other holder ever sees the list at
 * or above high (zone_pcp_disable() relies on it: high 0 must mean empty lists). free_high
 * (v6.4): that high-order free empties the whole pcp, so that a CPU that mostly frees does
 * not sit on high-order pages another CPU could use while they are still cache-hot.
 */
void free_unref_page_spill(struct zone *zone, struct per_cpu_pages *pcp, unsigned int order,
			   int mt, enum pcp_lock_model model, unsigned long flags)
{
	bool free_high = pcp->free_factor && order && order <= PAGE_ALLOC_COSTLY_ORDER;
	int high = nr_pcp_high(pcp, free_high);

	pcp_assert_held(zone, pcp);
	if (pcp->count >= high) {
		free_pcppages_bulk(zone, nr_pcp_free(pcp, high, free_high), pcp,
				   (int)order_to_pindex(mt, order));
		pcp->stats.spill++;
	}
	pcp_unlock(pcp, model, flags);
}

/* ---- refilling from the buddy lists ---- */

/*
 * Move up to count blocks of order from the buddy lists to the tail of list, under one
 * zone->lock hold (tail: they come out in physical order). Each block is checked on its way
 * (check_new_pages): one found in use is discarded, left off every list. Returns how many
 * blocks were listed.
 */
static int rmqueue_bulk(struct zone *zone, unsigned int order, int count,
			struct list_head *list, int mt)
{
	unsigned long flags = spin_lock_irqsave(&zone->lock);
	int listed = 0;

	for (int i = 0; i < count; i++) {
		struct page *page = __rmqueue(zone, order, mt);

		if (!page)
			break;
		if (!check_new_pages(page, order))
			continue;
		__set_page_flag(page, PG_pcp);
		list_add_tail(&page->lru, list);
		listed++;
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	return listed;
}

/*
 * Refill an empty list with max(batch >> order, 2) blocks (1 with the boot pageset): enough
 * to amortise zone->lock over several allocations, fewer for big orders so a CPU does not
 * hoard them. False if the buddy lists gave none. Caller holds pcp.
 */
static bool pcp_refill(struct zone *zone, unsigned int order, int mt,
		       struct per_cpu_pages *pcp, struct list_head *list)
{
	int batch = READ_ONCE(pcp->batch);

	if (batch > 1)
		batch = MAX(batch >> order, 2);
	WRITE_ONCE(pcp->count, pcp->count + (rmqueue_bulk(zone, order, batch, list, mt) << order));
	pcp->stats.refill++;
	return !list_empty(list);
}

/*
 * The rest of an allocation from this CPU's list that rmqueue_pcplist() (mm/pcp.h) could
 * not serve: take the lock again (busy: counted, and the caller goes to the buddy lists),
 * refill an empty list and take its head, until a block passes the check; NULL if the buddy
 * lists have none. Every block was checked when a refill brought it; debug builds check it
 * again as it leaves (a page someone used while it sat here), as Linux does
 * (check_pcp_refill, check_new_pcp).
 */
struct page *rmqueue_pcplist_refill(struct zone *preferred, struct zone *zone,
				    unsigned int order, int mt)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	struct list_head *list = &pcp->lists[order_to_pindex(mt, order)];
	struct page *page = NULL;
	unsigned long flags = 0;	/* (the trylock model leaves it alone) */

	if (!pcp_trylock(pcp, zone->pcp_lock, &flags)) {
		pcp->stats.trylock_fail_alloc++;
		return NULL;
	}
	do {
		if (list_empty(list) && !pcp_refill(zone, order, mt, pcp, list))
			break;
		page = __rmqueue_pcplist(zone, order, pcp, list);
	} while (!page);
	pcp_unlock(pcp, zone->pcp_lock, flags);
	if (page)
		zone_statistics(preferred, zone, pcp);
	return page;
}

/* The first zone of pgdat's own, highest first, that gfp allows and that can give nr pages
 * above its low watermark (Linux's __alloc_pages_bulk() stays on the local node too). */
static struct zone *bulk_zone(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr)
{
	enum zone_type high = (gfp & __GFP_DMA) ? ZONE_DMA :
			      (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL;

	for (int z = (int)high; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		if (zone_populated(zone) &&
		    zone_watermark_ok(zone, 0, zone->_watermark[WMARK_LOW] + nr, high, 0))
			return zone;
	}
	return NULL;
}

/*
 * Fill the NULL slots of pages[] with order-0 pages under a single pcp hold (refilling from
 * the buddy lists as needed). If the pcp is busy, or no zone has room for all of them above
 * its low watermark, or fail_page_alloc fails the batch (as Linux's), or nothing came, fall
 * back to one ordinary allocation.
 */
unsigned int alloc_pages_bulk_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr,
				   struct page **pages)
{
	unsigned int i = 0, filled = 0, missing = 0;
	struct per_cpu_pages *pcp = NULL;
	struct zone *zone = NULL;
	unsigned long flags = 0;
	int mt = gfp_migratetype(gfp);

	for (unsigned int k = 0; k < nr; k++)
		missing += !pages[k];
	if (missing > 1 && pcp_enabled && !should_fail_alloc_page(gfp, 0) &&
	    (zone = bulk_zone(pgdat, gfp, missing)))
		pcp = pcp_lock_this_cpu(zone, &flags);
	for (; pcp && i < nr; i++) {
		struct list_head *list = &pcp->lists[order_to_pindex(mt, 0)];

		if (pages[i])
			continue;
		if (list_empty(list) && !pcp_refill(zone, 0, mt, pcp, list))
			break;
		if (!(pages[i] = __rmqueue_pcplist(zone, 0, pcp, list))) {
			i--;	/* a page in use, discarded: take the next one */
			continue;
		}
		prep_new_page(pages[i], 0, gfp);
		zone_statistics(zone, zone, pcp);	/* a zone of the node asked for */
		filled++;
	}
	if (pcp)
		pcp_unlock_this_cpu(zone, pcp, flags);
	for (i = 0; !filled && i < nr; i++)
		if (!pages[i]) {
			filled = !!(pages[i] = alloc_pages_node(pgdat, gfp, 0));
			break;
		}
	for (i = 0, filled = 0; i < nr; i++)
		filled += !!pages[i];
	return filled;
}

/* ---- drains: one CPU's lists of one zone, of every zone; every CPU's ---- */

/* Every zone with per-CPU lists of every node of machine m. */
#define for_each_pcp_zone(m, zn)							\
	for (unsigned int nid__ = 0; nid__ < (m)->nr_nodes; nid__++)			\
		for (struct zone *zn = (m)->node[nid__]->node_zones;			\
		     zn < (m)->node[nid__]->node_zones + MAX_NR_ZONES; zn++)			\
			if (!zn->pcp) {} else

/*
 * A drain's hold of a pcp, which may wait (a drain is never the owner's hit path).
 * irqoff: the drainer is the owner, or the owner is not online: interrupts off. irqsave:
 * the lock with interrupts off, as Linux 6.0 and 6.1. trylock: the lock, interrupts on, as
 * 6.2+ (an interrupt that wants this CPU's own pcp meanwhile fails its trylock).
 */
static unsigned long drain_lock(struct per_cpu_pages *pcp, enum pcp_lock_model model)
{
	if (model == PCP_LOCK_IRQOFF)
		return arch_irq_save();
	if (model == PCP_LOCK_IRQSAVE)
		return spin_lock_irqsave(&pcp->lock);
	spin_lock(&pcp->lock);
	return 0;
}

static void drain_unlock(struct per_cpu_pages *pcp, enum pcp_lock_model model,
			 unsigned long flags)
{
	if (model == PCP_LOCK_IRQOFF)
		arch_irq_restore(flags);
	else if (model == PCP_LOCK_IRQSAVE)
		spin_unlock_irqrestore(&pcp->lock, flags);
	else
		spin_unlock(&pcp->lock);
}

/*
 * Empty cpu's lists of zone into the buddy lists (Linux's drain_pages_zone()): from any CPU
 * in the lock models, only from cpu itself (or for a CPU that is not online) in irqoff. In
 * chunks of batch << 5, to bound the hold; count is read under the lock, less what each
 * chunk drained, until nothing is left: read before locking, it races with the owner's
 * refill (which adds to count under the lock) and can leave pages behind (Linux
 * 66eca1021a42, a memory-offline hang). It waits for the lock: never from an interrupt on
 * cpu, whose interrupted code may hold it.
 */
static void drain_pages_zone(unsigned int cpu, struct zone *zone, enum pcp_lock_model model)
{
	struct per_cpu_pages *pcp = &zone->pcp[cpu];
	int count;

	do {
		unsigned long flags = drain_lock(pcp, model);

		count = pcp->count;
		if (count) {
			int to_drain = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			pcp->stats.drained += (u64)(count - pcp->count);
			count -= to_drain;
		}
		drain_unlock(pcp, model, flags);
	} while (count > 0);
}

/* cpu's lists of every zone of m (Linux's drain_pages()). */
static void drain_pages(struct mm_machine *m, unsigned int cpu, enum pcp_lock_model model)
{
	for_each_pcp_zone(m, zone)
		drain_pages_zone(cpu, zone, model);
}

/* irqoff: another CPU asked this one to drain its own lists (Linux before 6.0 queued work
 * for that, drain_local_pages_wq()); in the IPI, interrupts off. Counted per zone. */
static void drain_zone_ipi(void *zone)
{
	drain_pages_zone(arch_cpu_id(), zone, PCP_LOCK_IRQOFF);
	this_cpu_pcp(zone)->stats.ipi_drain++;
}

static void drain_machine_ipi(void *m)
{
	for_each_pcp_zone((struct mm_machine *)m, zone)
		drain_zone_ipi(zone);
}

/*
 * cpu's lists of zone, or of every zone of m (zone NULL), drained from this CPU: directly in
 * the lock models; in irqoff by asking cpu and waiting, unless it is this CPU or not online
 * (then nobody uses its lists, and this CPU drains them).
 */
static void drain_cpu(struct mm_machine *m, struct zone *zone, unsigned int cpu,
		      enum pcp_lock_model model)
{
	if (model == PCP_LOCK_IRQOFF && cpu != arch_cpu_id() &&
	    (zone ? smp_call_function_single(cpu, drain_zone_ipi, zone, true) :
		    smp_call_function_single(cpu, drain_machine_ipi, m, true)) == 0)
		return;
	if (zone)
		drain_pages_zone(cpu, zone, model);
	else
		drain_pages(m, cpu, model);
}

static bool cpu_has_pcp_pages(struct mm_machine *m, struct zone *zone, unsigned int cpu)
{
	if (zone)
		return READ_ONCE(zone->pcp[cpu].count);
	for_each_pcp_zone(m, z)
		if (READ_ONCE(z->pcp[cpu].count))
			return true;
	return false;
}

/*
 * Empty every CPU's lists of zone, or of every zone of m (zone NULL): Linux's
 * __drain_all_pages(), with m's lock model read once. Every CPU has lists in every zone of
 * every node: a node's CPUs are not the only ones holding its pages. CPUs are picked by a
 * racy peek at their counts unless force_all_cpus (the peek can miss a refill in flight).
 * A drain that finds another running waits its turn, whatever it drains: the running one
 * may be of one CPU or one zone, or past the CPU whose pages the caller needs, so "it does
 * the work" (Linux's drain_all_pages(NULL) returns, and reclaim retries up to 16 times) is
 * not true here, where the slow path retries once. It may wait (for the lock, other CPUs'
 * locks, IPIs), so interrupts must be on.
 */
static void __drain_all_pages(struct mm_machine *m, struct zone *zone, bool force_all_cpus)
{
	enum pcp_lock_model model = m->pcp_lock;

	VM_BUG_ON(arch_irqs_disabled());
	spin_lock(&m->pcp_drain_lock);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
			drain_cpu(m, zone, cpu, model);
	spin_unlock(&m->pcp_drain_lock);
}

void drain_local_pages(struct zone *zone)
{
	drain_pages_zone(arch_cpu_id(), zone, zone->pcp_lock);
}

void drain_cpu_pages(struct mm_machine *m, unsigned int cpu)
{
	VM_BUG_ON(arch_irqs_disabled() || cpu >= m->nr_cpus);
	spin_lock(&m->pcp_drain_lock);
	drain_cpu(m, NULL, cpu, m->pcp_lock);
	spin_unlock(&m->pcp_drain_lock);
}

void drain_all_pages(struct zone *zone)
{
	__drain_all_pages(zone->node->machine, zone, false);
}

void drain_all_pages_machine(struct mm_machine *m)
{
	__drain_all_pages(m, NULL, false);
}

/*
 * As memory offlining does: make every free of the zone go straight to the buddy lists
 * (high 0, batch 1), then drain every CPU. Nests; zone_pcp_enable() undoes the last one.
 * The depth and the writes are one step under zone->pcp_batch_high_lock (see there).
 */
void zone_pcp_disable(struct zone *zone)
{
	if (!zone->pcp)
		return;
	spin_lock(&zone->pcp_batch_high_lock);
	zone->pcp_disable_depth++;
	__pageset_set_high_and_batch(zone, BOOT_PAGESET_HIGH, BOOT_PAGESET_BATCH);
	spin_unlock(&zone->pcp_batch_high_lock);
	__drain_all_pages(zone->node->machine, zone, true);
}

void zone_pcp_enable(struct zone *zone)
{
	if (!zone->pcp)
		return;
	spin_lock(&zone->pcp_batch_high_lock);
	VM_BUG_ON(zone->pcp_disable_depth <= 0);
	if (--zone->pcp_disable_depth == 0)
		__pageset_set_high_and_batch(zone, zone->pageset_high, zone->pageset_batch);
	spin_unlock(&zone->pcp_batch_high_lock);
}
