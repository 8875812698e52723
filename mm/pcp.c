/*
 * Per-CPU page lists (PCP): per zone and CPU, a cache of free order-0..3 (and pageblock)
 * blocks so most allocations and frees skip zone->lock; Linux v6.4 rules, with its three
 * locking schemes selectable at boot. Not the buddy lists (page_alloc.c).
 */
#include "mm/pcp.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "kernel/cmdline.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/printk.h"

enum pcp_lock_model pcp_lock_model __read_mostly = PCP_LOCK_TRYLOCK;
bool pcp_enabled __read_mostly = true;

static const char *const lock_model_names[] = { "irqoff", "irqsave", "trylock" };

const char *pcp_lock_model_name(enum pcp_lock_model m)
{
	return lock_model_names[m];
}

static int lock_model_index(const char *name)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(lock_model_names); i++)
		if (name && !strcmp(name, lock_model_names[i]))
			return (int)i;
	return -1;
}

/* Set the model before any list holds a page (the boot command line). */
int pcp_set_lock_model(const char *name)
{
	int i = lock_model_index(name);

	if (i < 0)
		return -1;
	WRITE_ONCE(pcp_lock_model, (enum pcp_lock_model)i);
	return 0;
}

/*
 * pcp_drain_lock serialises remote drains: drain_all_pages() and friends, and model
 * switches. A drain reads the model once, under it, so no switch can happen in the middle
 * of one. Waiters spin with interrupts on (the holder may IPI them, irqoff model).
 */
static spinlock_t pcp_drain_lock;

/*
 * Which lists a drain empties: one zone's, one node's, or every zone of every node of a
 * machine. A CPU has a list in every zone of every node, so a node's drain is not a CPU's
 * own node's: CPU 30 of node 1 holds pages of node 0 that it freed.
 */
struct drain_request {
	struct mm_machine *machine;
	struct pglist_data *pgdat;	/* NULL: every node of machine */
	struct zone *zone;		/* NULL: every zone (of pgdat, or of machine) */
	enum pcp_lock_model model;	/* read once, under pcp_drain_lock */
};

static void __drain_all_pages(struct drain_request *req, bool force_all);

/*
 * Switch models at run time: under pcp_drain_lock (after waiting for a drain in progress)
 * every list of every node is emptied, then the model changes, so no list is ever shared
 * between two models. Fast paths are not excluded: no other CPU may be inside one meanwhile
 * (benchmarks, tests and the monitor switch while the other CPUs idle), nor may a node be
 * created or destroyed. A hold taken before the switch is still released as it was taken.
 */
int pcp_switch_lock_model(const char *name)
{
	int m = lock_model_index(name);
	enum pcp_lock_model old;

	if (m < 0)
		return -1;
	VM_BUG_ON(arch_irqs_disabled());
	spin_lock(&pcp_drain_lock);
	old = READ_ONCE(pcp_lock_model);
	for (int n = 0; n < MAX_NUMNODES; n++) {
		struct pglist_data *pgdat = smp_load_acquire(&node_data[n]);
		struct drain_request req = { pgdat ? pgdat->machine : NULL, pgdat, NULL, old };

		if (pgdat)
			__drain_all_pages(&req, true);
	}
	WRITE_ONCE(pcp_lock_model, (enum pcp_lock_model)m);
	spin_unlock(&pcp_drain_lock);
	return 0;
}
CMDLINE_FUNC("pcp.lock", pcp_set_lock_model,
	     "irqoff|irqsave|trylock: how per-CPU page lists are protected (default trylock)");
CMDLINE_BOOL("pcp.enable", pcp_enabled, "0: no per-CPU page lists, every page via zone->lock");

#define pcp_stat(zone, cpu) (&(zone)->pcp[cpu].stats)

/*
 * Size the per-CPU pages struct as promised in mm/mmzone.h: the 64-byte spinlock (it carries
 * lock statistics) + 16 bytes of counters + 13 list heads = 288 bytes -> 5 cache lines,
 * then the event counters on 2 lines of their own and one of padding: 8, a power of two.
 */
BUILD_BUG_ON(offsetof(struct per_cpu_pages, stats) != 5 * CACHELINE_SIZE);
BUILD_BUG_ON(sizeof(struct per_cpu_pages) != 8 * CACHELINE_SIZE);
BUILD_BUG_ON(sizeof(struct pcp_stats) != 2 * CACHELINE_SIZE);

