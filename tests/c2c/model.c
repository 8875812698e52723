/*
 * The coherence model: MESI per line (model.h), and the merge that replays every CPU's
 * accesses in modelled-time order, whatever order the host ran the CPUs in.
 */
#include "tests/c2c/model.h"

#include <stdlib.h>
#include <string.h>

/* The cache CPU cpu uses: its core's (SMT threads c, c + 1, ... share one). */
static unsigned int cache_of(const struct c2c_params *p, unsigned int cpu)
{
	return p->threads > 1 ? cpu / p->threads : cpu;
}

int c2c_model_init(struct c2c_model *m, const struct c2c_params *p)
{
	memset(m, 0, sizeof(*m));
	if (p->nr_cpus < 1 || p->nr_cpus > C2C_MAX_CPUS || p->sockets < 1 || p->sockets > p->nr_cpus ||
	    (p->threads > 1 && p->nr_cpus % (p->threads * p->sockets)))
		return -1;
	m->p = *p;
	for (unsigned int c = 0; c < p->nr_cpus; c++)
		c2c_mask_set(&m->local[c2c_socket(p, c)], cache_of(p, c));
	for (unsigned int c = 0; c < p->nr_cpus; c++) {
		struct c2c_chunk *first = calloc(1, sizeof(*first));

		if (!first)
			return -1;
		m->q[c].head = m->q[c].tail = first;
	}
	m->nr_slots = 1 << 16;
	m->lines = calloc(m->nr_slots, sizeof(*m->lines));
	m->pairs = calloc((size_t)p->nr_cpus * p->nr_cpus, sizeof(*m->pairs));
	m->max_moves = C2C_MAX_MOVES;
	return m->lines && m->pairs ? 0 : -1;
}

void c2c_model_free(struct c2c_model *m)
{
	for (unsigned int c = 0; c < m->p.nr_cpus; c++)
		for (struct c2c_chunk *k = m->q[c].head, *next; k; k = next) {
			next = k->next;
			free(k);
		}
	free(m->lines);
	free(m->pairs);
	free(m->moves);
	m->lines = NULL;
	m->pairs = NULL;
	m->moves = NULL;
}

void c2c_window_reset(struct c2c_model *m)
{
	memset(m->lines, 0, m->nr_slots * sizeof(*m->lines));
	m->nr_lines = 0;
	m->max_queued = 0;
	memset(&m->total, 0, sizeof(m->total));
	memset(m->cpu, 0, sizeof(m->cpu));
	m->cut = m->nr_waiting = 0;
	m->spins = m->spins_unanswered = m->lock_waits = m->forced = 0;
	memset(m->pairs, 0, (size_t)m->p.nr_cpus * m->p.nr_cpus * sizeof(*m->pairs));
	m->nr_moves = m->moves_dropped = 0;
}

/* ---- the lines: an open-addressing hash table of struct c2c_line, keyed by line + 1 ---- */

static uint64_t line_slot(uint32_t line, uint64_t nr_slots)
{
	return ((uint64_t)line * 0x9e3779b97f4a7c15ull >> 20) & (nr_slots - 1);
}

static void lines_grow(struct c2c_model *m)
{
	struct c2c_line *old = m->lines;
	uint64_t old_slots = m->nr_slots;

	m->nr_slots *= 2;
	m->lines = calloc(m->nr_slots, sizeof(*m->lines));
	if (!m->lines)
		abort();
	for (uint64_t i = 0; i < old_slots; i++) {
		uint64_t s;

		if (!old[i].line)
			continue;
		for (s = line_slot(old[i].line, m->nr_slots); m->lines[s].line; s = (s + 1) & (m->nr_slots - 1))
			;
		m->lines[s] = old[i];
	}
	free(old);
}

static struct c2c_line *c2c_line_get(struct c2c_model *m, uint32_t line)
{
	uint32_t key = line + 1;
	uint64_t s;

