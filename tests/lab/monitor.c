/*
 * The live serial monitor (`shell` on the command line, `make shell`): a prompt on COM1 to
 * look at and poke the allocator while the kernel runs. Commands run on the boot CPU; `on`,
 * `drain` and `stress` reach other CPUs with cross-CPU calls. Not a general shell.
 * Commands and words are case-insensitive. Bad input gets one line saying what was wrong and
 * what is allowed, then the usage line; nothing is run.
 * Lab code, not kernel code: it starts benchmarks (`bench`), reads per-CPU list counters
 * through mm/mm_test.h, and leaves QEMU with the test framework's exit status; a bare kernel (`make LAB=0`) has no monitor.
 */
#include "tests/lab/monitor.h"
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "tests/ktest/ktest.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include <stdarg.h>
#include <arch/console.h>
#include "mm/mm.h"
#include "mm/mm_test.h"
#include "mm/gup.h"
#include "mm/fail_page_alloc.h"

#define MON_LINE 128
#define MON_ARGS 8
#define MON_HELD 64
#define MON_PIN_BASE (1ull << 34)
#define MON_PIN_PAGES 256

bool monitor_enabled;
CMDLINE_BOOL("shell", monitor_enabled, "after tests and benchmarks, stay up with a command prompt on the serial port");

struct mon_cmd {
	const char *name, *usage, *help;
	int max_args;				/* words after the name it accepts */
	int (*run)(int argc, char **argv);	/* 0, or -1 after mon_error(): usage follows */
};

/* Blocks allocated with `alloc` and not yet freed, and the `pin` test mapping. */
static struct { struct page *page; unsigned int order; } held[MON_HELD];
static struct mm_struct *pin_mm;
static struct page *pinned[MON_PIN_PAGES];
static unsigned int nr_pinned;

/* ---- argument parsing: each failure says what was wrong and what is allowed ---- */

/* Print "cmd: what was wrong" and return -1, for the caller to return (usage follows). */
static __printf(2, 3) int mon_error(const char *cmd, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printk("%s: %s\n", cmd, msg);
	return -1;
}

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

/* The online CPUs as ranges, "0-3" or "0-1,3-39", into buf. */
static void online_cpus_text(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int c = 0; c < nr_cpus && n + 1 < len; c++) {
		unsigned int last = c;

		if (!cpu_online(c))
			continue;
		while (last + 1 < nr_cpus && cpu_online(last + 1))
			last++;
		n += (size_t)scnprintf(buf + n, len - n, last > c ? "%s%u-%u" : "%s%u",
				       n ? "," : "", c, last);
		c = last;
	}
}

static int parse_cpu(const char *cmd, const char *s, unsigned int *cpu)
{
	char online[64];
	unsigned long v;

	online_cpus_text(online, sizeof(online));
	if (!parse_uint(s, &v))
		return mon_error(cmd, "'%s' is not a CPU number; online CPUs: %s", s, online);
	if (v >= nr_cpus || !cpu_online((unsigned int)v))
		return mon_error(cmd, "there is no online CPU %lu; online CPUs: %s", v, online);
	*cpu = (unsigned int)v;
	return 0;
}

static bool word_is(const char *word, const char *keyword)
{
	return word && !strcmp(word, keyword);
}

/* ---- commands ---- */

static int cmd_cpus(int argc, char **argv)
{
	printk("cpu apic online      ticks       ipis\n");
	for (unsigned int c = 0; c < nr_cpus; c++)
		printk("%3u %4u %6s %10llu %10llu\n", c, cpu_ptr(c)->arch.apic_id,
		       cpu_online(c) ? "yes" : "no", (unsigned long long)timer_ticks(c),
		       (unsigned long long)READ_ONCE(cpu_ptr(c)->ipis));
	return 0;
}