/* For tests: hold this CPU's pcp as a fast path would (see pcp_trylock). */
struct per_cpu_pages *pcp_lock_this_cpu(struct zone *zone, struct pcp_hold *hold)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);

	return pcp_trylock(pcp, hold) ? pcp : NULL;
}

void pcp_unlock_this_cpu(struct per_cpu_pages *pcp, const struct pcp_hold *hold)
{
	pcp_unlock(pcp, *hold);
}

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
static unsigned int node_split_cpus(const struct pglist_data *pgdat, unsigned int nr_cpus)
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

/* Every zone of a node with memory gets nr_cpus pcps, from the node's own memory, with the
 * boot pageset (high 0, batch 1: every free spills) until zone_pcp_update() computes the
 * real values. */
int pcp_node_init(struct pglist_data *pgdat, struct memblock *mb)
{
	int nid = pgdat->machine->nr_nodes > 1 ? pgdat->nid : -1;	/* one node: anywhere */
	static bool drain_lock_ready;

	if (!__atomic_exchange_n(&drain_lock_ready, true, __ATOMIC_ACQ_REL))
		spin_lock_init(&pcp_drain_lock, "pcp_drain", 0);
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
 * that zone, or they spill or are drained: count those that go home that way.
 */
static void count_remote_home(struct zone *zone, struct per_cpu_pages *pcp, int count)
{
	unsigned int cpu = (unsigned int)(pcp - zone->pcp);

	if (machine_cpu_nid(zone->node->machine, cpu) != (unsigned int)zone->node->nid)
		pcp_stat(zone, cpu)->remote_home += (u64)count;
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
	int min_pindex = 0, max_pindex = NR_PCP_LISTS - 1;
	unsigned long flags;

	pcp_assert_held(pcp);
	count = MIN(pcp->count, count);
	count_remote_home(zone, pcp, count);
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
}

/* ---- free path ---- */

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

/* Spill from pcp after a free brought count to high (see nr_pcp_free). Caller holds pcp. */
static void pcp_spill(struct zone *zone, struct per_cpu_pages *pcp, int high, bool free_high,
		      unsigned int pindex)
{
	free_pcppages_bulk(zone, nr_pcp_free(pcp, high, free_high), pcp, (int)pindex);
	pcp->stats.spill++;
}

/*
 * Free a block of a pcp order whose last reference is gone (the order-0 fast path,
 * mm/page_alloc.c, sends what it did not take): to this CPU's list, or to the buddy lists if
 * the lists are off or busy (trylock failed: an interrupted holder, or a remote drain).
 * On the list: push, count, and spill if count reached high. free_high (v6.4): a high-order
 * free while frees dominate (free_factor > 0) empties the whole pcp, so that a CPU that
 * mostly frees does not sit on high-order pages another CPU could use while they are still
 * cache-hot.
 */
void free_unref_page(struct page *page, unsigned int order)
{
	struct zone *zone = page_zone(page);
	int mt = get_pageblock_migratetype(page);
	struct per_cpu_pages *pcp;
	struct pcp_hold hold;
	bool free_high;
	int high;

	if (!READ_ONCE(pcp_enabled)) {
		free_one_page(zone, page, order, mt);
		return;
	}
	pcp = this_cpu_pcp(zone);
	if (!pcp_trylock(pcp, &hold)) {
		pcp->stats.trylock_fail_free++;
		free_one_page(zone, page, order, mt);
		return;
	}
	pcp_push(pcp, page, mt, order);
	pcp->stats.free_hit++;
	free_high = pcp->free_factor && order && order <= PAGE_ALLOC_COSTLY_ORDER;
	high = nr_pcp_high(pcp, free_high);
	if (pcp->count >= high)
		pcp_spill(zone, pcp, high, free_high, order_to_pindex(mt, order));
	pcp_unlock(pcp, hold);
}

/* ---- allocation path ---- */

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
 * Take the head of list, refilling an empty list first. Every block was checked when a
 * refill brought it from the buddy lists; debug builds check it again as it leaves the list
 * (a page someone used while it sat here) and take the next one if it is in use: the bad
 * one is discarded, left off every list (check_new_pages). Linux checks in the same two
 * places (check_pcp_refill, check_new_pcp). Caller holds pcp.
 */
static struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order, int mt,
				      struct per_cpu_pages *pcp, struct list_head *list)
{
	struct page *page;

