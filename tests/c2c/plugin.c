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
 * The reference machine: a two-socket Intel Xeon E5-2630 v4 (Broadwell-EP, 10 cores, 2.2 GHz),
 * on which Linux 292648ac5cf1 was measured. Latencies (ns) measured on that CPU with Intel's
 * Memory Latency Checker (docs/c2c.md cites each): another core's Modified line 40 on the same
 * socket, 103 on the other; a clean line from another core 35, from the other socket taken as
 * 103 (not measured); a fill from local memory 100 (Broadwell-EP, Chips and Cheese). An
 * upgrade (invalidating the other copies) is taken as a clean transfer. One instruction per
 * cycle at 2.2 GHz: 455 ps.
 */
static struct c2c_params params = {
	.sockets = 2,
	.ps_per_insn = 455,
	.ps = {
		[C2C_HIT] = { 0, 0 },
		[C2C_COLD] = { 100000, 100000 },
		[C2C_HITM] = { 40000, 103000 },
		[C2C_CLEAN] = { 35000, 103000 },
		[C2C_UPGRADE] = { 35000, 103000 },
	},
};

struct vcpu {
	unsigned int window;		/* the window it began, while it records; 0: not recording */
	unsigned int ended;		/* the last window it ended (it begins each window once) */
	int64_t tb_base;		/* its clock at the first instruction of the current block */
	int64_t next;			/* ... and at the first instruction of the next */
	/*
	 * Clock values here are the guest's instruction counts; what goes out is that less
	 * `skew`, the instructions of failed attempts and waits dropped so far, which the model
	 * must not count. While something is held back, the clock published for the merge's
	 * bound stays at `pending_from`, where the held item will go.
	 */
	int64_t skew, pending_from;	/* pending_from: INT64_MAX when nothing is held */
	uint32_t last_line;		/* of its last access pushed (+1) */
	uint32_t loaded[2];		/* the last two lines (+1) it loaded since its last store */
	enum { NOT_SPINNING, SPIN_LOOP, SPIN_LOCK } spinning;
	int64_t spin_from;		/* where the current pause loop or lock wait began */
	bool reload;			/* `reloaded` holds the loop's latest reload */
	bool held, held_cas;		/* `held_ev`, an xchg or a cmpxchg, waits for the next event */
	bool in_tick;			/* inside the timer interrupt (dropped: see tick_enter()) */
	int64_t tick_from;
	struct c2c_event reloaded, held_ev;
} __attribute__((aligned(64)));

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
static bool overflowed;			/* this window (atomic) */
/* Moves of lines kept per window for the pictures (struct c2c_move, 16 bytes each). */
static uint64_t max_moves = 1 << 20;

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

/* At each block: the vCPU's clock moves on by the block's instructions (udata). */
static void block_exec(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	int64_t held_at;

	if (!recording(v))
		return;
	v->tb_base = v->next;
	v->next += (int64_t)(uintptr_t)udata;
	held_at = v->in_tick && v->tick_from < v->pending_from ? v->tick_from : v->pending_from;
	c2c_publish_clock(&model, cpu, (uint64_t)((v->tb_base < held_at ? v->tb_base : held_at) - v->skew));
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
static void emit(unsigned int cpu, struct vcpu *v, struct c2c_event ev)
{
	ev.icount -= (uint64_t)v->skew;
	c2c_push(&model, cpu, ev);
	count_pushed(cpu);
	if (ev.kind != C2C_LOAD && ev.kind != C2C_STORE && ev.kind != C2C_ACQUIRE)
		return;
	v->last_line = ev.line + 1;
	if (ev.kind != C2C_LOAD) {
		v->loaded[0] = v->loaded[1] = 0;
	} else if (v->loaded[0] != ev.line + 1) {
		v->loaded[1] = v->loaded[0];
		v->loaded[0] = ev.line + 1;
	}
}

/* Hold ev back (nothing is held yet); the clock published stays where it will go. */
static void hold(struct vcpu *v, struct c2c_event ev, bool cas)
{
	v->pending_from = v->spinning ? v->spin_from : (int64_t)ev.icount;
	v->held_ev = ev;
	v->held = true;
	v->held_cas = cas;
}

/* Something else comes, at guest clock `now`: end the spin, let the held store go. */
static void flush(unsigned int cpu, struct vcpu *v, int64_t now)
{
	int64_t end = v->reload ? (int64_t)v->reloaded.icount : v->held ? (int64_t)v->held_ev.icount : now;

	if (v->spinning != NOT_SPINNING)
		v->skew += end - v->spin_from;
	if (v->spinning == SPIN_LOOP) {
		emit(cpu, v, (struct c2c_event){ .kind = C2C_SPIN_END, .icount = (uint64_t)end });
		if (v->reload)
			emit(cpu, v, v->reloaded);
	}
	if (v->held)
		emit(cpu, v, v->held_ev);
	v->spinning = NOT_SPINNING;
	v->reload = v->held = v->held_cas = false;
	v->pending_from = INT64_MAX;
}

static bool spin_line(const struct vcpu *v, uint32_t line)
{
	return line + 1 == v->loaded[0] || line + 1 == v->loaded[1];
}

/*
 * The timer tick lands in a window when the host lets it (timer.hz= ticks a second of host
 * time), so it is left out: from the timer vector's entry stub (tick=ADDR) to the iretq, a
 * CPU's accesses are dropped and its instructions taken off its clock. udata: the index of
 * the instruction in its block.
 */
static void tick_enter(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];

	if (recording(v) && !v->in_tick) {
		v->in_tick = true;
		v->tick_from = v->tb_base + (int64_t)(uintptr_t)udata;
	}
}