	if (m->nr_lines * 2 >= m->nr_slots)
		lines_grow(m);
	for (s = line_slot(key, m->nr_slots); m->lines[s].line; s = (s + 1) & (m->nr_slots - 1))
		if (m->lines[s].line == key)
			return &m->lines[s];
	m->lines[s].line = key;
	m->nr_lines++;
	return &m->lines[s];
}

/* ---- MESI ---- */

/*
 * One access of CPU cpu to line l, by the MESI rules of a machine whose caches never evict:
 *
 *   load,  cpu holds it                 -> hit
 *   load,  nobody holds it              -> cold (memory); cpu holds it Exclusive
 *   load,  another holds it Modified    -> HITM: the owner writes it back and both Share it
 *   load,  others Share it              -> clean transfer; cpu Shares it too
 *   store, cpu alone holds it (M or E)  -> hit; Modified
 *   store, nobody holds it              -> cold (read for ownership from memory)
 *   store, cpu Shares it with others    -> upgrade: the others' copies invalidated
 *   store, others hold it, cpu does not -> HITM if one held it Modified, else clean; the
 *                                          others invalidated, cpu Modified
 *
 * `cross`: the access needed the other socket: for a load, its data came from there (no
 * sharer on cpu's socket); for a store, a copy there had to be invalidated. MESI, not
 * MOESI: the reference machine is an Intel Xeon (MESIF, whose F state only picks which
 * sharer answers a clean read; the counts are the same), and a HITM load there writes the
 * line back, where an AMD cache would keep it dirty in Owned state (docs/c2c.md).
 */
static enum c2c_outcome c2c_access(struct c2c_model *m, struct c2c_line *l, unsigned int cpu,
				    bool store, bool *cross, unsigned int *invalidated)
{
	unsigned int me = cache_of(&m->p, cpu);
	const struct c2c_mask *local = &m->local[c2c_socket(&m->p, cpu)];
	struct c2c_mask others = l->sharers;
	bool mine = c2c_mask_test(&l->sharers, me), here = false, there = false;
	enum c2c_outcome o;

	others.w[me / 64] &= ~(1ull << (me % 64));
	for (int i = 0; i < C2C_MASK_WORDS; i++) {	/* other copies on this socket, on others */
		here |= (others.w[i] & local->w[i]) != 0;
		there |= (others.w[i] & ~local->w[i]) != 0;
	}
	*cross = false;
	*invalidated = 0;
	if (!mine && !here && !there) {
		c2c_mask_set(&l->sharers, me);
		l->dirty = store;
		return C2C_COLD;
	}
	if (!here && !there) {
		l->dirty |= store;
		return C2C_HIT;
	}
	if (!store) {
		if (mine)
			return C2C_HIT;
		o = l->dirty ? C2C_HITM : C2C_CLEAN;
		*cross = !here;
		c2c_mask_set(&l->sharers, me);
		l->dirty = false;
		return o;
	}
	o = mine ? C2C_UPGRADE : l->dirty ? C2C_HITM : C2C_CLEAN;
	*cross = there;
	*invalidated = c2c_mask_weight(&others);
	l->sharers = (struct c2c_mask){ { 0 } };
	c2c_mask_set(&l->sharers, me);
	l->dirty = true;
	return o;
}

/* ---- the queues ---- */

void c2c_push(struct c2c_model *m, unsigned int cpu, struct c2c_event ev)
{
	struct c2c_queue *q = &m->q[cpu];
	uint64_t n = q->pushed;

	if (n && n % C2C_CHUNK_EVENTS == 0) {
		struct c2c_chunk *k = malloc(sizeof(*k));

		if (!k)
			abort();
		k->next = NULL;
		__atomic_store_n(&q->tail->next, k, __ATOMIC_RELEASE);
		q->tail = k;
	}
	q->tail->ev[n % C2C_CHUNK_EVENTS] = ev;
	__atomic_store_n(&q->pushed, n + 1, __ATOMIC_RELEASE);
}