	do {
		if (!list_empty(list))
			pcp->stats.alloc_hit++;
		else if (!pcp_refill(zone, order, mt, pcp, list))
			return NULL;
		page = pcp_pop(pcp, list, order);
	} while (CONFIG_DEBUG_VM && !check_new_pages(page, order));
	return page;
}

/*
 * Allocate from this CPU's list (refilled if empty), or NULL: the caller then uses the
 * buddy lists. Every order; order 0 comes here when its fast path (mm/page_alloc.c) did not
 * find a page. An allocation halves free_factor: frees that follow allocations spill less.
 */
struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int mt)
{
	struct per_cpu_pages *pcp;
	struct pcp_hold hold;
	struct page *page;

	if (!READ_ONCE(pcp_enabled))
		return NULL;
	pcp = this_cpu_pcp(zone);
	if (unlikely(!pcp_trylock(pcp, &hold))) {
		pcp->stats.trylock_fail_alloc++;
		return NULL;
	}
	pcp->free_factor >>= 1;
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
	pcp_unlock(pcp, hold);
	return page;
}

/* The first zone (zonelist order) that can give nr pages above its low watermark. */
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
	struct pcp_hold hold;
	int mt = gfp_migratetype(gfp);

	for (unsigned int k = 0; k < nr; k++)
		missing += !pages[k];
	if (missing > 1 && READ_ONCE(pcp_enabled) && !should_fail_alloc_page(gfp, 0) &&
	    (zone = bulk_zone(pgdat, gfp, missing))) {
		pcp = this_cpu_pcp(zone);
		if (!pcp_trylock(pcp, &hold))
			pcp = NULL;
	}
	for (; pcp && i < nr; i++) {
		struct list_head *list = &pcp->lists[order_to_pindex(mt, 0)];

		if (pages[i])
			continue;
		if (!(pages[i] = __rmqueue_pcplist(zone, 0, mt, pcp, list)))
			break;
		prep_new_page(pages[i], 0, gfp);
		pcp->stats.numa_hit++;	/* a zone of the node asked for */
		filled++;
	}
	if (pcp)
		pcp_unlock(pcp, hold);
	for (i = 0; !filled && i < nr; i++)
		if (!pages[i]) {
			filled = !!(pages[i] = alloc_pages_node(pgdat, gfp, 0));
			break;
		}
	for (i = 0, filled = 0; i < nr; i++)
		filled += !!pages[i];
	return filled;
}

/* ---- drains ---- */

/*
 * Empty cpu's pcp of zone into the buddy lists, from any CPU (lock models irqsave and
 * trylock: the drainer takes the owner's lock directly, no IPI; irqoff: only for a CPU that
 * is not online). It drains in chunks of batch << 5 to bound the lock hold, and re-reads
 * count under the lock until it is zero: reading it before locking races with the owner's
 * refill (which adds to count under the lock) and can leave pages behind (Linux
 * 66eca1021a42, a memory-offline hang). It spins on the lock: never call it from an
 * interrupt on cpu itself, whose interrupted code may hold that lock (trylock model).
 */
static void drain_pages_zone(unsigned int cpu, struct zone *zone, enum pcp_lock_model model)
{
	struct per_cpu_pages *pcp = &zone->pcp[cpu];
	bool irqsave = model == PCP_LOCK_IRQSAVE;
	int count;

	do {
		unsigned long flags = irqsave ? spin_lock_irqsave(&pcp->lock) : 0;

		if (!irqsave)
			spin_lock(&pcp->lock);
		count = pcp->count;
		if (count) {
			int chunk = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, chunk, pcp, 0);
			pcp_stat(zone, cpu)->drained += (u64)(count - pcp->count);
		}
		if (irqsave)
			spin_unlock_irqrestore(&pcp->lock, flags);
		else
			spin_unlock(&pcp->lock);
	} while (count);
}

