/*
 * Running a generated program: build its machine, then each step, alone on its CPU or as a
 * phase of several CPU threads at once (free-running, under the seeded PCT scheduler, or one
 * op at a time), each op a plain call of the mm API. After each step the model checks the
 * results and the state (gen_model.c). The ops are written the way the printed test
 * (gen_emit.c) writes them: the same calls, in the same order, on the same CPUs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "tests/gen/gen_internal.h"
#include "tests/host/harness.h"
#include "kernel/smp.h"

struct gen_world gen_world;
struct gen_handles gen_h;
struct op_res gen_res[GEN_MAX_OPS];
volatile int *gen_progress;

/* ---- the machine ---- */

/*
 * Node 0: 8 MiB of ZONE_DMA and 24 MiB of ZONE_DMA32; node 1 (or node 0's third zone, one
 * node): 24 MiB of ZONE_NORMAL above 4 GiB. Small, so that a program can take all of it.
 */
static int world_create(const struct gen_config *c)
{
	struct gen_world *w = &gen_world;
	struct pglist_data *nodes[2] = { &w->nodes[0], &w->nodes[1] };
	int err;

	memset(w, 0, sizeof(*w));
	memblock_init(&w->mb, host_boot_map_limit);
	memblock_reserve(&w->mb, 0, PAGE_SIZE);
	memblock_add(&w->mb, GEN_LO_BASE, GEN_LO_SIZE(c->deferred));
	memblock_add(&w->mb, GEN_HI_BASE, GEN_HI_SIZE);
	if (c->nr_nodes == 2)
		memblock_set_node(&w->mb, GEN_HI_BASE, GEN_HI_SIZE, 1);
	for (unsigned int cpu = 0; cpu < GEN_CPUS; cpu++)
		w->cpu_node[cpu] = c->nr_nodes == 2 ? (u8)(cpu & 1) : 0;
	err = (c->deferred ? mm_machine_init_deferred : mm_machine_init)(
		&w->m, nodes, c->nr_nodes, &w->mb, "gen", GEN_CPUS, NULL, w->cpu_node,
		(enum pcp_lock_model)c->lock_model);
	if (err)
		return err;
	for (unsigned int n = 0; n < c->nr_nodes; n++)
		zone_pcp_update(w->m.node[n], GEN_CPUS);
	return 0;
}

struct mm_machine *gen_machine_create(const struct gen_config *c)
{
	return world_create(c) ? NULL : &gen_world.m;
}

void gen_machine_destroy(void)
{
	mm_machine_destroy(&gen_world.m);
}

/* ---- one op: the mm API calls, as the printed test makes them ---- */

static u64 win_addr(u32 page)
{
	return GEN_WIN_BASE + (u64)page * PAGE_SIZE;
}

/* Words of a __GFP_ZERO block that are not zero (the first and last of each page). */
static u64 nonzero_words(struct page *page, unsigned int order)
{
	u64 bad = 0;

	for (unsigned long k = 0; k < (1ul << order); k++) {
		const u64 *w = page_address(page + k);

		bad += (w[0] != 0) + (w[PAGE_SIZE / 8 - 1] != 0);
	}
	return bad;
}

static void exec_alloc(unsigned int i, const struct gen_op *op, struct op_res *r)
{
	struct h_block *b = &gen_h.blk[op->slot];
	gfp_t gfp = gen_gfps[op->gfp].gfp | (op->flags ? __GFP_NOWARN : 0);
	u64 *w;

	r->page = alloc_pages_node(gen_node(op->node), gfp, op->order);
	if (!r->page)
		return;
	if (gfp & __GFP_ZERO)
		r->bad_words = nonzero_words(r->page, op->order);
	w = page_address(r->page);
	r->tag = w[0] = w[(PAGE_SIZE << op->order) / 8 - 1] = GEN_BLK_TAG(i);
	*b = (struct h_block){ .page = r->page, .order = op->order, .tag = r->tag };
}

