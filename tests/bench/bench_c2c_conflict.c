/*
 * `bench=c2c_conflict`: the cases of the conflict-freedom layer (tests/c2c/conflict.py judges
 * them; make c2c-test boots them at 4 CPUs under the c2c plugin). Commuter's rule (the
 * sv6/RadixVM work, docs/c2c.md): operations that commute must not share a cache line that
 * one of them writes. Each case runs some operations of the table below on different CPUs in
 * one window, each CPU its own operation a few dozen times, after a warm-up that puts every
 * line where that loop keeps it; a line that two CPUs then touch, one of them writing it, is
 * a conflict (the plugin counts per line the CPUs that touched it and the stores, in the
 * counted part only). Cases are generated from the table: every pair
 * of operations that commute, on CPUs 0 and 1, and each operation on all 4 CPUs; the
 * opposite cases below the table must conflict, on the lines they name, so that the layer
 * cannot pass by seeing nothing. Not a benchmark: it measures no time.
 */
#include "tests/bench/bench.h"
#include "tests/bench/c2c.h"
#include "tests/lab/lab_platform.h"
#include "kernel/arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "mm/gup.h"
#include "mm/mm.h"
#include "mm/mm_test.h"
#include "mm/vm.h"

static char conflict_cases[64] = "";
CMDLINE_STRING("c2c.cases", conflict_cases, "c2c_conflict: run only the cases whose name holds one of "
	       "these texts (comma-separated)");

#define CF_CPUS 4		/* the CPUs a case uses; more are idle in its window */
#define CF_PAIRS 64		/* order-0 alloc+free pairs per CPU */
#define CF_HELD 8		/* pages a pair loop holds at once (bench=scaling's) */
#define CF_FREES 48		/* pages freed per CPU: below any list's high */
#define CF_PINS 16		/* pages pinned (and unpinned) per CPU, each CF_PIN_ROUNDS times */
#define CF_PIN_ROUNDS 4
#define CF_READS 64		/* statistics reads */
#define CF_DRAINS 16
#define CF_ROUNDS 8		/* handoff: counted rounds, each one turn of every CPU taking part */
#define CF_TURNS ((CF_ROUNDS + 1) * CF_CPUS)	/* and one round before, uncounted */
#define CF_BASE (1ull << 33)	/* where the pins' address space is mapped */

/* ---- the operations ---- */

enum cf_op {
	CF_IDLE,		/* in the window, doing nothing */
	CF_PAIRS_OP,		/* order-0 alloc+free pairs on this CPU's list */
	CF_FREE,		/* frees of pages this CPU allocated before (onto its list) */
	CF_PIN,			/* pin_user_pages_fast + unpin of this CPU's own pages of one mm */
	CF_STATS,		/* this CPU's list counters: pcp_stats_sum(pgdat, cpu) */
	CF_DRAIN_OWN,		/* drain_local_pages() of this CPU's empty list */
	CF_DRAIN_ALL,		/* drain_all_pages() while every list is empty */
	CF_NR_TABLE,		/* the operations above make the generated cases; below: opposites */
	CF_STATS_ALL = CF_NR_TABLE, /* every CPU's counters summed: pcp_stats_sum(pgdat, -1) */
	CF_FILL,		/* fill this CPU's list before the window's count, then nothing */
	CF_DRAIN_FULL,		/* drain_all_pages() once, of the lists CF_FILL filled */
	CF_PIN_LINE,		/* pin + unpin of one page whose struct page shares its line with
				 * the page CPU 1 - cpu pins */
	CF_FREE_PAGES,		/* nr_free_pages(): the buddy lists' and every CPU's list's pages */
	CF_HANDOFF,		/* lists off, in turn with the other CPUs doing it, one at a time:
				 * free the page it holds, or allocate one (one zone->lock hold) */
	CF_NR_OPS
};

static const char *const cf_names[CF_NR_OPS] = {
	"idle", "pairs", "free", "pin", "stats", "drain_own", "drain_all",
	"stats_all", "fill", "drain_full", "pin_line", "free_pages", "handoff",
};

/* Which operations commute, as their specification says (the result of each does not depend
 * on whether the other ran first): what each may run beside, on another CPU, without a
 * conflict. A drain of every list does not commute with what fills a list. */
