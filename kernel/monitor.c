/*
 * The live serial monitor (`shell` on the command line, `make shell`): a prompt on COM1 to
 * look at and poke the allocator while the kernel runs. Commands run on the boot CPU; `on`,
 * `drain` and `stress` reach other CPUs with cross-CPU calls. Not a general shell.
 */
#include "kernel/monitor.h"
#include "kernel/bench.h"
#include "kernel/cmdline.h"
#include "kernel/ktest.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include <arch/console.h>
#include "mm/mm.h"
#include "mm/internal.h"
#include "mm/gup.h"

#define MON_LINE 128
#define MON_ARGS 8
#define MON_HELD 64
#define MON_PIN_BASE (1ull << 34)
#define MON_PIN_PAGES 256

bool monitor_enabled;
CMDLINE_BOOL("shell", monitor_enabled, "after tests and benchmarks, stay up with a command prompt on the serial port");

struct mon_cmd {
	const char *name, *usage, *help;
	int (*run)(int argc, char **argv);	/* 0, or -1 for a usage message */
};

/* Blocks allocated with `alloc` and not yet freed, and the `pin` test mapping. */
static struct { struct page *page; unsigned int order; } held[MON_HELD];
static struct mm_struct *pin_mm;
static struct page *pinned[MON_PIN_PAGES];
static unsigned int nr_pinned;

/* ---- argument parsing ---- */

static bool parse_uint(const char *s, unsigned long *out)
{
	unsigned long v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000ul)
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return true;
}

static bool parse_cpu(const char *s, unsigned int *cpu)
{
	unsigned long v;

	if (!parse_uint(s, &v) || !cpu_online((unsigned int)v))
		return false;
	*cpu = (unsigned int)v;
	return true;
}

/* ---- commands ---- */

static int cmd_cpus(int argc, char **argv)
{
	printk("cpu apic online      ticks       ipis\n");
	for (unsigned int c = 0; c < nr_cpus; c++)
		printk("%3u %4u %6s %10llu %10llu\n", c, cpus[c].arch.apic_id,
		       cpu_online(c) ? "yes" : "no", (unsigned long long)timer_ticks(c),
		       (unsigned long long)READ_ONCE(cpus[c].ipis));
	return 0;
}

static int cmd_mem(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "buddyinfo";

	if (!strcmp(what, "buddyinfo"))
		show_buddyinfo(mm_node());
	else if (!strcmp(what, "zoneinfo"))
		show_zoneinfo(mm_node());
	else if (!strcmp(what, "pagetypeinfo"))
		show_pagetypeinfo(mm_node());
	else
		return -1;
	printk("free pages: %lu of %lu managed\n", node_free_pages(mm_node()),
	       node_managed_pages(mm_node()));
	return 0;
}

static int cmd_pcp(int argc, char **argv)
{
	struct pglist_data *pgdat = mm_node();
	unsigned int only = 0;

	if (argc > 1 && !parse_cpu(argv[1], &only))
		return -1;
	printk("pcp: model %s, %s\ncpu  zone    count  high batch | alloc_hit  free_hit  refill "
	       " spill tryfail drained\n", pcp_lock_model_name(pcp_lock_model),
	       pcp_enabled ? "enabled" : "disabled");
	for (unsigned int c = 0; c < pgdat->nr_cpus; c++) {
		if (argc > 1 && c != only)
			continue;
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &pgdat->node_zones[z];
			struct per_cpu_pages *pcp;
			struct pcp_stats *s;

			if (!zone_populated(zone) || !zone->pcp)
				continue;
			pcp = &zone->pcp[c];
			s = &zone->pcp_stats[c];
			printk("%3u %-7s %6d %5d %5d | %9llu %9llu %7llu %6llu %7llu %7llu\n", c, zone->name,
			       READ_ONCE(pcp->count), READ_ONCE(pcp->high), READ_ONCE(pcp->batch),
			       (unsigned long long)s->alloc_hit, (unsigned long long)s->free_hit,
			       (unsigned long long)s->refill, (unsigned long long)s->spill,
			       (unsigned long long)(s->trylock_fail_alloc + s->trylock_fail_free),
			       (unsigned long long)s->drained);
		}
	}
	return 0;
}

struct alloc_req {
	unsigned int order;
	struct page *page;
};

static void alloc_on_cpu(void *arg)
{
	struct alloc_req *r = arg;

	r->page = alloc_pages(GFP_ATOMIC | __GFP_NOWARN, r->order);
}

/* alloc ORDER [on CPU] */
static int cmd_alloc(int argc, char **argv)
{
	unsigned long order;
	unsigned int cpu = arch_cpu_id(), slot;
	struct alloc_req r;

	if (argc < 2 || !parse_uint(argv[1], &order) || order > MAX_ORDER ||
	    (argc > 2 && (argc != 4 || strcmp(argv[2], "on") || !parse_cpu(argv[3], &cpu))))
		return -1;
	for (slot = 0; slot < MON_HELD && held[slot].page; slot++)
		;
	if (slot == MON_HELD) {
		printk("alloc: %u blocks held already; free some first\n", MON_HELD);
		return 0;
	}
	r = (struct alloc_req){ (unsigned int)order, NULL };
	smp_call_function_single(cpu, alloc_on_cpu, &r, true);
	if (!r.page) {
		printk("alloc: order %lu on cpu%u failed (no memory)\n", order, cpu);
		return 0;
	}
	held[slot].page = r.page;
	held[slot].order = (unsigned int)order;
	printk("alloc: #%u = order %lu at pfn 0x%lx (zone %s) on cpu%u\n", slot, order,
	       page_to_pfn(r.page), page_zone(r.page)->name, cpu);
	return 0;
}