static void exec_free(const struct gen_op *op, struct op_res *r)
{
	struct h_block *b = &gen_h.blk[op->slot];
	const u64 *w = page_address(b->page);

	r->page = b->page;
	r->ret = b->order;
	r->tag = b->tag;
	r->bad_words = (w[0] != b->tag) + (w[(PAGE_SIZE << b->order) / 8 - 1] != b->tag);
	while (b->refs) {
		put_page(b->page);
		b->refs--;
	}
	__free_pages(b->page, b->order);
	b->page = NULL;
}

static void exec_ref(const struct gen_op *op, struct op_res *r)
{
	struct h_block *b = &gen_h.blk[op->slot];

	if (op->flags && b->refs < 8) {
		get_page(b->page);
		b->refs++;
	} else if (!op->flags && b->refs) {
		put_page(b->page);
		b->refs--;
	} else {
		r->ran = false;
	}
}

static struct page **old_fills[GEN_MAX_OPS];
static unsigned int nr_old_fills;
static pthread_mutex_t old_fills_lock = PTHREAD_MUTEX_INITIALIZER;

void gen_free_old_fills(void)
{
	while (nr_old_fills)
		free(old_fills[--nr_old_fills]);
}

static void exec_fill(unsigned int i, const struct gen_op *op, struct op_res *r)
{
	struct h_group *g = &gen_h.grp[op->slot];
	gfp_t gfp = gen_gfps[op->gfp].gfp | __GFP_NOWARN;
	u32 max = GEN_FILL_MAX >> op->order;
	struct page *page;

	if (g->pages) {		/* the model may still read it: freed after the step */
		pthread_mutex_lock(&old_fills_lock);
		old_fills[nr_old_fills++] = g->pages;
		pthread_mutex_unlock(&old_fills_lock);
	}
	g->pages = r->fill = malloc(max * sizeof(*g->pages));
	g->order = op->order;
	g->n = 0;
	while (g->n < max && (page = alloc_pages_node(gen_node(op->node), gfp, op->order))) {
		*(u64 *)page_address(page) = GEN_BLK_TAG(i);
		g->pages[g->n++] = page;
	}
	r->tag = GEN_BLK_TAG(i);
	r->ret = g->n;
}

/* The last `len` blocks of the group, freed; their pointers stay in pages[] past n, for the
 * model to account for. */
static void exec_free_some(const struct gen_op *op, struct op_res *r)
{
	struct h_group *g = &gen_h.grp[op->slot];
	u32 n = MIN(op->len, g->n);

	for (u32 k = 0; k < n; k++) {
		struct page *page = g->pages[--g->n];

		r->bad_words += (*(u64 *)page_address(page) >> 24) != (GEN_BLK_TAG(0) >> 24);
		__free_pages(page, g->order);
	}
	r->ret = n;
}

static void exec_gup(const struct gen_prog *p, unsigned int i, struct op_res *r)
{
	const struct gen_op *op = &p->ops[i];
	struct mm_struct *mm = gen_h.mm[op->mm];
	u64 a = win_addr(op->addr);

	switch (op->kind) {
	case GEN_FAULT:
		r->ret = handle_mm_fault(mm, a);
		return;
	case GEN_WRITE:
		r->ret = get_user_pages_fast(mm, a, op->len, FOLL_WRITE, r->pages);
		for (long j = 0; j < r->ret; j++)
			gen_store_tag(page_address(r->pages[j]), GEN_TAG(i, j));
		if (r->ret > 0)
			put_user_pages(r->pages, (unsigned long)r->ret);
		return;
	case GEN_READ:
		r->ret = get_user_pages_fast(mm, a, op->len, 0, r->pages);
		for (long j = 0; j < r->ret; j++)
			r->seen[j] = gen_load_tag(page_address(r->pages[j]));
		if (r->ret > 0)
			put_user_pages(r->pages, (unsigned long)r->ret);
		return;
	}
}

static unsigned int pin_foll(u8 flags)
{
	return ((flags & GEN_PIN_WRITE) ? FOLL_WRITE : 0) | ((flags & GEN_PIN_LONG) ? FOLL_LONGTERM : 0);
}

