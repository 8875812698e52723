/*
 * Per-CPU page lists (PCP): per zone and CPU, a cache of free order-0..3 (and pageblock)
 * blocks so most allocations and frees skip zone->lock; Linux v6.4 rules, with its three
 * lock models, one per allocator instance. Here: the models' names, sizing, and drains. The
 * hit paths, refills and spills are in mm/page_alloc.c, the lock in mm/pcp.h, checks and
 * counters in mm/debug.c.
 */
#include "mm/pcp.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
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

/* The white-box window's hold (mm/mm_test.h): this CPU's pcp of zone as a hit path takes it
 * (NULL if busy), so that a test can race it. */
struct per_cpu_pages *pcp_lock_this_cpu(struct zone *zone, unsigned long *flags)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);

	return pcp_lock(zone, pcp, PCP_TRY, flags) ? pcp : NULL;
}

void pcp_unlock_this_cpu(struct zone *zone, struct per_cpu_pages *pcp, unsigned long flags)
{
	pcp_unlock(zone, pcp, flags);
}

#if !CONFIG_PCP_STATS
const struct pcp_stats pcp_no_stats;
#endif

/* ---- drains: one CPU's lists of one zone, of every zone; every CPU's ---- */

/* Every zone with per-CPU lists of every node of machine m. */
#define for_each_pcp_zone(m, zn)							\
	for (unsigned int nid__ = 0; nid__ < (m)->nr_nodes; nid__++)			\
		for (struct zone *zn = (m)->node[nid__]->node_zones;			\
		     zn < (m)->node[nid__]->node_zones + MAX_NR_ZONES; zn++)			\
			if (!zn->pcp) {} else

/*
 * Empty cpu's lists of zone into the buddy lists (Linux's drain_pages_zone()): from any CPU
 * in the lock models, only from cpu itself (or for a CPU that is not online) in irqoff. In
 * chunks of batch << 5, to bound the hold; count is read under the lock, less what each
 * chunk drained, until nothing is left: read before locking, it races with the owner's
 * refill (which adds to count under the lock) and can leave pages behind (Linux
 * 66eca1021a42, a memory-offline hang). It waits for the lock: never from an interrupt on
 * cpu, whose interrupted code may hold it.
 */
static void drain_pages_zone(unsigned int cpu, struct zone *zone)
{
	struct per_cpu_pages *pcp = &zone->pcp[cpu];
	unsigned long flags;
	int count;

	do {
		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count = pcp->count;
		if (count) {
			int to_drain = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			__count_pcp_event(pcp, drained, (u64)(count - pcp->count));
			count -= to_drain;
		}
		pcp_unlock(zone, pcp, flags);
	} while (count > 0);
}

/* cpu's lists of every zone of m (Linux's drain_pages()). */
static void drain_pages(struct mm_machine *m, unsigned int cpu)
{
	for_each_pcp_zone(m, zone)
		drain_pages_zone(cpu, zone);
}

/* irqoff: another CPU asked this one to drain its own lists (Linux before 6.0 queued work
 * for that, drain_local_pages_wq()); in the IPI, interrupts off. Counted per zone. */
static void drain_zone_ipi(void *zone)
{
	drain_pages_zone(arch_cpu_id(), zone);
	__count_pcp_event(this_cpu_pcp(zone), ipi_drain, 1);
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
static void drain_cpu(struct mm_machine *m, struct zone *zone, unsigned int cpu)
{
	if (m->pcp_lock == PCP_LOCK_IRQOFF && cpu != arch_cpu_id() &&
	    (zone ? smp_call_function_single(cpu, drain_zone_ipi, zone, true) :
		    smp_call_function_single(cpu, drain_machine_ipi, m, true)) == 0)
		return;
	if (zone)
		drain_pages_zone(cpu, zone);
	else
		drain_pages(m, cpu);
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
 * __drain_all_pages(). Every CPU has lists in every zone of
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
	VM_BUG_ON(arch_irqs_disabled());
	spin_lock(&m->pcp_drain_lock);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
			drain_cpu(m, zone, cpu);
	spin_unlock(&m->pcp_drain_lock);
}

void drain_local_pages(struct zone *zone)
{
	drain_pages_zone(arch_cpu_id(), zone);
}

void drain_cpu_pages(struct mm_machine *m, unsigned int cpu)
{
	VM_BUG_ON(arch_irqs_disabled() || cpu >= m->nr_cpus);
	spin_lock(&m->pcp_drain_lock);
	drain_cpu(m, NULL, cpu);
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