static void tick_leave(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];

	if (v->in_tick) {
		v->skew += v->tb_base + (int64_t)(uintptr_t)udata + 1 - v->tick_from;
		v->in_tick = false;
	}
}

static void entry_reached(unsigned int cpu, void *udata)
{
	if (!entry_seen) {
		entry_seen = true;
		fprintf(stderr, "c2c: CPU %u at entry=0x%lx after %lu instructions from reset\n", cpu,
			(unsigned long)entry_addr, (unsigned long)insns_from_reset);
	}
}

/* udata: the index of the pause in its block. */
static void pause_exec(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	int64_t now = v->tb_base + (int64_t)(uintptr_t)udata;

	if (!recording(v) || v->in_tick)
		return;
	if (v->held) {			/* the xchg (or cmpxchg) before failed: a lock wait */
		if (v->spinning == NOT_SPINNING) {
			v->spinning = SPIN_LOCK;
			v->spin_from = v->pending_from = (int64_t)v->held_ev.icount;
			v->loaded[0] = v->held_ev.line + 1;
			v->loaded[1] = 0;
		}
		v->held = v->held_cas = false;
		return;
	}
	if (v->spinning != NOT_SPINNING || !v->last_line)
		return;
	if (!v->loaded[0])
		v->loaded[0] = v->last_line;
	emit(cpu, v, (struct c2c_event){ .icount = (uint64_t)now, .kind = C2C_SPIN,
					 .line = v->loaded[0] - 1, .insn = v->loaded[1] });
	v->spinning = SPIN_LOOP;
	v->spin_from = v->pending_from = now;
}

/* udata: the instruction's id << 12 | its atomic_kind() | its index in its block (< 512). */
static void mem_access(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	struct qemu_plugin_hwaddr *hw;
	uintptr_t u = (uintptr_t)udata;
	struct c2c_event ev;

	if (!recording(v) || v->in_tick || ((u & 2048) && !qemu_plugin_mem_is_store(info)))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;			/* the APIC, the serial port: not cached memory */
	ev.icount = (uint64_t)(v->tb_base + (int64_t)(u & 511));
	ev.kind = (u & 512) ? C2C_ACQUIRE : qemu_plugin_mem_is_store(info) ? C2C_STORE : C2C_LOAD;
	ev.line = (uint32_t)(qemu_plugin_hwaddr_phys_addr(hw) >> C2C_LINE_SHIFT);
	ev.off = qemu_plugin_hwaddr_phys_addr(hw) & ((1u << C2C_LINE_SHIFT) - 1);
	ev.insn = (uint32_t)(u >> 12);
	if (v->held_cas && (u & 1024) && ev.line == v->held_ev.line) {
		v->skew += (int64_t)(ev.icount - v->held_ev.icount);	/* the one before failed */
		v->pending_from += (int64_t)(ev.icount - v->held_ev.icount);
		v->held_ev = ev;
		return;
	}
	if (v->spinning != NOT_SPINNING && !v->held && spin_line(v, ev.line)) {
		if (ev.kind == C2C_LOAD) {
			v->reloaded = ev;	/* the loop reloads its lines */
			v->reload = true;
			return;
		}
		if (ev.kind == C2C_ACQUIRE) {
			hold(v, ev, false);	/* a retry: failed if a pause comes next */
			return;
		}
	}
	flush(cpu, v, (int64_t)ev.icount);
	if (ev.kind == C2C_ACQUIRE || (u & 1024))
		hold(v, ev, u & 1024);
	else
		emit(cpu, v, ev);
}