/* free N|all */
static int cmd_free(int argc, char **argv)
{
	bool all = argc == 2 && !strcmp(argv[1], "all");
	unsigned long n = 0;
	unsigned int freed = 0;

	if (argc != 2 || (!all && (!parse_uint(argv[1], &n) || n >= MON_HELD || !held[n].page)))
		return -1;
	for (unsigned int i = 0; i < MON_HELD; i++) {
		if (!held[i].page || (!all && i != n))
			continue;
		__free_pages(held[i].page, held[i].order);
		held[i].page = NULL;
		freed++;
	}
	printk("free: %u block(s) freed\n", freed);
	return 0;
}

static void drain_this_cpu(void *arg)
{
	drain_local_pages(NULL);
}

/* drain [CPU|all] */
static int cmd_drain(int argc, char **argv)
{
	unsigned int cpu;
	unsigned long before = 0, after = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		before += zone_pcp_count(&mm_node()->node_zones[z]);
	if (argc == 1 || !strcmp(argv[1], "all"))
		drain_all_pages(NULL);
	else if (parse_cpu(argv[1], &cpu))
		smp_call_function_single(cpu, drain_this_cpu, NULL, true);
	else
		return -1;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		after += zone_pcp_count(&mm_node()->node_zones[z]);
	printk("drain: pages on per-CPU lists %lu -> %lu\n", before, after);
	return 0;
}

static int pin_mm_ready(void)
{
	if (pin_mm)
		return 0;
	pin_mm = mm_create(mm_node());
	if (!pin_mm || mm_mmap_anon(pin_mm, MON_PIN_BASE, MON_PIN_PAGES * PAGE_SIZE, true, false, true))
		return -1;
	return 0;
}

/* pin [N] [longterm] */
static int cmd_pin(int argc, char **argv)
{
	unsigned long n = 1;
	bool longterm = argc > 1 && !strcmp(argv[argc - 1], "longterm");
	long got;

	if ((argc > 1 + longterm && !parse_uint(argv[1], &n)) || !n || n > MON_PIN_PAGES - nr_pinned)
		return -1;
	if (pin_mm_ready()) {
		printk("pin: cannot set up the test mapping (no memory)\n");
		return 0;
	}
	got = pin_user_pages_fast(pin_mm, MON_PIN_BASE + nr_pinned * PAGE_SIZE, n,
				  FOLL_WRITE | (longterm ? FOLL_LONGTERM : 0), pinned + nr_pinned);
	if (got > 0)
		nr_pinned += (unsigned int)got;
	printk("pin: %ld page(s) pinned%s; %u held; first pfn 0x%lx refcount %d maybe_dma_pinned %s\n",
	       got, longterm ? " long-term" : "", nr_pinned, nr_pinned ? page_to_pfn(pinned[0]) : 0,
	       nr_pinned ? page_count(pinned[0]) : 0,
	       nr_pinned && page_maybe_dma_pinned(pinned[0]) ? "yes" : "no");
	return 0;
}

static int cmd_unpin(int argc, char **argv)
{
	struct gup_totals t;

	unpin_user_pages(pinned, nr_pinned);
	printk("unpin: %u page(s) unpinned\n", nr_pinned);
	nr_pinned = 0;
	gup_read_totals(&t);
	printk("pins acquired %llu released %llu, has_pinned writes %llu\n",
	       (unsigned long long)t.pins_acquired, (unsigned long long)t.pins_released,
	       pin_mm ? (unsigned long long)MM_STAT(pin_mm, flag_writes) : 0ull);
	return 0;
}

static int cmd_lockstat(int argc, char **argv)
{
	lockstat_print_top(10);
	return 0;
}

struct stress_ctx {
	u64 until;
	u64 ops, fails;
};

static void stress_cpu(void *arg)
{
	struct stress_ctx *c = arg;
	struct page *mine[16];
	u64 x = arch_cycles() ^ arch_cpu_id(), ops = 0, fails = 0;

	while (arch_cycles() < c->until) {
		unsigned int n = 1 + (unsigned int)(x % 16), order = (unsigned int)((x >> 8) % 4);

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		for (unsigned int i = 0; i < n; i++)
			fails += !(mine[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order));
		for (unsigned int i = 0; i < n; i++)
			if (mine[i])
				__free_pages(mine[i], order);
		ops += 2 * n;
	}
	__atomic_fetch_add(&c->ops, ops, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->fails, fails, __ATOMIC_RELAXED);
}