/* The consumer's next event of q, or NULL if the producer has not pushed it yet. */
static const struct c2c_event *peek(struct c2c_queue *q)
{
	if (__atomic_load_n(&q->pushed, __ATOMIC_ACQUIRE) == q->taken)
		return NULL;
	if (q->taken - q->head_base == C2C_CHUNK_EVENTS) {
		/* The producer linked the next chunk before it published an event in it. */
		struct c2c_chunk *next = __atomic_load_n(&q->head->next, __ATOMIC_ACQUIRE);

		free(q->head);
		q->head = next;
		q->head_base += C2C_CHUNK_EVENTS;
	}
	return &q->head->ev[q->taken - q->head_base];
}

/* ---- replay ---- */

static void count(struct c2c_counts *n, bool store, enum c2c_outcome o, bool cross,
		  unsigned int invalidated, uint64_t wait, bool streamed)
{
	n->loads += !store;
	n->stores += store;
	n->outcome[o][cross]++;
	n->hitm_loads += !store && o == C2C_HITM;
	n->invalidated += invalidated;
	n->wait_ps += wait;
	n->streamed += streamed;
}

static void count_pc(struct c2c_line *l, const struct c2c_event *ev, bool transfer)
{
	for (int i = 0; i < C2C_LINE_PCS; i++) {
		if (!l->pc[i].accesses)
			l->pc[i].insn = ev->insn;
		if (l->pc[i].insn == ev->insn) {
			l->pc[i].accesses++;
			l->pc[i].transfers += transfer;
			l->pc[i].bytes |= 1ull << ev->off;
			return;
		}
	}
	l->pc_other++;
}

/* A counted access of CPU c that moved line l (outcome o) or invalidated its other copies:
 * by whom to whom (the last CPU to access it holds a copy), and into the window's history. */
static void note_move(struct c2c_model *m, const struct c2c_line *l, unsigned int c,
		      enum c2c_outcome o, bool store, uint64_t t)
{
	unsigned int from = l->last ? l->last - 1u : c;

	if (o != C2C_UPGRADE)
		m->pairs[from * m->p.nr_cpus + c]++;
	if (m->nr_moves == m->max_moves) {
		m->moves_dropped++;
		return;
	}
	if (m->nr_moves == m->moves_size) {
		m->moves_size = m->moves_size ? 2 * m->moves_size : 4096;
		m->moves = realloc(m->moves, m->moves_size * sizeof(*m->moves));
		if (!m->moves)
			abort();
	}
	m->moves[m->nr_moves++] = (struct c2c_move){ .t = t, .line = l->line - 1, .from = (uint16_t)from,
						     .to = (uint16_t)c, .outcome = (uint8_t)o, .store = store };
}

/*
 * Spinning. A CPU that waits for another executes `pause` in a loop that reloads the line it
 * waits on; in the guest it spins for as long as the host takes to run the other CPU, which
 * says nothing about the modelled machine. So the plugin replaces each such loop by a spin
 * event (its line: the one the CPU read last) and a spin-end event, and the model makes the
 * CPU wait, in modelled time, until another CPU stores to that line (unless one already has
 * since this CPU last looked); the instructions it spun do not count. Then it reloads the
 * line (the last load of the loop, kept) and goes on as it did in the guest. A pause loop
 * nothing ends in the model (every CPU left is waiting) is ended at its own time and counted
 * in spins_unanswered.
 */
static bool waiting(const struct c2c_cpu *cpu)
{
	return cpu->wait[0] | cpu->wait[1];
}

static void stop_waiting(struct c2c_model *m, struct c2c_cpu *cpu)
{
	cpu->wait[0] = cpu->wait[1] = 0;
	m->nr_waiting--;
}