/* ---- the markers ---- */

static void write_window(void);

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
		state = IDLE;
	}
	pthread_mutex_unlock(&lock);
}

/* This vCPU's clock starts at 0 at its begin marker, instruction idx of a block of n. */
static void cpu_begin(unsigned int cpu, int64_t idx, int64_t n)
{
	struct vcpu *v = &vcpus[cpu];
	unsigned int w = __atomic_load_n(&open_window, __ATOMIC_ACQUIRE);

	if (!w || recording(v) || v->ended == w)
		return;
	v->spinning = NOT_SPINNING;
	v->reload = v->held = v->held_cas = false;
	v->last_line = v->loaded[0] = v->loaded[1] = 0;
	v->skew = 0;
	v->pending_from = INT64_MAX;
	v->in_tick = false;
	v->tb_base = -idx;
	v->next = n - idx;
	c2c_publish_clock(&model, cpu, 0);
	c2c_push(&model, cpu, (struct c2c_event){ .icount = 0, .kind = C2C_BEGIN });
	v->window = w;
}

static void cpu_end(unsigned int cpu, int64_t idx)
{
	struct vcpu *v = &vcpus[cpu];

	if (!recording(v))
		return;
	flush(cpu, v, v->tb_base + idx);
	emit(cpu, v, (struct c2c_event){ .icount = (uint64_t)(v->tb_base + idx), .kind = C2C_END });
	v->ended = v->window;
	v->window = 0;
}

/* A counting or sync marker: queued for the merge, in this vCPU's clock. */
static void cpu_marker(unsigned int cpu, int64_t idx, enum c2c_kind kind)
{
	struct vcpu *v = &vcpus[cpu];

	if (!recording(v))
		return;
	flush(cpu, v, v->tb_base + idx);
	emit(cpu, v, (struct c2c_event){ .icount = (uint64_t)(v->tb_base + idx), .kind = kind });
}

/* udata: the command | its index in its block << 8 | the block's length << 20. */
static void marker(unsigned int cpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	int64_t idx = (int64_t)((u >> 8) & 0xfff), n = (int64_t)(u >> 20);

	if (cpu >= model.p.nr_cpus)
		return;
	switch (u & 0xff) {
	case C2C_WINDOW_BEGIN: window_begin(); break;
	case C2C_WINDOW_END: window_end(); break;
	case C2C_CPU_BEGIN: cpu_begin(cpu, idx, n); break;
	case C2C_CPU_END: cpu_end(cpu, idx); break;
	case C2C_CPU_UNCOUNTED: cpu_marker(cpu, idx, C2C_UNCOUNTED); break;
	case C2C_CPU_COUNTED: cpu_marker(cpu, idx, C2C_COUNTED); break;
	case C2C_CPU_SYNC: cpu_marker(cpu, idx, C2C_SYNC); break;
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

/* The command of a marker instruction (c2c_mark.h), or 0. */
static unsigned int marker_cmd(const uint8_t *b, size_t size)
{
	uint32_t disp;

	if (size != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	memcpy(&disp, b + 3, 4);
	return (disp & 0xffff0000u) == C2C_MAGIC ? disp & 0xff : 0;
}

static void block_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
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
		unsigned int cmd = marker_cmd(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
		uint32_t iid;

		const uint8_t *b = qemu_plugin_insn_data(insn);

		if (cmd) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(cmd | i << 8 | n << 20));
			continue;
		}
		if (tick_entry && qemu_plugin_insn_vaddr(insn) == tick_entry)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tick_enter, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)i);
		if (qemu_plugin_insn_size(insn) == 2 && b[0] == 0x48 && b[1] == 0xcf)	/* iretq */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tick_leave, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)i);
		if (qemu_plugin_insn_size(insn) == 2 && b[0] == 0xf3 && b[1] == 0x90) {	/* pause */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, pause_exec, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)i);
			continue;
		}
		pthread_mutex_lock(&insn_lock);
		iid = __insn_id(qemu_plugin_insn_vaddr(insn));
		pthread_mutex_unlock(&insn_lock);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
						 (void *)((uintptr_t)iid << 12 |
							  atomic_kind(b, qemu_plugin_insn_size(insn)) | i));
	}
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

/* ---- the output: one JSON line per window (tests/c2c/report.py reads it) ---- */

static const char *const outcome_names[C2C_NR_OUTCOMES] = { "hit", "cold", "hitm", "clean", "upgrade" };

