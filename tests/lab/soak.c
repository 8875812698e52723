/*
 * `soak=SECONDS` (make soak): every stressor at once on every CPU, in cycles of soak.cycle
 * seconds. Each cycle every CPU plays a role (random alloc/free, remote drains, PCP
 * disable/enable, pin/unpin with long-term pins, exhaustion), every CPU's timer tick
 * allocates in interrupt context, then everything is freed, the per-CPU lists drained and
 * mm_verify() run. A final line says how many operations ran and whether any page was lost,
 * and how often the CPUs actually raced (a soak that never raced fails).
 */
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "tests/lab/soak.h"
#include "tests/lab/lab_platform.h"
#include "kernel/timer.h"
#include "mm/mm.h"
#include "mm/mm_test.h"
#include "mm/gup.h"
#include "mm/fail_page_alloc.h"

#define SOAK_HELD 64
#define SOAK_PIN_BASE (1ull << 35)
#define SOAK_PIN_PAGES 512
#define SOAK_EXHAUST_MAX 32768	/* order-3 blocks: 1 GiB */

static unsigned int soak_seconds, soak_cycle = 10;
CMDLINE_UINT("soak", soak_seconds, "run the soak test for this many seconds after the tests (make soak)");
CMDLINE_UINT("soak.cycle", soak_cycle, "soak: seconds between checkpoints (drain, mm_verify, progress line)");

enum soak_role { ROLE_RANDOM, ROLE_DRAIN, ROLE_PCP_TOGGLE, ROLE_PIN, ROLE_EXHAUST };

struct soak_cpu {
	u64 ops, alloc_fail, drains, pcp_toggles, pins, exhaustions, errors;
	u64 irq_ops;		/* in its timer interrupt */
	u64 irq_in_hold;	/* ticks that came while it held its own pcp */
} __cacheline_aligned;

struct soak_state {
	u64 until;
	struct soak_cpu *cpu;	/* [nr_cpu_ids]: cpu_array_alloc() */
	struct page **exhaust;	/* ROLE_EXHAUST's array */
};

static struct soak_state soak;

static enum soak_role soak_role(unsigned int cpu)
{
	if (nr_cpus_online() < 4)
		return cpu == 1 ? ROLE_PIN : ROLE_RANDOM;
	switch (cpu % 8) {
	case 1: return ROLE_DRAIN;
	case 2: return ROLE_PIN;
	case 3: return cpu == 3 ? ROLE_PCP_TOGGLE : ROLE_RANDOM;
	case 5: return cpu == 5 ? ROLE_EXHAUST : ROLE_RANDOM;
	default: return ROLE_RANDOM;
	}
}

static u64 soak_rand(u64 *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 17;
}

/* Random orders 0-3, random GFP, holding up to SOAK_HELD blocks; all freed at the end. */
static void soak_random(struct soak_cpu *me, u64 seed)
{
	struct page *held[SOAK_HELD];
	u8 order[SOAK_HELD];
	unsigned int n = 0;

	while (arch_cycles() < soak.until) {
		u64 r = soak_rand(&seed);

		if (n < SOAK_HELD && (n == 0 || (r & 1))) {
			order[n] = (u8)((r >> 4) % 4);
			held[n] = alloc_pages(((r & 2) ? GFP_USER : GFP_KERNEL) | __GFP_NOWARN, order[n]);
			me->alloc_fail += !held[n];
			n += held[n] != NULL;
		} else {
			unsigned int k = (unsigned int)((r >> 8) % n);
			__free_pages(held[k], order[k]);
			held[k] = held[--n];
			order[k] = order[n];
		}
		me->ops++;
	}
	while (n--)
		__free_pages(held[n], order[n]);
}

static void soak_drainer(struct soak_cpu *me)
{
	while (arch_cycles() < soak.until) {
		drain_all_pages_machine(mm_machine());
		me->drains++;
		udelay(500);
	}
}