/* "0-19" or "0-3,8-11": the CPUs of node nid (kernel/numa.h). */
static const char *node_cpus_str(unsigned int nid)
{
	static char buf[128];
	int len = 0;

	buf[0] = 0;
	for (unsigned int c = 0; c < nr_cpus && len < (int)sizeof(buf) - 16; c++) {
		unsigned int last = c;

		if ((unsigned int)cpu_to_node(c) != nid)
			continue;
		while (last + 1 < nr_cpus && (unsigned int)cpu_to_node(last + 1) == nid)
			last++;
		len += scnprintf(buf + len, sizeof(buf) - (size_t)len, "%s%u", len ? "," : "", c);
		if (last > c)
			len += scnprintf(buf + len, sizeof(buf) - (size_t)len, "-%u", last);
		c = last;
	}
	return len ? buf : "none";
}

static void show_pcp_line(struct zone *zone, unsigned int c)
{
	struct per_cpu_pages *pcp;
	const struct pcp_stats *s;
	char name[16];

	if (!zone_populated(zone) || !zone->pcp)
		return;
	pcp = &zone->pcp[c];
	s = pcp_stats_of(&zone->pcp[c]);
	snprintf(name, sizeof(name), "%s", zone->lock.name);	/* "DMA32", "node1 DMA32" */
	printk("%3u %-13s %6d %5d %5d | %9llu %9llu %7llu %6llu %7llu %7llu\n", c, name,
	       READ_ONCE(pcp->count), READ_ONCE(pcp->high), READ_ONCE(pcp->batch),
	       (unsigned long long)s->alloc_hit, (unsigned long long)s->free_hit,
	       (unsigned long long)s->refill, (unsigned long long)s->spill,
	       (unsigned long long)(s->trylock_fail_alloc + s->trylock_fail_free),
	       (unsigned long long)s->drained);
}

/* mem [TABLE] [NODE]: one table for every node (or one node), then the free pages of each. */
static int cmd_mem(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "buddyinfo";
	struct mm_machine *m = mm_machine();
	unsigned long nid_only = ~0ul;

	if (argc > 2 && (!parse_uint(argv[2], &nid_only) || nid_only >= m->nr_nodes))
		return mon_error("mem", "'%s' is not a node: nodes 0-%u", argv[2], m->nr_nodes - 1);
	if (strcmp(what, "buddyinfo") && strcmp(what, "zoneinfo") && strcmp(what, "pagetypeinfo"))
		return mon_error("mem", "no table '%s': buddyinfo (the default), zoneinfo or "
				 "pagetypeinfo", what);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		if (nid_only != ~0ul && nid != nid_only)
			continue;
		if (!strcmp(what, "buddyinfo"))
			show_buddyinfo(pgdat);
		else if (!strcmp(what, "zoneinfo"))
			show_zoneinfo(pgdat);
		else
			show_pagetypeinfo(pgdat);
	}
	for (unsigned int nid = 0; m->nr_nodes > 1 && nid < m->nr_nodes; nid++)
		printk("%s: free pages: %lu of %lu managed\n", m->node[nid]->name,
		       node_free_pages(m->node[nid]), node_managed_pages(m->node[nid]));
	printk("free pages: %lu of %lu managed\n", machine_free_pages(m),
	       machine_managed_pages(m));
	if (fail_page_alloc_enabled())
		fail_page_alloc_print_stats("faults: ");
	return 0;
}

/* numa: the nodes, their CPUs and distances, each node's fallback order, NUMA counters. */
static int cmd_numa(int argc, char **argv)
{
	struct mm_machine *m = mm_machine();

	printk("numa: %u node(s)%s\n", m->nr_nodes, numa_topology.from_firmware ?
	       " from ACPI SRAT/SLIT" : " (no SRAT, or numa=off, or an SRAT found invalid)");
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		char line[160];
		int len = 0;

		for (unsigned int to = 0; to < m->nr_nodes; to++)
			len += scnprintf(line + len, sizeof(line) - (size_t)len, " %3u",
					 m->distance[nid][to]);
		printk("%s: CPUs %s, %lu of %lu pages free; distances%s\n", m->node[nid]->name,
		       node_cpus_str(nid), node_free_pages(m->node[nid]),
		       node_managed_pages(m->node[nid]), line);
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		show_zonelist(m->node[nid]);
	show_numastat(m);
	return 0;
}

