/*
 * `make c2c`'s QEMU plugin: it sees every guest load and store, queues those made inside the
 * guest's windows (tests/c2c/c2c_mark.h) per vCPU, and a thread of its own replays them
 * through the coherence model (model.c); each window's counts go to out=FILE as one JSON
 * line, which tests/c2c/report.py reads. Not part of the kernel: QEMU loads it (-plugin).
 */
#include <qemu-plugin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/c2c/c2c_mark.h"
#include "tests/c2c/model.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/*
 * The modelled machine: plugin arguments, which tests/c2c/machine.py writes from a machine
 * file (tests/c2c/machines/, every value with its source or its range). The defaults are
 * the E5-2630 v4's (e5-2630v4.machine) with its nominal instruction costs.
 */
static struct c2c_params params = {
	.sockets = 2,
	.ps_per_insn = 1,
	.clock_div = 1000,		/* the clock counts femtoseconds */
	.ps = {
		[C2C_HIT] = { 0, 0 },
		[C2C_COLD] = { 100000, 100000 },
		[C2C_HITM] = { 40000, 103000 },
		[C2C_CLEAN] = { 35000, 103000 },
		[C2C_UPGRADE] = { 35000, 103000 },
	},
	.mlp = 1,
};

/*
 * Instruction time. Each guest instruction is counted in its class, and a CPU's clock is a
 * count per class (struct clk); its time is sum(count[k] * cost_fs[k]) femtoseconds. Plain
 * instructions cost the machine's cycles per instruction; a locked read-modify-write, an
 * xchg with memory, pushf, popf, cli and sti cost their own (published tables); a rep
 * stos/movs iteration counts its bytes, at the string engine's bytes per cycle. The counts,
 * not the time, go to a trace (trace=DIR), so the replay (tests/c2c/replay.c) can cost them again.
 */
static uint64_t cost_fs[C2C_NR_ICLASSES] = { 454545, 8636364, 8636364, 454545, 4090909, 2272727, 2272727, 14205 };

struct clk {
	int64_t n[C2C_NR_ICLASSES];
};

static void clk_add(struct clk *a, const struct clk *b)
{
	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		a->n[k] += b->n[k];
}

static struct clk clk_sub(struct clk a, const struct clk *b)
{
	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		a.n[k] -= b->n[k];
	return a;
}

static int64_t clk_fs(const struct clk *a)
{
	int64_t fs = 0;

	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		fs += a->n[k] * (int64_t)cost_fs[k];
	return fs;
}

#define CLK_NEVER ((struct clk){ { 1000000000000ll } })	/* later than any clock: 10^12 instructions */

/* One access or marker on its way out, with the clock it happened at. */
struct pending {
	struct c2c_event ev;
	struct clk at;
};

struct vcpu {
	unsigned int window;		/* the window it began, while it records; 0: not recording */
	unsigned int ended;		/* the last window it ended (it begins each window once) */
	struct clk tb_base;		/* its clock at the first instruction of the current block */
	struct clk next;		/* ... and at the first instruction of the next */
	/*
	 * Clock values here are the guest's; what goes out is that less `skew`, the
	 * instructions of failed attempts and waits dropped so far, which the model must not
	 * count. While something is held back, the clock published for the merge's bound stays
	 * at `pending_from`, where the held item will go.
	 */
	struct clk skew, pending_from;	/* pending_from: CLK_NEVER when nothing is held */
	uint32_t last_line;		/* of its last access pushed (+1) */
	uint32_t loaded[2];		/* the last two lines (+1) it loaded since its last store */
	enum { NOT_SPINNING, SPIN_LOOP, SPIN_LOCK } spinning;
	struct clk spin_from;		/* where the current pause loop or lock wait began */
	bool reload;			/* `reloaded` holds the loop's latest reload */
	bool held, held_cas;		/* `held`, an xchg or a cmpxchg, waits for the next event */
	bool in_tick;			/* inside the timer interrupt (dropped: see tick_enter()) */
	struct clk tick_from;
	struct pending reloaded, held_ev;
	FILE *trace;			/* this window's trace of it (trace=DIR), or NULL */
	char *trace_buf;
} __attribute__((aligned(64)));