static void write_counts(const struct c2c_counts *n)
{
	fprintf(out, "{\"loads\":%lu,\"stores\":%lu", n->loads, n->stores);
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		fprintf(out, ",\"%s\":[%lu,%lu]", outcome_names[o], n->outcome[o][0], n->outcome[o][1]);
	fprintf(out, ",\"hitm_loads\":%lu,\"invalidated\":%lu,\"wait_ps\":%lu}", n->hitm_loads,
		n->invalidated, n->wait_ps);
}

/* Lines that moved or were invalidated, most transfers first. */
static uint64_t line_weight(const struct c2c_line *l)
{
	return c2c_transfers(&l->n) + l->n.outcome[C2C_UPGRADE][0] + l->n.outcome[C2C_UPGRADE][1];
}

static int by_weight(const void *a, const void *b)
{
	uint64_t wa = line_weight(*(struct c2c_line *const *)a), wb = line_weight(*(struct c2c_line *const *)b);

	if (wa != wb)
		return wa < wb ? 1 : -1;
	return (*(struct c2c_line *const *)a)->line < (*(struct c2c_line *const *)b)->line ? -1 : 1;
}

static void write_line(const struct c2c_line *l, bool with_pcs)
{
	fprintf(out, "{\"phys\":%lu,\"cpus\":%d,\"n\":", (uint64_t)(l->line - 1) << C2C_LINE_SHIFT,
		__builtin_popcountll(l->touched));
	write_counts(&l->n);
	if (with_pcs) {
		fprintf(out, ",\"pcs\":[");
		for (int i = 0; i < C2C_LINE_PCS && l->pc[i].accesses; i++)
			fprintf(out, "%s[%lu,%u,%u]", i ? "," : "", insn_pc(l->pc[i].insn),
				l->pc[i].accesses, l->pc[i].transfers);
		fprintf(out, "],\"pc_bytes\":[");
		for (int i = 0; i < C2C_LINE_PCS && l->pc[i].accesses; i++)
			fprintf(out, "%s%lu", i ? "," : "", l->pc[i].bytes);
		fprintf(out, "],\"pc_other\":%u", l->pc_other);
	}
	fprintf(out, "}");
}

/* Transfers by (from, to) CPU: the window's heat map (tests/c2c/pictures.py). */
static void write_pairs(void)
{
	bool first = true;

	fprintf(out, ",\"pairs\":[");
	for (unsigned int f = 0; f < model.p.nr_cpus; f++)
		for (unsigned int t = 0; t < model.p.nr_cpus; t++)
			if (model.pairs[f][t]) {
				fprintf(out, "%s[%u,%u,%lu]", first ? "" : ",", f, t, model.pairs[f][t]);
				first = false;
			}
	fprintf(out, "]");
}

/*
 * The history of the hottest lines (the first MOVES_LINES of hot[]), up to MOVES_PER_LINE
 * moves each, in the order they happened: [ps, from, to, outcome, store] (outcome as
 * outcome_names[]). "moves_dropped": moves of any line past max_moves (moves=N).
 */
#define MOVES_LINES 8
#define MOVES_PER_LINE 4000
static void write_moves(struct c2c_line *const *hot, uint64_t n)
{
	fprintf(out, ",\"moves_dropped\":%lu,\"moves\":[", model.moves_dropped);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t line = hot[i]->line - 1, kept = 0;

		fprintf(out, "%s{\"phys\":%lu,\"moves\":[", i ? "," : "", (uint64_t)line << C2C_LINE_SHIFT);
		for (uint64_t k = 0; k < model.nr_moves && kept < MOVES_PER_LINE; k++) {
			const struct c2c_move *mv = &model.moves[k];

			if (mv->line != line)
				continue;
			fprintf(out, "%s[%lu,%u,%u,%u,%u]", kept++ ? "," : "", mv->t, mv->from, mv->to,
				mv->outcome, mv->store);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]");
}