static void exec_pin(const struct gen_op *op, struct op_res *r)
{
	struct h_pin *pin = &gen_h.pin[op->slot];
	struct mm_struct *mm = gen_h.mm[op->mm];
	u64 a = win_addr(op->addr);

	if (op->flags & GEN_PIN_GET)
		r->ret = get_user_pages_fast(mm, a, op->len, pin_foll(op->flags), r->pages);
	else if (op->flags & GEN_PIN_SLOW)
		r->ret = pin_user_pages(mm, a, op->len, pin_foll(op->flags), r->pages);
	else
		r->ret = pin_user_pages_fast(mm, a, op->len, pin_foll(op->flags), r->pages);
	for (long j = 0; j < r->ret; j++)
		r->seen[j] = gen_load_tag(page_address(r->pages[j]));
	if (r->ret > 0) {
		memcpy(pin->pages, r->pages, (size_t)r->ret * sizeof(r->pages[0]));
		pin->n = (u32)r->ret;
		pin->mm = op->mm;
		pin->flags = op->flags;
		pin->addr = op->addr;
	}
}

static void exec_unpin(const struct gen_op *op)
{
	struct h_pin *pin = &gen_h.pin[op->slot];

	if (pin->flags & GEN_PIN_GET)
		put_user_pages(pin->pages, pin->n);
	else
		unpin_user_pages(pin->pages, pin->n);
	pin->n = 0;
}

static void exec_drain(const struct gen_op *op)
{
	struct zone *zone = gen_zone(op->node);

	switch (op->flags & 3) {
	case GEN_DRAIN_LOCAL:
		drain_local_pages(zone);
		break;
	case GEN_DRAIN_CPU:
		drain_cpu_pages(&gen_world.m, op->len % GEN_CPUS);
		break;
	case GEN_DRAIN_ZONE:
		drain_all_pages(zone);
		break;
	default:
		drain_all_pages_machine(&gen_world.m);
	}
}

static void exec_fail(const struct gen_op *op)
{
	struct fault_attr a = { .interval = op->addr, .probability = op->len,
				.times = op->slot ? op->slot : -1, .min_order = op->order,
				.seed = op->wild };

	fail_page_alloc_configure(op->flags ? &a : NULL);
}

/* Can op run at all now (its slot holds what it needs)? Decided by the CPU that runs it. */
static bool op_ready(const struct gen_op *op)
{
	switch (op->kind) {
	case GEN_ALLOC:
		return !gen_h.blk[op->slot].page;
	case GEN_FREE: case GEN_REF:
		return gen_h.blk[op->slot].page;
	case GEN_FILL:
		return !gen_h.grp[op->slot].n;
	case GEN_FREE_SOME:
		return gen_h.grp[op->slot].n;
	case GEN_MM_CREATE:
		return !gen_h.mm[op->slot];
	case GEN_MM_DESTROY:
		return gen_h.mm[op->slot];
	case GEN_MMAP:
		return gen_h.mm[op->mm] && !gen_mmap_outside(op);
	case GEN_MUNMAP: case GEN_FAULT: case GEN_WRITE: case GEN_READ:
		return gen_h.mm[op->mm];
	case GEN_PIN:
		return gen_h.mm[op->mm] && !gen_h.pin[op->slot].n;
	case GEN_UNPIN:
		return gen_h.pin[op->slot].n;
	case GEN_DRAIN:
		return (op->flags & 3) == GEN_DRAIN_CPU || (op->flags & 3) == GEN_DRAIN_MACHINE ||
		       gen_zone(op->node);
	case GEN_PCP_DISABLE: case GEN_PCP_ENABLE:
		return gen_zone(op->node);
	case GEN_DEFERRED_INIT: case GEN_VERIFY: case GEN_PCP_UPDATE:
		return op->node < gen_world.m.nr_nodes;
	}
	return true;
}

