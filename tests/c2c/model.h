/*
 * The coherence model behind `make c2c`: one MESI cache per CPU, of unbounded size, and a
 * merge that replays the CPUs' accesses in the order of their modelled time. Knows nothing
 * of QEMU: the plugin (tests/c2c/plugin.c) feeds it from the guest, test_model.c by hand.
 */
#ifndef C2C_MODEL_H
#define C2C_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define C2C_MAX_CPUS 256	/* QEMU 7.2 boots 255; a line's sharers are a 256-bit mask */
#define C2C_LINE_SHIFT 6	/* 64-byte lines */
#define C2C_LINE_PCS 6		/* code locations kept per line, the busiest first */
#define C2C_MAX_MOVES (1u << 20)	/* moves of lines kept per window (struct c2c_move) */

/* A set of caches (or CPUs): one bit each, C2C_MAX_CPUS of them. */
#define C2C_MASK_WORDS (C2C_MAX_CPUS / 64)
struct c2c_mask {
	uint64_t w[C2C_MASK_WORDS];
};

static inline void c2c_mask_set(struct c2c_mask *s, unsigned int bit)
{
	s->w[bit / 64] |= 1ull << (bit % 64);
}

static inline bool c2c_mask_test(const struct c2c_mask *s, unsigned int bit)
{
	return s->w[bit / 64] >> (bit % 64) & 1;
}

static inline bool c2c_mask_empty(const struct c2c_mask *s)
{
	uint64_t any = 0;

	for (int i = 0; i < C2C_MASK_WORDS; i++)
		any |= s->w[i];
	return !any;
}

static inline unsigned int c2c_mask_weight(const struct c2c_mask *s)
{
	unsigned int n = 0;

	for (int i = 0; i < C2C_MASK_WORDS; i++)
		n += (unsigned int)__builtin_popcountll(s->w[i]);
	return n;
}

/*
 * One access, as a CPU's queue holds it: the CPU's instruction count when it ran (its own
 * clock, from its begin marker), the kind, the physical line, the instruction (an index
 * the feeder gives meaning to: the plugin's table of guest PCs) and the byte of the line
 * the access began at (which field it touched: tests/c2c/layout.py).
 */
enum c2c_kind {
	C2C_LOAD, C2C_STORE,
	C2C_ACQUIRE,			/* a store by xchg that took a lock (model.c: acquire()) */
	C2C_BEGIN, C2C_END,		/* the CPU's part of the window */
	C2C_UNCOUNTED, C2C_COUNTED,	/* a warm-up: accesses change the caches only */
	C2C_SYNC,			/* a barrier in modelled time */
	C2C_SPIN, C2C_SPIN_END,		/* a pause loop on `line` (and insn - 1, if not 0) began;
					 * it ended (model.c: wake_waiters()) */
};
struct c2c_event {
	uint64_t icount : 54, kind : 4, off : 6;	/* icount: 2^54 fs of the plugin's clock, 18 s */
	uint32_t line;
	uint32_t insn;
};

/* What one access did to its line: the outcome classes of the report. */
enum c2c_outcome {
	C2C_HIT,		/* the line was in this CPU's cache in a state that allows it */
	C2C_COLD,		/* no cache had it: a fill from memory */
	C2C_HITM,		/* another CPU had it Modified: a dirty transfer (perf c2c's HITM) */
	C2C_CLEAN,		/* another CPU had it clean: a clean transfer (LLC or other socket) */
	C2C_UPGRADE,		/* a store to a line this CPU shares: the other copies invalidated */
	C2C_NR_OUTCOMES
};

/*
 * The modelled machine, in picoseconds (integers, so that the replay is exact): what one
 * unit of an event's clock costs (ps_per_insn / clock_div ps: the plugin's clock counts
 * femtoseconds of instruction time, tests count instructions), and each outcome, within a
 * socket and across sockets. A cold store to the line after the one the CPU's previous cold
 * store filled is a stream (a page being zeroed): `mlp` of them are in flight at once, so
 * each costs the fill's latency / mlp. The values and their sources: tests/c2c/machines/.
 */
struct c2c_params {
	unsigned int nr_cpus, sockets;		/* CPU c is on socket c * sockets / nr_cpus */
	unsigned int threads;			/* CPUs per core, sharing its caches (0: 1) */
	uint64_t ps_per_insn, clock_div;	/* clock_div 0: 1 */
	uint64_t ps[C2C_NR_OUTCOMES][2];	/* [outcome][0: same socket, 1: other socket] */
	unsigned int mlp;			/* streaming cold stores in flight (0: 1) */
};