/* irqoff model: only the owner touches its lists, with interrupts off. */
static void drain_local_irqoff(struct zone *zone)
{
	struct per_cpu_pages *pcp = &zone->pcp[arch_cpu_id()];
	unsigned long flags = arch_irq_save();
	int count = pcp->count;

	if (count) {
		free_pcppages_bulk(zone, count, pcp, 0);
		pcp_stat(zone, arch_cpu_id())->drained += (u64)count;
	}
	arch_irq_restore(flags);
}

static bool drain_covers(const struct drain_request *req, const struct zone *zn)
{
	return zn->pcp && (req->zone ? zn == req->zone : !req->pgdat || zn->node == req->pgdat);
}

/* zn is the next zone req covers after prev (NULL: the first); NULL when done. */
static struct zone *drain_next_zone(const struct drain_request *req, struct zone *prev)
{
	const struct mm_machine *m = req->machine;
	unsigned int nid = prev ? (unsigned int)prev->node->nid : 0;
	int z = prev ? (int)prev->idx + 1 : 0;

	for (; nid < m->nr_nodes; nid++, z = 0)
		for (; z < MAX_NR_ZONES; z++)
			if (drain_covers(req, &m->node[nid]->node_zones[z]))
				return &m->node[nid]->node_zones[z];
	return NULL;
}

#define for_each_drain_zone(req, zn) \
	for (struct zone *zn = drain_next_zone(req, NULL); zn; zn = drain_next_zone(req, zn))

/* Drain this CPU's lists of the zones req covers, under req->model. */
static void drain_local(const struct drain_request *req)
{
	for_each_drain_zone(req, zn) {
		if (req->model == PCP_LOCK_IRQOFF)
			drain_local_irqoff(zn);
		else
			drain_pages_zone(arch_cpu_id(), zn, req->model);
	}
}

/* Not from an interrupt handler: in the lock models the code it interrupted may hold this
 * CPU's pcp lock, on which the drain would spin. */
void drain_local_pages_node(struct pglist_data *pgdat)
{
	struct drain_request req = { pgdat->machine, pgdat, NULL, READ_ONCE(pcp_lock_model) };

	drain_local(&req);
}

void drain_local_pages(struct zone *zone)
{
	struct drain_request req = { zone ? zone->node->machine : mm_machine(), NULL, zone,
				     READ_ONCE(pcp_lock_model) };

	drain_local(&req);
}

/* Cross-CPU call handler (irqoff model): runs on the owner with interrupts off. */
static void drain_local_ipi(void *arg)
{
	struct drain_request *req = arg;
	struct zone *first = drain_next_zone(req, NULL);

	drain_local(req);
	if (first)
		pcp_stat(first, arch_cpu_id())->ipi_drain++;
}

static bool cpu_has_pcp_pages(const struct drain_request *req, unsigned int cpu)
{
	for_each_drain_zone(req, zn)
		if (READ_ONCE(zn->pcp[cpu].count))
			return true;
	return false;
}

/* Drain one CPU's pcps from here: directly, or (irqoff) by asking the owner and waiting;
 * a CPU that is not online cannot be using its lists, so those are drained directly. */
static void drain_cpu(struct drain_request *req, unsigned int cpu)
{
	if (req->model == PCP_LOCK_IRQOFF) {
		if (cpu == arch_cpu_id()) {
			drain_local(req);
			return;
		}
		if (smp_call_function_single(cpu, drain_local_ipi, req, true) == 0)
			return;
		/* not online: nobody uses its lists, drain them from here */
	}
	for_each_drain_zone(req, zn)
		drain_pages_zone(cpu, zn, req->model);
}

/*
 * Empty the pcps of every CPU (of the zones req covers). CPUs with empty lists are skipped
 * by a racy peek unless force_all (then every CPU is drained: the peek can miss a refill in
 * flight). pcp_drain_lock held.
 */
