/*
 * lockdep: validates every spinlock acquisition against the locking rules that prevent
 * deadlock, and reports the first pattern that could deadlock (docs/lockdep.md). It checks
 * lock classes, not lock instances, so one observation is enough: the deadlock need not
 * happen. Generic C: the same file runs in the kernel and in the host harness (tests/host).
 */
#include "kernel/lockdep.h"
#include "kernel/spinlock.h"
#include "kernel/arch.h"
#include "kernel/smp.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "kernel/cmdline.h"

/* Words read without graph_locked use READ_ONCE/WRITE_ONCE (kernel/compiler.h). */

/* `lockdep=0` turns it off; a report turns it off for good (Linux's debug_locks_off()). */
static bool debug_locks = true;
CMDLINE_BOOL("lockdep", debug_locks, "0: no lock validator (debug builds run it by default)");

bool lockdep_enabled(void)
{
	return CONFIG_LOCKDEP && READ_ONCE(debug_locks);
}

void lockdep_off(void)
{
	WRITE_ONCE(debug_locks, false);
}

static unsigned long nr_reports;	/* not expected by a test */

unsigned long lockdep_report_count(void)
{
	return READ_ONCE(nr_reports);
}

const char *lockdep_rule_name(enum lockdep_rule rule)
{
	static const char *const names[] = { "none", "inconsistent irq usage", "irq lock inversion",
					     "circular dependency", "recursion", "uninitialised lock",
					     "table overflow" };

	return rule < ARRAY_SIZE(names) ? names[rule] : "?";
}

#if !CONFIG_LOCKDEP
/* Release builds: nothing is validated, and nothing here costs anything. */
unsigned int lockdep_held_depth(void) { return 0; }
void lockdep_truncate_held(unsigned int depth) { (void)depth; }
void lockdep_print_summary(void) { }
void lockdep_expect_begin(struct lockdep_expect *e) { memset(e, 0, sizeof(*e)); }
void lockdep_expect_cpu(struct lockdep_expect *e, unsigned int cpu) { (void)e; (void)cpu; }
enum lockdep_rule lockdep_expect_end(struct lockdep_expect *e) { return e->rule; }
#else

#define MAX_CLASSES 128		/* class 0 is "none": spinlock_t keeps the index in a u8 */
#define MAX_DEPTH LOCKDEP_MAX_DEPTH
#define MAX_EDGE_SITES 512	/* first sighting of each dependency, for reports */
#define CLASS_WORDS (MAX_CLASSES / 64)

/* A class: every lock initialised at one spin_lock_init() site, or one static lock. */
struct lock_class {
	const void *key;		/* the init site, or the static lock itself */
	const char *name;		/* the init expression ("&zone->lock") or the lock's name */
	const struct lock_site *init_site;	/* NULL for a static lock */
};

/* Usage bits, as Linux names them in reports. */
enum { USED_IN_HARDIRQ, HARDIRQ_ON, NR_USAGE };
static const char *const usage_name[NR_USAGE] = { "IN-HARDIRQ-W", "HARDIRQ-ON-W" };

/*
 * What the validator has learnt: per class its usage, and the dependency graph (an edge
 * a -> b: b was taken while a was held, on one CPU in one context). Bits are only ever set,
 * under graph_lock; readers test them without it (a clear bit sends them to the lock).
 * A test's expect scope saves and restores this struct as a whole.
 */
struct lockdep_graph {
	u8 usage[MAX_CLASSES];
	const struct lock_site *usage_site[MAX_CLASSES][NR_USAGE];	/* first sighting */
	u16 usage_cpu[MAX_CLASSES][NR_USAGE];
	u64 after[MAX_CLASSES][CLASS_WORDS];	/* after[a] has b: edge a -> b */
	u64 before[MAX_CLASSES][CLASS_WORDS];	/* its transpose: before[b] has a */
	unsigned int nr_edges, nr_edge_sites;
};

/* Where a dependency a -> b was first seen: b taken at to_site while a (from_site) held. */
struct edge_site {
	u8 from, to;
	u16 cpu;
	const struct lock_site *from_site, *to_site;
};

/* graph_locked protects classes[], nr_classes, g, edge_sites[], the expect scope and reports. */
static u32 graph_locked;
static struct lock_class classes[MAX_CLASSES];
static unsigned int nr_classes;
static struct lockdep_graph g, g_saved;
static struct edge_site edge_sites[MAX_EDGE_SITES];
static struct lockdep_expect *expecting;
static u64 expect_cpus[MAX_CPUS / 64];	/* the CPUs whose reports the scope takes */
static bool report_captured;		/* the report being printed is the scope's */
static char first_report[128];