/* stress [SECONDS]: random orders 0-3 on every CPU, then drain and mm_verify(). */
static int cmd_stress(int argc, char **argv)
{
	unsigned long secs = 2, free_before = node_free_pages(mm_node());
	struct stress_ctx c = { 0, 0, 0 };

	if (argc > 2 || (argc == 2 && (!parse_uint(argv[1], &secs) || !secs || secs > 3600)))
		return -1;
	c.until = arch_cycles() + us_to_cycles(secs * 1000000ull);
	smp_run_on_all(stress_cpu, &c);
	drain_all_pages(NULL);
	printk("stress: %llu alloc/free operations on %u CPUs in %lu s, %llu failed allocations\n",
	       (unsigned long long)c.ops, nr_cpus_online(), secs, (unsigned long long)c.fails);
	printk("stress: free pages %lu before, %lu after; mm_verify: %lu problems\n", free_before,
	       node_free_pages(mm_node()), mm_verify(mm_node()));
	return 0;
}

static int cmd_model(int argc, char **argv)
{
	if (argc != 2)
		return -1;
	if (pcp_switch_lock_model(argv[1]))
		return -1;
	printk("model: per-CPU lists now use %s\n", pcp_lock_model_name(pcp_lock_model));
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	unsigned long problems = mm_verify(mm_node());

	printk("verify: %s (%lu problems), %lu free pages\n", problems ? "FAILED" : "ok", problems,
	       node_free_pages(mm_node()));
	return 0;
}

static int cmd_bench(int argc, char **argv)
{
	return argc == 2 && bench_run_one(argv[1]) == 0 ? 0 : -1;
}

static int cmd_help(int argc, char **argv);

static int cmd_exit(int argc, char **argv)
{
	printk("exit: leaving QEMU\n");
	ktest_exit(true);
}

static const struct mon_cmd mon_cmds[] = {
	{ "help", "help", "this list", cmd_help },
	{ "cpus", "cpus", "CPUs: APIC id, online, timer ticks, IPIs taken", cmd_cpus },
	{ "mem", "mem [buddyinfo|zoneinfo|pagetypeinfo]", "free lists, zones, migratetypes", cmd_mem },
	{ "pcp", "pcp [CPU]", "per-CPU lists: pages, high, batch and counters", cmd_pcp },
	{ "alloc", "alloc ORDER [on CPU]", "allocate a block (GFP_ATOMIC) and hold it", cmd_alloc },
	{ "free", "free N|all", "free held block #N, or all of them", cmd_free },
	{ "drain", "drain [CPU|all]", "empty one CPU's per-CPU lists, or every CPU's", cmd_drain },
	{ "pin", "pin [N] [longterm]", "pin N pages of a test mapping (pin_user_pages_fast)", cmd_pin },
	{ "unpin", "unpin", "unpin every page pinned with pin", cmd_unpin },
	{ "lockstat", "lockstat", "the most contended locks", cmd_lockstat },
	{ "stress", "stress [SECONDS]", "random alloc/free on every CPU, then drain and verify", cmd_stress },
	{ "bench", "bench NAME", "run a benchmark: page, scaling, pft, gup", cmd_bench },
	{ "model", "model irqoff|irqsave|trylock", "switch the per-CPU list locking model", cmd_model },
	{ "verify", "verify", "mm_verify(): every page in exactly one place", cmd_verify },
	{ "exit", "exit", "leave QEMU", cmd_exit },
};

static int cmd_help(int argc, char **argv)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(mon_cmds); i++)
		printk("  %-32s %s\n", mon_cmds[i].usage, mon_cmds[i].help);
	return 0;
}

/* ---- the prompt ---- */

static int split_words(char *line, char **argv)
{
	int argc = 0;

	for (char *p = line; *p && argc < MON_ARGS;) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return argc;
}

static void monitor_execute(char *line)
{
	char *argv[MON_ARGS];
	int argc = split_words(line, argv);

	if (!argc)
		return;
	for (unsigned int i = 0; i < ARRAY_SIZE(mon_cmds); i++) {
		if (strcmp(argv[0], mon_cmds[i].name))
			continue;
		if (mon_cmds[i].run(argc, argv))
			printk("usage: %s\n", mon_cmds[i].usage);
		return;
	}
	printk("unknown command '%s' (try help)\n", argv[0]);
}

/* Read a line, echoing it; waits in hlt between timer ticks. */
static void monitor_read_line(char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		int c = arch_console_getc();

		if (c < 0) {
			arch_wait_for_interrupt();
			continue;
		}
		if (c == '\r' || c == '\n') {
			printk("\n");
			buf[n] = '\0';
			return;
		}
		if ((c == 0x7f || c == 0x08) && n) {
			n--;
			printk("\b \b");
		} else if (c >= ' ' && c < 0x7f && n + 1 < cap) {
			buf[n++] = (char)c;
			printk("%c", c);
		}
	}
}

__noreturn void monitor_run(void)
{
	char line[MON_LINE];

	printk("smpmm monitor: %u CPUs online; type help\n", nr_cpus_online());
	for (;;) {
		printk("smpmm> ");
		monitor_read_line(line, sizeof(line));
		monitor_execute(line);
	}
}