/* What the plugin knows of a translated block and of its instructions (callbacks' udata). */
struct block_info {
	struct clk n;			/* its instructions, by class */
};
struct insn_info {
	uint32_t id;			/* index into pcs[] */
	uint16_t atomic;		/* atomic_kind() */
	struct clk before;		/* the block's instructions before this one, by class */
};

static struct vcpu vcpus[C2C_MAX_CPUS];
static struct c2c_model model;
static FILE *out;
static unsigned int top_lines = 64;	/* lines whose code locations are written */
static uint64_t tick_entry;		/* the timer interrupt's entry (tick=ADDR), or 0 */
/*
 * entry=ADDR: count every vCPU's instructions from reset and print the count when a CPU
 * first runs ADDR (kmain): a run that repeats exactly reaches it at the same count.
 */
static uint64_t entry_addr, insns_from_reset;
static bool entry_seen;
/*
 * The queues hold at most max_events (max_events=N; 16 bytes each) not yet replayed: past
 * that a window stops recording and is reported as overflowed, rather than QEMU taking the
 * host's memory (a CPU spinning without pause in single-threaded TCG queues a load per turn).
 */
static uint64_t max_events = 100000000;
/* Moves of lines kept per window for the pictures (struct c2c_move, 16 bytes each). */
static uint64_t max_moves = C2C_MAX_MOVES;
static bool overflowed;			/* this window (atomic) */

/* The window: IDLE -> OPEN (begin marker) -> CLOSING (end marker) -> CLOSED (merged) -> IDLE. */
static enum { IDLE, OPEN, CLOSING, CLOSED } state;
static unsigned int window_nr, open_window;	/* open_window: window_nr while OPEN or CLOSING, else 0 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/*
 * Guest PCs of the instructions that access memory: an event's insn is an index into pcs[].
 * Written when QEMU translates a block (any vCPU thread), read when a window is written out.
 */
static pthread_mutex_t insn_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *pcs;			/* [id]: the guest PC */
static uint32_t *slots;			/* open addressing over pcs: id + 1, 0 for empty */
static uint32_t nr_pcs, nr_slots;

static uint32_t pc_slot(uint64_t pc, uint32_t nr)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 32) & (nr - 1);
}

/* The id of pc, a new one if pc is new; insn_lock held. */
static uint32_t __insn_id(uint64_t pc)
{
	uint32_t s;

	if (2 * (nr_pcs + 1) > nr_slots) {	/* grow: the table to half the slots */
		uint32_t nr = nr_slots ? 2 * nr_slots : 8192;

		free(slots);
		slots = calloc(nr, sizeof(*slots));
		pcs = realloc(pcs, nr / 2 * sizeof(*pcs));
		if (!slots || !pcs)
			abort();
		nr_slots = nr;
		for (uint32_t id = 0; id < nr_pcs; id++) {
			for (s = pc_slot(pcs[id], nr); slots[s]; s = (s + 1) & (nr - 1))
				;
			slots[s] = id + 1;
		}
	}
	for (s = pc_slot(pc, nr_slots); slots[s]; s = (s + 1) & (nr_slots - 1))
		if (pcs[slots[s] - 1] == pc)
			return slots[s] - 1;
	pcs[nr_pcs] = pc;
	slots[s] = nr_pcs + 1;
	return nr_pcs++;
}

static uint64_t insn_pc(uint32_t id)
{
	uint64_t pc;

	pthread_mutex_lock(&insn_lock);
	pc = pcs[id];
	pthread_mutex_unlock(&insn_lock);
	return pc;
}

/* ---- what each vCPU does: count its instructions, queue its accesses ---- */

static bool recording(const struct vcpu *v)
{
	return v->window && v->window == __atomic_load_n(&open_window, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&overflowed, __ATOMIC_RELAXED);
}

