/*
 * Generating mm API programs: a seed gives a machine and a sequence of steps, each one op
 * alone or a phase of ops that several CPUs issue at once. Also the libFuzzer decoder (bytes
 * to a program) and the one-line description of an op. No mm/ call here: a generator's
 * shadow of the state only steers arguments towards what exists (an address inside a
 * mapping, a slot that holds something); the model (gen_model.c) decides what is right.
 */
#include <string.h>
#include "tests/gen/mm_gen.h"

const struct gen_gfp gen_gfps[] = {
	{ GFP_KERNEL, "GFP_KERNEL" },
	{ GFP_USER, "GFP_USER" },
	{ GFP_ATOMIC, "GFP_ATOMIC" },
	{ GFP_NOWAIT, "GFP_NOWAIT" },
	{ GFP_DMA32, "GFP_DMA32" },
	{ GFP_DMA, "GFP_DMA" },
	{ GFP_KERNEL | __GFP_ZERO, "GFP_KERNEL | __GFP_ZERO" },
	{ GFP_KERNEL | __GFP_MEMALLOC, "GFP_KERNEL | __GFP_MEMALLOC" },
	{ GFP_KERNEL | __GFP_THISNODE, "GFP_KERNEL | __GFP_THISNODE" },
	{ GFP_KERNEL | __GFP_RECLAIMABLE, "GFP_KERNEL | __GFP_RECLAIMABLE" },
	{ GFP_ATOMIC | __GFP_MOVABLE, "GFP_ATOMIC | __GFP_MOVABLE" },
	{ GFP_USER | __GFP_MEMALLOC | __GFP_THISNODE, "GFP_USER | __GFP_MEMALLOC | __GFP_THISNODE" },
	{ GFP_DMA32 | __GFP_MEMALLOC, "GFP_DMA32 | __GFP_MEMALLOC" },
};
const unsigned int gen_nr_gfps = ARRAY_SIZE(gen_gfps);

const char *const gen_kind_names[GEN_NR_KINDS] = {
	[GEN_ALLOC] = "alloc", [GEN_FREE] = "free", [GEN_REF] = "ref", [GEN_FILL] = "fill",
	[GEN_FREE_SOME] = "free_some", [GEN_MM_CREATE] = "mm_create",
	[GEN_MM_DESTROY] = "mm_destroy", [GEN_MMAP] = "mmap", [GEN_MUNMAP] = "munmap",
	[GEN_FAULT] = "fault", [GEN_WRITE] = "write", [GEN_READ] = "read", [GEN_PIN] = "pin",
	[GEN_UNPIN] = "unpin", [GEN_DRAIN] = "drain", [GEN_PCP_DISABLE] = "pcp_disable",
	[GEN_PCP_ENABLE] = "pcp_enable", [GEN_PCP_UPDATE] = "pcp_update", [GEN_FAIL] = "fail",
	[GEN_VERIFY] = "verify", [GEN_DEFERRED_INIT] = "deferred_init",
};

/* splitmix64: the generator's only source of randomness. */
struct rng {
	u64 s;
};