/* Counters of one CPU, or of one line, or of the window: the same set. */
struct c2c_counts {
	uint64_t loads, stores;
	uint64_t outcome[C2C_NR_OUTCOMES][2];	/* loads and stores together; [1]: cross-socket */
	uint64_t hitm_loads;			/* HITM that were loads: perf c2c's "HITM" */
	uint64_t invalidated;			/* other CPUs' copies this access invalidated */
	uint64_t wait_ps;			/* waiting for a line another transfer held busy */
	uint64_t streamed;			/* cold stores that streamed (see mlp) */
};

/* Transfers: the line came from another CPU's cache (HITM or clean), within or across. */
static inline uint64_t c2c_transfers(const struct c2c_counts *c)
{
	return c->outcome[C2C_HITM][0] + c->outcome[C2C_HITM][1] +
	       c->outcome[C2C_CLEAN][0] + c->outcome[C2C_CLEAN][1];
}

static inline uint64_t c2c_cross(const struct c2c_counts *c)
{
	uint64_t n = 0;

	for (int o = C2C_COLD; o < C2C_NR_OUTCOMES; o++)
		n += c->outcome[o][1];
	return n;
}

/* A line's state and history in one window (the model's hash table holds them). */
struct c2c_line {
	uint32_t line;				/* physical address >> C2C_LINE_SHIFT; 0: empty slot */
	bool dirty;				/* the one sharer holds it Modified */
	struct c2c_mask sharers;		/* caches that hold it (M/E: one, S: any): a bit per
						 * core (model.c: cache_of()) */
	struct c2c_mask touched;		/* CPUs that accessed it in this window */
	uint64_t busy_until;			/* ps: the last transfer of it ends then */
	uint32_t version;			/* stores to it so far: what a spinner waits on */
	uint16_t holder;			/* the CPU (+1) that took it as a lock, until it stores */
	uint16_t last;				/* the CPU (+1) that accessed it last: it holds a copy,
						 * so a transfer comes from it */
	struct c2c_counts n;
	struct {
		uint32_t insn, accesses, transfers;
		uint64_t bytes;			/* the bytes of the line it began accesses at */
	} pc[C2C_LINE_PCS];
	uint32_t pc_other;			/* accesses by instructions that did not fit */
};

struct c2c_cpu {
	enum { C2C_UNBEGUN, C2C_ACTIVE, C2C_DONE } state;
	uint64_t now;				/* ps: modelled time of its last access */
	uint64_t icount;			/* its clock at that access */
	uint64_t end;				/* ps: modelled time at its end marker */
	bool uncounted;				/* warming up: accesses change the caches only */
	uint64_t counted_from;			/* ps: when it last began counting */
	uint64_t counted_ps;			/* ps it spent counting, up to its end marker */
	uint64_t instructions;			/* icount at its end marker */
	uint32_t seen[2], seen_version[2];	/* its last two lines accessed (+1), the versions then */
	uint32_t wait[2];			/* waiting until one of these (+1) changes; 0, 0: not */
	bool forced;				/* its next acquire goes ahead whoever holds the lock */
	uint32_t last_cold_store;		/* the line (+1) its last cold store filled */
	struct c2c_counts n;
};

/*
 * A CPU's queue: one producer (the CPU, appending) and one consumer (the merge), lock-free:
 * events go into chunks; `pushed` and `clock` are published with release stores, read with
 * acquire loads. `clock` is the producer's instruction count, which bounds the time of the
 * events it has not pushed yet (see c2c_merge()).
 */
#define C2C_CHUNK_EVENTS 16384
struct c2c_chunk {
	struct c2c_chunk *next;
	struct c2c_event ev[C2C_CHUNK_EVENTS];
};
struct c2c_queue {
	/* producer side */
	struct c2c_chunk *tail;
	uint64_t pushed, clock;
	/* consumer side */
	struct c2c_chunk *head;
	uint64_t head_base, taken;		/* head->ev[0] is event number head_base; taken is
						 * read racily by the plugin's memory guard */
};

/*
 * What the merge replayed, access by access, for a checker written apart from this file
 * (tests/c2c/mesi_check.py): the CPU, a load or a store, the line, whether it was counted,
 * and the outcome the model gave it.
 */
typedef void c2c_log_fn(void *arg, unsigned int cpu, bool store, uint32_t line, bool counted,
			enum c2c_outcome o, bool cross);

/*
 * One counted access that moved a line or took it from other caches (HITM, clean or
 * upgrade), as the window's history keeps it: for the pictures of who held a hot line when
 * (tests/c2c/pictures.py). `from`: the CPU that had it (for an upgrade, the last other one).
 */