/* pcp [CPU]: every CPU's list of every zone of every node (a CPU holds lists on all). */
static int cmd_pcp(int argc, char **argv)
{
	struct mm_machine *m = mm_machine();
	unsigned int only = 0;

	if (argc > 1 && parse_cpu("pcp", argv[1], &only))
		return -1;
	printk("pcp: model %s, %s\ncpu  zone          count  high batch | alloc_hit  free_hit "
	       " refill  spill tryfail drained\n", pcp_lock_model_name(m->pcp_lock),
	       pcp_enabled ? "enabled" : "disabled");
	for (unsigned int c = 0; c < m->nr_cpus; c++) {
		if ((argc > 1 && c != only) || (argc == 1 && !cpu_online(c)))
			continue;
		for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
			for (int z = 0; z < MAX_NR_ZONES; z++)
				show_pcp_line(&m->node[nid]->node_zones[z], c);
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

	if (argc < 2)
		return mon_error("alloc", "which order? 0 (one page) to %d (%lu KiB)", MAX_ORDER,
				 (PAGE_SIZE << MAX_ORDER) >> 10);
	if (!parse_uint(argv[1], &order))
		return mon_error("alloc", "'%s' is not an order: 0 to %d", argv[1], MAX_ORDER);
	if (order > MAX_ORDER)
		return mon_error("alloc", "order %lu is too large: the highest order is %d "
				 "(MAX_ORDER, %lu KiB blocks)", order, MAX_ORDER,
				 (PAGE_SIZE << MAX_ORDER) >> 10);
	if (argc > 2 && (!word_is(argv[2], "on") || argc != 4))
		return mon_error("alloc", "after the order only 'on CPU' may follow");
	if (argc == 4 && parse_cpu("alloc", argv[3], &cpu))
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

/* The numbers of the blocks `alloc` holds, "#0 #3", or "none", into buf. */
static void held_text(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < MON_HELD && n + 1 < len; i++)
		if (held[i].page)
			n += (size_t)scnprintf(buf + n, len - n, "%s#%u", n ? " " : "", i);
	if (!n)
		snprintf(buf, len, "none (alloc makes some)");
}

/* free N|all */
static int cmd_free(int argc, char **argv)
{
	bool all = word_is(argv[1], "all");
	unsigned long n = 0;
	unsigned int freed = 0;
	char list[128];

	held_text(list, sizeof(list));
	if (argc != 2)
		return mon_error("free", "which block? its number from alloc (#N), or all; held: %s",
				 list);
	if (!all && !parse_uint(argv[1], &n))
		return mon_error("free", "'%s' is not a block number; held: %s", argv[1], list);
	if (!all && (n >= MON_HELD || !held[n].page))
		return mon_error("free", "block #%lu is not held; held: %s", n, list);
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

/* drain [CPU|all] */
static int cmd_drain(int argc, char **argv)
{
	unsigned int cpu;
	unsigned long before = 0, after = 0;

	struct mm_machine *m = mm_machine();

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			before += zone_pcp_count(&m->node[nid]->node_zones[z]);
	if (argc == 1 || word_is(argv[1], "all"))
		drain_all_pages_machine(mm_machine());
	else if (!parse_cpu("drain", argv[1], &cpu))
		drain_cpu_pages(m, cpu);	/* its lists of every node: this CPU takes each of its pcp
						 * locks (trylock, irqsave), or cpu drains its own from an
						 * IPI (irqoff; this CPU if cpu is this one) */
	else
		return -1;
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			after += zone_pcp_count(&m->node[nid]->node_zones[z]);
	printk("drain: pages on per-CPU lists %lu -> %lu\n", before, after);
	return 0;
}

/* The test mapping, fully populated; on failure nothing is kept (the next pin tries again). */
static int pin_mm_ready(void)
{
	if (pin_mm)
		return 0;
	pin_mm = mm_create(mm_node());
	if (!pin_mm)
		return -1;
	if (mm_mmap_anon(pin_mm, MON_PIN_BASE, MON_PIN_PAGES * PAGE_SIZE, true, false, true)) {
		mm_destroy(pin_mm);
		pin_mm = NULL;
		return -1;
	}
	return 0;
}

/* pin [N] [longterm] */
static int cmd_pin(int argc, char **argv)
{
	unsigned long n = 1, room = MON_PIN_PAGES - nr_pinned;
	bool longterm = word_is(argv[argc - 1], "longterm");
	long got;

	if (argc > 1 + longterm && !parse_uint(argv[1], &n))
		return mon_error("pin", "'%s' is not a page count: 1 to %lu (then 'longterm' if "
				 "wanted)", argv[1], room);
	if (argc > 2 + longterm || (argc == 3 && !longterm))
		return mon_error("pin", "after the count only 'longterm' may follow");
	if (!n || n > room)
		return mon_error("pin", "%lu pages: 1 to %lu can be pinned now (%u of %u held; "
				 "unpin frees them)", n, room, nr_pinned, MON_PIN_PAGES);
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
	unsigned long secs = 2, free_before = nr_free_pages();
	struct stress_ctx c = { 0, 0, 0 };

	if (argc == 2 && (!parse_uint(argv[1], &secs) || !secs || secs > 3600))
		return mon_error("stress", "'%s' is not a number of seconds from 1 to 3600", argv[1]);
	c.until = arch_cycles() + us_to_cycles(secs * 1000000ull);
	smp_run_on_all(stress_cpu, &c);
	drain_all_pages_machine(mm_machine());
	printk("stress: %llu alloc/free operations on %u CPUs in %lu s, %llu failed allocations\n",
	       (unsigned long long)c.ops, nr_cpus_online(), secs, (unsigned long long)c.fails);
	printk("stress: free pages %lu before, %lu after; mm_verify: %lu problems\n", free_before,
	       nr_free_pages(), mm_verify_machine(mm_machine()));
	return 0;
}

/* The lock model is the allocator's for its life (mm/mmzone.h enum pcp_lock_model): shown,
 * not switched. */
static int cmd_model(int argc, char **argv)
{
	const char *now = pcp_lock_model_name(mm_machine()->pcp_lock);

	if (argc > 1 && pcp_lock_model_parse(argv[1]) < 0)
		return mon_error("model", "no model '%s': irqoff, irqsave or trylock", argv[1]);
	if (argc > 1)
		return mon_error("model", "the model is fixed when the allocator is created (now %s): "
				 "boot with pcp.lock=%s", now, argv[1]);
	printk("model: per-CPU lists use %s, for the allocator's life (pcp.lock= at boot)\n", now);
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	unsigned long problems = mm_verify_machine(mm_machine());

	printk("verify: %s (%lu problems), %lu free pages\n", problems ? "FAILED" : "ok", problems,
	       nr_free_pages());
	return 0;
}

static int cmd_bench(int argc, char **argv)
{
	if (argc == 2 && !bench_run_one(argv[1]))
		return 0;
	if (argc == 2)
		mon_error("bench", "no benchmark '%s'; the benchmarks are:", argv[1]);
	else
		mon_error("bench", "which benchmark? one of:");
	bench_print_list();
	return -1;
}

static int cmd_help(int argc, char **argv);

static int cmd_exit(int argc, char **argv)
{
	printk("exit: leaving QEMU\n");
	ktest_exit(true);
}

static const struct mon_cmd mon_cmds[] = {
	{ "help", "help", "this list", 0, cmd_help },
	{ "cpus", "cpus", "CPUs: APIC id, online, timer ticks, IPIs taken", 0, cmd_cpus },
	{ "mem", "mem [buddyinfo|zoneinfo|pagetypeinfo] [NODE]", "free lists, zones, migratetypes, "
	  "per node", 2, cmd_mem },
	{ "numa", "numa", "nodes, CPUs, distances, zonelists, numa_hit/miss/foreign counters", 0,
	  cmd_numa },
	{ "pcp", "pcp [CPU]", "per-CPU lists: pages, high, batch and counters", 1, cmd_pcp },
	{ "alloc", "alloc ORDER [on CPU]", "allocate a block (GFP_ATOMIC) and hold it", 3, cmd_alloc },
	{ "free", "free N|all", "free held block #N, or all of them", 1, cmd_free },
	{ "drain", "drain [CPU|all]", "empty one CPU's per-CPU lists, or every CPU's", 1, cmd_drain },
	{ "pin", "pin [N] [longterm]", "pin N pages of a test mapping (pin_user_pages_fast)", 2, cmd_pin },
	{ "unpin", "unpin", "unpin every page pinned with pin", 0, cmd_unpin },
	{ "lockstat", "lockstat", "zone and per-CPU list locks since boot: acquisitions, waits "
	  "(contended), trylock failures; most waits first", 0, cmd_lockstat },
	{ "stress", "stress [SECONDS]", "random alloc/free on every CPU, then drain and verify", 1, cmd_stress },
	{ "bench", "bench NAME", "run a benchmark (bench alone lists them)", 1, cmd_bench },
	{ "model", "model", "the per-CPU list locking model (chosen at boot: pcp.lock=)", 1, cmd_model },
	{ "verify", "verify", "mm_verify(): every page in exactly one place", 0, cmd_verify },
	{ "exit", "exit", "leave QEMU", 0, cmd_exit },
};

static int cmd_help(int argc, char **argv)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(mon_cmds); i++)
		printk("  %-32s %s\n", mon_cmds[i].usage, mon_cmds[i].help);
	return 0;
}