static void write_window(void)
{
	struct c2c_line **hot = malloc((model.nr_lines + 1) * sizeof(*hot));
	uint64_t nr_hot = 0;

	if (!hot)
		abort();
	for (uint64_t s = 0; s < model.nr_slots; s++)
		if (model.lines[s].line && line_weight(&model.lines[s]))
			hot[nr_hot++] = &model.lines[s];
	qsort(hot, nr_hot, sizeof(*hot), by_weight);
	fprintf(out, "{\"window\":%u,\"overflowed\":%s,\"lines_touched\":%lu,\"max_queued\":%lu,\"cut\":%lu,\"spins\":%lu,"
		"\"spins_unanswered\":%lu,\"lock_waits\":%lu,\"forced\":%lu,\"total\":", window_nr,
		overflowed ? "true" : "false", model.nr_lines, model.max_queued, model.cut, model.spins, model.spins_unanswered,
		model.lock_waits, model.forced);
	write_counts(&model.total);
	fprintf(out, ",\"cpus\":[");
	for (unsigned int c = 0, first = 1; c < model.p.nr_cpus; c++) {
		const struct c2c_cpu *cpu = &model.cpu[c];

		if (cpu->state == C2C_UNBEGUN)
			continue;
		fprintf(out, "%s{\"cpu\":%u,\"socket\":%u,\"instructions\":%lu,\"end_ps\":%lu,"
			"\"counted_ps\":%lu,\"n\":", first ? "" : ",", c, c2c_socket(&model.p, c),
			cpu->instructions, cpu->end, cpu->counted_ps);
		write_counts(&cpu->n);
		fprintf(out, "}");
		first = 0;
	}
	fprintf(out, "],\"lines\":[");
	for (uint64_t i = 0; i < nr_hot; i++) {
		fprintf(out, "%s", i ? "," : "");
		write_line(hot[i], i < top_lines);
	}
	fprintf(out, "]");
	write_pairs();
	write_moves(hot, nr_hot < MOVES_LINES ? nr_hot : MOVES_LINES);
	fprintf(out, "}\n");
	fflush(out);
	free(hot);
}

static void write_params(void)
{
	fprintf(out, "{\"params\":{\"cpus\":%u,\"sockets\":%u,\"threads\":%u,\"line\":%u,\"ps_per_insn\":%lu,"
		"\"ps\":{", params.nr_cpus, params.sockets, params.threads ? params.threads : 1,
		1u << C2C_LINE_SHIFT, params.ps_per_insn);
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		fprintf(out, "%s\"%s\":[%lu,%lu]", o ? "," : "", outcome_names[o], params.ps[o][0], params.ps[o][1]);
	fprintf(out, "}}}\n");
	fflush(out);
}

/* ---- loading ---- */

/* key=value arguments: out=FILE, sockets=N, threads=N (per core), tick=ADDR (the timer
 * interrupt's entry, left out), max_events=N, lines=N (with code locations), insn_ps=N,
 * moves=N (line moves kept per window for the pictures), and
 * <outcome>=PS_SAME:PS_OTHER to change a latency (e.g. hitm=40000:103000). */
static int parse_arg(const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned long a, b;

	if (!eq)
		return -1;
	if (!strncmp(arg, "out=", 4))
		return (out = fopen(eq + 1, "w")) ? 0 : -1;
	if (!strncmp(arg, "sockets=", 8))
		return (params.sockets = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "threads=", 8))
		return (params.threads = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "max_events=", 11))
		return (max_events = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "entry=", 6))
		return (entry_addr = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "tick=", 5))
		return (tick_entry = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "lines=", 6))
		return top_lines = (unsigned int)strtoul(eq + 1, NULL, 0), 0;
	if (!strncmp(arg, "insn_ps=", 8))
		return params.ps_per_insn = strtoul(eq + 1, NULL, 0), 0;
	if (!strncmp(arg, "moves=", 6))
		return max_moves = strtoull(eq + 1, NULL, 0), 0;
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		if ((size_t)(eq - arg) == strlen(outcome_names[o]) && !strncmp(arg, outcome_names[o], eq - arg) &&
		    sscanf(eq + 1, "%lu:%lu", &a, &b) == 2) {
			params.ps[o][0] = a;
			params.ps[o][1] = b;
			return 0;
		}
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	pthread_t merger;

	for (int i = 0; i < argc; i++)
		if (parse_arg(argv[i])) {
			fprintf(stderr, "c2c: bad argument '%s' (out=FILE sockets=N threads=N tick=ADDR lines=N insn_ps=N moves=N "
				"hit|cold|hitm|clean|upgrade=PS:PS)\n", argv[i]);
			return -1;
		}
	params.nr_cpus = (unsigned int)info->system.smp_vcpus;
	if (!info->system_emulation || !out || params.nr_cpus > C2C_MAX_CPUS ||
	    params.sockets > params.nr_cpus || c2c_model_init(&model, &params)) {
		fprintf(stderr, "c2c: needs system emulation, out=FILE, at most %d vCPUs and no more "
			"sockets than vCPUs\n", C2C_MAX_CPUS);
		return -1;
	}
	model.max_moves = max_moves;
	write_params();
	if (pthread_create(&merger, NULL, merge_thread, NULL))
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translate);
	return 0;
}