struct c2c_move {
	uint64_t t;				/* ps: when the access completed */
	uint32_t line;
	uint16_t from, to;
	uint8_t outcome, store;
};

struct c2c_model {
	struct c2c_params p;
	c2c_log_fn *log;			/* each access replayed, or NULL */
	void *log_arg;
	struct c2c_mask local[C2C_MAX_CPUS];	/* [socket]: the caches on it */
	struct c2c_cpu cpu[C2C_MAX_CPUS];
	struct c2c_queue q[C2C_MAX_CPUS];
	struct c2c_line *lines;			/* open-addressing hash, nr_slots entries */
	uint64_t nr_slots, nr_lines;
	uint64_t max_queued;			/* events waiting in all queues at most (memory) */
	uint64_t cut;				/* CPUs that began but had not ended at the window's end */
	unsigned int nr_waiting;		/* CPUs waiting for a line to change */
	uint64_t spins, spins_unanswered;	/* pause loops; those no store ended (c2c_merge()) */
	uint64_t lock_waits, forced;		/* acquires that waited for a holder; forced through */
	struct c2c_counts total;
	uint64_t *pairs;			/* counted transfers, [from * nr_cpus + to] */
	struct c2c_move *moves;			/* the window's first max_moves moves, in order */
	uint64_t nr_moves, moves_size, max_moves;	/* max_moves: C2C_MAX_MOVES unless the feeder
						 * sets it (0: none) */
	uint64_t moves_dropped;			/* moves past max_moves */
};

int c2c_model_init(struct c2c_model *m, const struct c2c_params *p);
void c2c_model_free(struct c2c_model *m);
/* Forget the lines and counters (a new window); the queues must be empty. */
void c2c_window_reset(struct c2c_model *m);

/* Producer side, on CPU cpu's own thread only. */
void c2c_push(struct c2c_model *m, unsigned int cpu, struct c2c_event ev);
static inline void c2c_publish_clock(struct c2c_model *m, unsigned int cpu, uint64_t icount)
{
	__atomic_store_n(&m->q[cpu].clock, icount, __ATOMIC_RELEASE);
}

/*
 * Consumer side, on one thread: replay every event whose turn has surely come. Returns true
 * when the window is complete (every CPU that began has ended; with `closing`, also CPUs
 * that never began, or began and pushed nothing more, count as done).
 */
bool c2c_merge(struct c2c_model *m, bool closing);

static inline unsigned int c2c_socket(const struct c2c_params *p, unsigned int cpu)
{
	return cpu * p->sockets / p->nr_cpus;
}

/* ---- output.c: the counts as JSON lines (tests/c2c/report.py reads them) ---- */

extern const char *const c2c_outcome_names[C2C_NR_OUTCOMES];
struct c2c_output {
	FILE *out;
	unsigned int top_lines;			/* lines written with their code locations */
	uint64_t (*pc_of)(void *arg, uint32_t insn);	/* an event's insn -> the guest PC */
	void *arg;
};
void c2c_write_window(const struct c2c_output *o, const struct c2c_model *m, unsigned int window,
		      bool overflowed);
/*
 * Instruction classes, each with its own time (plugin.c, "Instruction time"): a CPU's clock
 * in a trace counts each; cost_fs[class] is one's time in femtoseconds.
 */
enum c2c_iclass {
	C2C_I_PLAIN, C2C_I_LOCK, C2C_I_XCHG, C2C_I_PUSHF, C2C_I_POPF, C2C_I_CLI, C2C_I_STI,
	C2C_I_STRING_BYTE,		/* a byte stored or copied by rep stos/movs */
	C2C_NR_ICLASSES
};
extern const char *const c2c_iclass_names[C2C_NR_ICLASSES];

/* One event of a trace (the plugin's trace=DIR: DIR/wNNN.cpuNNN.bin.zst), as the model got it. */
struct c2c_trace_rec {
	uint8_t kind, off, pad[2];	/* off: c2c_event's */
	uint32_t line, insn;
	uint32_t n[C2C_NR_ICLASSES];	/* the CPU's clock, per class, from its begin marker */
};

/* The machine as one JSON line: latencies, mlp, and each instruction class's time. */
void c2c_write_params(FILE *out, const struct c2c_params *p, const uint64_t *cost_fs);
/*
 * A machine's key=value argument (0, or -1 if it is none): cpus=N (the machine's, at least
 * QEMU's), sockets=N, threads=N, mlp=N, cost_<class>=FS, <outcome>=PS_SAME:PS_OTHER (e.g.
 * hitm=40000:103000).
 */
int c2c_machine_arg(struct c2c_params *p, uint64_t *cost_fs, const char *arg);

#endif