void gen_exec_op(const struct gen_prog *p, unsigned int i)
{
	const struct gen_op *op = &p->ops[i];
	struct op_res *r = &gen_res[i];

	r->ran = op_ready(op);
	if (!r->ran)
		return;
	switch (op->kind) {
	case GEN_ALLOC: exec_alloc(i, op, r); break;
	case GEN_FREE: exec_free(op, r); break;
	case GEN_REF: exec_ref(op, r); break;
	case GEN_FILL: exec_fill(i, op, r); break;
	case GEN_FREE_SOME: exec_free_some(op, r); break;
	case GEN_MM_CREATE:
		gen_h.mm[op->slot] = mm_create(gen_node(op->node));
		r->ret = gen_h.mm[op->slot] != NULL;
		break;
	case GEN_MM_DESTROY:
		mm_destroy(gen_h.mm[op->slot]);
		gen_h.mm[op->slot] = NULL;
		break;
	case GEN_MMAP: {
		u64 start, len;

		gen_op_range(op, &start, &len);
		r->ret = mm_mmap_anon(gen_h.mm[op->mm], start, len, op->flags & GEN_MAP_WRITE,
				      op->flags & GEN_MAP_HUGE, op->flags & GEN_MAP_POP);
		break;
	}
	case GEN_MUNMAP: {
		u64 start, len;

		gen_op_range(op, &start, &len);
		r->ret = mm_munmap(gen_h.mm[op->mm], start, len);
		break;
	}
	case GEN_FAULT: case GEN_WRITE: case GEN_READ: exec_gup(p, i, r); break;
	case GEN_PIN: exec_pin(op, r); break;
	case GEN_UNPIN: exec_unpin(op); break;
	case GEN_DRAIN: exec_drain(op); break;
	case GEN_PCP_DISABLE: zone_pcp_disable(gen_zone(op->node)); break;
	case GEN_PCP_ENABLE: zone_pcp_enable(gen_zone(op->node)); break;
	case GEN_PCP_UPDATE: zone_pcp_update(gen_node(op->node), op->len); break;
	case GEN_FAIL: exec_fail(op); break;
	case GEN_VERIFY: r->ret = (long)mm_verify(gen_node(op->node)); break;
	case GEN_DEFERRED_INIT: deferred_init_memmap(gen_node(op->node)); break;
	}
}

/* ---- steps: an op alone, or a phase on several CPU threads ---- */

struct phase_run {
	const struct gen_prog *p;
	const struct gen_plan *pl;
};

static void run_cpu_ops(const struct phase_run *pr, unsigned int cpu)
{
	for (unsigned int i = pr->pl->first; i < pr->pl->first + pr->pl->n; i++)
		if (pr->p->ops[i].cpu == cpu && !pr->pl->skip[i])
			gen_exec_op(pr->p, i);
}

static unsigned int cpus_arrived, cpus_expected;

void gen_run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	cpus_arrived = 0;
	cpus_expected = n;
	run_on_cpus(n, fn, args, arg_size);
}

/*
 * A phase's CPU threads start together, every CPU online first, as CPUs are while the kernel
 * runs: a thread still coming online would look offline to a drain in the irqoff model,
 * which then empties its lists from the draining CPU (what it may do for an offline CPU) just
 * as the thread starts to use them. Under PCT the harness starts them together already.
 */
void gen_wait_cpus(void)
{
	__atomic_add_fetch(&cpus_arrived, 1, __ATOMIC_ACQ_REL);
	while (!host_pct_on() && __atomic_load_n(&cpus_arrived, __ATOMIC_ACQUIRE) < cpus_expected)
		arch_cpu_relax();
}

static void *phase_cpu(void *arg)
{
	gen_wait_cpus();
	run_cpu_ops(*(struct phase_run **)arg, arch_cpu_id());
	return NULL;
}

u64 gen_cpu_injected(unsigned int cpu)
{
	unsigned int me = host_cpu_id;
	u64 n;

	host_cpu_id = cpu;	/* the counter of `cpu`, read from the main thread */
	n = fail_page_alloc_this_cpu_failed();
	host_cpu_id = me;
	return n;
}

/* Run the step's ops: on the main thread if only CPU 0 has any, else on CPU threads 0..max. */
static void run_ops(const struct phase_run *pr, unsigned int top)
{
	const struct phase_run *args[GEN_CPUS];

	for (unsigned int c = 0; c < GEN_CPUS; c++)
		args[c] = pr;
	if (!top)
		run_cpu_ops(pr, 0);
	else
		gen_run_on_cpus(top + 1, phase_cpu, args, sizeof(args[0]));
}