static void __drain_all_pages(struct drain_request *req, bool force_all)
{
	assert_spin_locked(&pcp_drain_lock);
	for (unsigned int cpu = 0; cpu < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
			drain_cpu(req, cpu);
}

/*
 * Take pcp_drain_lock and drain. It may wait (for the lock, other CPUs' locks, IPIs), so
 * interrupts must be on. A drain of more than one zone that finds another drain running
 * just returns, as Linux's drain_all_pages(NULL) does: the running one does the work, and
 * the slow path that asked only retries once. Callers that need the lists empty pass a
 * zone (zone_pcp_disable) or use pcp_switch_lock_model(), which wait their turn.
 */
static void drain_all(struct drain_request *req, bool force_all)
{
	VM_BUG_ON(arch_irqs_disabled());
	if (!spin_trylock(&pcp_drain_lock)) {
		if (!req->zone)
			return;
		spin_lock(&pcp_drain_lock);
	}
	req->model = READ_ONCE(pcp_lock_model);
	__drain_all_pages(req, force_all);
	spin_unlock(&pcp_drain_lock);
}

void drain_all_pages_node(struct pglist_data *pgdat)
{
	struct drain_request req = { pgdat->machine, pgdat, NULL, PCP_LOCK_TRYLOCK };

	drain_all(&req, false);
}

void drain_all_pages_machine(struct mm_machine *m)
{
	struct drain_request req = { m, NULL, NULL, PCP_LOCK_TRYLOCK };

	drain_all(&req, false);
}

/* Every CPU that holds pages of zone, whatever node it is on: all of them are asked. */
void drain_all_pages(struct zone *zone)
{
	struct drain_request req = { zone ? zone->node->machine : mm_machine(), NULL, zone,
				     PCP_LOCK_TRYLOCK };

	drain_all(&req, false);
}

/* One CPU's lists of every zone of pgdat's node, drained from here (Linux's
 * drain_pages(cpu), per node); waits its turn. */
void drain_cpu_pages(struct pglist_data *pgdat, unsigned int cpu)
{
	struct drain_request req = { pgdat->machine, pgdat, NULL, PCP_LOCK_TRYLOCK };

	VM_BUG_ON(arch_irqs_disabled() || cpu >= pgdat->nr_cpus);
	spin_lock(&pcp_drain_lock);
	req.model = READ_ONCE(pcp_lock_model);
	drain_cpu(&req, cpu);
	spin_unlock(&pcp_drain_lock);
}

/*
 * As memory offlining does: make every free of the zone go straight to the buddy lists
 * (high 0, batch 1), then drain every CPU. Nests; zone_pcp_enable() undoes the last one.
 * The depth and the writes are one step under zone->pcp_batch_high_lock (see there).
 */
void zone_pcp_disable(struct zone *zone)
{
	struct drain_request req = { zone->node->machine, NULL, zone, PCP_LOCK_TRYLOCK };

	if (!zone->pcp)
		return;
	spin_lock(&zone->pcp_batch_high_lock);
	zone->pcp_disable_depth++;
	__pageset_set_high_and_batch(zone, BOOT_PAGESET_HIGH, BOOT_PAGESET_BATCH);
	spin_unlock(&zone->pcp_batch_high_lock);
	drain_all(&req, true);
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

/* ---- checks, counters, dumps ---- */

unsigned long zone_pcp_count(struct zone *zone)
{
	unsigned long n = 0;

	for (unsigned int cpu = 0; zone->pcp && cpu < zone->node->nr_cpus; cpu++)
		n += (unsigned long)READ_ONCE(zone->pcp[cpu].count);
	return n;
}

static unsigned long verify_pcp_list(struct zone *zone, unsigned int cpu, unsigned int pindex,
				     unsigned long *pages)
{
	unsigned int order = pindex_to_order(pindex);
	unsigned long errors = 0, n = 0;
	struct page *page;

	list_for_each_entry(page, &zone->pcp[cpu].lists[pindex], lru) {
		if (++n > zone->spanned_pages)
			return errors + 1 + (printk("mm_verify: cpu%u pcp list %u loops\n", cpu,
						    pindex), 0);
		if (!PagePcp(page) || PageBuddy(page) || page->order != order || page_count(page) ||
		    (pindex < NR_LOWORDER_PCP_LISTS && page->mt != pindex % MIGRATE_PCPTYPES) ||
		    (page->pfn & ((1u << order) - 1)) || !zone_spans_pfn(zone, page->pfn) ||
		    page_zone(page) != zone) {
			printk("mm_verify: %s cpu%u pcp list %u: pfn 0x%lx flags 0x%x order %u mt "
			       "%u refcount %d\n", zone->name, cpu, pindex, (unsigned long)page->pfn,
			       page_flags(page), page->order, page->mt, page_count(page));
			errors++;
		}
		errors += verify_mark_block("pcp", page, order);
		*pages += 1ul << order;
	}
	return errors;
}

/* One CPU's lists, held as model protects them: their pages and count. */
static unsigned long verify_pcp(struct zone *zone, unsigned int cpu, unsigned long *pages)
{
	unsigned long errors = 0, before = *pages;
	struct per_cpu_pages *pcp = &zone->pcp[cpu];

	for (unsigned int i = 0; i < NR_PCP_LISTS; i++)
		errors += verify_pcp_list(zone, cpu, i, pages);
	if (*pages - before != (unsigned long)pcp->count) {
		printk("mm_verify: %s cpu%u pcp count %d but %lu pages listed\n", zone->name, cpu,
		       pcp->count, *pages - before);
		errors++;
	}
	return errors;
}

/*
 * mm_verify() part: every page on every CPU's lists of zone, and each count. mm_verify()
 * needs the allocator quiet. Each pcp is still held as its model protects it, without
 * waiting (the caller may itself have interrupted a holder): a held lock is reported as a
 * pcp operation in flight. irqoff: interrupts off shields only this CPU's own lists; the
 * others rely on the quiet rule alone.
 */
unsigned long pcp_verify_zone(struct zone *zone, unsigned long *pages)
{
	enum pcp_lock_model model = READ_ONCE(pcp_lock_model);
	unsigned long errors = 0;

	for (unsigned int cpu = 0; zone->pcp && cpu < zone->node->nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->pcp[cpu];
		unsigned long flags = 0;	/* the trylock model leaves it alone */

		if (!pcp_trylock_model(pcp, model, &flags)) {
			printk("mm_verify: %s cpu%u pcp busy: a pcp operation is in flight, the "
			       "allocator is not quiet\n", zone->name, cpu);
			errors++;
			continue;
		}
		errors += verify_pcp(zone, cpu, pages);
		pcp_unlock_model(pcp, model, flags);
	}
	return errors;
}

static void pcp_stats_add(struct pcp_stats *sum, const struct pcp_stats *s)
{
	sum->alloc_hit += READ_ONCE(s->alloc_hit);
	sum->free_hit += READ_ONCE(s->free_hit);
	sum->refill += READ_ONCE(s->refill);
	sum->spill += READ_ONCE(s->spill);
	sum->numa_hit += READ_ONCE(s->numa_hit);
	sum->numa_miss += READ_ONCE(s->numa_miss);
	sum->numa_foreign += READ_ONCE(s->numa_foreign);
	sum->drained += READ_ONCE(s->drained);
	sum->trylock_fail_alloc += READ_ONCE(s->trylock_fail_alloc);
	sum->trylock_fail_free += READ_ONCE(s->trylock_fail_free);
	sum->ipi_drain += READ_ONCE(s->ipi_drain);
	sum->remote_home += READ_ONCE(s->remote_home);
}

static void node_pcp_stats_add(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		for (unsigned int c = 0; zone->pcp && c < pgdat->nr_cpus; c++)
			if (cpu < 0 || c == (unsigned int)cpu)
				pcp_stats_add(sum, &zone->pcp[c].stats);
	}
}

void pcp_stats_reset(const struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			for (unsigned int c = 0; zone->pcp && c < m->nr_cpus; c++) {
				struct pcp_stats *s = &zone->pcp[c].stats;

				*s = (struct pcp_stats){ .numa_hit = s->numa_hit,
							 .numa_miss = s->numa_miss,
							 .numa_foreign = s->numa_foreign,
							 .remote_home = s->remote_home };
			}
		}
}