#define B(op) (1u << (op))
static const unsigned int cf_commutes[CF_NR_TABLE] = {
	[CF_PAIRS_OP] = B(CF_PAIRS_OP) | B(CF_FREE) | B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN),
	[CF_FREE] = B(CF_PAIRS_OP) | B(CF_FREE) | B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN),
	[CF_PIN] = B(CF_PAIRS_OP) | B(CF_FREE) | B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN) |
		   B(CF_DRAIN_ALL),
	[CF_STATS] = B(CF_PAIRS_OP) | B(CF_FREE) | B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN) |
		     B(CF_DRAIN_ALL),
	[CF_DRAIN_OWN] = B(CF_PAIRS_OP) | B(CF_FREE) | B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN) |
			 B(CF_DRAIN_ALL),
	[CF_DRAIN_ALL] = B(CF_PIN) | B(CF_STATS) | B(CF_DRAIN_OWN),
};

/* One CPU's part of a case, on lines of its own (the bench must not share lines itself). */
struct cf_cpu {
	enum cf_op op;
	unsigned int nr_pins, nr_held, nr_other, ops;
	u64 pin_addr[CF_PINS];		/* the pages it pins */
	struct page *held[CF_FREES + 1];	/* free: the pages it frees */
	struct page *other[2 * CF_FREES + 2];	/* free: the other pages it allocated */
	u64 sum;			/* stats: what it read (kept, so the reads stay) */
} __cacheline_aligned;

static struct cf_run {
	struct pglist_data *pgdat;	/* the allocator instance the pairs use */
	struct zone *zone;		/* its zone that order-0 GFP_KERNEL pages come from */
	struct mm_struct *mm;		/* the pins' address space, has-pinned set */
	u64 own_pins[CF_CPUS][CF_PINS];	/* per CPU: pages no other CPU's struct page line holds */
	u64 line_pair[2];		/* two pages whose struct pages share one line */
	int arrived[2] __aligned(64);	/* the warm-up's two barriers (c2c_barrier()) */
	unsigned int handoff_cpus;	/* a handoff case: CPUs 0..n-1 take turns */
	int turn_done[CF_TURNS];	/* a barrier after each turn (uncounted) */
	struct cf_cpu cpu[CF_CPUS];
} cf;