static void wake_waiters(struct c2c_model *m, uint32_t line, uint64_t t)
{
	for (unsigned int c = 0; c < m->p.nr_cpus; c++) {
		struct c2c_cpu *cpu = &m->cpu[c];

		if (cpu->wait[0] == line + 1 || cpu->wait[1] == line + 1) {
			stop_waiting(m, cpu);
			cpu->now = cpu->now > t ? cpu->now : t;
		}
	}
}

/* A CPU accessed line (+1), whose version is now v: remember it among the last two. */
static void seen(struct c2c_cpu *cpu, uint32_t line, uint32_t v)
{
	if (cpu->seen[0] != line) {
		cpu->seen[1] = cpu->seen[0];
		cpu->seen_version[1] = cpu->seen_version[0];
		cpu->seen[0] = line;
	}
	cpu->seen_version[0] = v;
}

/* Has line (+1) changed since the CPU last looked, or did it never look? */
static bool changed(struct c2c_model *m, const struct c2c_cpu *cpu, uint32_t line)
{
	for (int i = 0; i < 2; i++)
		if (cpu->seen[i] == line)
			return c2c_line_get(m, line - 1)->version != cpu->seen_version[i];
	return true;
}

static void start_waiting(struct c2c_model *m, struct c2c_cpu *cpu, uint32_t a, uint32_t b)
{
	cpu->wait[0] = a;
	cpu->wait[1] = b;
	m->nr_waiting++;
}

/* A pause loop on lines (+1; the second may be 0): wait, unless one has changed already. */
static void spin(struct c2c_model *m, struct c2c_cpu *cpu, uint32_t a, uint32_t b)
{
	m->spins++;
	if (!changed(m, cpu, a) && !(b && changed(m, cpu, b)))
		start_waiting(m, cpu, a, b);
}

/*
 * A cold store to the line after the one this CPU's previous cold store filled streams: the
 * CPU does not wait for each fill in turn, it has mlp of them in flight (a page being
 * zeroed costs one fill, then 1/mlp of one per line).
 */
static bool streams(struct c2c_model *m, struct c2c_cpu *cpu, uint32_t line, bool store,
		    enum c2c_outcome o)
{
	bool stream = store && o == C2C_COLD && m->p.mlp > 1 && cpu->last_cold_store &&
		      line == cpu->last_cold_store;

	if (store && o == C2C_COLD)
		cpu->last_cold_store = line + 1;
	return stream;
}

/*
 * Replay one load or store of CPU c, due at modelled time t (ps). A hit costs nothing beyond
 * its instruction. Anything else moves or invalidates the line: it starts when the line's
 * previous transfer has ended (transfers of one line are serialised: a hot line is handed
 * from cache to cache one at a time), takes the outcome's latency, and the CPU waits for it.
 */
static void replay(struct c2c_model *m, unsigned int c, const struct c2c_event *ev, uint64_t t)
{
	struct c2c_line *l = c2c_line_get(m, ev->line);
	bool store = ev->kind != C2C_LOAD, cross, streamed;
	unsigned int invalidated;
	enum c2c_outcome o = c2c_access(m, l, c, store, &cross, &invalidated);
	uint64_t wait = 0;

	streamed = streams(m, &m->cpu[c], ev->line, store, o);
	if (o != C2C_HIT) {
		uint64_t start = t > l->busy_until ? t : l->busy_until;

		wait = start - t;
		t = start + m->p.ps[o][cross] / (streamed ? m->p.mlp : 1);
		l->busy_until = t;
	}
	if (m->log)
		m->log(m->log_arg, c, store, ev->line, !m->cpu[c].uncounted, o, cross);
	if (ev->kind == C2C_ACQUIRE)
		l->holder = (uint16_t)(c + 1);
	else if (store && l->holder == c + 1)
		l->holder = 0;		/* the holder's store: the release */
	if (store) {
		l->version++;
		if (m->nr_waiting)
			wake_waiters(m, ev->line, t);
	}
	seen(&m->cpu[c], ev->line + 1, l->version);
	if (!m->cpu[c].uncounted) {
		count(&m->cpu[c].n, store, o, cross, invalidated, wait, streamed);
		count(&l->n, store, o, cross, invalidated, wait, streamed);
		count(&m->total, store, o, cross, invalidated, wait, streamed);
		count_pc(l, ev, o == C2C_HITM || o == C2C_CLEAN);
		c2c_mask_set(&l->touched, c);
		if (o >= C2C_HITM)
			note_move(m, l, c, o, store, t);
	}
	l->last = (uint16_t)(c + 1);
	m->cpu[c].now = t;
	m->cpu[c].icount = ev->icount;
}