/* Every 4096 events a CPU pushes: are too many waiting for the merge? */
static void count_pushed(unsigned int cpu)
{
	uint64_t queued = 0;

	if (model.q[cpu].pushed % 4096)
		return;
	for (unsigned int c = 0; c < model.p.nr_cpus; c++)
		queued += __atomic_load_n(&model.q[c].pushed, __ATOMIC_ACQUIRE) -
			  __atomic_load_n(&model.q[c].taken, __ATOMIC_RELAXED);
	if (queued > max_events)
		__atomic_store_n(&overflowed, true, __ATOMIC_RELAXED);
}

/* At each block: the vCPU's clock moves on by the block's instructions. */
static void block_exec(unsigned int cpu, void *udata)
{
	const struct block_info *blk = udata;
	struct vcpu *v = &vcpus[cpu];
	const struct clk *held_at;
	struct clk out;

	if (!recording(v))
		return;
	v->tb_base = v->next;
	clk_add(&v->next, &blk->n);
	held_at = v->in_tick && clk_fs(&v->tick_from) < clk_fs(&v->pending_from) ? &v->tick_from
										   : &v->pending_from;
	out = clk_sub(clk_fs(&v->tb_base) < clk_fs(held_at) ? v->tb_base : *held_at, &v->skew);
	c2c_publish_clock(&model, cpu, (uint64_t)clk_fs(&out));
}

/* The clock at an instruction of the current block. */
static struct clk clk_at(const struct vcpu *v, const struct insn_info *in)
{
	struct clk at = v->tb_base;

	clk_add(&at, &in->before);
	return at;
}

static void trace_write(struct vcpu *v, const struct c2c_event *ev, const struct clk *at)
{
	struct c2c_trace_rec r = { .kind = (uint8_t)ev->kind, .off = (uint8_t)ev->off, .line = ev->line,
				   .insn = ev->insn };

	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		r.n[k] = (uint32_t)at->n[k];
	fwrite(&r, sizeof(r), 1, v->trace);
}

/* Queue an event for the model (its clock in fs), and trace it. */
static void push(unsigned int cpu, struct vcpu *v, struct c2c_event ev, const struct clk *at)
{
	ev.icount = (uint64_t)clk_fs(at);
	c2c_push(&model, cpu, ev);
	if (v->trace)
		trace_write(v, &ev, at);
	count_pushed(cpu);
}

/*
 * Waiting, as the model wants it (model.c: "Spinning", "Locks"). An xchg that takes a lock
 * is held back one event: if a pause comes next it failed, and it is dropped, and so is the
 * pause loop after it, reloads and further failed xchgs included, until an xchg that is not
 * followed by a pause: the one that took the lock, which goes out as an acquire, at the
 * clock of the first attempt. A cmpxchg is held back too: one that another cmpxchg of the
 * same line follows failed (a retry loop, whose turns depend on the host), and is dropped.
 * Any other pause loop becomes a spin event at its first pause, on the lines it reads (the
 * last two loaded since the CPU's last store), and a spin-end event when something else
 * comes; its reloads of those lines are held back but for the last one, which follows the
 * spin-end. What was dropped, and the instructions spun, are taken off the CPU's clock.
 */
static void emit(unsigned int cpu, struct vcpu *v, const struct pending *p)
{
	struct clk at = clk_sub(p->at, &v->skew);

	push(cpu, v, p->ev, &at);
	if (p->ev.kind != C2C_LOAD && p->ev.kind != C2C_STORE && p->ev.kind != C2C_ACQUIRE)
		return;
	v->last_line = p->ev.line + 1;
	if (p->ev.kind != C2C_LOAD) {
		v->loaded[0] = v->loaded[1] = 0;
	} else if (v->loaded[0] != p->ev.line + 1) {
		v->loaded[1] = v->loaded[0];
		v->loaded[0] = p->ev.line + 1;
	}
}

static void emit_marker(unsigned int cpu, struct vcpu *v, enum c2c_kind kind, const struct clk *at)
{
	emit(cpu, v, &(struct pending){ .ev = { .kind = kind }, .at = *at });
}