/* A CPU's held locks live in its struct cpu: allocated for the CPUs present (kernel/smp.h). */
static struct lockdep_cpu *ld_cpu(unsigned int cpu)
{
	return &cpu_ptr(cpu)->lockdep;
}

/* ---- the validator's own lock and re-entry guard ---- */

/*
 * A raw test-and-set lock, never a spinlock_t (that would recurse into lockdep). Taken with
 * interrupts off, since an interrupt on this CPU may validate a lock too; while waiting
 * interrupts go back to the caller's state so that a waiter can still take IPIs (40 vCPUs
 * share 2 host cores: a holder may be descheduled for milliseconds). Returns false if the
 * validator was turned off meanwhile.
 */
static bool graph_lock(unsigned long flags)
{
	while (__atomic_exchange_n(&graph_locked, 1, __ATOMIC_ACQUIRE)) {
		arch_irq_restore(flags);
		do
			arch_cpu_relax();
		while (READ_ONCE(graph_locked));
		(void)arch_irq_save();
	}
	if (READ_ONCE(debug_locks))
		return true;
	smp_store_release(&graph_locked, 0);
	return false;
}

static void graph_unlock(void)
{
	smp_store_release(&graph_locked, 0);
}

/* Enter the validator on this CPU: NULL if it is already running here (its own printk). */
static struct lockdep_cpu *lockdep_enter(unsigned long *flags)
{
	struct lockdep_cpu *c;

	*flags = arch_irq_save();
	c = ld_cpu(arch_cpu_id());
	if (c->busy) {
		arch_irq_restore(*flags);
		return NULL;
	}
	c->busy = true;
	return c;
}

static void lockdep_leave(struct lockdep_cpu *c, unsigned long flags)
{
	c->busy = false;
	arch_irq_restore(flags);
}

static bool has_bit(const u64 *set, unsigned int i)
{
	return (READ_ONCE(set[i / 64]) >> (i % 64)) & 1;
}

static void set_bit_in(u64 *set, unsigned int i)
{
	WRITE_ONCE(set[i / 64], set[i / 64] | (1ull << (i % 64)));
}

/* ---- reports ---- */