void pcp_stats_sum(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	node_pcp_stats_add(pgdat, cpu, sum);
}

void pcp_stats_sum_machine(const struct mm_machine *m, int cpu, struct pcp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		node_pcp_stats_add(m->node[nid], cpu, sum);
}

/* Per CPU: pages on each list (non-empty CPUs only), then the event counters. */
void show_pcpinfo(struct pglist_data *pgdat)
{
	printk("pcp: lock model %s, %s; per CPU: zone count high batch free_factor | lists "
	       "(order0 U M R, order1 ..., order3, pageblock)\n",
	       pcp_lock_model_name(pcp_lock_model), pcp_enabled ? "enabled" : "disabled");
	for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++) {
		struct pcp_stats st;

		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct per_cpu_pages *pcp = &pgdat->node_zones[z].pcp[cpu];
			char line[160];
			int len = 0;

			if (!pgdat->node_zones[z].pcp || !READ_ONCE(pcp->count))
				continue;
			for (int i = 0; i < NR_PCP_LISTS; i++) {
				unsigned long n = 0;
				struct list_head *pos;

				list_for_each(pos, &pcp->lists[i])
					n++;
				len += snprintf(line + len, sizeof(line) - (size_t)len, " %lu", n);
			}
			printk("cpu%-3u %-6s %5d %5d %4d %2d |%s\n", cpu, pgdat->node_zones[z].name,
			       pcp->count, pcp->high, pcp->batch, pcp->free_factor, line);
		}
		pcp_stats_sum(pgdat, (int)cpu, &st);
		if (st.alloc_hit || st.free_hit || st.trylock_fail_alloc || st.trylock_fail_free)
			printk("cpu%-3u hits alloc %llu free %llu refill %llu spill %llu trylock-fail "
			       "alloc %llu free %llu drained %llu ipi-drains %llu\n", cpu,
			       (unsigned long long)st.alloc_hit, (unsigned long long)st.free_hit,
			       (unsigned long long)st.refill, (unsigned long long)st.spill,
			       (unsigned long long)st.trylock_fail_alloc,
			       (unsigned long long)st.trylock_fail_free,
			       (unsigned long long)st.drained, (unsigned long long)st.ipi_drain);
	}
}