/* Hold p back (nothing is held yet); the clock published stays where it will go. */
static void hold(struct vcpu *v, const struct pending *p, bool cas)
{
	v->pending_from = v->spinning ? v->spin_from : p->at;
	v->held_ev = *p;
	v->held = true;
	v->held_cas = cas;
}

/* Something else comes, at guest clock `now`: end the spin, let the held store go. */
static void flush(unsigned int cpu, struct vcpu *v, const struct clk *now)
{
	const struct clk *end = v->reload ? &v->reloaded.at : v->held ? &v->held_ev.at : now;

	if (v->spinning != NOT_SPINNING) {
		struct clk spun = clk_sub(*end, &v->spin_from);

		if (v->spinning == SPIN_LOOP)	/* the spin-end goes where the loop began */
			emit_marker(cpu, v, C2C_SPIN_END, &v->spin_from);
		clk_add(&v->skew, &spun);
		if (v->spinning == SPIN_LOOP && v->reload)
			emit(cpu, v, &v->reloaded);
	}
	if (v->held)
		emit(cpu, v, &v->held_ev);
	v->spinning = NOT_SPINNING;
	v->reload = v->held = v->held_cas = false;
	v->pending_from = CLK_NEVER;
}

static bool spin_line(const struct vcpu *v, uint32_t line)
{
	return line + 1 == v->loaded[0] || line + 1 == v->loaded[1];
}

/*
 * The timer tick lands in a window when the host lets it (timer.hz= ticks a second of host
 * time), so it is left out: from the timer vector's entry stub (tick=ADDR) to the iretq, a
 * CPU's accesses are dropped and its instructions taken off its clock.
 */
static void tick_enter(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];

	if (recording(v) && !v->in_tick) {
		v->in_tick = true;
		v->tick_from = clk_at(v, udata);
	}
}

static void tick_leave(unsigned int cpu, void *udata)
{
	const struct insn_info *in = udata;
	struct vcpu *v = &vcpus[cpu];

	if (v->in_tick) {
		struct clk after = clk_at(v, in), spent;

		after.n[C2C_I_PLAIN]++;		/* the iretq itself */
		spent = clk_sub(after, &v->tick_from);
		clk_add(&v->skew, &spent);
		v->in_tick = false;
	}
}

static void pause_exec(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	struct clk now;

	if (!recording(v) || v->in_tick)
		return;
	now = clk_at(v, udata);
	if (v->held) {			/* the xchg (or cmpxchg) before failed: a lock wait */
		if (v->spinning == NOT_SPINNING) {
			v->spinning = SPIN_LOCK;
			v->spin_from = v->pending_from = v->held_ev.at;
			v->loaded[0] = v->held_ev.ev.line + 1;
			v->loaded[1] = 0;
		}
		v->held = v->held_cas = false;
		return;
	}
	if (v->spinning != NOT_SPINNING || !v->last_line)
		return;
	if (!v->loaded[0])
		v->loaded[0] = v->last_line;
	emit(cpu, v, &(struct pending){ .ev = { .kind = C2C_SPIN, .line = v->loaded[0] - 1,
						 .insn = v->loaded[1] }, .at = now });
	v->spinning = SPIN_LOOP;
	v->spin_from = v->pending_from = now;
}