static void run_step(const struct gen_prog *p, const struct gen_plan *pl)
{
	struct phase_run pr = { p, pl };
	unsigned int top = 0, cpu = p->ops[pl->first].cpu;
	u64 before = 0;

	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		memset(&gen_res[i], 0, offsetof(struct op_res, pages));
		if (!pl->skip[i])
			top = MAX(top, (unsigned int)p->ops[i].cpu);
	}
	if (pl->alone)		/* injected failures counted around the op, on its CPU */
		before = gen_cpu_injected(cpu);
	run_ops(&pr, top);
	if (pl->alone)
		gen_res[pl->first].inj = gen_cpu_injected(cpu) - before;
}

/* splitmix64's output function: each phase's PCT seed from the run's and the phase's index. */
static u64 mix(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A phase's ops, hashed (FNV-1a over their fields): its PCT seed does not change when the
 * shrinker deletes ops elsewhere. */
static u64 phase_hash(const struct gen_prog *p, const struct gen_plan *pl)
{
	u64 h = 0xcbf29ce484222325ull;

	for (unsigned int i = pl->first; i < pl->first + pl->n; i++) {
		const struct gen_op *o = &p->ops[i];
		const u64 f[] = { o->kind, o->cpu, o->slot, o->mm, o->node, o->order, o->gfp,
				  o->flags, o->addr, o->len, o->wild, o->wild_len };

		for (size_t k = 0; k < ARRAY_SIZE(f); k++)
			h = (h ^ f[k]) * 0x100000001b3ull;
	}
	return h;
}

/*
 * A phase under PCT: each phase is one PCT run of its own, with seed mix(pct_seed ^ the hash
 * of its ops),
 * depth o->pct_depth and k its steps as the run before this one counted them (o->phase_k,
 * by first op; 0: measure them now, depth 1). So each phase gets its own d - 1 change points,
 * where one run over the whole program would give a long program few per phase; and ops
 * alone do not pay the scheduler's cost (one thread: nothing to interleave).
 */
static void run_step_pct(const struct gen_prog *p, const struct gen_plan *pl,
			 const struct gen_run_opts *o, struct gen_verdict *v)
{
	u64 k = o->phase_k ? o->phase_k[pl->first] : 0, steps, switches;

	if (pl->alone) {
		run_step(p, pl);
		return;
	}
	host_pct_begin(mix(o->pct_seed ^ phase_hash(p, pl)), k ? o->pct_depth : 1, k);
	run_step(p, pl);
	host_pct_end(&steps, &switches);
	if (o->phase_k_out)
		o->phase_k_out[pl->first] = steps;
	v->pct_steps += steps;
}

void gen_run(const struct gen_prog *p, const struct gen_run_opts *o, struct gen_verdict *v)
{
	static struct gen_plan pl;

	memset(v, 0, sizeof(*v));
	memset(&gen_h, 0, sizeof(gen_h));
	host_phys_reset();
	host_console_reset();
	host_cpu_id = 0;
	fail_page_alloc_configure(NULL);
	if (world_create(&p->cfg)) {
		snprintf(v->message, sizeof(v->message), "the machine could not be built");
		v->failed = true;
		strcpy(v->fail_class, "setup");
		v->op = -1;
		goto out;
	}
	model_begin(p, o, v);
	for (unsigned int i = 0; i < p->nr_ops && !v->failed;) {
		if (gen_progress)
			*gen_progress = (int)i;
		pl.first = i;
		pl.n = o->sched == GEN_SCHED_SERIAL ? 1 : gen_phase_len(p, i);
		model_plan(&pl);
		model_before(&pl);
		if (o->sched == GEN_SCHED_PCT)
			run_step_pct(p, &pl, o, v);
		else
			run_step(p, &pl);
		if (!model_after(&pl))
			break;
		if (o->verbose) {
			char buf[160];

			for (unsigned int k = i; k < i + pl.n; k++) {
				gen_op_describe(p, k, buf, sizeof(buf));
				printf("  %3u %s%s -> %ld\n", k, pl.n > 1 ? "| " : "", buf, gen_res[k].ret);
			}
		}
		i += pl.n;
	}
	if (!v->failed)
		model_finish();
	if (o->verbose && getenv("GEN_CONSOLE"))
		host_console_dump();
	mm_machine_destroy(&gen_world.m);
out:
	fail_page_alloc_configure(NULL);
}