/*
 * Name every pcp lock of zone for lockstat and lock reports ("pcp cpu3 DMA32", "pcp cpu3
 * node1 DMA32" on another node) and register it; names from one allocation per zone.
 */
static void pcp_lockstat_register(struct zone *zone, unsigned int nr_cpus)
{
	enum { NAME_LEN = 24 };
	unsigned int order = 0;
	struct page *page;
	char *names;

	while ((PAGE_SIZE << order) < nr_cpus * NAME_LEN)
		order++;
	page = alloc_pages_node(zone->node, GFP_KERNEL | __GFP_NOWARN, order);
	if (!page)
		return;
	names = page_address(page);
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(names + cpu * NAME_LEN, NAME_LEN, "pcp cpu%u %s", cpu, zone->lock.name);
		zone->pcp[cpu].lock.name = names + cpu * NAME_LEN;
		lockstat_register(&zone->pcp[cpu].lock);
	}
}

/* After SMP bring-up: size every pcp of the kernel's nodes for the CPUs now online. */
void mm_cpus_online(void)
{
	struct mm_machine *m = mm_machine();
	struct zone *z = &mm_node()->node_zones[ZONE_DMA32];

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		zone_pcp_update(m->node[nid], nr_cpus_online());
		for (int zi = 0; zi < MAX_NR_ZONES; zi++)
			if (zone_populated(&m->node[nid]->node_zones[zi]))
				pcp_lockstat_register(&m->node[nid]->node_zones[zi],
						      nr_cpus_online());
	}
	printk("pcp: %s, lock model %s; %u CPUs online: DMA32 batch %d high %d\n",
	       pcp_enabled ? "on" : "off (pcp.enable=0)", pcp_lock_model_name(pcp_lock_model),
	       nr_cpus_online(), z->pageset_batch, z->pageset_high);
	for (unsigned int nid = 0; m->nr_nodes > 1 && nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		show_zonelist(pgdat);
		for (int zi = 0; zi < MAX_NR_ZONES; zi++)
			if (zone_populated(&pgdat->node_zones[zi]))
				printk("pcp: %s %s: batch %d high %d (the zone's low watermark over "
				       "%u CPUs)\n", pgdat->name, pgdat->node_zones[zi].name,
				       pgdat->node_zones[zi].pageset_batch,
				       pgdat->node_zones[zi].pageset_high,
				       node_split_cpus(pgdat, nr_cpus_online()));
	}
	fail_page_alloc_boot();	/* from now on: the boot's own allocations are not tested */
}
