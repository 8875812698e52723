/*
 * memblock: boot-time range tables and a top-down bump allocator over them (see memblock.h).
 * Nothing here is freed back: what memblock hands out stays reserved forever.
 */
#include "mm/memblock.h"
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/printk.h"
#include "kernel/string.h"

#define U64_MAX (~0ull)

void memblock_init(struct memblock *mb, u64 alloc_limit)
{
	memset(mb, 0, sizeof(*mb));
	mb->memory.name = "memory";
	mb->reserved.name = "reserved";
	mb->alloc_limit = alloc_limit;
}

static u64 region_end(const struct memblock_region *r)
{
	return r->base + r->size;
}

/* Sort by base (insertion sort: at most MEMBLOCK_MAX_REGIONS + 1 entries), then merge
 * overlapping and touching neighbours of the same node. Returns the new count. */
static unsigned int normalize(struct memblock_region *r, unsigned int n)
{
	unsigned int out = 0;

	for (unsigned int i = 1; i < n; i++) {
		struct memblock_region key = r[i];
		unsigned int j = i;

		for (; j > 0 && r[j - 1].base > key.base; j--)
			r[j] = r[j - 1];
		r[j] = key;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (out && r[i].base <= region_end(&r[out - 1]) && r[i].nid == r[out - 1].nid) {
			u64 end = MAX(region_end(&r[out - 1]), region_end(&r[i]));

			r[out - 1].size = end - r[out - 1].base;
		} else {
			r[out++] = r[i];
		}
	}
	return out;
}

/* Add [base, end) to t. Leaves t unchanged and returns -1 if the result would not fit. */
static int type_add(struct memblock_type *t, u64 base, u64 end)
{
	struct memblock_region tmp[MEMBLOCK_MAX_REGIONS + 1];
	unsigned int n;

	if (base >= end)
		return 0;
	memcpy(tmp, t->regions, t->cnt * sizeof(tmp[0]));
	tmp[t->cnt] = (struct memblock_region){ base, end - base, 0 };
	n = normalize(tmp, t->cnt + 1);
	if (n > MEMBLOCK_MAX_REGIONS) {
		printk("memblock: %s table full, cannot add [0x%llx-0x%llx)\n", t->name,
		       (unsigned long long)base, (unsigned long long)end);
		return -1;
	}
	memcpy(t->regions, tmp, n * sizeof(tmp[0]));
	t->cnt = n;
	return 0;
}

/*
 * Remove [base, end) from t; a region straddling it splits in two. Only one region can
 * straddle both ends, so tmp holds at most t->cnt + 1 pieces. With the table full that
 * split has no slot for the piece past the hole, so that piece goes too, said in one line:
 * removing more RAM than asked only loses it, leaving RAM the caller found unusable (a
 * reservation, a section without a memory map) would hand it out. So a cut never fails.
 */
static void type_cut(struct memblock_type *t, u64 base, u64 end)
{
	struct memblock_region tmp[MEMBLOCK_MAX_REGIONS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->cnt; i++) {
		u64 rb = t->regions[i].base, re = region_end(&t->regions[i]);

		if (re <= base || rb >= end) {
			tmp[n++] = t->regions[i];
			continue;
		}
		if (rb < base)
			tmp[n++] = (struct memblock_region){ rb, base - rb, t->regions[i].nid };
		if (re > end && rb < base && t->cnt == MEMBLOCK_MAX_REGIONS)
			printk("memblock: %s table full, cannot split [0x%llx-0x%llx) around "
			       "[0x%llx-0x%llx): [0x%llx-0x%llx) ignored too\n", t->name,
			       (unsigned long long)rb, (unsigned long long)re,
			       (unsigned long long)base, (unsigned long long)end,
			       (unsigned long long)end, (unsigned long long)re);
		else if (re > end)
			tmp[n++] = (struct memblock_region){ end, re - end, t->regions[i].nid };
	}
	memcpy(t->regions, tmp, n * sizeof(tmp[0]));
	t->cnt = n;
}

/* Cut t's regions at base and end, then give the pieces inside [base, end) node nid. */
static int type_set_node(struct memblock_type *t, u64 base, u64 end, int nid)
{
	struct memblock_region tmp[MEMBLOCK_MAX_REGIONS + 1];
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->cnt; i++) {
		struct memblock_region r = t->regions[i];
		u64 re = region_end(&r), cuts[4] = { r.base, MAX(r.base, MIN(base, re)),
						     MAX(r.base, MIN(end, re)), re };

		for (int k = 0; k < 3; k++) {
			if (cuts[k + 1] <= cuts[k])
				continue;
			if (n == MEMBLOCK_MAX_REGIONS) {
				printk("memblock: %s table full, cannot give [0x%llx-0x%llx) node "
				       "%d\n", t->name, (unsigned long long)base,
				       (unsigned long long)end, nid);
				return -1;
			}
			tmp[n++] = (struct memblock_region){ cuts[k], cuts[k + 1] - cuts[k],
							     k == 1 ? nid : r.nid };
		}
	}
	t->cnt = normalize(tmp, n);
	memcpy(t->regions, tmp, t->cnt * sizeof(tmp[0]));
	return 0;
}