static void mem_access(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	const struct insn_info *in = udata;
	struct vcpu *v = &vcpus[cpu];
	struct qemu_plugin_hwaddr *hw;
	struct pending p;

	if (!recording(v) || v->in_tick || ((in->atomic & 2048) && !qemu_plugin_mem_is_store(info)))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;			/* the APIC, the serial port: not cached memory */
	p.at = clk_at(v, in);
	p.ev.kind = (in->atomic & 512) ? C2C_ACQUIRE : qemu_plugin_mem_is_store(info) ? C2C_STORE : C2C_LOAD;
	p.ev.line = (uint32_t)(qemu_plugin_hwaddr_phys_addr(hw) >> C2C_LINE_SHIFT);
	p.ev.off = qemu_plugin_hwaddr_phys_addr(hw) & ((1u << C2C_LINE_SHIFT) - 1);
	p.ev.insn = in->id;
	p.ev.icount = 0;
	if (v->held_cas && (in->atomic & 1024) && p.ev.line == v->held_ev.ev.line) {
		struct clk failed = clk_sub(p.at, &v->held_ev.at);	/* the one before failed */

		clk_add(&v->skew, &failed);
		clk_add(&v->pending_from, &failed);
		v->held_ev = p;
		return;
	}
	if (v->spinning != NOT_SPINNING && !v->held && spin_line(v, p.ev.line)) {
		if (p.ev.kind == C2C_LOAD) {
			v->reloaded = p;	/* the loop reloads its lines */
			v->reload = true;
			return;
		}
		if (p.ev.kind == C2C_ACQUIRE) {
			hold(v, &p, false);	/* a retry: failed if a pause comes next */
			return;
		}
	}
	flush(cpu, v, &p.at);
	if (p.ev.kind == C2C_ACQUIRE || (in->atomic & 1024))
		hold(v, &p, in->atomic & 1024);
	else
		emit(cpu, v, &p);
}

/* ---- the markers ---- */

static void write_window(void);
static void trace_close(void);

static void window_begin(void)
{
	pthread_mutex_lock(&lock);
	if (state != IDLE) {
		fprintf(stderr, "c2c: a window begins inside window %u: ignored\n", window_nr);
	} else {
		for (unsigned int c = 0; c < model.p.nr_cpus; c++)	/* strays of a cut CPU */
			model.q[c].taken = model.q[c].pushed;
		c2c_window_reset(&model);
		__atomic_store_n(&overflowed, false, __ATOMIC_RELAXED);
		state = OPEN;
		__atomic_store_n(&open_window, ++window_nr, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&cond);
	}
	pthread_mutex_unlock(&lock);
}

/* Wait for the merge to replay everything, write the window out. */
static void window_end(void)
{
	pthread_mutex_lock(&lock);
	if (state == OPEN) {
		state = CLOSING;
		pthread_cond_broadcast(&cond);
		while (state != CLOSED)
			pthread_cond_wait(&cond, &lock);
		__atomic_store_n(&open_window, 0, __ATOMIC_RELEASE);
		write_window();
		trace_close();
		state = IDLE;
	}
	pthread_mutex_unlock(&lock);
}

static const char *trace_dir;		/* trace=DIR: every window's streams, per CPU */

static void trace_open(unsigned int cpu, struct vcpu *v, unsigned int w)
{
	char path[4096];

	if (!trace_dir)
		return;
	/* Compressed as it goes: most records differ from the one before in a few bytes. */
	snprintf(path, sizeof(path), "zstd -q -1 -o '%s/w%03u.cpu%03u.bin.zst'", trace_dir, w, cpu);
	v->trace = popen(path, "w");
	if (!v->trace) {
		fprintf(stderr, "c2c: cannot run %s\n", path);
		abort();
	}
	v->trace_buf = malloc(1 << 20);
	if (v->trace_buf)
		setvbuf(v->trace, v->trace_buf, _IOFBF, 1 << 20);
}

/* A marker instruction: its command, and where it sits in its block. */
struct marker_info {
	unsigned int cmd;
	struct insn_info at;		/* .before: the block's instructions before it */
	struct clk block;		/* all of the block's */
};

/* This vCPU's clock starts at 0 at its begin marker. */
static void cpu_begin(unsigned int cpu, const struct marker_info *mk)
{
	struct vcpu *v = &vcpus[cpu];
	unsigned int w = __atomic_load_n(&open_window, __ATOMIC_ACQUIRE);
	struct clk zero = { { 0 } };

	if (!w || recording(v) || v->ended == w)
		return;
	v->spinning = NOT_SPINNING;
	v->reload = v->held = v->held_cas = false;
	v->last_line = v->loaded[0] = v->loaded[1] = 0;
	v->skew = zero;
	v->pending_from = CLK_NEVER;
	v->in_tick = false;
	v->tb_base = clk_sub(zero, &mk->at.before);
	v->next = clk_sub(mk->block, &mk->at.before);
	c2c_publish_clock(&model, cpu, 0);
	trace_open(cpu, v, w);
	push(cpu, v, (struct c2c_event){ .kind = C2C_BEGIN }, &zero);
	v->window = w;
}