/*
 * Locks. The guest's CPUs took each lock in the order the host ran them, and a CPU that
 * found it held spun for as long as the host took: neither says anything about the modelled
 * machine. So the plugin drops the attempts that failed in the guest and the pause loops
 * between them, and passes only the xchg that took the lock (an acquire); the holder's next
 * store to the line releases it. The model decides who waits: an acquire of a line another
 * CPU holds reads it (a waiter's spinning copy), waits for a store to it, reads it again and
 * tries again, as a test-and-test-and-set lock's waiter does on hardware. A CPU whose acquire
 * can never be answered (every CPU left waits) goes ahead when the deadlock is found.
 */
static bool acquire_waits(struct c2c_model *m, unsigned int c, const struct c2c_event *ev, uint64_t t)
{
	struct c2c_cpu *cpu = &m->cpu[c];
	struct c2c_line *l = c2c_line_get(m, ev->line);
	struct c2c_event reread = *ev;

	if (cpu->forced) {
		cpu->forced = false;
		m->forced++;
		return false;
	}
	if (!l->holder || l->holder == c + 1)
		return false;
	m->lock_waits++;
	reread.kind = C2C_LOAD;
	if (!c2c_mask_test(&l->sharers, cache_of(&m->p, c)))
		replay(m, c, &reread, t);
	seen(cpu, ev->line + 1, c2c_line_get(m, ev->line)->version);
	start_waiting(m, cpu, ev->line + 1, 0);
	return true;
}

/* Counting stops (a warm-up) or starts again for CPU c at time t. */
static void set_counted(struct c2c_cpu *cpu, bool counted, uint64_t t)
{
	if (counted && cpu->uncounted)
		cpu->counted_from = t;
	if (!counted && !cpu->uncounted)
		cpu->counted_ps += t - cpu->counted_from;
	cpu->uncounted = !counted;
}

/* Take CPU c's next event, due at t: an access, a marker. */
static void replay_next(struct c2c_model *m, unsigned int c, uint64_t t)
{
	struct c2c_cpu *cpu = &m->cpu[c];
	struct c2c_queue *q = &m->q[c];
	const struct c2c_event *ev = peek(q);

	switch (ev->kind) {
	case C2C_ACQUIRE:
		if (acquire_waits(m, c, ev, t)) {
			cpu->icount = ev->icount;
			return;		/* tried again once the line changes */
		}
		replay(m, c, ev, t);
		break;
	case C2C_LOAD:
	case C2C_STORE:
		replay(m, c, ev, t);
		break;
	case C2C_END:
		set_counted(cpu, false, t);
		cpu->state = C2C_DONE;
		cpu->now = cpu->end = t;
		cpu->instructions = ev->icount;
		break;
	case C2C_UNCOUNTED:
	case C2C_COUNTED:
		set_counted(cpu, ev->kind == C2C_COUNTED, t);
		cpu->now = t;
		cpu->icount = ev->icount;
		break;
	case C2C_SPIN:
		cpu->now = t;
		cpu->icount = ev->icount;
		spin(m, cpu, ev->line + 1, ev->insn);
		break;
	case C2C_SPIN_END:	/* the instructions spun are free: the wait was modelled */
		cpu->icount = ev->icount;
		break;
	default:	/* begin and sync markers are taken by the merge itself */
		break;
	}
	q->taken++;
}