/* [base, base + size) with the end clamped instead of wrapping past 2^64. */
static u64 clamp_end(u64 base, u64 size)
{
	return size > U64_MAX - base ? U64_MAX : base + size;
}

/* RAM is shrunk inward to whole pages: a partial page is not usable. */
int memblock_add(struct memblock *mb, u64 base, u64 size)
{
	u64 end = ALIGN_DOWN(clamp_end(base, size), PAGE_SIZE);

	base = base > U64_MAX - (PAGE_SIZE - 1) ? U64_MAX : ALIGN_UP(base, PAGE_SIZE);
	return type_add(&mb->memory, base, end);
}

/* Reservations and removals grow outward: any page touched is taken. */
static void outward(u64 *base, u64 *end, u64 size)
{
	u64 e = clamp_end(*base, size);

	*end = e > U64_MAX - (PAGE_SIZE - 1) ? ALIGN_DOWN(U64_MAX, PAGE_SIZE) : ALIGN_UP(e, PAGE_SIZE);
	*base = ALIGN_DOWN(*base, PAGE_SIZE);
}

int memblock_reserve(struct memblock *mb, u64 base, u64 size)
{
	u64 end;

	outward(&base, &end, size);
	return type_add(&mb->reserved, base, end);
}

void memblock_remove(struct memblock *mb, u64 base, u64 size)
{
	u64 end;

	outward(&base, &end, size);
	type_cut(&mb->memory, base, end);
}

int memblock_set_node(struct memblock *mb, u64 base, u64 size, int nid)
{
	return type_set_node(&mb->memory, base, clamp_end(base, size), nid);
}

/* Returns true if entry e is worth using, after saying why not. */
static bool mmap_entry_ok(struct memblock *mb, const struct mem_region *e, unsigned int i)
{
	const char *why = NULL;

	if (e->length == 0)
		why = "zero length";
	else if (e->length > U64_MAX - e->base)
		why = "wraps past 2^64 (clamped)";
	else if (e->type == MEM_USABLE &&
		 ALIGN_UP(e->base, PAGE_SIZE) >= ALIGN_DOWN(e->base + e->length, PAGE_SIZE))
		why = "holds no whole page";
	else if (e->type == MEM_USABLE &&
		 (!IS_ALIGNED(e->base, PAGE_SIZE) || !IS_ALIGNED(e->length, PAGE_SIZE)))
		why = "not page aligned (shrunk to whole pages)";
	if (!why)
		return true;
	printk("memblock: mmap[%u] [0x%llx +0x%llx] %s: %s\n", i, (unsigned long long)e->base,
	       (unsigned long long)e->length, mem_type_name(e->type), why);
	mb->rejected++;
	return e->length != 0;
}