static void cpu_end(unsigned int cpu, const struct marker_info *mk)
{
	struct vcpu *v = &vcpus[cpu];
	struct clk at;

	if (!recording(v))
		return;
	at = clk_at(v, &mk->at);
	flush(cpu, v, &at);
	emit_marker(cpu, v, C2C_END, &at);
	v->ended = v->window;
	v->window = 0;
}

/* A counting or sync marker: queued for the merge, in this vCPU's clock. */
static void cpu_marker(unsigned int cpu, const struct marker_info *mk, enum c2c_kind kind)
{
	struct vcpu *v = &vcpus[cpu];
	struct clk at;

	if (!recording(v))
		return;
	at = clk_at(v, &mk->at);
	flush(cpu, v, &at);
	emit_marker(cpu, v, kind, &at);
}

static void marker(unsigned int cpu, void *udata)
{
	const struct marker_info *mk = udata;

	if (cpu >= model.p.nr_cpus)
		return;
	switch (mk->cmd) {
	case C2C_WINDOW_BEGIN: window_begin(); break;
	case C2C_WINDOW_END: window_end(); break;
	case C2C_CPU_BEGIN: cpu_begin(cpu, mk); break;
	case C2C_CPU_END: cpu_end(cpu, mk); break;
	case C2C_CPU_UNCOUNTED: cpu_marker(cpu, mk, C2C_UNCOUNTED); break;
	case C2C_CPU_COUNTED: cpu_marker(cpu, mk, C2C_COUNTED); break;
	case C2C_CPU_SYNC: cpu_marker(cpu, mk, C2C_SYNC); break;
	}
}

/*
 * What kind of atomic this instruction is: 2048 for any locked read-modify-write (an xchg
 * with memory, or a lock prefix), plus 512 for an xchg (how a spinlock is taken) or 1024 for
 * a cmpxchg. A locked RMW is one access for a CPU's cache (ownership, then read and write);
 * single-threaded TCG runs it as a load and a store, MTTCG as one access, so its load is
 * left out: it counts as the one store either way.
 */
static unsigned int atomic_kind(const uint8_t *b, size_t size)
{
	size_t i = 0;
	bool lock = false;

	while (i < size && (b[i] == 0x66 || b[i] == 0xf0 || (b[i] & 0xf0) == 0x40))
		lock |= b[i++] == 0xf0;
	if (i + 1 < size && (b[i] == 0x86 || b[i] == 0x87) && (b[i + 1] >> 6) != 3)
		return 2048 | 512;
	if (i + 2 < size && b[i] == 0x0f && (b[i + 1] == 0xb0 || b[i + 1] == 0xb1) && (b[i + 2] >> 6) != 3)
		return 2048 | 1024;
	return lock ? 2048 : 0;
}

/*
 * The class of an instruction for its time (see "Instruction time"), and how many of it one
 * execution counts: a rep stos/movs runs one iteration per execution under TCG, which counts
 * its element's bytes.
 */
static int insn_class(const uint8_t *b, size_t size, int64_t *count)
{
	size_t i = 0;
	bool rep = false, opsize = false, rexw = false;
	unsigned int atomic = atomic_kind(b, size);

	*count = 1;
	if (atomic & 512)
		return C2C_I_XCHG;
	if (atomic)
		return C2C_I_LOCK;
	for (; i < size; i++) {		/* legacy prefixes, then REX */
		if (b[i] == 0xf2 || b[i] == 0xf3)
			rep = true;
		else if (b[i] == 0x66)
			opsize = true;
		else if (b[i] != 0x2e && b[i] != 0x3e && b[i] != 0x26 && b[i] != 0x36 && b[i] != 0x64 && b[i] != 0x65)
			break;
	}
	if (i < size && (b[i] & 0xf0) == 0x40)
		rexw = b[i++] & 8;
	if (i >= size)
		return C2C_I_PLAIN;
	switch (b[i]) {
	case 0x9c: return C2C_I_PUSHF;
	case 0x9d: return C2C_I_POPF;
	case 0xfa: return C2C_I_CLI;
	case 0xfb: return C2C_I_STI;
	case 0xa4: case 0xaa:
		return rep ? C2C_I_STRING_BYTE : C2C_I_PLAIN;
	case 0xa5: case 0xab:
		*count = rexw ? 8 : opsize ? 2 : 4;
		return rep ? C2C_I_STRING_BYTE : (*count = 1, C2C_I_PLAIN);
	}
	return C2C_I_PLAIN;
}

