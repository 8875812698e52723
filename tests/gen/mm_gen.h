/*
 * The mm API generator: random programs of what a user of mm/ does (allocations, address
 * spaces, faults, pins, drains, per-CPU list settings, fault injection), run on the host
 * harness with pthreads as CPUs and checked against a small reference model after every step.
 * This header is the program: its operations, how they are generated, run and printed.
 * Not a benchmark, and not a second implementation of mm/: the model says what a caller may
 * see, never how mm/ does it (tests/gen/README.md has the design).
 */
#ifndef TESTS_GEN_MM_GEN_H
#define TESTS_GEN_MM_GEN_H

#include <stdio.h>
#include "mm/mm_test.h"
#include "mm/gup.h"

/* ---- sizes of a program's world ---- */

#define GEN_CPUS 4		/* CPUs with per-CPU lists in the machine; phases use 1..4 */
#define GEN_MMS 4		/* address-space slots */
#define GEN_BLOCKS 32		/* held-block slots (alloc_pages_node) */
#define GEN_GROUPS 2		/* "fill" slots: every page an allocation loop got */
#define GEN_PINS 16		/* held pin / reference slots */
#define GEN_PIN_MAX 64		/* pages per gup call */
#define GEN_MAX_OPS 512
#define GEN_WIN_BASE (1ull << 30)	/* every address space's window of generated addresses */
#define GEN_WIN_PAGES 4096u		/* 16 MiB: eight 2 MiB regions */
#define GEN_REGION_PAGES 512u
#define GEN_REGIONS (GEN_WIN_PAGES / GEN_REGION_PAGES)
#define GEN_FILL_MAX 24576u	/* pages one fill may hold */

/* The operations. Each takes its arguments from struct gen_op (which fields: gen_ops.c). */
enum gen_kind {
	GEN_ALLOC,		/* blk[slot] = alloc_pages_node(node, gfp, order) */
	GEN_FREE,		/* put the extra references, __free_pages(blk[slot]) */
	GEN_REF,		/* get_page (flags 1) or put_page of an extra reference */
	GEN_FILL,		/* grp[slot]: allocate order-`order` blocks until NULL */
	GEN_FREE_SOME,		/* free the last `len` blocks of grp[slot] */
	GEN_MM_CREATE,		/* mm[slot] = mm_create(node) */
	GEN_MM_DESTROY,
	GEN_MMAP,		/* mm_mmap_anon(mm, addr, len, flags: writable huge populate) */
	GEN_MUNMAP,		/* mm_munmap(mm, addr, len) */
	GEN_FAULT,		/* handle_mm_fault(mm, addr) */
	GEN_WRITE,		/* get_user_pages_fast(FOLL_WRITE), store a tag in each page, put */
	GEN_READ,		/* get_user_pages_fast(), read each page's tag, put */
	GEN_PIN,		/* pin[slot] = pin_user_pages[_fast] or get_user_pages_fast, held */
	GEN_UNPIN,		/* unpin_user_pages / put_user_pages of pin[slot] */
	GEN_DRAIN,		/* flags: local zone / one CPU / every CPU of a zone / the machine */
	GEN_PCP_DISABLE,	/* zone_pcp_disable(zone) */
	GEN_PCP_ENABLE,		/* zone_pcp_enable(zone), if disabled */
	GEN_PCP_UPDATE,		/* zone_pcp_update(node, len CPUs): high and batch */
	GEN_FAIL,		/* fail_page_alloc_configure(): on (flags 1) or off */
	GEN_VERIFY,		/* mm_verify(node) */
	GEN_DEFERRED_INIT,	/* deferred_init_memmap(node) */
	GEN_NR_KINDS
};

/* GEN_PIN flags */
#define GEN_PIN_WRITE	0x01	/* FOLL_WRITE */
#define GEN_PIN_LONG	0x02	/* FOLL_LONGTERM */
#define GEN_PIN_SLOW	0x04	/* pin_user_pages() (slow path only), else pin_user_pages_fast() */
#define GEN_PIN_GET	0x08	/* get_user_pages_fast(): a plain reference, not a pin */
/* GEN_MMAP flags */
#define GEN_MAP_WRITE	0x01
#define GEN_MAP_HUGE	0x02
#define GEN_MAP_POP	0x04
/* GEN_DRAIN flags */
enum { GEN_DRAIN_LOCAL, GEN_DRAIN_CPU, GEN_DRAIN_ZONE, GEN_DRAIN_MACHINE };

/*
 * One operation. `join`: it runs in the same phase as the op before it (a phase is a set of
 * ops that CPUs issue at once; ops of one CPU in a phase run in program order). Slots name
 * what earlier ops created; an op whose slot is empty (or, in a phase, owned by another CPU)
 * does nothing, so that any op can be deleted from a program and the rest still means
 * something (the shrinker relies on it).
 */
struct gen_op {
	u8 kind, cpu, join;
	u8 slot;	/* blk / grp / mm / pin slot, by kind */
	u8 mm;		/* mm slot of address ops and pins */
	u8 node;	/* node index; for pcp ops and drains: zone = node * MAX_NR_ZONES + zone */
	u8 order;
	u8 gfp;		/* index in gen_gfps[] */
	u8 flags;
	u32 addr;	/* page index in the window (GEN_MMAP/MUNMAP: see `wild`) */
	u32 len;	/* pages (or count, CPUs, percent: by kind) */
	u64 wild;	/* GEN_MMAP/MUNMAP with bad arguments: raw start (0: none), raw len in `wild_len` */
	u64 wild_len;
};