/* One report line: as KTAP diagnostics ("# ") inside a test's expect scope. */
static __printf(1, 2) void ld_print(const char *fmt, ...)
{
	char buf[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printk("%s%s", report_captured ? "    # " : "", buf);
}

static const char *cname(unsigned int cls)
{
	return classes[cls].name ? classes[cls].name : "?";
}

static void print_site(const char *what, const struct lock_site *s)
{
	if (s)
		ld_print("%s%s:%d (%s)\n", what, s->file, s->line, s->expr ? s->expr : "");
	else
		ld_print("%s(unknown)\n", what);
}

static void print_class(unsigned int cls)
{
	const struct lock_site *init = classes[cls].init_site;

	if (init)
		ld_print("  class '%s' (initialised at %s:%d)\n", cname(cls), init->file, init->line);
	else
		ld_print("  class '%s' (a statically initialised lock)\n", cname(cls));
}

static void print_held(const struct lockdep_cpu *c)
{
	ld_print("locks held by cpu%u (innermost last):\n", arch_cpu_id());
	for (unsigned int i = 0; i < c->depth; i++) {
		const struct held_lock *h = &c->held[i];

		ld_print("  #%u '%s' (%s) taken at %s:%d%s%s\n", i, cname(h->cls), h->lock->name,
			 h->site ? h->site->file : "?", h->site ? h->site->line : 0,
			 h->trylock ? " [trylock]" : "", h->irq_ctx ? " [in interrupt]" : "");
	}
	if (!c->depth)
		ld_print("  (none)\n");
}

/*
 * The open expect scope if it takes a report from this CPU: the scope's own CPU's, and those
 * of the CPUs it named (lockdep_expect_cpu()). Another CPU's report is a real one, though a
 * test's scope happens to be open meanwhile.
 */
static struct lockdep_expect *scope_of_this_cpu(void)
{
	return expecting && has_bit(expect_cpus, arch_cpu_id()) ? expecting : NULL;
}

/*
 * Start a report (graph lock held): false if it is not to be printed, because the validator
 * already reported (it reports once) or the expect scope already captured one.
 */
static bool report_begin(enum lockdep_rule rule, unsigned int a, unsigned int b,
			 const char *headline)
{
	struct lockdep_expect *e = scope_of_this_cpu();

	report_captured = e != NULL;
	if (e) {
		if (e->rule != LOCKDEP_NONE) {
			e->more++;
			return false;
		}
		e->rule = rule;
		snprintf(e->first, sizeof(e->first), "%s", a ? cname(a) : "");
		snprintf(e->second, sizeof(e->second), "%s", b ? cname(b) : "");
		snprintf(e->headline, sizeof(e->headline), "%s", headline);
	} else {
		WRITE_ONCE(debug_locks, false);
		WRITE_ONCE(nr_reports, nr_reports + 1);
		snprintf(first_report, sizeof(first_report), "%s", headline);
	}
	ld_print("\n");
	ld_print("====================================================================\n");
	ld_print("WARNING: lockdep: %s\n", headline);
	ld_print("--------------------------------------------------------------------\n");
	return true;
}

static void report_end(const struct lockdep_cpu *c)
{
	print_held(c);
	if (report_captured) {
		ld_print("(captured by the running test's expect scope: the validator stays on)\n");
		return;
	}
	ld_print("backtrace of cpu%u:\n", arch_cpu_id());
	arch_dump_stack();
	ld_print("lockdep: turning off the locking correctness validator\n");
	ld_print("====================================================================\n");
}

static void report_overflow(const struct lockdep_cpu *c, const char *what, unsigned int max)
{
	char headline[96];

	snprintf(headline, sizeof(headline), "too many %s (%u): the validator gives up", what,
		 max);
	if (report_begin(LOCKDEP_OVERFLOW, 0, 0, headline))
		report_end(c);
}

/* ---- classes ---- */

/* The class of key, registered on first sight (graph lock held); 0 if the table is full. */
static unsigned int class_of_key(const struct lockdep_cpu *c, const void *key, const char *name,
				 const struct lock_site *init_site)
{
	for (unsigned int i = 1; i <= nr_classes; i++)
		if (classes[i].key == key)
			return i;
	if (nr_classes + 1 >= MAX_CLASSES) {
		report_overflow(c, "lock classes", MAX_CLASSES - 1);
		return 0;
	}
	classes[++nr_classes] = (struct lock_class){ key, name, init_site };
	return nr_classes;
}

static unsigned int register_lock(const struct lockdep_cpu *c, struct spinlock *lock,
				  const struct lock_site *init_site, unsigned long flags)
{
	unsigned int cls;

	if (!graph_lock(flags))
		return 0;
	cls = init_site ? class_of_key(c, init_site, init_site->expr, init_site)
			: class_of_key(c, lock, lock->name, NULL);
	WRITE_ONCE(lock->dep_class, (u8)cls);
	graph_unlock();
	return cls;
}

void lockdep_init_lock(struct spinlock *lock, const struct lock_site *init_site)
{
	struct lockdep_cpu *c;
	unsigned long flags;

	if (!READ_ONCE(debug_locks) || !(c = lockdep_enter(&flags)))
		return;
	register_lock(c, lock, init_site, flags);
	lockdep_leave(c, flags);
}

/* ---- the graph: one search, and the maths of what it proves ---- */

/*
 * Why cycles, and why one breadth-first search answers every question here.
 *
 * Let G be the graph whose nodes are lock classes and whose edge a -> b means "b was taken
 * while a was held" (same CPU, same context). A deadlock is a wait-for cycle: CPU i holds
 * L_i and spins on L_{i+1}, ..., CPU k holds L_k and spins on L_1. Each CPU got there by
 * taking L_{i+1} while holding L_i, which is exactly the edge L_i -> L_{i+1}; so every
 * deadlock among classes walks a cycle of G, and a cycle-free G means no deadlock of plain
 * nesting is possible. A new edge p -> n closes a cycle iff p is reachable from n, which a
 * BFS from n decides in O(V + E) with V <= 127 classes (E <= V^2 edges, as bitmaps).
 *
 * Interrupts add edges that no CPU takes explicitly: if a class U is ever held with
 * interrupts on (HARDIRQ-ON) and a class S is ever taken in an interrupt handler
 * (IN-HARDIRQ), an interrupt can arrive while U is held and take S: an implied edge U -> S.
 * Then:
 *  - U == S is a cycle of length one: "inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W}";
 *  - a path S ->* U in G closes S ->* U -> S: "irq lock inversion" (an irq-unsafe lock
 *    taken, perhaps indirectly, while an irq-safe one is held). It is checked when a usage
 *    bit appears (BFS forwards from a new S for any U, backwards from a new U for any S) and
 *    when an edge p -> n appears (some S reaching p backwards and some U reachable from n).
 * Each check runs only when G or a usage bit changes: at most V^2 + 2V times per boot,
 * however many acquisitions. Steady state is a few bit tests per acquisition.
 *
 * Cycles through two different locks of one class are reported too (the price of checking
 * classes): "recursion" if a CPU takes a class it already holds.
 */
#define MATCH_CLASS (-1)

/*
 * BFS from `from` along after[] (forward) or before[] (backward) for the first class that
 * has usage bit `bit`, or that is `target` if bit is MATCH_CLASS; `from` itself counts.
 * Returns it, or 0; parent[] then leads back from it to `from`.
 */
static unsigned int graph_bfs(unsigned int from, bool forward, int bit, unsigned int target,
			      u8 *parent)
{
	u8 queue[MAX_CLASSES];
	u64 seen[CLASS_WORDS] = { 0 };
	unsigned int head = 0, tail = 0;

	queue[tail++] = (u8)from;
	set_bit_in(seen, from);
	parent[from] = 0;
	while (head < tail) {
		unsigned int cls = queue[head++];
		const u64 *next = forward ? g.after[cls] : g.before[cls];

		if (bit == MATCH_CLASS ? cls == target : (g.usage[cls] >> bit) & 1)
			return cls;
		for (unsigned int w = 0; w < CLASS_WORDS; w++) {
			for (u64 m = next[w] & ~seen[w]; m; m &= m - 1) {
				unsigned int k = w * 64 + (unsigned int)__builtin_ctzll(m);

				seen[w] |= 1ull << (k % 64);
				parent[k] = (u8)cls;
				queue[tail++] = (u8)k;
			}
		}
	}
	return 0;
}

static const struct edge_site *find_edge_site(unsigned int a, unsigned int b)
{
	for (unsigned int i = 0; i < g.nr_edge_sites; i++)
		if (edge_sites[i].from == a && edge_sites[i].to == b)
			return &edge_sites[i];
	return NULL;
}

/* Print the dependency a -> b with the sites of its first sighting. */
static void print_edge(unsigned int a, unsigned int b)
{
	const struct edge_site *e = find_edge_site(a, b);

	if (!e) {
		ld_print("  '%s' -> '%s'\n", cname(a), cname(b));
		return;
	}
	ld_print("  '%s' -> '%s': cpu%u took '%s' at %s:%d while holding it from %s:%d\n",
		 cname(a), cname(b), e->cpu, cname(b), e->to_site->file, e->to_site->line,
		 e->from_site->file, e->from_site->line);
}

/*
 * Print the path that a BFS found, in edge order. A forward search from x to y left
 * parent[] pointing from y back towards x (reverse it); a backward search from x to y
 * left it pointing from y forwards to x (already in edge order).
 */
static void print_path(unsigned int from, unsigned int found, const u8 *parent, bool forward)
{
	u8 path[MAX_CLASSES];
	unsigned int n = 0;

	for (unsigned int cls = found; cls != from; cls = parent[cls])
		path[n++] = (u8)cls;
	path[n++] = (u8)from;
	for (unsigned int i = 0; i + 1 < n; i++) {
		if (forward)
			print_edge(path[n - 1 - i], path[n - 2 - i]);
		else
			print_edge(path[i], path[i + 1]);
	}
}

/* ---- the three usage/graph reports ---- */

static void report_inconsistent(const struct lockdep_cpu *c, const struct held_lock *h,
				int old_bit, int new_bit)
{
	unsigned int cls = h->cls;
	const struct lock_site *on = new_bit == HARDIRQ_ON ? h->site
							  : g.usage_site[cls][HARDIRQ_ON];
	const struct lock_site *in = new_bit == HARDIRQ_ON ? g.usage_site[cls][USED_IN_HARDIRQ]
							  : h->site;
	char headline[120];

	snprintf(headline, sizeof(headline), "inconsistent {%s} -> {%s} usage of '%s'",
		 usage_name[old_bit], usage_name[new_bit], cname(cls));
	if (!report_begin(LOCKDEP_INCONSISTENT, cls, cls, headline))
		return;
	ld_print("cpu%u [%s, interrupts %s] takes '%s' (%s)\n", arch_cpu_id(),
		 h->irq_ctx ? "in interrupt" : "thread context", h->irqs_on ? "on" : "off",
		 cname(cls), h->lock->name);
	print_site("  at ", h->site);
	print_class(cls);
	ld_print("{%s} was first seen on cpu%u\n", usage_name[old_bit], g.usage_cpu[cls][old_bit]);
	print_site("  at ", g.usage_site[cls][old_bit]);
	ld_print("rule broken: a lock taken in an interrupt handler must never be held with\n");
	ld_print("interrupts on: an interrupt that arrives while it is held spins on it forever.\n");
	ld_print("possible deadlock:  CPU0\n");
	ld_print("  lock(%s);            <- %s:%d, interrupts on\n", cname(cls),
		 on ? on->file : "?", on ? on->line : 0);
	ld_print("  <Interrupt>\n");
	ld_print("    lock(%s);          <- %s:%d\n", cname(cls), in ? in->file : "?",
		 in ? in->line : 0);
	ld_print("   *** DEADLOCK ***\n");
	report_end(c);
}

/* A path safe ->* unsafe exists: the caller prints it, then report_end(), if this is true. */
static bool report_irq_inversion(unsigned int safe, unsigned int unsafe, const char *how)
{
	char headline[120];

	snprintf(headline, sizeof(headline),
		 "possible irq lock inversion: irq-safe '%s' -> irq-unsafe '%s'", cname(safe),
		 cname(unsafe));
	if (!report_begin(LOCKDEP_IRQ_INVERSION, safe, unsafe, headline))
		return false;
	ld_print("%s\n", how);
	print_class(safe);
	ld_print("'%s' is taken in interrupts {%s}, first on cpu%u\n", cname(safe),
		 usage_name[USED_IN_HARDIRQ], g.usage_cpu[safe][USED_IN_HARDIRQ]);
	print_site("  at ", g.usage_site[safe][USED_IN_HARDIRQ]);
	print_class(unsafe);
	ld_print("'%s' is held with interrupts on {%s}, first on cpu%u\n", cname(unsafe),
		 usage_name[HARDIRQ_ON], g.usage_cpu[unsafe][HARDIRQ_ON]);
	print_site("  at ", g.usage_site[unsafe][HARDIRQ_ON]);
	ld_print("rule broken: never take an irq-unsafe lock while holding an irq-safe one.\n");
	ld_print("possible deadlock:  CPU0                     CPU1\n");
	ld_print("  lock(%s);\n", cname(unsafe));
	ld_print("                               (interrupts off) lock(%s);\n", cname(safe));
	ld_print("                               lock(%s);  <- waits for CPU0\n", cname(unsafe));
	ld_print("  <Interrupt>\n");
	ld_print("    lock(%s);  <- waits for CPU1\n", cname(safe));
	ld_print("   *** DEADLOCK ***\n");
	ld_print("the dependency chain from '%s' to '%s':\n", cname(safe), cname(unsafe));
	return true;
}

static void report_circular(const struct lockdep_cpu *c, const struct held_lock *p,
			    const struct held_lock *n, const u8 *parent)
{
	char headline[120];

	snprintf(headline, sizeof(headline),
		 "possible circular locking dependency: '%s' -> '%s' closes a cycle", cname(p->cls),
		 cname(n->cls));
	if (!report_begin(LOCKDEP_CIRCULAR, p->cls, n->cls, headline))
		return;
	ld_print("cpu%u takes '%s' (%s) while holding '%s' (%s)\n", arch_cpu_id(), cname(n->cls),
		 n->lock->name, cname(p->cls), p->lock->name);
	print_site("  taking  at ", n->site);
	print_site("  holding from ", p->site);
	ld_print("but '%s' was already taken (perhaps indirectly) while '%s' was held:\n",
		 cname(p->cls), cname(n->cls));
	print_path(n->cls, p->cls, parent, true);
	ld_print("rule broken: all CPUs must take locks in one order.\n");
	ld_print("possible deadlock:  CPU0                     CPU1\n");
	ld_print("  lock(%s);                 lock(%s);\n", cname(n->cls), cname(p->cls));
	ld_print("  lock(%s);  <- waits       lock(%s);  <- waits\n", cname(p->cls),
		 cname(n->cls));
	ld_print("   *** DEADLOCK ***\n");
	report_end(c);
}

static void report_recursion(const struct lockdep_cpu *c, const struct held_lock *prev,
			     const struct held_lock *h)
{
	char headline[120];

	snprintf(headline, sizeof(headline), "possible recursive locking of '%s'", cname(h->cls));
	if (!report_begin(LOCKDEP_RECURSION, h->cls, 0, headline))
		return;
	ld_print("cpu%u takes '%s' (%s) but already holds '%s' (%s)\n", arch_cpu_id(),
		 cname(h->cls), h->lock->name, cname(prev->cls), prev->lock->name);
	print_site("  taking  at ", h->site);
	print_site("  holding from ", prev->site);
	print_class(h->cls);
	ld_print("rule broken: a CPU must not take a class it holds: the same lock spins on\n");
	ld_print("itself; two locks of one class have no order, and two CPUs can take them\n");
	ld_print("in opposite orders.\n");
	ld_print("possible deadlock:  CPU0\n");
	ld_print("  lock(%s);\n", cname(h->cls));
	ld_print("  lock(%s);\n", cname(h->cls));
	ld_print("   *** DEADLOCK ***\n");
	report_end(c);
}

/*
 * A lock with no class and no name was set up by neither spin_lock_init() nor SPINLOCK_INIT:
 * zeroed or stale memory (Linux: "trying to register non-static key"). Giving it a class of
 * its own would hide the bug, and a few of them would fill the class table.
 */
static void report_uninitialised(const struct lockdep_cpu *c, const struct spinlock *lock,
				 const struct lock_site *site)
{
	char headline[120];

	snprintf(headline, sizeof(headline), "lock at %p taken without spin_lock_init()",
		 (const void *)lock);
	if (!report_begin(LOCKDEP_UNINITIALISED, 0, 0, headline))
		return;
	ld_print("cpu%u takes a lock that was never initialised (no name, no class)\n",
		 arch_cpu_id());
	print_site("  at ", site);
	ld_print("rule broken: a lock is initialised (spin_lock_init(), SPINLOCK_INIT) before\n");
	ld_print("its first use; a zeroed one may be memory that was freed, reused or wiped.\n");
	report_end(c);
}

/* ---- checks ---- */

/* Graph lock held: usage bit just set on h's class; does it close an interrupt cycle? */
static void check_usage(const struct lockdep_cpu *c, const struct held_lock *h, int bit)
{
	unsigned int cls = h->cls, other;
	u8 parent[MAX_CLASSES];
	char how[160];

	if ((g.usage[cls] >> (bit ^ 1)) & 1) {
		report_inconsistent(c, h, bit ^ 1, bit);
		return;
	}
	if (bit == USED_IN_HARDIRQ) {
		other = graph_bfs(cls, true, HARDIRQ_ON, 0, parent);
		if (!other)
			return;
		snprintf(how, sizeof(how), "cpu%u takes '%s' in an interrupt, at %s:%d; it was "
			 "held while taking '%s' before", arch_cpu_id(), cname(cls), h->site->file,
			 h->site->line, cname(other));
		if (!report_irq_inversion(cls, other, how))
			return;
		print_path(cls, other, parent, true);
	} else {
		other = graph_bfs(cls, false, USED_IN_HARDIRQ, 0, parent);
		if (!other)
			return;
		snprintf(how, sizeof(how), "cpu%u holds '%s' with interrupts on, taken at %s:%d; "
			 "it was taken while '%s' was held before", arch_cpu_id(), cname(cls),
			 h->site->file, h->site->line, cname(other));
		if (!report_irq_inversion(other, cls, how))
			return;
		print_path(cls, other, parent, false);
	}
	report_end(c);
}

/* Set usage bit `bit` of h's class (the caller saw it clear) and check what it closes. */
static __noinline void mark_usage(const struct lockdep_cpu *c, const struct held_lock *h,
				  int bit, unsigned long flags)
{
	unsigned int cls = h->cls;

	if (!graph_lock(flags))
		return;
	if (!((g.usage[cls] >> bit) & 1)) {
		g.usage_site[cls][bit] = h->site;
		g.usage_cpu[cls][bit] = (u16)arch_cpu_id();
		WRITE_ONCE(g.usage[cls], g.usage[cls] | (u8)(1u << bit));
		check_usage(c, h, bit);
	}
	graph_unlock();
}

static inline bool has_usage(unsigned int cls, int bit)
{
	return (READ_ONCE(g.usage[cls]) >> bit) & 1;
}

/* Graph lock held: may p -> n join the graph? Adds it if so. */
static bool check_new_edge(const struct lockdep_cpu *c, const struct held_lock *p,
			   const struct held_lock *n)
{
	u8 parent[MAX_CLASSES], parent_s[MAX_CLASSES], parent_u[MAX_CLASSES];
	unsigned int s, u;
	char how[160];

	if (graph_bfs(n->cls, true, MATCH_CLASS, p->cls, parent)) {
		report_circular(c, p, n, parent);
		return false;
	}
	s = graph_bfs(p->cls, false, USED_IN_HARDIRQ, 0, parent_s);
	u = s ? graph_bfs(n->cls, true, HARDIRQ_ON, 0, parent_u) : 0;
	if (s && u) {
		snprintf(how, sizeof(how), "cpu%u takes '%s' at %s:%d while holding '%s' (from "
			 "%s:%d)", arch_cpu_id(), cname(n->cls), n->site->file, n->site->line,
			 cname(p->cls), p->site->file, p->site->line);
		if (report_irq_inversion(s, u, how)) {
			print_path(p->cls, s, parent_s, false);
			ld_print("  '%s' -> '%s': this acquisition\n", cname(p->cls), cname(n->cls));
			print_path(n->cls, u, parent_u, true);
			report_end(c);
		}
		return false;
	}
	set_bit_in(g.after[p->cls], n->cls);
	set_bit_in(g.before[n->cls], p->cls);
	g.nr_edges++;
	if (g.nr_edge_sites < MAX_EDGE_SITES)
		edge_sites[g.nr_edge_sites++] = (struct edge_site){
			(u8)p->cls, (u8)n->cls, (u16)arch_cpu_id(), p->site, n->site };
	return true;
}

/*
 * n is about to be taken (not a trylock): add p -> n for the locks of its context that it
 * nests in. As Linux's check_prevs_add(): the innermost held lock, and below it every
 * trylocked one down to the first plain acquisition (which already has its own edges).
 */
static void add_dependencies(const struct lockdep_cpu *c, const struct held_lock *n,
			     unsigned long flags)
{
	for (int i = (int)c->depth - 1; i >= 0; i--) {
		const struct held_lock *p = &c->held[i];
		bool ok;

		if (p->irq_ctx != n->irq_ctx)
			return;
		if (p->cls != n->cls && !has_bit(g.after[p->cls], n->cls)) {
			if (!graph_lock(flags))
				return;
			ok = has_bit(g.after[p->cls], n->cls) || check_new_edge(c, p, n);
			graph_unlock();
			if (!ok)
				return;
		}
		if (!p->trylock)
			return;
	}
}

static void check_recursion(const struct lockdep_cpu *c, const struct held_lock *h,
			    unsigned long flags)
{
	for (unsigned int i = 0; i < c->depth; i++) {
		if (c->held[i].cls != h->cls)
			continue;
		if (graph_lock(flags)) {
			report_recursion(c, &c->held[i], h);
			graph_unlock();
		}
		return;
	}
}

/* ---- entry points (kernel/spinlock.c) ---- */

/*
 * The trylock rule (Linux's, kernel/locking/lockdep.c mark_usage() and validate_chain()):
 * a trylock never waits, so it is never the waiting side of a deadlock. A trylock in an
 * interrupt does not make its class IN-HARDIRQ, and a trylock adds no dependency and is
 * not checked for recursion. Once it succeeded the lock is held like any other: taken with
 * interrupts on it makes its class HARDIRQ-ON, and plain acquisitions nested inside it get
 * an edge from it.
 */
static void validate_acquire(struct lockdep_cpu *c, struct spinlock *lock,
			     const struct lock_site *site, bool trylock, bool irqs_on,
			     unsigned long flags)
{
	unsigned int cls = READ_ONCE(lock->dep_class);
	struct held_lock *h;

	if (!cls && !lock->name) {
		if (graph_lock(flags)) {
			report_uninitialised(c, lock, site);
			graph_unlock();
		}
		return;
	}
	if (!cls && !(cls = register_lock(c, lock, NULL, flags)))
		return;
	if (c->depth == MAX_DEPTH) {
		if (graph_lock(flags)) {
			report_overflow(c, "locks held by one CPU", MAX_DEPTH);
			graph_unlock();
		}
		return;
	}
	h = &c->held[c->depth];
	*h = (struct held_lock){ lock, site, (u8)cls, trylock, irqs_on,
				 (u8)MIN(arch_in_irq(), 255u) };
	c->checked++;
	if (!trylock && h->irq_ctx && !has_usage(cls, USED_IN_HARDIRQ))
		mark_usage(c, h, USED_IN_HARDIRQ, flags);
	if (irqs_on && !has_usage(cls, HARDIRQ_ON))
		mark_usage(c, h, HARDIRQ_ON, flags);
	if (!trylock) {
		check_recursion(c, h, flags);
		add_dependencies(c, h, flags);
	}
	c->depth++;
}

void lockdep_acquire(struct spinlock *lock, const struct lock_site *site, bool trylock)
{
	struct lockdep_cpu *c;
	unsigned long flags;

	if (!READ_ONCE(debug_locks) || !(c = lockdep_enter(&flags)))
		return;
	validate_acquire(c, lock, site, trylock, !arch_irqs_disabled_flags(flags), flags);
	lockdep_leave(c, flags);
}

/*
 * Drop lock from this CPU's held locks (it may not be the innermost). If interrupts are on
 * now but were off when it was taken, it was held with interrupts on: HARDIRQ-ON, seen late
 * (Linux marks held locks when interrupts are enabled; here enabling is not hooked).
 */
void lockdep_release(struct spinlock *lock)
{
	struct lockdep_cpu *c;
	unsigned long flags;
	bool irqs_on;

	if (!READ_ONCE(debug_locks) || !(c = lockdep_enter(&flags)))
		return;
	irqs_on = !arch_irqs_disabled_flags(flags);
	for (int i = (int)c->depth - 1; i >= 0; i--) {
		struct held_lock *h = &c->held[i];

		if (h->lock != lock)
			continue;
		if (irqs_on && !h->irqs_on && !has_usage(h->cls, HARDIRQ_ON))
			mark_usage(c, h, HARDIRQ_ON, flags);
		if (i + 1 < (int)c->depth)	/* not the innermost: close the gap */
			memmove(h, h + 1, (c->depth - (unsigned int)i - 1) * sizeof(*h));
		c->depth--;
		break;
	}
	lockdep_leave(c, flags);
}

unsigned int lockdep_held_depth(void)
{
	return READ_ONCE(ld_cpu(arch_cpu_id())->depth);
}

void lockdep_truncate_held(unsigned int depth)
{
	unsigned long flags = arch_irq_save();
	struct lockdep_cpu *c = ld_cpu(arch_cpu_id());

	if (c->depth > depth)
		c->depth = depth;
	arch_irq_restore(flags);
}

/* ---- tests: expect a report ---- */

void lockdep_expect_begin(struct lockdep_expect *e)
{
	struct lockdep_cpu *c;
	unsigned long flags;

	memset(e, 0, sizeof(*e));
	e->held_depth = lockdep_held_depth();
	if (!(c = lockdep_enter(&flags)))
		return;
	if (graph_lock(flags)) {
		g_saved = g;
		expecting = e;
		memset(expect_cpus, 0, sizeof(expect_cpus));
		set_bit_in(expect_cpus, arch_cpu_id());
		graph_unlock();
	}
	lockdep_leave(c, flags);
}

void lockdep_expect_cpu(struct lockdep_expect *e, unsigned int cpu)
{
	struct lockdep_cpu *c;
	unsigned long flags;

	if (cpu >= MAX_CPUS || !(c = lockdep_enter(&flags)))
		return;
	if (graph_lock(flags)) {
		if (expecting == e)
			set_bit_in(expect_cpus, cpu);
		graph_unlock();
	}
	lockdep_leave(c, flags);
}

enum lockdep_rule lockdep_expect_end(struct lockdep_expect *e)
{
	struct lockdep_cpu *c;
	unsigned long flags;

	if ((c = lockdep_enter(&flags))) {
		if (graph_lock(flags)) {
			if (expecting == e) {
				g = g_saved;
				expecting = NULL;
			}
			graph_unlock();
		}
		lockdep_leave(c, flags);
	}
	lockdep_truncate_held(e->held_depth);
	return e->rule;
}

/* ---- summary ---- */

void lockdep_print_summary(void)
{
	u64 checked = 0;

	for (unsigned int cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpu_ptr(cpu))
			checked += READ_ONCE(ld_cpu(cpu)->checked);
	if (READ_ONCE(nr_reports))
		printk("lockdep: REPORTED a possible deadlock (then turned itself off): %s\n",
		       first_report);
	else if (!READ_ONCE(debug_locks))
		printk("lockdep: off (lockdep=0 or panic)\n");
	else
		printk("lockdep: %u lock classes, %u dependencies, %llu acquisitions validated: "
		       "no deadlock pattern seen\n", nr_classes, READ_ONCE(g.nr_edges),
		       (unsigned long long)checked);
}

#endif /* CONFIG_LOCKDEP */