/* The command of a marker instruction (c2c_mark.h), or 0. */
static unsigned int marker_cmd(const uint8_t *b, size_t size)
{
	uint32_t disp;

	if (size != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	memcpy(&disp, b + 3, 4);
	return (disp & 0xffff0000u) == C2C_MAGIC ? disp & 0xff : 0;
}

static void entry_reached(unsigned int cpu, void *udata)
{
	if (!entry_seen) {
		entry_seen = true;
		fprintf(stderr, "c2c: CPU %u at entry=0x%lx after %lu instructions from reset\n", cpu,
			(unsigned long)entry_addr, (unsigned long)insns_from_reset);
	}
}

/* What QEMU translates stays translated: these live as long as the run. */
static void *alloc_info(size_t size)
{
	void *p = calloc(1, size);

	if (!p)
		abort();
	return p;
}

static void block_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct block_info *blk = alloc_info(sizeof(*blk));
	struct clk before = { { 0 } };
	struct marker_info *mks[n ? n : 1];
	size_t nr_mks = 0;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, blk);
	if (entry_addr && !entry_seen) {
		/* Counted per block, at its start: the count printed includes ADDR's block. */
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns_from_reset, n);
		for (size_t i = 0; i < n; i++)
			if (qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)) == entry_addr)
				qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, i), entry_reached,
								       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		size_t size = qemu_plugin_insn_size(insn);
		unsigned int cmd = marker_cmd(b, size);
		struct insn_info *in = alloc_info(sizeof(*in));
		int64_t count;
		int k = insn_class(b, size, &count);

		in->before = before;
		before.n[k] += count;
		if (cmd) {
			struct marker_info *mk = alloc_info(sizeof(*mk));

			mk->cmd = cmd;
			mk->at = *in;
			mks[nr_mks++] = mk;
			free(in);
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker, QEMU_PLUGIN_CB_NO_REGS, mk);
			continue;
		}
		if (tick_entry && qemu_plugin_insn_vaddr(insn) == tick_entry)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tick_enter, QEMU_PLUGIN_CB_NO_REGS, in);
		if (size == 2 && b[0] == 0x48 && b[1] == 0xcf)	/* iretq */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tick_leave, QEMU_PLUGIN_CB_NO_REGS, in);
		if (size == 2 && b[0] == 0xf3 && b[1] == 0x90) {	/* pause */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, pause_exec, QEMU_PLUGIN_CB_NO_REGS, in);
			continue;
		}
		pthread_mutex_lock(&insn_lock);
		in->id = __insn_id(qemu_plugin_insn_vaddr(insn));
		pthread_mutex_unlock(&insn_lock);
		in->atomic = (uint16_t)atomic_kind(b, size);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, in);
	}
	blk->n = before;
	for (size_t i = 0; i < nr_mks; i++)
		mks[i]->block = before;
}

/* ---- the merge thread ---- */

static void *merge_thread(void *arg)
{
	for (;;) {
		bool closing, done;

		pthread_mutex_lock(&lock);
		while (state != OPEN && state != CLOSING)
			pthread_cond_wait(&cond, &lock);
		closing = state == CLOSING;
		pthread_mutex_unlock(&lock);
		done = c2c_merge(&model, closing);
		if (done && closing) {
			pthread_mutex_lock(&lock);
			state = CLOSED;
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
		} else {
			usleep(done ? 1000 : 50);
		}
	}
	return arg;
}