static void pairs_loop(unsigned int pairs)
{
	struct page *held[CF_HELD];

	for (unsigned int done = 0; done < pairs; done += CF_HELD) {
		for (unsigned int i = 0; i < CF_HELD; i++)
			held[i] = alloc_pages_node(cf.pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
		for (unsigned int i = 0; i < CF_HELD; i++)
			if (held[i])
				__free_pages(held[i], 0);
	}
}

static void pin_loop(struct cf_cpu *me, unsigned int rounds)
{
	struct page *page;

	for (unsigned int r = 0; r < rounds; r++)
		for (unsigned int i = 0; i < me->nr_pins; i++)
			if (pin_user_pages_fast(cf.mm, me->pin_addr[i], 1, FOLL_WRITE, &page) == 1)
				unpin_user_page(page);
}

/*
 * A handoff: turn t is CPU t % n's, and every CPU (those with no part too: me NULL) waits at
 * a barrier after it, so in the model's time too one CPU at a time takes zone->lock: the
 * lock is always free, and its line is where the turn before left it. The turn's CPU frees
 * the page it holds, or allocates one (with the lists off: one zone->lock hold either way).
 * The first round is a warm-up; only the turns themselves are counted. Returns the turns
 * this CPU counted.
 */
static unsigned int handoff_turns(struct cf_cpu *me, unsigned int cpu)
{
	unsigned int n = cf.handoff_cpus, done = 0;

	for (unsigned int t = 0; t < (CF_ROUNDS + 1) * n; t++) {
		if (me && t % n == cpu) {
			if (t >= n)
				c2c_cpu_counted();
			if (me->nr_held) {
				__free_pages(me->held[--me->nr_held], 0);
			} else {
				me->held[0] = alloc_pages_node(cf.pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
				me->nr_held = me->held[0] != NULL;
			}
			c2c_cpu_uncounted();
			done += t >= n;
		}
		c2c_barrier(&cf.turn_done[t]);
	}
	return done;
}

static void stats_read(struct cf_cpu *me, int cpu, unsigned int n)
{
	struct pcp_stats st;

	for (unsigned int i = 0; i < n; i++) {
		pcp_stats_sum(cf.pgdat, cpu, &st);
		me->sum += st.alloc_hit + st.free_hit + st.numa_hit;
	}
}

/* The other page whose struct page is on page's line (struct page is half a line). */
static struct page *line_partner(struct page *page)
{
	return (struct page *)((uintptr_t)page ^ sizeof(struct page));
}

static bool held_by(struct page *const *pages, unsigned int n, const struct page *page)
{
	for (unsigned int i = 0; i < n; i++)
		if (pages[i] == page)
			return true;
	return false;
}

/*
 * free's setup: from an empty list, allocate pages; keep to free in the window those whose
 * struct page line holds no other CPU's page (both halves are pages this CPU allocated),
 * free one of them now, so that the window's first free (which links the page at the head
 * of the list) writes only this CPU's struct pages, and give the rest back after the window.
 */
static void free_setup(struct cf_cpu *me)
{
	bool keep[ARRAY_SIZE(me->other)];
	struct page *page;
	unsigned int n = 0, kept = 0;

	drain_local_pages(cf.zone);
	while (n < ARRAY_SIZE(me->other) && (page = alloc_pages_node(cf.pgdat, GFP_KERNEL | __GFP_NOWARN, 0)))
		me->other[n++] = page;
	for (unsigned int i = 0; i < n; i++) {
		keep[i] = kept < CF_FREES + 1 && held_by(me->other, n, line_partner(me->other[i]));
		kept += keep[i];
	}
	me->nr_held = me->nr_other = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (keep[i])
			me->held[me->nr_held++] = me->other[i];
		else
			me->other[me->nr_other++] = me->other[i];
	}
	if (me->nr_held)
		__free_pages(me->held[--me->nr_held], 0);
}

/* The first warm-up, every CPU at once: what the operation needs in place (uncounted). */
static void cf_setup(struct cf_cpu *me)
{
	switch (me->op) {
	case CF_PAIRS_OP:
		pairs_loop(CF_HELD);
		break;
	case CF_FREE:
		free_setup(me);
		break;
	case CF_PIN:
	case CF_STATS:
	case CF_DRAIN_OWN:
		drain_local_pages(cf.zone);
		break;
	case CF_DRAIN_ALL:
	case CF_DRAIN_FULL:
		drain_all_pages(cf.zone);
		break;
	default:
		break;
	}
}

/* The second warm-up, after every CPU's setup: one round of the operation itself. */
static void cf_warm(struct cf_cpu *me, unsigned int cpu)
{
	switch (me->op) {
	case CF_PIN:
		pin_loop(me, 1);
		break;
	case CF_STATS:
		stats_read(me, (int)cpu, 1);
		break;
	case CF_STATS_ALL:
		stats_read(me, -1, 1);
		break;
	case CF_FREE_PAGES:
		me->sum += nr_free_pages();
		break;
	case CF_DRAIN_OWN:
		drain_local_pages(cf.zone);
		break;
	case CF_DRAIN_ALL:
		drain_all_pages(cf.zone);
		break;
	case CF_FILL:
		for (unsigned int i = 0; i < CF_FREES; i++)
			me->held[i] = alloc_pages_node(cf.pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
		for (unsigned int i = 0; i < CF_FREES; i++)
			if (me->held[i])
				__free_pages(me->held[i], 0);
		break;
	case CF_PIN_LINE:
		pin_loop(me, 1);
		break;
	default:
		break;
	}
}

/* What is counted; returns the operations done. */
static unsigned int cf_op_run(struct cf_cpu *me, unsigned int cpu)
{
	switch (me->op) {
	case CF_PAIRS_OP:
		pairs_loop(CF_PAIRS);
		return CF_PAIRS;
	case CF_FREE:
		for (unsigned int i = 0; i < me->nr_held; i++)
			__free_pages(me->held[i], 0);
		return me->nr_held;
	case CF_PIN:
	case CF_PIN_LINE:
		pin_loop(me, CF_PIN_ROUNDS * CF_PINS / me->nr_pins);
		return CF_PIN_ROUNDS * CF_PINS;
	case CF_STATS:
		stats_read(me, (int)cpu, CF_READS);
		return CF_READS;
	case CF_STATS_ALL:
		stats_read(me, -1, CF_READS / 8);
		return CF_READS / 8;
	case CF_FREE_PAGES:
		for (unsigned int i = 0; i < CF_READS / 8; i++)
			me->sum += nr_free_pages();
		return CF_READS / 8;
	case CF_DRAIN_OWN:
	case CF_DRAIN_ALL:
		for (unsigned int i = 0; i < CF_DRAINS; i++)
			me->op == CF_DRAIN_OWN ? drain_local_pages(cf.zone) : drain_all_pages(cf.zone);
		return CF_DRAINS;
	case CF_DRAIN_FULL:
		drain_all_pages(cf.zone);
		return 1;
	default:
		return 0;
	}
}

/* Every CPU in the window: setup, barrier, warm-up, barrier, then the counted loop. */
static void cf_cpu_fn(void *arg)
{
	unsigned int cpu = arch_cpu_id();
	struct cf_cpu *me = cpu < CF_CPUS ? &cf.cpu[cpu] : NULL;

	c2c_cpu_begin();
	c2c_cpu_uncounted();
	if (cf.handoff_cpus) {		/* every CPU is in every turn's barrier */
		unsigned int done = handoff_turns(me && me->op == CF_HANDOFF ? me : NULL, cpu);

		c2c_cpu_end();
		if (me && me->op == CF_HANDOFF) {
			me->ops = done;
			if (me->nr_held)
				__free_pages(me->held[--me->nr_held], 0);
		}
		return;
	}
	if (me)
		cf_setup(me);
	c2c_barrier(&cf.arrived[0]);
	if (me)
		cf_warm(me, cpu);
	c2c_barrier(&cf.arrived[1]);
	c2c_cpu_counted();
	if (me)
		me->ops = cf_op_run(me, cpu);
	c2c_cpu_end();
	for (unsigned int i = 0; me && i < me->nr_other; i++)	/* free's pages not freed */
		__free_pages(me->other[i], 0);
	(void)arg;
}

/* ---- the cases ---- */

static unsigned int cf_nr_cases;	/* windows opened (conflict.py checks it saw them all) */

/* Is name selected by c2c.cases= (empty: every case)? */
static bool cf_selected(const char *name)
{
	const char *want = conflict_cases;

	if (!*want)
		return true;
	while (*want) {
		size_t len = 0;

		while (want[len] && want[len] != ',')
			len++;
		for (const char *p = name; len && strlen(p) >= len; p++)
			if (!memcmp(p, want, len))
				return true;
		want += len + (want[len] == ',');
	}
	return false;
}

/*
 * One window: plan[c] on CPU c. expect: "none" (nothing may move), or what must (the
 * opposites: tests/c2c/conflict.py reads `must`, `min`, `may` and `alone`).
 */
static void cf_case(const char *name, const enum cf_op plan[CF_CPUS], const char *expect)
{
	char json[320], ops[64] = "";
	unsigned int n = 0, w;

	if (!cf_selected(name))
		return;
	cf_nr_cases++;
	for (unsigned int c = 0; c < CF_CPUS; c++) {
		struct cf_cpu *me = &cf.cpu[c];

		*me = (struct cf_cpu){ .op = plan[c] };
		if (plan[c] == CF_PIN) {
			me->nr_pins = CF_PINS;
			memcpy(me->pin_addr, cf.own_pins[c], sizeof(me->pin_addr));
		} else if (plan[c] == CF_PIN_LINE) {
			me->nr_pins = 1;
			me->pin_addr[0] = cf.line_pair[c % 2];
		}
		if (plan[c] != CF_IDLE)
			n++;
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s", c ? "," : "",
			 cf_names[plan[c]]);
	}
	cf.arrived[0] = cf.arrived[1] = 0;
	memset(cf.turn_done, 0, sizeof(cf.turn_done));
	cf.handoff_cpus = 0;
	while (cf.handoff_cpus < CF_CPUS && plan[cf.handoff_cpus] == CF_HANDOFF)
		cf.handoff_cpus++;
	snprintf(json, sizeof(json), "\"case\":\"%s\",\"plan\":\"%s\",\"active\":%u,\"model\":\"%s\","
		 "\"op\":\"operation\",%s", name, ops, n,
		 pcp_lock_model_name(cf.pgdat->machine->pcp_lock), expect);
	w = c2c_window("conflict", json, cf_cpu_fn, NULL);
	n = 0;
	for (unsigned int c = 0; c < CF_CPUS; c++)
		n += cf.cpu[c].ops;
	snprintf(json, sizeof(json), "\"ops\":%u", n);
	c2c_window_result(w, json);
}

/* Every pair of operations that commute, on CPUs 0 and 1, then each on all CPUs. */
static void cf_generated(void)
{
	char name[48];

	for (enum cf_op a = CF_PAIRS_OP; a < CF_NR_TABLE; a++)
		for (enum cf_op b = a; b < CF_NR_TABLE; b++) {
			enum cf_op plan[CF_CPUS] = { a, b, CF_IDLE, CF_IDLE };

			if (!(cf_commutes[a] & B(b)))
				continue;
			snprintf(name, sizeof(name), "%s_vs_%s", cf_names[a], cf_names[b]);
			cf_case(name, plan, "\"expect\":\"none\"");
		}
	for (enum cf_op a = CF_PAIRS_OP; a < CF_NR_TABLE; a++) {
		enum cf_op plan[CF_CPUS] = { a, a, a, a };

		if (!(cf_commutes[a] & B(a)))
			continue;
		snprintf(name, sizeof(name), "%s_on_4_cpus", cf_names[a]);
		cf_case(name, plan, "\"expect\":\"none\"");
	}
	cf_case("pairs_free_pin_stats_on_4_cpus",
		(enum cf_op[CF_CPUS]){ CF_PAIRS_OP, CF_FREE, CF_PIN, CF_STATS }, "\"expect\":\"none\"");
}

/*
 * The opposites, each with the lines that must move (`min` moves at least: transfers and
 * upgrades of lines of the objects or fields `must` names), those that may (`may`), and
 * lines that must hold nothing but the named field when they move (`alone`): a has-pinned
 * flag written on every pin (Linux before 292648ac5cf1), once per pin; two pages whose
 * 32-byte struct pages share one line; one CPU summing every CPU's counters while two count;
 * nr_free_pages() beside them, which sums every CPU's list count (Linux's NR_FREE_PAGES
 * leaves the lists' pages out, and its reader touches no CPU's line); a drain of a full
 * list; order-0 pairs with the lists off, on zone->lock, which must be alone on its line
 * (Linux a368ab67aa55).
 */
static void cf_opposites(void)
{
	static const enum cf_op two_pins[CF_CPUS] = { CF_PIN, CF_PIN, CF_IDLE, CF_IDLE };
	static const enum cf_op four_pins[CF_CPUS] = { CF_PIN, CF_PIN, CF_PIN, CF_PIN };
	enum gup_has_pinned_mode mode = gup_has_pinned_mode;
	bool lists = pcp_enabled;
	char expect[160];

	gup_has_pinned_mode = GUP_HAS_PINNED_EVERY_PIN;
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"mm_struct.flags\",\"min\":%u",
		 2 * CF_PINS * CF_PIN_ROUNDS * 9 / 10);
	cf_case("every_pin_pins_move_mm_flags", two_pins, expect);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"mm_struct.flags\",\"min\":%u",
		 4 * CF_PINS * CF_PIN_ROUNDS * 9 / 10);
	cf_case("every_pin_pins_on_4_cpus_move_mm_flags", four_pins, expect);
	gup_has_pinned_mode = mode;
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"struct page\",\"min\":%u",
		 CF_PINS * CF_PIN_ROUNDS);
	cf_case("pins_of_two_pages_on_one_struct_page_line",
		(enum cf_op[CF_CPUS]){ CF_PIN_LINE, CF_PIN_LINE, CF_IDLE, CF_IDLE }, expect);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"per_cpu_pages.stats\",\"min\":%u",
		 2 * CF_READS / 8);
	cf_case("stats_all_vs_pairs_moves_pcp_stats",
		(enum cf_op[CF_CPUS]){ CF_STATS_ALL, CF_PAIRS_OP, CF_PAIRS_OP, CF_IDLE }, expect);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"per_cpu_pages.count\",\"min\":%u",
		 2 * CF_READS / 8);
	cf_case("free_pages_vs_pairs_moves_pcp_counts",
		(enum cf_op[CF_CPUS]){ CF_FREE_PAGES, CF_PAIRS_OP, CF_PAIRS_OP, CF_IDLE }, expect);
	cf_case("drain_full_moves_the_list",
		(enum cf_op[CF_CPUS]){ CF_DRAIN_FULL, CF_FILL, CF_IDLE, CF_IDLE },
		"\"expect\":\"conflict\",\"must\":\"per_cpu_pages\",\"min\":1,"
		"\"may\":\"zone.lock zone.free_area zone.free_pages struct page\"");
	drain_all_pages_machine(cf.pgdat->machine);
	WRITE_ONCE(pcp_enabled, false);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"zone.lock\",\"min\":%u,"
		 "\"may\":\"zone.free_area zone.free_pages struct page\",\"alone\":\"zone.lock\"", CF_PAIRS);
	cf_case("lists_off_pairs_move_zone_lock",
		(enum cf_op[CF_CPUS]){ CF_PAIRS_OP, CF_PAIRS_OP, CF_IDLE, CF_IDLE }, expect);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"zone.lock\",\"min\":%u,"
		 "\"max\":%u,\"upgrades\":0,\"may\":\"zone.free_area zone.free_pages struct page\"",
		 2 * CF_ROUNDS, 2 * CF_ROUNDS);
	cf_case("handoff_zone_lock_moves_once_per_turn",
		(enum cf_op[CF_CPUS]){ CF_HANDOFF, CF_HANDOFF, CF_IDLE, CF_IDLE }, expect);
	snprintf(expect, sizeof(expect), "\"expect\":\"conflict\",\"must\":\"zone.lock\",\"min\":%u,"
		 "\"max\":%u,\"upgrades\":0,\"may\":\"zone.free_area zone.free_pages struct page\"",
		 4 * CF_ROUNDS, 4 * CF_ROUNDS);
	cf_case("handoff_on_4_cpus_zone_lock_moves_once_per_turn",
		(enum cf_op[CF_CPUS]){ CF_HANDOFF, CF_HANDOFF, CF_HANDOFF, CF_HANDOFF }, expect);
	WRITE_ONCE(pcp_enabled, lists);
}