/* ---- the prompt ---- */

/* Split line into at most MON_ARGS words (NULL after the last); returns how many words the
 * line has, which may be more than were kept. Lower-cases the line: input is case-insensitive. */
static int split_words(char *line, char **argv)
{
	int argc = 0;

	for (char *p = line; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	for (char *p = line; *p;) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc < MON_ARGS)
			argv[argc] = p;
		argc++;
		while (*p && *p != ' ')
			p++;
	}
	argv[MIN(argc, MON_ARGS)] = NULL;
	return argc;
}

/* An unknown command: the nearest one by edit distance if it looks like a typo of it. */
static void monitor_unknown(const char *word)
{
	struct cmdline_suggest sug;

	cmdline_suggest_init(&sug, word, strlen(word));
	for (unsigned int i = 0; i < ARRAY_SIZE(mon_cmds); i++)
		cmdline_suggest_try(&sug, mon_cmds[i].name);
	if (sug.best)
		printk("unknown command '%s': did you mean '%s'? (help lists them all)\n", word,
		       sug.best);
	else
		printk("unknown command '%s' (try help)\n", word);
}

static void monitor_execute(char *line)
{
	char *argv[MON_ARGS + 1];
	int argc = split_words(line, argv);

	if (!argc)
		return;
	for (unsigned int i = 0; i < ARRAY_SIZE(mon_cmds); i++) {
		const struct mon_cmd *cmd = &mon_cmds[i];

		if (strcmp(argv[0], cmd->name))
			continue;
		if (argc - 1 > cmd->max_args)
			mon_error(cmd->name, "too many words: %d after '%s', at most %d", argc - 1,
				  cmd->name, cmd->max_args);
		if (argc - 1 > cmd->max_args || cmd->run(argc, argv))
			printk("usage: %s\n", cmd->usage);
		return;
	}
	monitor_unknown(argv[0]);
}