/* ---- the output: one JSON line per window (tests/c2c/output.c), the traces ---- */

static uint64_t pc_of(void *arg, uint32_t id)
{
	return insn_pc(id);
}

static void write_window(void)
{
	struct c2c_output o = { .out = out, .top_lines = top_lines, .pc_of = pc_of };

	c2c_write_window(&o, &model, window_nr, __atomic_load_n(&overflowed, __ATOMIC_RELAXED));
}

/* The window's traces are complete: close them, and write the PC table beside them. */
static void trace_close(void)
{
	char path[4096];
	FILE *f;

	if (!trace_dir)
		return;
	for (unsigned int c = 0; c < model.p.nr_cpus; c++) {
		if (!vcpus[c].trace)
			continue;
		pclose(vcpus[c].trace);
		free(vcpus[c].trace_buf);
		vcpus[c].trace = NULL;
		vcpus[c].trace_buf = NULL;
	}
	snprintf(path, sizeof(path), "%s/pcs.bin", trace_dir);
	pthread_mutex_lock(&insn_lock);
	if ((f = fopen(path, "wb"))) {
		fwrite(pcs, sizeof(*pcs), nr_pcs, f);
		fclose(f);
	}
	pthread_mutex_unlock(&insn_lock);
}

static void write_params(void)
{
	c2c_write_params(out, &params, cost_fs);
	if (trace_dir) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/params.json", trace_dir);
		if ((f = fopen(path, "w"))) {
			c2c_write_params(f, &params, cost_fs);
			fclose(f);
		}
	}
}

/* ---- loading ---- */

/*
 * key=value arguments: out=FILE, sockets=N, threads=N (per core), tick=ADDR (the timer
 * interrupt's entry, left out), max_events=N, lines=N (with code locations), entry=ADDR,
 * trace=DIR, moves=N (line moves kept per window for the pictures), and the machine's (output.c: c2c_machine_arg()), which tests/c2c/machine.py
 * writes from a machine file.
 */
static int parse_arg(const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq)
		return -1;
	if (!strncmp(arg, "out=", 4))
		return (out = fopen(eq + 1, "w")) ? 0 : -1;
	if (!strncmp(arg, "trace=", 6))
		return (trace_dir = strdup(eq + 1)) ? 0 : -1;
	if (!strncmp(arg, "max_events=", 11))
		return (max_events = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "entry=", 6))
		return (entry_addr = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "tick=", 5))
		return (tick_entry = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "lines=", 6))
		return top_lines = (unsigned int)strtoul(eq + 1, NULL, 0), 0;
	if (!strncmp(arg, "moves=", 6))
		return max_moves = strtoull(eq + 1, NULL, 0), 0;
	return c2c_machine_arg(&params, cost_fs, arg);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	pthread_t merger;

	/* QEMU's CPUs, unless the machine has more (cpus=: 256 for -smp 255): the model numbers
	 * sockets and cores over the machine's (model.h: c2c_socket()). */
	params.nr_cpus = (unsigned int)info->system.max_vcpus;
	for (int i = 0; i < argc; i++)
		if (parse_arg(argv[i])) {
			fprintf(stderr, "c2c: bad argument '%s' (out=FILE trace=DIR cpus=N sockets=N threads=N "
				"mlp=N tick=ADDR lines=N moves=N cost_CLASS=FS hit|cold|hitm|clean|upgrade=PS:PS)\n", argv[i]);
			return -1;
		}
	if (!info->system_emulation || !out || params.nr_cpus > C2C_MAX_CPUS ||
	    params.nr_cpus < (unsigned int)info->system.max_vcpus || params.sockets > params.nr_cpus ||
	    c2c_model_init(&model, &params)) {
		fprintf(stderr, "c2c: needs system emulation, out=FILE, at most %d CPUs, at least QEMU's, "
			"and no more sockets than CPUs\n", C2C_MAX_CPUS);
		return -1;
	}
	model.max_moves = max_moves;
	write_params();
	if (pthread_create(&merger, NULL, merge_thread, NULL))
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translate);
	return 0;
}