/* The machine a program runs on. */
struct gen_config {
	u8 nr_nodes;		/* 1 or 2 */
	u8 lock_model;		/* enum pcp_lock_model */
	u8 deferred;		/* built with only the first chunks initialised */
	u8 max_cpus;		/* most CPUs a phase uses (1: every step alone) */
};

struct gen_prog {
	u64 seed;
	struct gen_config cfg;
	unsigned int nr_ops;
	struct gen_op ops[GEN_MAX_OPS];
};

/* The gfp values programs use (index gen_op.gfp); names for printing. */
struct gen_gfp {
	gfp_t gfp;
	const char *name;
};
extern const struct gen_gfp gen_gfps[];
extern const unsigned int gen_nr_gfps;
extern const char *const gen_kind_names[GEN_NR_KINDS];

/* The tag a GEN_WRITE op i stores in the first and last word of its j-th page; the one a
 * GEN_ALLOC op i writes in its block's first and last word (a GEN_FILL: each block's first). */
#define GEN_TAG(i, j) (0x5441470000000000ull | ((u64)(i) << 16) | (u64)(j))
#define GEN_BLK_TAG(i) (0x424c4b0000000000ull | (u64)(i))

/* A page's tag words, as CPUs of a phase store and read them: user memory that several
 * CPUs may touch at once, so relaxed atomics (no data race for TSan; either value is
 * allowed), and no interleave point (the mm API's calls are the program's only ones). */
static inline void gen_store_tag(void *page, u64 tag)
{
	__atomic_store_n((u64 *)page, tag, __ATOMIC_RELAXED);
	__atomic_store_n((u64 *)page + PAGE_SIZE / 8 - 1, tag, __ATOMIC_RELAXED);
}

static inline u64 gen_load_tag(const void *page)
{
	return __atomic_load_n((const u64 *)page, __ATOMIC_RELAXED);
}

/* ---- generating (gen_prog.c) ---- */

/* What a search may vary: programs of nr_ops steps, phases of up to max_cpus CPUs. */
struct gen_params {
	unsigned int nr_ops;
	unsigned int max_cpus;	/* 0: chosen per seed (1..GEN_CPUS) */
	bool verify_alone;	/* no mm_verify() beside the deferred init (TSan: mm_verify()
				 * reads what the init writes, by design "not quiet") */
};
/* The program of seed: the same seed gives the same program, always. */
void gen_program(struct gen_prog *p, u64 seed, const struct gen_params *params);
/* A program from fuzzer bytes (one CPU, every step alone): the libFuzzer target's decoder. */
void gen_decode(struct gen_prog *p, const u8 *data, size_t size);
/* A phase: ops [first, first + n); returns n (ops up to the next one that does not join). */
unsigned int gen_phase_len(const struct gen_prog *p, unsigned int first);
/* A program as text (the shrunk program of a report), and back: 0, or -1. */
void gen_program_write(FILE *f, const struct gen_prog *p);
int gen_program_read(FILE *f, struct gen_prog *p);
/* Print one op as a line (the failure report and -v). */
void gen_op_describe(const struct gen_prog *p, unsigned int i, char *buf, size_t len);

/* ---- running (gen_run.c, with the model of gen_model.c) ---- */

enum gen_sched {
	GEN_SCHED_FREE,		/* phases on free-running threads (TSan sees the races) */
	GEN_SCHED_PCT,		/* phases under the seeded PCT scheduler: replays exactly */
	GEN_SCHED_SERIAL,	/* every op of a phase in turn, on its own CPU: deterministic */
};

struct gen_run_opts {
	enum gen_sched sched;
	u64 pct_seed;
	unsigned int pct_depth;
	const u64 *phase_k;	/* PCT: each phase's k, by its first op (a run at depth 1
				 * measured them); NULL: measure now */
	u64 *phase_k_out;	/* where this run's phases' steps go, or NULL */
	bool verbose;
};

/* How a run ended. fail_class names the check (or crash) so that shrinking keeps the bug. */
struct gen_verdict {
	bool failed;
	int op;			/* index of the op after which the failing check ran (-1: setup) */
	char fail_class[64];
	char message[512];
	char check_pre[256];	/* the printed test: what it reads before the failing op */
	char check_c[768];	/* ... and its check after it */
	u64 pct_steps;		/* steps of the run's phases (PCT) */
	bool free_sched;	/* failed on free-running threads, after its PCT runs passed */
};

/*
 * Run the program once on a fresh machine and check every step. A model failure fills v and
 * returns; a crash (sanitizer, panic) ends the process: gen_main.c runs each program in a
 * child process.
 */
void gen_run(const struct gen_prog *p, const struct gen_run_opts *o, struct gen_verdict *v);

/* The machine gen_run() builds for a program (the printed tests build it too); NULL if it
 * could not be built. One at a time. */
struct mm_machine *gen_machine_create(const struct gen_config *c);
void gen_machine_destroy(void);
/* run_on_cpus() for a step's CPU threads, which each call gen_wait_cpus() first: they start
 * once all of them are online (tests/gen/gen_run.c says why). */
void gen_run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size);
void gen_wait_cpus(void);

/* ---- printing a failing program as a test case (gen_emit.c) ---- */

void gen_emit_test(FILE *f, const struct gen_prog *p, const struct gen_run_opts *o,
		   const struct gen_verdict *v);

/* ---- the driver: mmtest --gen (gen_main.c) ---- */

int gen_main(int argc, char **argv);

#endif