static void soak_pcp_toggler(struct soak_cpu *me)
{
	struct zone *zone = &mm_node()->node_zones[ZONE_DMA32];

	while (arch_cycles() < soak.until) {
		/* Memory-offline style: high 0, batch 1, forced drain. Other CPUs keep allocating,
		 * so the lists may hold a page for a moment: emptiness is checked when quiet. */
		zone_pcp_disable(zone);
		udelay(200);
		zone_pcp_enable(zone);
		me->pcp_toggles++;
		udelay(2000);
	}
}

/* Pin and unpin random pieces of a private mapping; every 4th round long-term (migrates). */
static void soak_pinner(struct soak_cpu *me, u64 seed)
{
	struct page *p[32];
	struct mm_struct *mm = NULL;

	while (!mm && arch_cycles() < soak.until)
		if (!(mm = mm_create(mm_node())))
			me->alloc_fail++;	/* out of memory for now (or injected): again */
	if (!mm)
		return;
	/* -ENOMEM leaves part of the range unpopulated: the pins fault it in. */
	if (mm_mmap_anon(mm, SOAK_PIN_BASE, SOAK_PIN_PAGES * PAGE_SIZE, true, false, true) == -EINVAL) {
		me->errors++;
		mm_destroy(mm);
		return;
	}
	for (u64 round = 0; arch_cycles() < soak.until; round++) {
		u64 start = soak_rand(&seed) % (SOAK_PIN_PAGES - 32);
		unsigned int flags = (round % 4 == 3) ? FOLL_LONGTERM : 0;
		long n = pin_user_pages_fast(mm, SOAK_PIN_BASE + start * PAGE_SIZE, 32, flags, p);

		if (n > 0) {
			for (long i = 0; i < n; i++)
				me->errors += !page_maybe_dma_pinned(p[i]);
			unpin_user_pages(p, (unsigned long)n);
			me->pins += (u64)n;
		}
		if (round % 64 == 63) {	/* fresh MOVABLE pages for the next long-term pins */
			mm_munmap(mm, SOAK_PIN_BASE, SOAK_PIN_PAGES * PAGE_SIZE);
			mm_mmap_anon(mm, SOAK_PIN_BASE, SOAK_PIN_PAGES * PAGE_SIZE, true, false, true);
		}
	}
	mm_destroy(mm);
}

/* Order-3 blocks, or NULL only when memory is really out: a failure that fail_page_alloc
 * injected (this CPU's count went up) is retried, so that exhaustion is still reached. */
static struct page *soak_alloc_until_out(void)
{
	for (;;) {
		u64 injected = fail_page_alloc_this_cpu_failed();
		struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 3);

		if (page || fail_page_alloc_this_cpu_failed() == injected ||
		    arch_cycles() >= soak.until)
			return page;
	}
}

/* Allocate order-3 blocks until memory is out (or 1 GiB), hold them a moment, free them all. */
static void soak_exhauster(struct soak_cpu *me)
{
	while (arch_cycles() < soak.until) {
		unsigned int n = 0;

		while (n < SOAK_EXHAUST_MAX && (soak.exhaust[n] = soak_alloc_until_out()))
			n++;
		udelay(1000);
		while (n--)
			__free_pages(soak.exhaust[n], 3);
		me->exhaustions++;
		udelay(5000);
	}
}

static void soak_cpu_run(void *arg)
{
	unsigned int cpu = arch_cpu_id();
	struct soak_cpu *me = &soak.cpu[cpu];
	u64 seed = arch_cycles() ^ ((u64)cpu << 32);

	switch (soak_role(cpu)) {
	case ROLE_DRAIN: soak_drainer(me); break;
	case ROLE_PCP_TOGGLE: soak_pcp_toggler(me); break;
	case ROLE_PIN: soak_pinner(me, seed); break;
	case ROLE_EXHAUST: if (soak.exhaust) { soak_exhauster(me); break; } /* fall through */
	default: soak_random(me, seed); break;
	}
}