/* The pins' address space: a populated 2 MiB region, has-pinned set; each CPU's pages are
 * those whose struct page line no other CPU's page holds (line number % CF_CPUS), and the
 * opposite case's two pages share one line (and are nobody else's). 0, or -1. */
#define CF_REGION_PAGES 512
static uintptr_t cf_line[CF_REGION_PAGES];	/* struct page line of each page (setup only) */

static int cf_pins_setup(void)
{
	unsigned int got[CF_CPUS] = { 0 }, pair = 0;
	struct page *page;

	cf.mm = mm_create(mm_node());
	if (!cf.mm || mm_mmap_anon(cf.mm, CF_BASE, CF_REGION_PAGES * PAGE_SIZE, true, false, true))
		return -1;
	for (unsigned int i = 0; i < CF_REGION_PAGES; i++) {
		if (pin_user_pages_fast(cf.mm, CF_BASE + (u64)i * PAGE_SIZE, 1, FOLL_WRITE, &page) != 1)
			return -1;
		unpin_user_page(page);
		cf_line[i] = (uintptr_t)page / CACHELINE_SIZE;
		if (!pair && i && cf_line[i] == cf_line[i - 1])
			pair = i;
	}
	if (!pair)
		return -1;
	cf.line_pair[0] = CF_BASE + (u64)(pair - 1) * PAGE_SIZE;
	cf.line_pair[1] = CF_BASE + (u64)pair * PAGE_SIZE;
	for (unsigned int i = 0; i < CF_REGION_PAGES; i++) {
		unsigned int c = (unsigned int)(cf_line[i] % CF_CPUS);

		if (cf_line[i] != cf_line[pair] && got[c] < CF_PINS)
			cf.own_pins[c][got[c]++] = CF_BASE + (u64)i * PAGE_SIZE;
	}
	for (unsigned int c = 0; c < CF_CPUS; c++)
		if (got[c] < CF_PINS)
			return -1;
	return 0;
}

static void c2c_conflict(void)
{
	struct page *probe;

	if (nr_cpus_online() < CF_CPUS) {
		printk("c2c_conflict: needs %u CPUs or more\n", CF_CPUS);
		return;
	}
	cf.pgdat = mm_node();
	probe = alloc_pages_node(cf.pgdat, GFP_KERNEL, 0);
	cf.zone = probe ? page_zone(probe) : NULL;
	if (probe)
		__free_pages(probe, 0);
	if (!cf.zone || cf_pins_setup()) {
		printk("c2c_conflict: no memory for the cases\n");
		goto out;
	}
	c2c_node_objects(cf.pgdat);
	c2c_object_type("mm_struct", "struct mm_struct", cf.mm, sizeof(*cf.mm));
	c2c_object_type("the cases' own data", "struct cf_run", &cf, sizeof(cf));
	cf_generated();
	cf_opposites();
	printk("c2c_conflict: %u cases\n", cf_nr_cases);
out:
	if (cf.mm)
		mm_destroy(cf.mm);
	cf.mm = NULL;
}
BENCH_REGISTER(c2c_conflict, c2c_conflict, "the conflict-freedom layer: operations that commute, on different "
	       "CPUs, share no cache line (tests/c2c/conflict.py)");
