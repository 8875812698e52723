/*
 * What the generator's runner (gen_run.c), model (gen_model.c) and test printer (gen_emit.c)
 * share: the machine, the handles ops create (pages, address spaces, pins), each op's result
 * and what the model expected of it. Not for tests: they use mm_gen.h.
 */
#ifndef TESTS_GEN_GEN_INTERNAL_H
#define TESTS_GEN_GEN_INTERNAL_H

#include "tests/gen/mm_gen.h"
#include "mm/memblock.h"
#include "kernel/smp.h"
#include "mm/fail_page_alloc.h"

#define GEN_NODE_ZONES (MAX_NUMA_NODES * MAX_NR_ZONES)

/* Its RAM: ZONE_DMA and ZONE_DMA32 low, ZONE_NORMAL above 4 GiB (node 1's, with two nodes).
 * A machine with a deferred init has 104 MiB more DMA32: 30 chunks to initialise, so that the
 * deferred init lasts long enough for other CPUs to meet it. */
#define GEN_LO_BASE (8ull << 20)
#define GEN_LO_SIZE(deferred) ((deferred) ? 136ull << 20 : 32ull << 20)
#define GEN_HI_BASE (4ull << 30)
#define GEN_HI_SIZE (24ull << 20)

/* The machine: one node, or two (CPUs 0 and 2 on node 0, 1 and 3 on node 1). */
struct gen_world {
	struct mm_machine m;
	struct pglist_data nodes[2];
	struct memblock mb;
	u8 cpu_node[MAX_CPUS];
};
extern struct gen_world gen_world;

static inline struct pglist_data *gen_node(unsigned int i)
{
	return gen_world.m.node[i < gen_world.m.nr_nodes ? i : 0];
}

/* zone id (node * MAX_NR_ZONES + zone) -> the zone, NULL if it has no per-CPU lists */
static inline struct zone *gen_zone(unsigned int id)
{
	unsigned int n = id / MAX_NR_ZONES, z = id % MAX_NR_ZONES;

	if (n >= gen_world.m.nr_nodes)
		return NULL;
	return gen_world.m.node[n]->node_zones[z].pcp ? &gen_world.m.node[n]->node_zones[z] : NULL;
}

/* ---- handles: what ops created, written only by the CPU that runs the op ---- */

struct h_block {
	struct page *page;	/* NULL: empty slot */
	u8 order, refs;		/* refs: get_page()s not yet put */
	u64 tag;		/* written in the block's first and last word */
};

struct h_group {
	struct page **pages;
	u32 n;
	u8 order;
};

struct h_pin {
	struct page *pages[GEN_PIN_MAX];
	u32 n;			/* 0: empty slot */
	u8 mm, flags;		/* GEN_PIN_* */
	u32 addr;
};

struct gen_handles {
	struct h_block blk[GEN_BLOCKS];
	struct h_group grp[GEN_GROUPS];
	struct h_pin pin[GEN_PINS];
	struct mm_struct *mm[GEN_MMS];
};
extern struct gen_handles gen_h;

/* ---- an op's result, and what the model expected (the printed test checks the same) ---- */

enum gen_exp_kind {
	EXP_NONE,	/* nothing to check (or not exactly) */
	EXP_EQ,		/* ret == a */
	EXP_RANGE,	/* a <= ret <= b, or ret == c when c != 0 (an errno) */
	EXP_NULL,	/* the allocation returns NULL */
	EXP_NONNULL,
};

struct gen_exp {
	u8 kind;
	long a, b, c;
};

struct op_res {
	bool ran;		/* false: a no-op (empty slot, or another CPU's in this phase) */
	long ret;
	struct page *page;	/* GEN_ALLOC */
	u64 inj;		/* fail_page_alloc failures on its CPU during the op (alone) */
	u64 tag;		/* GEN_ALLOC: the tag written; GEN_FREE: the one expected */
	u64 bad_words;		/* GEN_ALLOC: nonzero words of a __GFP_ZERO block; GEN_FREE,
				 * GEN_FREE_SOME: tag words found changed */
	struct gen_exp exp;
	struct page **fill;	/* GEN_FILL: its blocks (ret of them) */
	/* (cleared up to here before each run of the op) */
	struct page *pages[GEN_PIN_MAX];	/* GEN_WRITE, GEN_READ, GEN_PIN */
	u64 seen[GEN_PIN_MAX];			/* GEN_READ, GEN_PIN: each page's tag as read */
};
extern struct op_res gen_res[GEN_MAX_OPS];
/* If set, gen_run() writes the first op of each step there (a crash's last step). */
extern volatile int *gen_progress;



/* mm_mmap_anon()'s argument rules, as Linux's: aligned to the page size (2 MiB for huge), not
 * empty, inside user space, no wrap. */
static inline bool gen_mmap_args_ok(u64 start, u64 len, bool huge)
{
	u64 step = huge ? PT_LEVEL_SIZE(2) : PAGE_SIZE;

	return len && !(start % step) && !(len % step) && start + len >= start &&
	       start + len <= USER_VA_END;
}

/* The range a GEN_MMAP / GEN_MUNMAP op names, in bytes. */
static inline void gen_op_range(const struct gen_op *op, u64 *start, u64 *len)
{
	*start = op->wild ? op->wild : GEN_WIN_BASE + (u64)op->addr * PAGE_SIZE;
	*len = op->wild ? op->wild_len : (u64)op->len * PAGE_SIZE;
}

/* A valid mapping outside the window: never made (the model follows the window only). */
static inline bool gen_mmap_outside(const struct gen_op *op)
{
	u64 start, len;

	gen_op_range(op, &start, &len);
	return gen_mmap_args_ok(start, len, op->flags & GEN_MAP_HUGE) &&
	       (start < GEN_WIN_BASE || start + len > GEN_WIN_BASE + (u64)GEN_WIN_PAGES * PAGE_SIZE);
}

/* Arrays of fills replaced by a later fill of their slot: freed after the step's checks. */
void gen_free_old_fills(void);

/* Run op i on this CPU (a phase's thread, or the main thread for an op alone). */
void gen_exec_op(const struct gen_prog *p, unsigned int i);

/* ---- the model (gen_model.c) ---- */

/* What the phase [first, first + n) may do, decided before it runs: ops that will do nothing
 * (static rules: one CPU per slot, one mapping change per shared address space, ...). */
struct gen_plan {
	unsigned int first, n;
	bool skip[GEN_MAX_OPS];	/* by op index */
	bool alone;		/* one op, or the serial schedule */
};

void model_begin(const struct gen_prog *p, const struct gen_run_opts *o, struct gen_verdict *v);
void model_plan(struct gen_plan *pl);
void model_before(const struct gen_plan *pl);
/* After the phase ran: check every op's result and the state; false if something failed. */
bool model_after(const struct gen_plan *pl);
/* Release everything (printed as the test's last lines too) and check nothing was lost. */
bool model_finish(void);
/* Full check of every address space (probe every page of the window), as at the end. */
bool model_full_check(int op);

/* Failure: sets the verdict (first failure wins); `c_check` is the printed test's check. */
__printf(4, 5) void gen_fail(int op, const char *cls, const char *c_check, const char *fmt, ...);
bool gen_failed(void);

/* Reading one CPU's fail_page_alloc counter from the main thread. */
u64 gen_cpu_injected(unsigned int cpu);

#endif