/* ---- the merge ---- */

#define NO_CPU (~0u)

static uint64_t due(const struct c2c_model *m, const struct c2c_cpu *cpu, uint64_t icount)
{
	uint64_t units = icount > cpu->icount ? icount - cpu->icount : 0;

	return cpu->now + units * m->p.ps_per_insn / (m->p.clock_div ? m->p.clock_div : 1);
}

/* CPU c's next event, taking its begin marker first; NULL if it has none yet. */
static const struct c2c_event *next_event(struct c2c_model *m, unsigned int c)
{
	struct c2c_cpu *cpu = &m->cpu[c];
	const struct c2c_event *ev = peek(&m->q[c]);

	if (ev && cpu->state == C2C_UNBEGUN && ev->kind == C2C_BEGIN) {
		*cpu = (struct c2c_cpu){ .state = C2C_ACTIVE, .icount = ev->icount };
		m->q[c].taken++;
		ev = peek(&m->q[c]);
	}
	return ev;
}

static void queued_high_water(struct c2c_model *m)
{
	uint64_t queued = 0;

	for (unsigned int c = 0; c < m->p.nr_cpus; c++)
		queued += __atomic_load_n(&m->q[c].pushed, __ATOMIC_ACQUIRE) - m->q[c].taken;
	if (queued > m->max_queued)
		m->max_queued = queued;
}

/*
 * Replay every event whose turn has surely come. CPU c's next event is due at
 *
 *     due = now(c) + (icount(event) - icount(c)) * ps_per_insn / clock_div
 *
 * now(c) and icount(c) being its modelled time and clock at its last event: the clock counts
 * the CPU's instruction time (the plugin's in femtoseconds, each instruction costed by its
 * class: plugin.c, "Instruction time"), and each access that is not a hit adds its wait and
 * latency to now(c) (replay()). The event due first (the lower CPU number on a tie) goes
 * next. A CPU whose next event has not arrived yet (its vCPU thread is behind on the host)
 * still bounds it: its clock has reached `clock` since its last event, with no access, so
 * its next event is due no earlier than due(clock). An event
 * is replayed only if it is due before every such bound (a CPU that has not begun bounds
 * everything: its events start at time 0); otherwise the merge waits. The replay order, and
 * so every count, depends on each CPU's own sequence of accesses, never on how the host
 * interleaved the vCPU threads. A sync marker is a barrier in modelled time: a CPU that
 * reaches one waits until every CPU still in the window has, and all leave it at the time
 * the last one arrived (the guest's own barrier orders them in real time; this orders them
 * in the model, where a CPU's spinning has no meaning). With `closing` (the window has
 * ended), a CPU with nothing queued is finished, and one that never began took no part.
 */
/* Does an event of CPU c due at t go before one of CPU d due at u? */
static bool before(uint64_t t, unsigned int c, uint64_t u, unsigned int d)
{
	return t < u || (t == u && c < d);
}

/* Every CPU that has not ended waits at its sync marker: they all leave it at the time the
 * last one reached it. */
static void release_sync(struct c2c_model *m, uint64_t t)
{
	for (unsigned int c = 0; c < m->p.nr_cpus; c++) {
		const struct c2c_event *ev = peek(&m->q[c]);

		if (m->cpu[c].state != C2C_ACTIVE || !ev || ev->kind != C2C_SYNC)
			continue;
		m->cpu[c].now = t;
		m->cpu[c].icount = ev->icount;
		m->q[c].taken++;
	}
}

/* Where every CPU stands, as one pass of c2c_merge() sees it. */
struct scan {
	unsigned int best, next;	/* the earliest event, and the first competitor (an event
					 * or a bound) */
	uint64_t best_due, next_due;
	unsigned int waiter;		/* the waiting CPU with the earliest time */
	uint64_t sync_due;		/* the latest arrival at a sync marker */
	bool unbegun, syncing;
};