void memblock_add_mmap(struct memblock *mb, const struct mem_region *map, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (map[i].type == MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
			memblock_add(mb, map[i].base, map[i].length);
	/* Second pass, so that "not usable" wins an overlap whatever the entry order. */
	for (unsigned int i = 0; i < n; i++)
		if (map[i].type != MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
			memblock_remove(mb, map[i].base, map[i].length);
}

/* Index of the first region of t ending after addr, or t->cnt. */
static unsigned int first_after(const struct memblock_type *t, u64 addr)
{
	unsigned int i = 0;

	while (i < t->cnt && region_end(&t->regions[i]) <= addr)
		i++;
	return i;
}

bool memblock_next_free(const struct memblock *mb, u64 *cursor, u64 *start, u64 *end)
{
	const struct memblock_type *mem = &mb->memory, *res = &mb->reserved;

	for (unsigned int m = first_after(mem, *cursor); m < mem->cnt; m++) {
		u64 s = MAX(mem->regions[m].base, *cursor), e = region_end(&mem->regions[m]);
		unsigned int r = first_after(res, s);

		/* Step over reservations covering s; reserved regions are merged, so one does. */
		if (r < res->cnt && res->regions[r].base <= s)
			s = region_end(&res->regions[r++]);
		if (s >= e)
			continue;
		if (r < res->cnt && res->regions[r].base < e)
			e = res->regions[r].base;
		*start = s;
		*end = e;
		*cursor = e;
		return true;
	}
	return false;
}

void memblock_set_bottom_up(struct memblock *mb, u64 floor)
{
	mb->bottom_up_floor = floor;
}

/* Is [base, base + size) where a search for nid may allocate: in node nid's RAM (nid >= 0:
 * the caller has mapped it all), or below alloc_limit? s is the start of its free range. */
static bool fits_nid(const struct memblock *mb, u64 s, u64 base, u64 size, int nid)
{
	return nid >= 0 ? memblock_nid(mb, s) == nid : base + size <= mb->alloc_limit;
}

/* The lowest align-aligned block of size bytes that is free, at or above
 * mb->bottom_up_floor and fits_nid(); 0 if none fits. */
static u64 find_bottom_up(const struct memblock *mb, u64 size, u64 align, int nid)
{
	u64 cursor = mb->bottom_up_floor, s, e;

	while (memblock_next_free(mb, &cursor, &s, &e)) {
		u64 cand = ALIGN_UP(s, align);

		if (cand < e && e - cand >= size && fits_nid(mb, s, cand, size, nid))
			return cand;
	}
	return 0;
}

/* The highest align-aligned block of size bytes that is free and below alloc_limit, or
 * (nid >= 0) anywhere in node nid's RAM; 0 if none fits. */
static u64 find_top_down(const struct memblock *mb, u64 size, u64 align, int nid)
{
	u64 cursor = 0, s, e, best = 0;

	while (memblock_next_free(mb, &cursor, &s, &e)) {
		u64 top = nid >= 0 ? e : MIN(e, mb->alloc_limit), cand;

		if ((nid >= 0 && memblock_nid(mb, s) != nid) || top < size || top - size < s)
			continue;
		cand = ALIGN_DOWN(top - size, align);
		if (cand >= s && cand >= PAGE_SIZE && cand > best)
			best = cand;	/* ranges ascend: the last fit is the highest */
	}
	return best;
}

/* Bottom-up from the floor if one is set, else (or if nothing fits there) top-down. */
static u64 find_free(const struct memblock *mb, u64 size, u64 align, int nid)
{
	u64 best = mb->bottom_up_floor ? find_bottom_up(mb, size, align, nid) : 0;

	return best ? best : find_top_down(mb, size, align, nid);
}

u64 memblock_alloc_node_raw(struct memblock *mb, u64 size, u64 align, int nid)
{
	u64 best;

	size = ALIGN_UP(size, PAGE_SIZE);
	align = MAX(align, PAGE_SIZE);
	best = find_free(mb, size, align, nid);
	if (!best && nid >= 0)
		best = find_free(mb, size, align, -1);
	if (!best || memblock_reserve(mb, best, size))
		return 0;
	return best;
}

u64 memblock_alloc_node(struct memblock *mb, u64 size, u64 align, int nid)
{
	u64 phys = memblock_alloc_node_raw(mb, size, align, nid);

	if (phys)
		memset(arch_phys_to_virt(phys), 0, ALIGN_UP(size, PAGE_SIZE));
	return phys;
}

u64 memblock_alloc(struct memblock *mb, u64 size, u64 align)
{
	return memblock_alloc_node(mb, size, align, -1);
}

u64 memblock_alloc_raw(struct memblock *mb, u64 size, u64 align)
{
	return memblock_alloc_node_raw(mb, size, align, -1);
}

static bool type_contains(const struct memblock_type *t, u64 addr)
{
	unsigned int i = first_after(t, addr);

	return i < t->cnt && t->regions[i].base <= addr;
}

int memblock_nid(const struct memblock *mb, u64 addr)
{
	unsigned int i = first_after(&mb->memory, addr);

	return i < mb->memory.cnt && mb->memory.regions[i].base <= addr ?
	       mb->memory.regions[i].nid : -1;
}

bool memblock_is_reserved(const struct memblock *mb, u64 addr)
{
	return type_contains(&mb->reserved, addr);
}

u64 memblock_end_of_ram(const struct memblock *mb)
{
	return mb->memory.cnt ? region_end(&mb->memory.regions[mb->memory.cnt - 1]) : 0;
}

void memblock_dump(const struct memblock *mb)
{
	const struct memblock_type *types[] = { &mb->memory, &mb->reserved };

	for (unsigned int t = 0; t < ARRAY_SIZE(types); t++) {
		printk("memblock %s: %u regions\n", types[t]->name, types[t]->cnt);
		for (unsigned int i = 0; i < types[t]->cnt; i++) {
			const struct memblock_region *r = &types[t]->regions[i];
			char node[16] = "";

			if (types[t] == &mb->memory)
				snprintf(node, sizeof(node), " node %d", r->nid);
			printk("  [0x%012llx-0x%012llx) %8llu KiB%s\n", (unsigned long long)r->base,
			       (unsigned long long)region_end(r), (unsigned long long)(r->size >> 10),
			       node);
		}
	}
}