/* Interrupt context: every tick, every CPU allocates and frees a page (GFP_ATOMIC), counting
 * the ticks that interrupted their CPU inside its own pcp lock (trylock model). */
static void soak_tick(unsigned int cpu)
{
	struct page *p;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm_node()->node_zones[z];

		if (zone->pcp && spin_is_held_by_me(&zone->pcp[cpu].lock)) {
			soak.cpu[cpu].irq_in_hold++;
			break;
		}
	}
	p = alloc_pages(GFP_ATOMIC | __GFP_NOWARN, cpu & 1);

	if (p)
		__free_pages(p, cpu & 1);
	soak.cpu[cpu].irq_ops++;
}

/* Contended acquisitions of every CPU's pcp locks: a drainer waited for the owner, or the
 * owner for a drainer (race windows, summed since boot). */
static u64 pcp_locks_contended(void)
{
	u64 n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int c = 0; mm_node()->node_zones[z].pcp && c < nr_cpus; c++)
			n += READ_ONCE(lock_stat(&mm_node()->node_zones[z].pcp[c].lock)->contended);
	return n;
}

static u64 soak_irq_in_hold(void)
{
	u64 n = 0;

	for (unsigned int c = 0; c < nr_cpus; c++)
		n += soak.cpu[c].irq_in_hold;
	return n;
}

static void soak_totals(struct soak_cpu *t, u64 *irq_ops)
{
	*t = (struct soak_cpu){ 0 };
	*irq_ops = 0;
	for (unsigned int c = 0; c < nr_cpus; c++) {
		t->ops += soak.cpu[c].ops;
		t->alloc_fail += soak.cpu[c].alloc_fail;
		t->drains += soak.cpu[c].drains;
		t->pcp_toggles += soak.cpu[c].pcp_toggles;
		t->pins += soak.cpu[c].pins;
		t->exhaustions += soak.cpu[c].exhaustions;
		t->errors += soak.cpu[c].errors;
		*irq_ops += soak.cpu[c].irq_ops;
	}
}

/* Nodes whose free pages differ from node_start[] now (lists drained); says which. */
static unsigned long soak_nodes_changed(const unsigned long *node_start)
{
	struct mm_machine *m = mm_machine();
	unsigned long changed = 0;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		unsigned long now = node_free_pages(m->node[nid]);

		if (now == node_start[nid])
			continue;
		printk("soak: %s: %lu free pages, %lu at the start\n", m->node[nid]->name, now,
		       node_start[nid]);
		changed++;
	}
	return changed;
}

/* One cycle and its checkpoint; returns the number of problems found. */
static unsigned long soak_one_cycle(unsigned int secs, unsigned long free_start,
				    const unsigned long *node_start, u64 elapsed)
{
	static u64 errors_before;
	struct soak_cpu t;
	struct pcp_stats pcp;
	unsigned long free_now, problems;
	u64 irq_ops;

	soak.until = arch_cycles() + us_to_cycles((u64)secs * 1000000);
	timer_add_tick_hook(soak_tick);
	smp_run_on_all(soak_cpu_run, NULL);
	timer_remove_tick_hook(soak_tick);
	drain_all_pages_machine(mm_machine());
	free_now = nr_free_pages();
	problems = mm_verify_machine(mm_machine()) + soak_nodes_changed(node_start);
	soak_totals(&t, &irq_ops);
	pcp_stats_sum_machine(mm_machine(), -1, &pcp);
	printk("soak: %4llu s: %llu ops (+%llu in IRQ), free %lu pages (start %lu), trylock fallbacks "
	       "%llu, drains %llu, pcp off/on %llu, pins %llu, exhaustions %llu, pin errors %llu, "
	       "verify %s\n",
	       (unsigned long long)elapsed + secs, (unsigned long long)t.ops, (unsigned long long)irq_ops,
	       free_now, free_start,
	       (unsigned long long)(pcp.trylock_fail_alloc + pcp.trylock_fail_free),
	       (unsigned long long)t.drains, (unsigned long long)t.pcp_toggles,
	       (unsigned long long)t.pins, (unsigned long long)t.exhaustions,
	       (unsigned long long)(t.errors - errors_before), problems ? "FAILED" : "ok");
	printk("soak: %4llu s: races: %llu ticks inside their CPU's pcp hold, %llu waits on a pcp "
	       "lock held by another CPU, %llu trylock fallbacks\n",
	       (unsigned long long)elapsed + secs, (unsigned long long)soak_irq_in_hold(),
	       (unsigned long long)pcp_locks_contended(),
	       (unsigned long long)(pcp.trylock_fail_alloc + pcp.trylock_fail_free));
	if (fail_page_alloc_enabled())
		fail_page_alloc_print_stats("soak:        ");
	problems += (t.errors - errors_before) + (free_now != free_start);
	errors_before = t.errors;
	return problems;
}