static void compete(struct scan *s, unsigned int c, uint64_t t)
{
	if (before(t, c, s->next_due, s->next)) {
		s->next_due = t;
		s->next = c;
	}
}

/* A CPU that began but has nothing queued when the window closes never reached its end. */
static void cut(struct c2c_model *m, struct c2c_cpu *cpu)
{
	set_counted(cpu, false, cpu->now);
	cpu->state = C2C_DONE;
	cpu->end = cpu->now;
	cpu->instructions = cpu->icount;
	m->cut++;
}

/* CPU c's part of the pass: its next event, or the bound on it, or why it holds nobody up. */
static void scan_cpu(struct c2c_model *m, unsigned int c, bool closing, struct scan *s)
{
	struct c2c_cpu *cpu = &m->cpu[c];
	const struct c2c_event *ev;
	uint64_t t;

	if (cpu->state == C2C_DONE)
		return;
	if (waiting(cpu)) {	/* due after the store that wakes it: holds nobody up */
		if (s->waiter == NO_CPU || cpu->now < m->cpu[s->waiter].now)
			s->waiter = c;
		return;
	}
	ev = next_event(m, c);
	if (!ev && cpu->state == C2C_ACTIVE && !closing) {
		/* Read the clock, then look again: an event pushed before it is seen. */
		t = due(m, cpu, __atomic_load_n(&m->q[c].clock, __ATOMIC_ACQUIRE));
		ev = next_event(m, c);
		if (!ev) {
			compete(s, c, t);
			return;
		}
	}
	if (!ev) {
		if (closing && cpu->state == C2C_ACTIVE)
			cut(m, cpu);
		s->unbegun |= cpu->state == C2C_UNBEGUN && !closing;
		return;
	}
	t = due(m, cpu, ev->icount);
	if (ev->kind == C2C_SYNC) {	/* waits for the others; holds nobody up */
		s->syncing = true;
		s->sync_due = t > s->sync_due ? t : s->sync_due;
	} else if (before(t, c, s->best_due, s->best)) {
		if (s->best != NO_CPU)
			compete(s, s->best, s->best_due);
		s->best_due = t;
		s->best = c;
	} else {
		compete(s, c, t);
	}
}

bool c2c_merge(struct c2c_model *m, bool closing)
{
	for (;;) {
		struct scan s = { .best = NO_CPU, .next = NO_CPU, .best_due = UINT64_MAX,
				  .next_due = UINT64_MAX, .waiter = NO_CPU };
		const struct c2c_event *ev;
		bool stuck;

		for (unsigned int c = 0; c < m->p.nr_cpus; c++)
			scan_cpu(m, c, closing, &s);
		stuck = s.best == NO_CPU && s.next == NO_CPU && !s.unbegun;
		if (stuck && s.waiter != NO_CPU) {
			stop_waiting(m, &m->cpu[s.waiter]);	/* nothing will end its wait: it ends now */
			m->cpu[s.waiter].forced = true;
			m->spins_unanswered++;
			continue;
		}
		if (stuck && s.syncing) {
			release_sync(m, s.sync_due);
			continue;
		}
		if (s.best == NO_CPU || s.unbegun ||
		    (s.next != NO_CPU && !before(s.best_due, s.best, s.next_due, s.next))) {
			queued_high_water(m);
			return stuck;
		}
		/* Replay the best CPU's events as long as each goes before every other CPU's. */
		do {
			replay_next(m, s.best, s.best_due);
			if (m->cpu[s.best].state == C2C_DONE || waiting(&m->cpu[s.best]) ||
			    !(ev = peek(&m->q[s.best])) || ev->kind == C2C_SYNC)
				break;
			s.best_due = due(m, &m->cpu[s.best], ev->icount);
		} while (s.next == NO_CPU || before(s.best_due, s.best, s.next_due, s.next));
	}
}