/*
 * Read a line, echoing it; waits in hlt between timer ticks. Returns the number of characters
 * typed, which is more than fit in buf (cap - 1) if the line was too long: then buf holds
 * only its start and the caller must not run it.
 */
static size_t monitor_read_line(char *buf, size_t cap)
{
	size_t n = 0, typed = 0;

	for (;;) {
		int c = arch_console_getc();

		if (c < 0) {
			arch_wait_for_interrupt();
			continue;
		}
		if (c == '\r' || c == '\n') {
			printk("\n");
			buf[n] = '\0';
			return typed;
		}
		if ((c == 0x7f || c == 0x08) && typed) {
			n -= n == typed;
			typed--;
			printk("\b \b");
		} else if (c >= ' ' && c < 0x7f) {
			if (n == typed && n + 1 < cap)
				buf[n++] = (char)c;
			typed++;
			printk("%c", c);
		}
	}
}

__noreturn void monitor_run(void)
{
	char line[MON_LINE];

	printk("smpmm monitor: %u CPUs online; type help\n", nr_cpus_online());
	for (;;) {
		size_t typed;

		printk("smpmm> ");
		typed = monitor_read_line(line, sizeof(line));
		if (typed >= sizeof(line))
			printk("line too long: %zu characters, the monitor reads at most %zu; "
			       "nothing was run\n", typed, sizeof(line) - 1);
		else
			monitor_execute(line);
	}
}