static u64 rnd(struct rng *r)
{
	u64 z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static u32 below(struct rng *r, u32 n)
{
	return n ? (u32)(rnd(r) % n) : 0;
}

static bool chance(struct rng *r, unsigned int percent)
{
	return below(r, 100) < percent;
}

/* Small numbers are likelier: 1..max, half of them below max / 8. */
static u32 small(struct rng *r, u32 max)
{
	u32 lim = chance(r, 50) ? MAX(max / 8, 1u) : max;

	return 1 + below(r, lim);
}

/* ---- the generator's shadow: what probably exists after the steps so far ---- */

struct shadow_vma {
	u32 start, end;		/* window pages */
	bool huge;
};

struct shadow {
	bool mm[GEN_MMS];
	struct shadow_vma vma[GEN_MMS][MM_MAX_VMAS];
	unsigned int nr_vma[GEN_MMS];
	bool blk[GEN_BLOCKS], grp[GEN_GROUPS], pin[GEN_PINS];
	int depth[MAX_NUMA_NODES * MAX_NR_ZONES];
	unsigned int weight[GEN_NR_KINDS], total;
	u32 gfps;		/* the gfp values this part of the program uses (bit per index) */
	bool verify_alone;
	/* A phase's focus: most address ops of its CPUs go to these pages of this mm. */
	int focus_mm;
	u32 focus_lo, focus_hi;
	/* A burst's address space: the ops of a burst of address ops all go there. */
	int burst_mm;
};

static void shadow_munmap(struct shadow *s, unsigned int m, u32 start, u32 end)
{
	for (unsigned int i = 0; i < s->nr_vma[m];) {
		struct shadow_vma *v = &s->vma[m][i];

		if (end <= v->start || v->end <= start) {
			i++;
		} else if (start <= v->start && v->end <= end) {
			*v = s->vma[m][--s->nr_vma[m]];
		} else if (v->start < start && end < v->end) {
			if (s->nr_vma[m] == MM_MAX_VMAS) {
				i++;
				continue;
			}
			s->vma[m][s->nr_vma[m]++] = (struct shadow_vma){ end, v->end, v->huge };
			v->end = start;
			i++;
		} else {
			if (v->start < start)
				v->end = start;
			else
				v->start = end;
			i++;
		}
	}
}

static bool shadow_free_range(const struct shadow *s, unsigned int m, u32 start, u32 end)
{
	for (unsigned int i = 0; i < s->nr_vma[m]; i++)
		if (start < s->vma[m][i].end && s->vma[m][i].start < end)
			return false;
	return true;
}

/* A populated zone id (node * MAX_NR_ZONES + zone) of the machine gen_run() builds. */
static u8 pick_zone(struct rng *r, const struct gen_config *c)
{
	static const u8 one[] = { ZONE_DMA, ZONE_DMA32, ZONE_NORMAL };
	static const u8 two[] = { ZONE_DMA, ZONE_DMA32, MAX_NR_ZONES + ZONE_NORMAL };

	return c->nr_nodes == 1 ? one[below(r, 3)] : two[below(r, 3)];
}

static int pick_live(struct rng *r, const bool *live, unsigned int n)
{
	unsigned int start = below(r, n);

	for (unsigned int i = 0; i < n; i++)
		if (live[(start + i) % n])
			return (int)((start + i) % n);
	return -1;
}

static int pick_free(struct rng *r, const bool *live, unsigned int n)
{
	unsigned int start = below(r, n);

	for (unsigned int i = 0; i < n; i++)
		if (!live[(start + i) % n])
			return (int)((start + i) % n);
	return (int)start;
}

static u8 pick_gfp(struct rng *r, const struct shadow *s)
{
	u32 n = (u32)__builtin_popcount(s->gfps), k = below(r, n);

	for (u8 i = 0; i < gen_nr_gfps; i++)
		if ((s->gfps >> i) & 1 && !k--)
			return i;
	return 0;
}

/* A page of mm m: mostly inside one of its mappings, sometimes anywhere in the window. */
static u32 pick_addr(struct rng *r, const struct shadow *s, unsigned int m)
{
	if ((int)m == s->focus_mm && chance(r, 80))
		return s->focus_lo + below(r, s->focus_hi - s->focus_lo);
	if (s->nr_vma[m] && chance(r, 85)) {
		const struct shadow_vma *v = &s->vma[m][below(r, s->nr_vma[m])];

		return v->start + below(r, v->end - v->start);
	}
	return below(r, GEN_WIN_PAGES);
}

static u8 pick_order(struct rng *r)
{
	u32 k = below(r, 100);

	if (k < 40)
		return 0;	/* the common case */
	if (k < 65)
		return (u8)(1 + below(r, 3));
	if (k < 85)
		return (u8)(4 + below(r, MAX_ORDER - 3));
	if (k < 95)
		return pageblock_order;
	/* Out of range: just above, then the type's edges (an unsigned int argument). */
	k = below(r, 10);
	return (u8)(k < 6 ? MAX_ORDER + 1 : k < 8 ? MAX_ORDER + 2 + below(r, 20) :
		    k < 9 ? 63 : 64);
}

static void gen_mmap_args(struct rng *r, struct shadow *s, struct gen_op *op)
{
	bool huge = chance(r, 30);

	op->flags = (u8)((chance(r, 80) ? GEN_MAP_WRITE : 0) | (huge ? GEN_MAP_HUGE : 0) |
			 (chance(r, 30) ? GEN_MAP_POP : 0));
	if (chance(r, 4)) {	/* bad arguments: each must be refused */
		static const u64 starts[] = { GEN_WIN_BASE + 100, USER_VA_END - PAGE_SIZE,
					      USER_VA_END, GEN_WIN_BASE, ~0ull & ~(u64)(PAGE_SIZE - 1),
					      GEN_WIN_BASE + PAGE_SIZE };
		static const u64 lens[] = { 0, 2 * PAGE_SIZE, PAGE_SIZE + 1, ~0ull & ~(u64)(PAGE_SIZE - 1),
					    PT_LEVEL_SIZE(2) };

		op->wild = starts[below(r, ARRAY_SIZE(starts))];
		op->wild_len = lens[below(r, ARRAY_SIZE(lens))];
		return;
	}
	if (huge) {
		op->addr = below(r, GEN_REGIONS) * GEN_REGION_PAGES;
		op->len = GEN_REGION_PAGES * (chance(r, 75) ? 1 : 2);
	} else {
		op->addr = below(r, GEN_WIN_PAGES);
		op->len = chance(r, 90) ? small(r, 64) : small(r, 1024);
	}
	if (op->addr + op->len > GEN_WIN_PAGES)
		op->len = GEN_WIN_PAGES - op->addr;
}

static void gen_munmap_args(struct rng *r, struct shadow *s, struct gen_op *op)
{
	unsigned int m = op->mm;
	u32 k = below(r, 100);

	if (k < 3) {	/* a length that wraps, or 0: nothing to do */
		op->wild = GEN_WIN_BASE + (u64)below(r, GEN_WIN_PAGES) * PAGE_SIZE;
		op->wild_len = chance(r, 50) ? 0 : -op->wild;
		return;
	}
	if (k < 8) {	/* everything */
		op->addr = 0;
		op->len = GEN_WIN_PAGES;
		return;
	}
	if (s->nr_vma[m] == MM_MAX_VMAS && k < 50) {	/* a full table: a hole in one mapping */
		const struct shadow_vma *v = &s->vma[m][below(r, s->nr_vma[m])];

		if (v->end - v->start >= 3) {
			op->addr = v->start + 1 + below(r, v->end - v->start - 2);
			op->len = 1 + below(r, v->end - op->addr - 1);
			return;
		}
	}
	if (s->nr_vma[m] && k < 80) {	/* around or inside one mapping */
		const struct shadow_vma *v = &s->vma[m][below(r, s->nr_vma[m])];
		u32 vlen = v->end - v->start;
		s32 start = (s32)v->start + (s32)below(r, vlen + 8) - 4;

		op->addr = (u32)MAX(start, 0);
		op->len = chance(r, 50) ? small(r, 8) : small(r, vlen + 8);
	} else {
		op->addr = below(r, GEN_WIN_PAGES);
		op->len = small(r, 1024);
	}
	if (op->addr >= GEN_WIN_PAGES)
		op->addr = GEN_WIN_PAGES - 1;
	if (op->addr + op->len > GEN_WIN_PAGES)
		op->len = GEN_WIN_PAGES - op->addr;
}

/* Arguments for an op of kind k on cpu, steered by the shadow; false if nothing fits. */
static bool gen_args(struct rng *r, struct shadow *s, const struct gen_config *c,
		     struct gen_op *op)
{
	int i;

	op->node = (u8)below(r, c->nr_nodes);
	switch (op->kind) {
	case GEN_ALLOC:
		op->slot = (u8)pick_free(r, s->blk, GEN_BLOCKS);
		op->gfp = pick_gfp(r, s);
		op->order = pick_order(r);
		op->flags = chance(r, 70);	/* __GFP_NOWARN */
		s->blk[op->slot] = true;
		return true;
	case GEN_FREE:
	case GEN_REF:
		if ((i = pick_live(r, s->blk, GEN_BLOCKS)) < 0)
			return false;
		op->slot = (u8)i;
		op->flags = chance(r, 50);
		if (op->kind == GEN_FREE)
			s->blk[i] = false;
		return true;
	case GEN_FILL:
		op->slot = (u8)pick_free(r, s->grp, GEN_GROUPS);
		op->gfp = pick_gfp(r, s);
		op->order = chance(r, 70) ? 0 : (u8)below(r, 4);
		s->grp[op->slot] = true;
		return true;
	case GEN_FREE_SOME:
		if ((i = pick_live(r, s->grp, GEN_GROUPS)) < 0)
			return false;
		op->slot = (u8)i;
		op->len = chance(r, 20) ? GEN_FILL_MAX : small(r, chance(r, 50) ? 16 : 256);
		if (op->len == GEN_FILL_MAX)
			s->grp[i] = false;
		return true;
	case GEN_MM_CREATE:
		op->slot = (u8)pick_free(r, s->mm, GEN_MMS);
		if (!s->mm[op->slot])
			s->nr_vma[op->slot] = 0;
		s->mm[op->slot] = true;
		return true;
	case GEN_MM_DESTROY:
		if ((i = pick_live(r, s->mm, GEN_MMS)) < 0)
			return false;
		op->slot = (u8)i;
		s->mm[i] = false;
		s->nr_vma[i] = 0;
		return true;
	case GEN_MMAP:
	case GEN_MUNMAP:
	case GEN_FAULT:
	case GEN_WRITE:
	case GEN_READ:
	case GEN_PIN:
		if ((i = pick_live(r, s->mm, GEN_MMS)) < 0)
			return false;
		if (s->focus_mm >= 0 && chance(r, 80))
			i = s->focus_mm;
		if (s->burst_mm >= 0 && s->mm[s->burst_mm])
			i = s->burst_mm;
		op->mm = (u8)i;
		break;
	case GEN_UNPIN:
		if ((i = pick_live(r, s->pin, GEN_PINS)) < 0)
			return false;
		op->slot = (u8)i;
		s->pin[i] = false;
		return true;
	case GEN_DRAIN:
		op->flags = (u8)below(r, 4);
		op->node = pick_zone(r, c);
		op->len = below(r, GEN_CPUS);
		return true;
	case GEN_PCP_DISABLE:
		op->node = pick_zone(r, c);
		s->depth[op->node]++;
		return true;
	case GEN_PCP_ENABLE:
		for (unsigned int z = 0; z < ARRAY_SIZE(s->depth); z++)
			if (s->depth[z] > 0 && (chance(r, 50) || op->node == 0xff)) {
				op->node = (u8)z;
				s->depth[z]--;
				return true;
			}
		op->node = pick_zone(r, c);
		return true;
	case GEN_PCP_UPDATE:
		op->len = 1 + below(r, 8);
		return true;
	case GEN_FAIL:
		op->flags = chance(r, 60);
		op->len = chance(r, 50) ? 1 + below(r, 10) : chance(r, 50) ? 50 : 100;
		op->addr = chance(r, 70) ? 1 : 1 + below(r, 4);		/* interval */
		op->slot = chance(r, 70) ? 0 : 1 + (u8)below(r, 10);	/* times (0: no limit) */
		op->order = chance(r, 80) ? 0 : (u8)below(r, 4);		/* min_order */
		op->wild = rnd(r);					/* its seed */
		return true;
	case GEN_VERIFY:
	case GEN_DEFERRED_INIT:
		return true;
	}
	/* the address-space ops */
	switch (op->kind) {
	case GEN_MMAP:
		gen_mmap_args(r, s, op);
		if (!op->wild && s->nr_vma[op->mm] < MM_MAX_VMAS &&
		    shadow_free_range(s, op->mm, op->addr, op->addr + op->len))
			s->vma[op->mm][s->nr_vma[op->mm]++] = (struct shadow_vma){
				op->addr, op->addr + op->len, op->flags & GEN_MAP_HUGE };
		return true;
	case GEN_MUNMAP:
		gen_munmap_args(r, s, op);
		if (!op->wild)
			shadow_munmap(s, op->mm, op->addr, op->addr + op->len);
		return true;
	case GEN_FAULT:
		op->addr = pick_addr(r, s, op->mm);
		return true;
	case GEN_WRITE:
	case GEN_READ:
	case GEN_PIN:
		op->addr = pick_addr(r, s, op->mm);
		op->len = chance(r, 80) ? small(r, 16) : small(r, GEN_PIN_MAX);
		if (op->addr + op->len > GEN_WIN_PAGES)
			op->len = GEN_WIN_PAGES - op->addr;
		if (op->kind == GEN_PIN) {
			op->slot = (u8)pick_free(r, s->pin, GEN_PINS);
			s->pin[op->slot] = true;
			op->flags = chance(r, 25) ? GEN_PIN_GET :
				    (u8)((chance(r, 50) ? GEN_PIN_WRITE : 0) |
					 (chance(r, 40) ? GEN_PIN_LONG : 0) |
					 (chance(r, 30) ? GEN_PIN_SLOW : 0));
			if ((op->flags & GEN_PIN_GET) && chance(r, 50))
				op->flags |= GEN_PIN_WRITE;
		}
		return true;
	}
	return false;
}

/*
 * Swarm testing (Groce et al., ISSTA 2012): each seed leaves out some kinds of op and weighs
 * the rest at random, so that some programs do many of a few things (sixteen mappings, all
 * of memory taken) that an even mix would rarely reach.
 */
static void swarm(struct rng *r, struct shadow *s, const struct gen_config *c)
{
	s->total = 0;
	for (unsigned int k = 0; k < GEN_NR_KINDS; k++) {
		s->weight[k] = chance(r, 65) ? 1 + below(r, 10) : 0;
		if (k == GEN_DEFERRED_INIT && !c->deferred)
			s->weight[k] = 0;
	}
	if (!s->weight[GEN_MM_CREATE] && chance(r, 80))
		s->weight[GEN_MM_CREATE] = 2;
	if (!s->weight[GEN_ALLOC] && !s->weight[GEN_MMAP])
		s->weight[GEN_MMAP] = 4;
	/* ... and the gfp values too: a few of them, so that allocations of one kind meet */
	s->gfps = 0;
	for (unsigned int g = 0; g < gen_nr_gfps; g++)
		s->gfps |= (u32)chance(r, 35) << g;
	if (!s->gfps)
		s->gfps = 1u << below(r, gen_nr_gfps);
	for (unsigned int k = 0; k < GEN_NR_KINDS; k++)
		s->total += s->weight[k];
}

static u8 pick_kind(struct rng *r, const struct shadow *s)
{
	u32 x = below(r, s->total);

	for (unsigned int k = 0; k < GEN_NR_KINDS; k++) {
		if (x < s->weight[k])
			return (u8)k;
		x -= s->weight[k];
	}
	return GEN_ALLOC;
}

/* One op of a random kind that has arguments to take; false after a few tries. */
/*
 * A phase's theme: with a focus, mostly ops on pages (contention); while a fill holds memory,
 * often ops that allocate, free or drain (the allocator under pressure: watermarks, drains
 * of other CPUs' lists, fallbacks). Otherwise the program's mix.
 */
static u8 pick_phase_kind(struct rng *r, const struct shadow *s)
{
	static const u8 on_pages[] = { GEN_FAULT, GEN_READ, GEN_WRITE, GEN_PIN, GEN_PIN,
				       GEN_UNPIN, GEN_MUNMAP, GEN_MMAP, GEN_FAULT };
	static const u8 pressure[] = { GEN_ALLOC, GEN_ALLOC, GEN_FREE, GEN_FREE_SOME, GEN_DRAIN,
				       GEN_DRAIN, GEN_FAULT, GEN_MM_CREATE };
	bool filled = s->grp[0] || s->grp[1];

	if (s->focus_mm >= 0 && chance(r, 70))
		return on_pages[below(r, ARRAY_SIZE(on_pages))];
	if (filled && chance(r, 50))
		return pressure[below(r, ARRAY_SIZE(pressure))];
	return pick_kind(r, s);
}

static bool gen_one(struct rng *r, struct shadow *s, const struct gen_config *c,
		    struct gen_op *op, u8 cpu, bool in_phase)
{
	for (int tries = 0; tries < 8; tries++) {
		*op = (struct gen_op){ .kind = in_phase ? pick_phase_kind(r, s) : pick_kind(r, s),
				       .cpu = cpu };
		if (in_phase && (op->kind == GEN_FAIL || op->kind == GEN_VERIFY))
			continue;	/* those run alone (gen_model.c says why) */
		if (gen_args(r, s, c, op))
			return true;
	}
	return false;
}

/*
 * The deferred init on CPUs 1..k-1 while CPU 0 runs mm_verify(): the one thing mm_verify()
 * may meet (it reports a chunk being written as "not quiet"), as a boot's check might.
 */
static unsigned int gen_init_phase(struct rng *r, const struct gen_config *c,
				   struct gen_op *ops, unsigned int room)
{
	unsigned int k = 2 + below(r, c->max_cpus - 1), n = 0;

	if (room < 2)
		return 0;
	ops[n++] = (struct gen_op){ .kind = GEN_VERIFY, .node = (u8)below(r, c->nr_nodes) };
	for (unsigned int cpu = 1; cpu < k && n < room; cpu++)
		ops[n++] = (struct gen_op){ .kind = GEN_DEFERRED_INIT, .cpu = (u8)cpu, .join = 1,
					    .node = (u8)below(r, c->nr_nodes) };
	return n;
}

/*
 * A drain meets an allocation that needs it: memory all taken (a fill that may wait and
 * ignores watermarks), a few pages freed onto CPU x's list, then a phase where CPU a drains
 * every list while CPU b (not x) allocates with __GFP_MEMALLOC: b's slow path must get a
 * page from x's list whoever drains it (issue 29's #4: it gave up while a drain was in
 * flight). The random mix seldom lines these four up.
 */
static unsigned int gen_drain_scene(struct rng *r, struct shadow *s, const struct gen_config *c,
				    struct gen_op *ops, unsigned int room)
{
	u8 n = c->max_cpus, x = (u8)below(r, n), b = (u8)((x + 1 + below(r, n - 1)) % n);
	u8 a = (u8)((b + 1 + below(r, n - 1)) % n), g = (u8)pick_free(r, s->grp, GEN_GROUPS);
	u8 blk = (u8)pick_free(r, s->blk, GEN_BLOCKS), memalloc = 0;

	VM_BUG_ON(n < 2);
	if (room < 4)
		return 0;
	while (gen_gfps[memalloc].gfp != (GFP_KERNEL | __GFP_MEMALLOC))
		memalloc++;
	ops[0] = (struct gen_op){ .kind = GEN_FILL, .cpu = x, .slot = g, .gfp = memalloc };
	ops[1] = (struct gen_op){ .kind = GEN_FREE_SOME, .cpu = x, .slot = g,
				  .len = 1 + below(r, 16) };
	ops[2] = (struct gen_op){ .kind = GEN_DRAIN, .cpu = a, .flags = GEN_DRAIN_MACHINE };
	ops[3] = (struct gen_op){ .kind = GEN_ALLOC, .cpu = b, .join = 1, .slot = blk,
				  .gfp = memalloc, .flags = 1 };
	s->grp[g] = s->blk[blk] = true;
	return 4;
}

/*
 * Contention on purpose: most phases pick one address space and a few pages of one of its
 * mappings (or one 2 MiB region), and their CPUs' address ops go there, so that faults,
 * gups, pins, migration and munmap of the same pages meet.
 */
static void set_focus(struct rng *r, struct shadow *s)
{
	int m = pick_live(r, s->mm, GEN_MMS);

	s->focus_mm = -1;
	if (m < 0 || !s->nr_vma[m] || !chance(r, 60))
		return;
	const struct shadow_vma *v = &s->vma[m][below(r, s->nr_vma[m])];

	s->focus_mm = m;
	s->focus_lo = v->start + (chance(r, 50) ? 0 : below(r, v->end - v->start));
	s->focus_hi = MIN(v->end, s->focus_lo + 1 + small(r, 16));
}

/* A phase of k CPUs: each issues 1..3 ops, mostly on the same address space (shared). */
static unsigned int gen_phase(struct rng *r, struct shadow *s, const struct gen_config *c,
			      struct gen_op *ops, unsigned int room)
{
	unsigned int k = 2 + below(r, c->max_cpus - 1), n = 0;

	if (c->deferred && !s->verify_alone && chance(r, 10))
		return gen_init_phase(r, c, ops, room);
	set_focus(r, s);
	for (unsigned int cpu = 0; cpu < k; cpu++) {
		unsigned int nr = 1 + below(r, 3);

		for (unsigned int j = 0; j < nr && n < room; j++)
			if (gen_one(r, s, c, &ops[n], (u8)cpu, true))
				ops[n].join = n > 0, n++;
	}
	s->focus_mm = -1;
	return n;
}

void gen_program(struct gen_prog *p, u64 seed, const struct gen_params *params)
{
	struct rng r = { seed };
	struct shadow s;
	struct gen_config *c = &p->cfg;
	unsigned int max_ops = MIN(params->nr_ops, (unsigned int)GEN_MAX_OPS);

	memset(&s, 0, sizeof(s));
	memset(p, 0, sizeof(*p));
	p->seed = seed;
	c->nr_nodes = chance(&r, 35) ? 2 : 1;
	c->lock_model = (u8)below(&r, 3);
	c->deferred = chance(&r, 20);
	c->max_cpus = (u8)(params->max_cpus ? params->max_cpus :
			   chance(&r, 40) ? 1 : 2 + below(&r, GEN_CPUS - 1));
	swarm(&r, &s, c);
	s.focus_mm = -1;
	s.burst_mm = -1;
	s.verify_alone = params->verify_alone;
	if (c->deferred && c->max_cpus > 1 && chance(&r, 50) && !s.verify_alone) /* as at boot */
		p->nr_ops += gen_init_phase(&r, c, p->ops, max_ops);
	while (p->nr_ops < max_ops) {
		unsigned int burst = chance(&r, 4) ? 4 + below(&r, 13) : 1;
		u8 kind = 0;

		if (c->max_cpus > 1 && chance(&r, 30)) {
			p->nr_ops += chance(&r, 5) ?
				gen_drain_scene(&r, &s, c, &p->ops[p->nr_ops], max_ops - p->nr_ops) :
				gen_phase(&r, &s, c, &p->ops[p->nr_ops], max_ops - p->nr_ops);
			continue;
		}
		/* A burst: the same kind of op several times over (sixteen mappings of one
		 * address space, a run of frees), which an even mix seldom makes. Now and then
		 * a burst of mmaps fills one address space's VMA table, and then (half the time)
		 * a munmap there at once: the split that needs one VMA too many. */
		for (unsigned int b = 0; b < burst && p->nr_ops < max_ops; b++) {
			struct gen_op *op = &p->ops[p->nr_ops];

			if (b && kind == GEN_MMAP && s.nr_vma[s.burst_mm] == MM_MAX_VMAS) {
				if (!chance(&r, 50))
					break;
				kind = GEN_MUNMAP;
				burst = b + 1;
			}
			if (b && (*op = (struct gen_op){ .kind = kind, .cpu = (u8)below(&r, GEN_CPUS) },
				  gen_args(&r, &s, c, op))) {
				p->nr_ops++;
			} else if (!b && gen_one(&r, &s, c, op, (u8)below(&r, GEN_CPUS), false)) {
				kind = op->kind;
				p->nr_ops++;
				if (kind >= GEN_MMAP && kind <= GEN_PIN)
					s.burst_mm = op->mm;
				if (kind == GEN_MMAP && chance(&r, burst > 1 ? 50 : 5))
					burst = 3 * MM_MAX_VMAS;	/* until the table is full */
			}
		}
		s.burst_mm = -1;
		if (chance(&r, 3))	/* a new mix now and then: phases of a program differ */
			swarm(&r, &s, c);
	}
}

/*
 * The libFuzzer target's decoder: byte 0 and 1 choose the machine, then each 4 bytes are one
 * op, alone, on CPU 0 (the fuzzer has no CPU threads): a kind, then arguments drawn from a
 * generator seeded by the other three bytes, steered by the same shadow as gen_program(). So the fuzzer mutates what
 * is done and in which order; the generator keeps the arguments meaningful.
 */
void gen_decode(struct gen_prog *p, const u8 *data, size_t size)
{
	struct shadow s;
	struct gen_config *c = &p->cfg;

	memset(&s, 0, sizeof(s));
	memset(p, 0, sizeof(*p));
	c->nr_nodes = size > 0 && (data[0] & 1) ? 2 : 1;
	c->lock_model = size > 0 ? (u8)((data[0] >> 1) % 3) : PCP_LOCK_TRYLOCK;
	c->deferred = size > 0 && (data[0] & 0x80);
	c->max_cpus = 1;
	for (unsigned int k = 0; k < GEN_NR_KINDS; k++)
		s.weight[k] = 1;
	s.total = GEN_NR_KINDS;
	s.gfps = (1u << gen_nr_gfps) - 1;
	s.focus_mm = -1;
	s.burst_mm = -1;
	for (size_t i = 2; i + 4 <= size && p->nr_ops < GEN_MAX_OPS; i += 4) {
		struct rng r = { ((u64)data[i + 1] << 16) | ((u64)data[i + 2] << 8) | data[i + 3] };
		struct gen_op *op = &p->ops[p->nr_ops];

		*op = (struct gen_op){ .kind = (u8)(data[i] % GEN_NR_KINDS) };
		if (op->kind == GEN_DEFERRED_INIT && !c->deferred)
			continue;
		if (gen_args(&r, &s, c, op))
			p->nr_ops++;
	}
}

unsigned int gen_phase_len(const struct gen_prog *p, unsigned int first)
{
	unsigned int n = 1;

	while (first + n < p->nr_ops && p->ops[first + n].join)
		n++;
	return n;
}

void gen_op_describe(const struct gen_prog *p, unsigned int i, char *buf, size_t len)
{
	const struct gen_op *op = &p->ops[i];
	const char *k = gen_kind_names[op->kind];
	u64 a = GEN_WIN_BASE + (u64)op->addr * PAGE_SIZE;

	switch (op->kind) {
	case GEN_ALLOC:
		snprintf(buf, len, "cpu%u blk[%u] = alloc node%u %s order %u", op->cpu, op->slot,
			 op->node, gen_gfps[op->gfp].name, op->order);
		break;
	case GEN_FREE: case GEN_REF:
		snprintf(buf, len, "cpu%u %s%s blk[%u]", op->cpu, k,
			 op->kind == GEN_REF ? (op->flags ? " get" : " put") : "", op->slot);
		break;
	case GEN_FILL:
		snprintf(buf, len, "cpu%u grp[%u] = fill node%u %s order %u", op->cpu, op->slot,
			 op->node, gen_gfps[op->gfp].name, op->order);
		break;
	case GEN_FREE_SOME:
		snprintf(buf, len, "cpu%u free %u of grp[%u]", op->cpu, op->len, op->slot);
		break;
	case GEN_MM_CREATE: case GEN_MM_DESTROY:
		snprintf(buf, len, "cpu%u %s mm[%u] node%u", op->cpu, k, op->slot, op->node);
		break;
	case GEN_MMAP: case GEN_MUNMAP:
		if (op->wild)
			snprintf(buf, len, "cpu%u %s mm[%u] 0x%llx len 0x%llx flags %u", op->cpu, k,
				 op->mm, (unsigned long long)op->wild,
				 (unsigned long long)op->wild_len, op->flags);
		else
			snprintf(buf, len, "cpu%u %s mm[%u] 0x%llx, %u pages%s%s%s", op->cpu, k, op->mm,
				 (unsigned long long)a, op->len,
				 op->kind == GEN_MMAP && (op->flags & GEN_MAP_WRITE) ? " rw" : "",
				 op->kind == GEN_MMAP && (op->flags & GEN_MAP_HUGE) ? " huge" : "",
				 op->kind == GEN_MMAP && (op->flags & GEN_MAP_POP) ? " populate" : "");
		break;
	case GEN_FAULT:
		snprintf(buf, len, "cpu%u fault mm[%u] 0x%llx", op->cpu, op->mm, (unsigned long long)a);
		break;
	case GEN_WRITE: case GEN_READ:
		snprintf(buf, len, "cpu%u %s mm[%u] 0x%llx, %u pages", op->cpu, k, op->mm,
			 (unsigned long long)a, op->len);
		break;
	case GEN_PIN:
		snprintf(buf, len, "cpu%u pin[%u] = %s mm[%u] 0x%llx, %u pages%s%s", op->cpu,
			 op->slot, (op->flags & GEN_PIN_GET) ? "get_user_pages_fast" :
			 (op->flags & GEN_PIN_SLOW) ? "pin_user_pages" : "pin_user_pages_fast",
			 op->mm, (unsigned long long)a, op->len,
			 (op->flags & GEN_PIN_WRITE) ? " FOLL_WRITE" : "",
			 (op->flags & GEN_PIN_LONG) ? " FOLL_LONGTERM" : "");
		break;
	case GEN_UNPIN:
		snprintf(buf, len, "cpu%u unpin pin[%u]", op->cpu, op->slot);
		break;
	case GEN_DRAIN: {
		static const char *const what[] = { "drain_local_pages", "drain_cpu_pages",
						    "drain_all_pages", "drain_all_pages_machine" };
		snprintf(buf, len, "cpu%u %s node%u zone%u cpu%u", op->cpu, what[op->flags & 3],
			 op->node / MAX_NR_ZONES, op->node % MAX_NR_ZONES, op->len);
		break;
	}
	case GEN_PCP_DISABLE: case GEN_PCP_ENABLE:
		snprintf(buf, len, "cpu%u %s node%u zone%u", op->cpu, k, op->node / MAX_NR_ZONES,
			 op->node % MAX_NR_ZONES);
		break;
	case GEN_PCP_UPDATE:
		snprintf(buf, len, "cpu%u pcp_update node%u for %u CPUs", op->cpu, op->node, op->len);
		break;
	case GEN_FAIL:
		if (op->flags)
			snprintf(buf, len, "cpu%u fail_page_alloc on: %u%%, interval %u, times %d, "
				 "min_order %u", op->cpu, op->len, op->addr, op->slot ? op->slot : -1,
				 op->order);
		else
			snprintf(buf, len, "cpu%u fail_page_alloc off", op->cpu);
		break;
	default:
		snprintf(buf, len, "cpu%u %s node%u", op->cpu, k, op->node);
	}
}

/*
 * A program as text, one op a line, to replay a shrunk program (mmtest --gen --replay FILE):
 *   gen-program SEED NODES LOCK DEFERRED MAXCPUS
 *   op KIND CPU JOIN SLOT MM NODE ORDER GFP FLAGS ADDR LEN WILD WILDLEN
 */
void gen_program_write(FILE *f, const struct gen_prog *p)
{
	fprintf(f, "gen-program %llu %u %u %u %u\n", (unsigned long long)p->seed, p->cfg.nr_nodes,
		p->cfg.lock_model, p->cfg.deferred, p->cfg.max_cpus);
	for (unsigned int i = 0; i < p->nr_ops; i++) {
		const struct gen_op *o = &p->ops[i];

		fprintf(f, "op %s %u %u %u %u %u %u %u %u %u %u %llu %llu\n", gen_kind_names[o->kind],
			o->cpu, o->join, o->slot, o->mm, o->node, o->order, o->gfp, o->flags, o->addr,
			o->len, (unsigned long long)o->wild, (unsigned long long)o->wild_len);
	}
}

int gen_program_read(FILE *f, struct gen_prog *p)
{
	char line[256], kind[32];
	unsigned long long seed, wild, wild_len;
	unsigned int v[11];

	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "gen-program %llu %u %u %u %u", &seed, &v[0], &v[1], &v[2], &v[3]) == 5) {
			p->seed = seed;
			p->cfg = (struct gen_config){ (u8)v[0], (u8)v[1], (u8)v[2], (u8)v[3] };
			continue;
		}
		if (sscanf(line, "op %31s %u %u %u %u %u %u %u %u %u %u %llu %llu", kind, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &wild, &wild_len) != 13 ||
		    p->nr_ops == GEN_MAX_OPS)
			continue;
		for (unsigned int k = 0; k < GEN_NR_KINDS; k++)
			if (!strcmp(kind, gen_kind_names[k]))
				p->ops[p->nr_ops++] = (struct gen_op){
					.kind = (u8)k, .cpu = (u8)(v[0] % GEN_CPUS), .join = (u8)v[1],
					.slot = (u8)v[2], .mm = (u8)(v[3] % GEN_MMS), .node = (u8)v[4],
					.order = (u8)v[5], .gfp = (u8)(v[6] % gen_nr_gfps), .flags = (u8)v[7],
					.addr = v[8] % GEN_WIN_PAGES, .len = v[9], .wild = wild,
					.wild_len = wild_len };
	}
	return p->nr_ops && p->cfg.nr_nodes ? 0 : -1;
}