int soak_run(void)
{
	unsigned long free_start, node_start[MAX_NUMA_NODES], problems = 0;
	struct mm_machine *m = mm_machine();
	struct page *arr;
	struct soak_cpu t;
	u64 irq_ops, contended0 = pcp_locks_contended(), fallbacks0, races;
	struct pcp_stats pcp;

	if (!soak_seconds)
		return -1;
	soak.cpu = lab_cpu_array_alloc(sizeof(*soak.cpu));
	if (!soak.cpu) {
		printk("soak: FAILED: no memory for %u per-CPU counters\n", nr_cpu_ids);
		return 1;
	}
	pcp_stats_sum(mm_node(), -1, &pcp);
	fallbacks0 = pcp.trylock_fail_alloc + pcp.trylock_fail_free;
	drain_all_pages_machine(mm_machine());
	arr = alloc_pages(GFP_KERNEL, 8);	/* the exhauster's pointer array: 256 KiB */
	soak.exhaust = arr ? page_address(arr) : NULL;
	free_start = nr_free_pages();
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		node_start[nid] = node_free_pages(m->node[nid]);
	printk("soak: %u s on %u CPUs, %u node(s), a checkpoint every %u s\n", soak_seconds,
	       nr_cpus_online(), m->nr_nodes, soak_cycle);
	for (u64 done = 0; done < soak_seconds; done += MAX(soak_cycle, 1u))
		problems += soak_one_cycle(MIN(MAX(soak_cycle, 1u), soak_seconds - (unsigned int)done),
					   free_start, node_start, done);
	soak_totals(&t, &irq_ops);
	pcp_stats_sum(mm_node(), -1, &pcp);
	races = soak_irq_in_hold() + (pcp_locks_contended() - contended0) +
		(pcp.trylock_fail_alloc + pcp.trylock_fail_free - fallbacks0);
	if (!races) {
		printk("soak: FAILED: no race window was ever entered (no tick inside a pcp hold, no "
		       "wait on another CPU's pcp lock, no trylock fallback): it tested nothing\n");
		problems++;
	}
	if (problems)
		printk("soak: FAILED after %llu operations: %lu problems (see the lines above)\n",
		       (unsigned long long)(t.ops + irq_ops), problems);
	else
		printk("soak: %llu operations (%llu in interrupt context), %llu pins, 0 pages lost\n",
		       (unsigned long long)(t.ops + irq_ops), (unsigned long long)irq_ops,
		       (unsigned long long)t.pins);
	if (fail_page_alloc_enabled())
		fail_page_alloc_print_stats("soak: injected: ");
	if (arr)
		__free_pages(arr, 8);
	cpu_array_free(soak.cpu, sizeof(*soak.cpu));
	soak.cpu = NULL;
	return problems ? 1 : 0;
}
