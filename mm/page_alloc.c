/*
 * The page allocator at run time: buddy free lists, migratetype fallback, watermarks, the
 * per-CPU lists' hit paths with their refills and spills, and the alloc_pages/__free_pages
 * API, in Linux v6.1's functions. The per-CPU lists' lock is mm/pcp.h, their sizing and
 * drains mm/pcp.c; boot-time setup is mm_init.c, checks and dumps debug.c. Not a byte
 * allocator.
 */
#include "mm/pcp.h"
#include "mm/mm_test.h"
#include "mm/fail_page_alloc.h"
#include "kernel/string.h"

struct pglist_data *node_data[MAX_NUMNODES] __read_mostly;

/* ---- pageblock migratetypes ---- */

void set_pageblock_migratetype(struct page *page, int mt)
{
	WRITE_ONCE(*pageblock_mt_slot(page), (u8)mt);
}

/* ---- free lists: all of these need zone->lock ---- */

void __mod_zone_freepages(struct zone *zone, long delta)
{
	WRITE_ONCE(zone->free_pages, zone->free_pages + delta);
}

static void add_to_free_list(struct page *page, struct zone *zone, unsigned int order, int mt,
			     bool tail)
{
	struct free_area *area = &zone->free_area[order];

	page->order = (u8)order;
	page->mt = (u8)mt;
	__set_page_flag(page, PG_buddy);
	if (tail)
		list_add_tail(&page->lru, &area->free_list[mt]);
	else
		list_add(&page->lru, &area->free_list[mt]);
	WRITE_ONCE(area->nr_free, area->nr_free + 1);
}

static void del_page_from_free_list(struct page *page, struct zone *zone, unsigned int order)
{
	struct free_area *area = &zone->free_area[order];

	list_del(&page->lru);
	__clear_page_flag(page, PG_buddy);
	WRITE_ONCE(area->nr_free, area->nr_free - 1);
}

static void move_to_free_list(struct page *page, struct zone *zone, unsigned int order, int mt)
{
	list_move_tail(&page->lru, &zone->free_area[order].free_list[mt]);
	page->mt = (u8)mt;
}

/*
 * Buddy maths. A free block of order O starts at a pfn P that is a multiple of 2^O. Its
 * buddy, the other half of the order O+1 block containing it, starts at
 *
 *     B = P ^ (1 << O)        (flip bit O: P + 2^O if P is the lower half, else P - 2^O)
 *
 * and the merged block starts at P & B (= P with bit O cleared). Because a MAX_ORDER block
 * lies inside one memory-map section and one zone, B has a struct page in the same array
 * and zone whenever O < MAX_ORDER, so page + (B - P) is valid. B merges with P only if it
 * is (a) the head of a free block (PG_buddy, serialized by zone->lock) and (b) of order O.
 * Finding and validating are one function so that no caller can use an unchecked buddy.
 */
static struct page *find_buddy_page_pfn(struct page *page, unsigned long pfn, unsigned int order,
					unsigned long *buddy_pfn)
{
	unsigned long bpfn = pfn ^ (1ul << order);
	struct page *buddy = page + ((long)bpfn - (long)pfn);

	if (!PageBuddy(buddy) || buddy->order != order)
		return NULL;
	VM_BUG_ON(buddy->zone != page->zone || buddy->pfn != bpfn);
	if (buddy_pfn)
		*buddy_pfn = bpfn;
	return buddy;
}

/* A block whose next-level buddy is free will likely merge soon: queue it at the tail so
 * that allocations take other blocks first. */
static bool buddy_merge_likely(unsigned long pfn, struct page *page, unsigned int order)
{
	unsigned long higher_pfn;

	if (order >= MAX_ORDER - 1)
		return false;
	higher_pfn = (pfn ^ (1ul << order)) & pfn;
	return find_buddy_page_pfn(page + ((long)higher_pfn - (long)pfn), higher_pfn, order + 1,
				   NULL);
}

/*
 * Free 2^order pages at page (pfn) into zone: merge with the free buddy while there is one,
 * then put the result on free_list[mt] of its final order. Caller holds zone->lock.
 */
void __free_one_page(struct page *page, unsigned long pfn, struct zone *zone,
		     unsigned int order, int mt)
{
	unsigned long buddy_pfn;
	struct page *buddy;

	assert_spin_locked(&zone->lock);
	VM_BUG_ON(pfn & ((1ul << order) - 1));
	VM_BUG_ON(!zone_spans_pfn(zone, pfn) || page->pfn != pfn);
	VM_BUG_ON(page_flags(page) & (PG_buddy | PG_pcp | PG_reserved));
	__mod_zone_freepages(zone, 1l << order);
	while (order < MAX_ORDER) {
		buddy = find_buddy_page_pfn(page, pfn, order, &buddy_pfn);
		if (!buddy)
			break;
		del_page_from_free_list(buddy, zone, order);
		page += (long)(buddy_pfn & pfn) - (long)pfn;
		pfn &= buddy_pfn;
		order++;
	}
	add_to_free_list(page, zone, order, mt, buddy_merge_likely(pfn, page, order));
}

/* The buddy lists' free, zone->lock taken here (the per-CPU free falls back on it when the
 * lists are off or busy). */
void free_one_page(struct zone *zone, struct page *page, unsigned int order, int mt)
{
	unsigned long flags = spin_lock_irqsave(&zone->lock);

	__free_one_page(page, page->pfn, zone, order, mt);
	spin_unlock_irqrestore(&zone->lock, flags);
}

/*
 * Split: page heads a free block of order high (already off its list) and order low is
 * wanted. Halve repeatedly, putting each upper half back on the free list.
 */
static void expand(struct zone *zone, struct page *page, unsigned int low, unsigned int high,
		   int mt)
{
	unsigned long size = 1ul << high;

	while (high > low) {
		high--;
		size >>= 1;
		add_to_free_list(&page[size], zone, high, mt, false);
	}
}

/* Smallest free block of exactly migratetype mt that fits; zone->lock held. */
static struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int mt)
{
	for (unsigned int o = order; o <= MAX_ORDER; o++) {
		struct list_head *list = &zone->free_area[o].free_list[mt];
		struct page *page;

		if (list_empty(list))
			continue;
		page = list_first_entry(list, struct page, lru);
		del_page_from_free_list(page, zone, o);
		expand(zone, page, order, o, mt);
		return page;
	}
	return NULL;
}

/* ---- migratetype fallback ("stealing") ---- */

/* Which other free lists an allocation of each type may use, in order of preference. */
static const int fallbacks[MIGRATE_TYPES][MIGRATE_TYPES - 1] = {
	[MIGRATE_UNMOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE },
};

/*
 * May an allocation of start_mt take over the pageblock it falls back into? Yes for big
 * blocks, and always for unmovable/reclaimable requests: they pollute the block anyway, so
 * claiming it keeps the next such allocations together instead of spreading them.
 */
static bool can_steal_fallback(unsigned int order, int start_mt)
{
	return order >= pageblock_order / 2 || start_mt == MIGRATE_RECLAIMABLE ||
	       start_mt == MIGRATE_UNMOVABLE;
}

static int find_suitable_fallback(struct free_area *area, int mt, bool *can_steal,
				  unsigned int order)
{
	for (unsigned int i = 0; i < MIGRATE_TYPES - 1; i++) {
		int fb = fallbacks[mt][i];

		if (list_empty(&area->free_list[fb]))
			continue;
		*can_steal = can_steal_fallback(order, mt);
		return fb;
	}
	return -1;
}

/*
 * Move every free block of page's pageblock to mt's lists. Returns the free pages moved;
 * *movable counts allocated blocks in the pageblock that were asked for as MOVABLE
 * (our stand-in for Linux's PageLRU count). zone->lock held.
 */
static unsigned int move_freepages_block(struct zone *zone, struct page *page, int mt,
					 unsigned int *movable)
{
	struct page *start = page - (page->pfn & (pageblock_nr_pages - 1));
	unsigned int moved = 0, i = 0;

	*movable = 0;
	while (i < pageblock_nr_pages) {
		struct page *p = start + i;

		if (PageBuddy(p)) {
			move_to_free_list(p, zone, p->order, mt);
			moved += 1u << p->order;
			i += 1u << p->order;
			continue;
		}
		if (page_count(p) > 0 && !(page_flags(p) & PG_reserved) &&
		    READ_ONCE(p->mt) == MIGRATE_MOVABLE)
			(*movable)++;
		i++;
	}
	return moved;
}

/*
 * Take free page (order current_order, on a fallback list) for start_mt. A whole-pageblock
 * or larger block changes type outright. Otherwise, if allowed to steal, move all free pages
 * of its pageblock to start_mt, and claim the pageblock when at least half of it is free or
 * already holds start_mt-like allocations. In every case page itself ends on start_mt.
 */
static void steal_suitable_fallback(struct zone *zone, struct page *page, int start_mt,
				    bool whole_block, unsigned int current_order)
{
	int old_mt = get_pageblock_migratetype(page);
	unsigned int free_pages, movable, alike;

	if (current_order >= pageblock_order) {
		for (unsigned long i = 0; i < (1ul << current_order); i += pageblock_nr_pages)
			set_pageblock_migratetype(page + i, start_mt);
		zone->stat_steal_block += 1ul << (current_order - pageblock_order);
		goto single_page;
	}
	if (!whole_block)
		goto single_page;
	free_pages = move_freepages_block(zone, page, start_mt, &movable);
	if (start_mt == MIGRATE_MOVABLE)
		alike = movable;
	else if (old_mt == MIGRATE_MOVABLE)
		alike = (unsigned int)pageblock_nr_pages - free_pages - movable;
	else
		alike = 0;
	if (free_pages + alike >= pageblock_nr_pages / 2) {
		set_pageblock_migratetype(page, start_mt);
		zone->stat_steal_block++;
	}
	return;
single_page:
	move_to_free_list(page, zone, current_order, start_mt);
}

/*
 * No block of start_mt is free: fall back to another type, preferring the largest block
 * (stealing big keeps types apart). A movable request that may not steal takes the smallest
 * block instead, to fragment as little as possible. Returns true if start_mt's lists now
 * hold a block of at least order. zone->lock held.
 */
static bool __rmqueue_fallback(struct zone *zone, unsigned int order, int start_mt)
{
	int current_order, fb = -1;
	bool can_steal = false;

	for (current_order = MAX_ORDER; current_order >= (int)order; current_order--) {
		fb = find_suitable_fallback(&zone->free_area[current_order], start_mt, &can_steal,
					    (unsigned int)current_order);
		if (fb < 0)
			continue;
		if (!can_steal && start_mt == MIGRATE_MOVABLE && current_order > (int)order)
			goto find_smallest;
		goto do_steal;
	}
	return false;
find_smallest:
	for (current_order = (int)order; current_order <= MAX_ORDER; current_order++) {
		fb = find_suitable_fallback(&zone->free_area[current_order], start_mt, &can_steal,
					    (unsigned int)current_order);
		if (fb >= 0)
			break;
	}
	VM_BUG_ON(current_order > MAX_ORDER);
do_steal:
	steal_suitable_fallback(zone,
				list_first_entry(&zone->free_area[current_order].free_list[fb],
						 struct page, lru),
				start_mt, can_steal, (unsigned int)current_order);
	zone->stat_fallback++;
	return true;
}

/*
 * Take a block of 2^order pages of migratetype mt (or stolen from another type) off the
 * free lists, or NULL. The head leaves with order and mt recorded. zone->lock held.
 */
struct page *__rmqueue(struct zone *zone, unsigned int order, int mt)
{
	struct page *page;

	assert_spin_locked(&zone->lock);
	do {
		page = __rmqueue_smallest(zone, order, mt);
	} while (!page && __rmqueue_fallback(zone, order, mt));
	if (page) {
		__mod_zone_freepages(zone, -(1l << order));
		page->order = (u8)order;
		WRITE_ONCE(page->mt, (u8)mt);
	}
	return page;
}

/* A block off the buddy lists, or NULL; a block found in use is discarded (check_new_pages). */
struct page *rmqueue_buddy(struct zone *zone, unsigned int order, int mt)
{
	struct page *page;

	do {
		unsigned long flags = spin_lock_irqsave(&zone->lock);

		page = __rmqueue(zone, order, mt);
		spin_unlock_irqrestore(&zone->lock, flags);
	} while (page && !check_new_pages(page, order));
	return page;
}

/* ---- watermarks ---- */

/*
 * May an order-`order` allocation, which could also have used zones up to highest_zoneidx,
 * take pages from z?  With F = free - (2^order - 1) (the pages this request leaves unusable
 * below its block) and M = mark, reduced to M/2 for __GFP_HIGH and to 3M/8 if the caller
 * also cannot wait: fail if F <= M + lowmem_reserve[highest_zoneidx]. Order 0 then passes;
 * a higher order also needs a free block of at least that order.
 */
bool __zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
			 enum zone_type highest_zoneidx, unsigned int alloc_flags, long free)
{
	long min = (long)mark;

	free -= (1l << order) - 1;
	if (alloc_flags & ALLOC_MIN_RESERVE) {
		min -= min / 2;
		if (alloc_flags & ALLOC_NON_BLOCK)
			min -= min / 4;
	}
	if (free <= min + (long)z->lowmem_reserve[highest_zoneidx])
		return false;
	if (!order)
		return true;
	for (unsigned int o = order; o <= MAX_ORDER; o++)
		if (READ_ONCE(z->free_area[o].nr_free))
			return true;
	return false;
}

bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       enum zone_type highest_zoneidx, unsigned int alloc_flags)
{
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags,
				   (long)zone_free_pages(z));
}

/* The common case first: order 0 above mark and the reserve passes whatever the reserve
 * flags (free_pages is read racily, and may be stale). */
static inline bool zone_watermark_fast(struct zone *z, unsigned int order, unsigned long mark,
				       enum zone_type highest_zoneidx, unsigned int alloc_flags)
{
	long free = READ_ONCE(z->free_pages);

	if (!order && free > (long)(mark + z->lowmem_reserve[highest_zoneidx]))
		return true;
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags, free);
}

/* ---- freeing: the checks before a block goes back ---- */

/* Why free_ref_ok() refused a page, reported. */
static __noinline void free_ref_bad(struct page *page)
{
	if (page_flags(page) & PG_reserved)
		bad_page(page, "freeing a reserved page");
	else
		bad_page(page, "double free: refcount already %d%s", page_count(page),
			 PageBuddy(page) ? " (page is on a buddy free list)" :
			 PagePcp(page) ? " (page is on a per-CPU list)" : "");
}

/*
 * Checks that must precede dropping the reference, in debug builds (release builds trust
 * the caller, as Linux's put_page_testzero() does): refusing here loses nothing.
 */
static __always_inline bool free_ref_ok(struct page *page)
{
	if (!CONFIG_DEBUG_VM || likely(!(page_flags(page) & PG_reserved) && page_count(page) > 0))
		return true;
	free_ref_bad(page);
	return false;
}

static void free_the_page(struct page *page, unsigned int order);

/* A block freed with another order than it was allocated with: reported, then freed with the
 * recorded one, so nothing is lost. */
static __noinline void free_order_bad(struct page *page, unsigned int order)
{
	bad_page(page, "freed with order %u, allocated with order %u", order, page->order);
	free_the_page(page, page->order);
}

/*
 * The checks of a large block's free (order > 0): aligned, no pins left in page[1], no
 * tail page in use. Each problem is reported; false if the block must not be freed. Each
 * tail's compound_off goes back to 0 on the way (as Linux's free_tail_pages_check() clears
 * compound_head): every page of every free block says 0, so whatever a later allocation
 * takes off a list is its own head (prep_new_page()).
 */
static __noinline bool free_block_ok(struct page *page, unsigned int order)
{
	bool ok = true;

	if (unlikely(page->pfn & ((1u << order) - 1))) {
		bad_page(page, "block of order %u is not aligned", order);
		return false;
	}
	if (unlikely(page[1].compound_pincount)) {	/* pins without references */
		bad_page(page, "freed with a nonzero pin count (%u)", page[1].compound_pincount);
		return false;
	}
	for (unsigned int i = 1; i < (1u << order); i++) {
		if (unlikely(page_count(page + i) || (page_flags(page + i) & ~PG_poisoned))) {
			bad_page(page + i, "tail page of an order-%u block is in use", order);
			ok = false;
		}
		WRITE_ONCE(page[i].compound_off, 0);
	}
	return ok;
}

/*
 * Last reference gone: check the block and poison it. Returns false if the caller must not
 * free it: a wrong order (reported, and freed with the recorded one by free_order_bad()), or
 * a block too damaged to free (leaked, as Linux does). An order-0 page has nothing more to
 * check: its only state is the reference count, already dropped.
 */
static __always_inline bool free_pages_prepare(struct page *page, unsigned int order)
{
	if (unlikely(page->order != order)) {
		free_order_bad(page, order);
		return false;
	}
	if (unlikely(order) && !free_block_ok(page, order))
		return false;
	if (unlikely(page_pgdat(page)->poison))
		poison_pages(page, 1u << order);
	return true;
}

/* ---- the per-CPU lists: refill, spill, and the order-0..3 hit paths ---- */

/*
 * Move up to count blocks of order from the buddy lists to the tail of list, under one
 * zone->lock hold (tail: they come out in physical order). Each block is checked on its way
 * (check_new_pages): one found in use is discarded, left off every list. Returns how many
 * blocks were listed. Caller holds the pcp of list.
 */
static int rmqueue_bulk(struct zone *zone, unsigned int order, int count,
			struct list_head *list, int mt)
{
	unsigned long flags = spin_lock_irqsave(&zone->lock);
	int listed = 0;

	for (int i = 0; i < count; i++) {
		struct page *page = __rmqueue(zone, order, mt);

		if (!page)
			break;
		if (!check_new_pages(page, order))
			continue;
		__set_page_flag(page, PG_pcp);
		list_add_tail(&page->lru, list);
		listed++;
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	return listed;
}

/*
 * The pages a CPU frees go to its own list for the page's zone, whatever node the zone is
 * on (free_unref_page()). Pages of a remote zone stay there until this CPU allocates from
 * that zone, or they spill or are drained: count the pages that went home that way.
 */
static void count_remote_home(struct zone *zone, struct per_cpu_pages *pcp, int pages)
{
	unsigned int cpu = (unsigned int)(pcp - zone->pcp);

	if (machine_cpu_nid(zone->node->machine, cpu) != (unsigned int)zone->node->nid)
		__count_pcp_event(pcp, remote_home, (u64)pages);
}

/*
 * Give `count` base pages of pcp back to the buddy lists under one zone->lock hold. Lists
 * are visited round-robin starting with pindex (the one just freed to), each emptied from
 * its tail (the coldest pages) before moving on; empty lists at either end shrink the
 * window. count is clamped to pcp->count, or the loop would spin on empty lists.
 * Caller holds pcp (its lock, or interrupts off in the irqoff model).
 */
void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp, int pindex)
{
	int min_pindex = 0, max_pindex = NR_PCP_LISTS - 1, listed = pcp->count;
	unsigned long flags;

	pcp_assert_held(zone, pcp);
	count = MIN(pcp->count, count);
	pindex--;
	flags = spin_lock_irqsave(&zone->lock);
	while (count > 0) {
		struct list_head *list;
		int nr_pages;

		for (;;) {
			if (++pindex > max_pindex)
				pindex = min_pindex;
			list = &pcp->lists[pindex];
			if (!list_empty(list))
				break;
			if (pindex == max_pindex)
				max_pindex--;
			if (pindex == min_pindex)
				min_pindex++;
		}
		nr_pages = 1 << pindex_to_order((unsigned int)pindex);
		do {
			struct page *page = list_last_entry(list, struct page, lru);

			list_del(&page->lru);
			__clear_page_flag(page, PG_pcp);
			count -= nr_pages;
			WRITE_ONCE(pcp->count, pcp->count - nr_pages);
			__free_one_page(page, page->pfn, zone, pindex_to_order((unsigned int)pindex),
					page->mt);
		} while (count > 0 && !list_empty(list));
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	count_remote_home(zone, pcp, listed - pcp->count);	/* whole blocks: may be > count */
}

/*
 * Take the head of list (the hottest block), this CPU's list of zone for (mt, order); an
 * empty list is first refilled from the buddy lists with max(batch >> order, 2) blocks (1
 * with the boot pageset): enough to amortise zone->lock over several allocations, fewer for
 * big orders so a CPU does not hoard them. NULL if the buddy lists have none. Every block
 * was checked when a refill brought it; debug builds check it again as it leaves (a page
 * someone used while it sat here is discarded, left off every list, and the next taken), as
 * Linux does (check_pcp_refill, check_new_pcp). Caller holds pcp.
 */
__always_inline struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order, int mt,
					       struct per_cpu_pages *pcp, struct list_head *list)
{
	struct page *page;

	pcp_assert_held(zone, pcp);
	do {
		if (list_empty(list)) {
			int batch = READ_ONCE(pcp->batch);

			if (batch > 1)
				batch = MAX(batch >> order, 2);
			WRITE_ONCE(pcp->count, pcp->count +
				   (rmqueue_bulk(zone, order, batch, list, mt) << order));
			__count_pcp_event(pcp, refill, 1);
			if (unlikely(list_empty(list)))
				return NULL;
		} else {
			__count_pcp_event(pcp, alloc_hit, 1);
		}
		page = list_first_entry(list, struct page, lru);
		list_del(&page->lru);
		__clear_page_flag(page, PG_pcp);
		WRITE_ONCE(pcp->count, pcp->count - (1 << order));
	} while (CONFIG_DEBUG_VM && unlikely(!check_new_pages(page, order)));
	return page;
}

/*
 * Lock and take a block from this CPU's list of zone, or NULL: its lock was busy (an
 * interrupted holder, a remote drain; counted), or the buddy lists had nothing to refill it
 * with. An allocation halves free_factor: frees that follow it spill less. The NUMA
 * counters (preferred: the zone the zonelist walk started at) are counted after the hold.
 */
static __always_inline struct page *rmqueue_pcplist(struct zone *preferred,
						    struct zone *zone, unsigned int order, int mt)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	unsigned long flags;
	struct page *page;

	if (unlikely(!pcp_lock(zone, pcp, PCP_TRY, &flags))) {
		__count_pcp_event(pcp, trylock_fail_alloc, 1);
		return NULL;
	}
	pcp->free_factor >>= 1;
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
	pcp_unlock(zone, pcp, flags);
	if (page)
		zone_statistics(preferred, zone, pcp);
	return page;
}

/* When count reaches this, spill. 0 (boot pageset, pcp disabled, free_high) spills now. */
static int nr_pcp_high(struct per_cpu_pages *pcp, bool free_high)
{
	int high = READ_ONCE(pcp->high);

	return (!high || free_high) ? 0 : high;
}

/*
 * How much to spill. free_high: everything. Boot pageset (high < batch): one block.
 * Otherwise batch << free_factor, clamped to [batch, high - batch] so at least batch pages
 * stay for the next allocations; while that doubling still fits, free_factor grows, so a
 * run of frees without allocations spills batch, 2 batch, 4 batch, ... (at most
 * batch << PCP_BATCH_SCALE_MAX).
 */
static int nr_pcp_free(struct per_cpu_pages *pcp, int high, bool free_high)
{
	int batch = READ_ONCE(pcp->batch), min_nr_free, max_nr_free;

	if (free_high)
		return pcp->count;
	if (high < batch)
		return 1;
	min_nr_free = batch;
	max_nr_free = high - batch;
	batch <<= pcp->free_factor;
	if (batch < max_nr_free && pcp->free_factor < PCP_BATCH_SCALE_MAX)
		pcp->free_factor++;
	return CLAMP(batch, min_nr_free, max_nr_free);
}

/*
 * Put the block at the head of its list (LIFO: the hottest page is reused first), marked
 * with its list's order and type; then, if count reached high (high 0, the boot pageset or
 * a disabled zone, spills every free), spill nr_pcp_free() pages, starting with the list
 * just freed to. free_high (v6.4): an order 1..3 free while frees dominate (free_factor > 0)
 * empties the whole pcp, so that a CPU that mostly frees does not sit on high-order pages
 * another CPU could use while they are still cache-hot. Caller holds pcp: the spill runs
 * under the hold that reached high, so no other holder ever sees the list at or above it
 * (zone_pcp_disable() relies on it: high 0 must mean empty lists).
 */
static void free_unref_page_commit(struct zone *zone, struct per_cpu_pages *pcp,
				   struct page *page, int mt, unsigned int order)
{
	unsigned int pindex = order_to_pindex(mt, order);
	bool free_high;
	int high;

	pcp_assert_held(zone, pcp);
	page->order = (u8)order;
	WRITE_ONCE(page->mt, (u8)mt);
	__set_page_flag(page, PG_pcp);
	list_add(&page->lru, &pcp->lists[pindex]);
	WRITE_ONCE(pcp->count, pcp->count + (1 << order));
	__count_pcp_event(pcp, free_hit, 1);
	free_high = pcp->free_factor && order && order <= PAGE_ALLOC_COSTLY_ORDER;
	high = nr_pcp_high(pcp, free_high);
	if (pcp->count >= high) {
		free_pcppages_bulk(zone, nr_pcp_free(pcp, high, free_high), pcp, (int)pindex);
		__count_pcp_event(pcp, spill, 1);
	}
}

/*
 * Free a block of a pcp order whose last reference is gone: prepared, then to this CPU's
 * list for the page's own zone, whatever node that is on; straight to the buddy lists if the
 * lists are off or the lock is busy (counted).
 */
static void free_unref_page(struct page *page, unsigned int order)
{
	struct per_cpu_pages *pcp;
	unsigned long flags;
	struct zone *zone;
	int mt;

	if (!free_pages_prepare(page, order))
		return;
	zone = page_zone(page);
	mt = get_pageblock_migratetype(page);
	if (likely(pcp_enabled)) {
		pcp = this_cpu_pcp(zone);
		if (likely(pcp_lock(zone, pcp, PCP_TRY, &flags))) {
			free_unref_page_commit(zone, pcp, page, mt, order);
			pcp_unlock(zone, pcp, flags);
			return;
		}
		__count_pcp_event(pcp, trylock_fail_free, 1);
	}
	free_one_page(zone, page, order, mt);
}

/* ---- allocation ---- */

/* The highest zone gfp allows: its zone bits as an index (__GFP_DMA wins over __GFP_DMA32). */
static const u8 gfp_zone_table[4] = {
	[0] = ZONE_NORMAL,
	[__GFP_DMA] = ZONE_DMA,
	[__GFP_DMA32] = ZONE_DMA32,
	[__GFP_DMA | __GFP_DMA32] = ZONE_DMA,
};
BUILD_BUG_ON((__GFP_DMA | __GFP_DMA32) != 3);

static inline enum zone_type gfp_zone(gfp_t gfp)
{
	return (enum zone_type)gfp_zone_table[gfp & (__GFP_DMA | __GFP_DMA32)];
}

/*
 * The allocation from one zone, as every zone of the zonelist walk takes it: this CPU's
 * list for a pcp order (rmqueue_pcplist(), which refills it under the same hold), else, or
 * if that gave nothing, the buddy lists.
 */
static __always_inline struct page *rmqueue(struct zone *preferred, struct zone *zone,
					    unsigned int order, int mt)
{
	struct page *page;

	if (likely(pcp_allowed_order(order) && pcp_enabled)) {
		page = rmqueue_pcplist(preferred, zone, order, mt);
		if (likely(page))
			return page;
	}
	page = rmqueue_buddy(zone, order, mt);
	if (page)
		zone_statistics(preferred, zone, this_cpu_pcp(zone));
	return page;
}

/*
 * Walk the zonelist from the preferred zone (this node's zones first, then the other nodes'
 * by distance) and take from the first zone above its watermark. A zone whose memory map is
 * still partly deferred grows instead of failing.
 */
static __always_inline struct page *get_page_from_freelist(gfp_t gfp, unsigned int order,
							   unsigned int alloc_flags,
							   const struct alloc_context *ac)
{
	for (struct zoneref *z = ac->preferred_zoneref; z->zone; z++) {
		struct zone *zone = z->zone;
		struct page *page;

		if (z->zone_idx > (int)ac->highest_zoneidx)
			continue;
		if (!(alloc_flags & ALLOC_NO_WATERMARKS) &&
		    !zone_watermark_fast(zone, order, wmark_pages(zone, alloc_flags),
					 ac->highest_zoneidx, alloc_flags) &&
		    !(zone_has_deferred(zone) && deferred_grow_zone(zone, order)))
			continue;
		do {
			page = rmqueue(ac->preferred_zoneref->zone, zone, order, ac->migratetype);
		} while (!page && zone_has_deferred(zone) && deferred_grow_zone(zone, order));
		if (page)
			return prep_new_page(page, order, gfp);
	}
	return NULL;
}

static unsigned int gfp_to_alloc_flags(gfp_t gfp)
{
	unsigned int flags = ALLOC_WMARK_MIN;

	if (gfp & __GFP_HIGH)
		flags |= ALLOC_MIN_RESERVE;
	if (!(gfp & __GFP_DIRECT_RECLAIM))
		flags |= ALLOC_NON_BLOCK;
	if (gfp & __GFP_MEMALLOC)
		flags |= ALLOC_NO_WATERMARKS;
	return flags;
}

/*
 * The first attempt failed at the low watermark. Try again at min (less for __GFP_HIGH).
 * Then, only if the caller may wait (__GFP_DIRECT_RECLAIM, interrupts on), drain every
 * CPU's lists once and retry, as Linux does after direct reclaim
 * (__alloc_pages_direct_reclaim() -> drain_all_pages()).
 *
 * The rule: a caller that cannot wait never drains, local or remote, nor spins on any pcp
 * lock. It may be an interrupt handler whose interrupted code holds this CPU's pcp lock
 * (trylock model: inside free_unref_page(), say); a drain would spin on that lock, waiting
 * for the code it interrupted, forever. It fails instead, or succeeds from the reserves its
 * flags allow. (A remote drain may also wait for other CPUs: IPIs in the irqoff model.)
 */
static __noinline struct page *__alloc_pages_slowpath(gfp_t gfp, unsigned int order,
						      const struct alloc_context *ac)
{
	unsigned int alloc_flags = gfp_to_alloc_flags(gfp);
	bool drained = false;
	struct page *page;

	for (;;) {
		page = get_page_from_freelist(gfp, order, alloc_flags, ac);
		if (page || drained || !(gfp & __GFP_DIRECT_RECLAIM) || arch_irqs_disabled())
			break;
		__atomic_fetch_add(&ac->pgdat->drain_retries, 1, __ATOMIC_RELAXED);
		drain_all_pages_machine(ac->pgdat->machine);
		drained = true;
	}
	if (!page) {
		__atomic_fetch_add(&ac->pgdat->alloc_fail, 1, __ATOMIC_RELAXED);
		if (!(gfp & __GFP_NOWARN))
			pr_warn("%s: page allocation failure: order %u gfp 0x%x\n",
				ac->pgdat->name, order, gfp);
	}
	return page;
}

/*
 * The allocator's entry (Linux's __alloc_pages()): refuse an order above MAX_ORDER, let
 * fail_page_alloc fail it on purpose, set up the allocation context (the zonelist: the
 * node's own zones only with __GFP_THISNODE; where it starts for gfp's highest zone), then
 * the zonelist walk at the low watermark, and the slow path if that fails.
 */
struct page *alloc_pages_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int order)
{
	struct alloc_context ac;
	struct page *page;

	if (unlikely(order > MAX_ORDER)) {	/* first: everything below trusts the order */
		if (!(gfp & __GFP_NOWARN))
			pr_warn("alloc_pages: order %u > MAX_ORDER %u\n", order, MAX_ORDER);
		return NULL;
	}
	if (should_fail_alloc_page(gfp, order))
		return NULL;	/* on purpose (fail_page_alloc=): counted there, not warned */
	ac.pgdat = pgdat;
	ac.highest_zoneidx = gfp_zone(gfp);
	ac.migratetype = gfp_migratetype(gfp);
	ac.zonelist = &pgdat->node_zonelists[(gfp & __GFP_THISNODE) ? ZONELIST_NOFALLBACK :
									ZONELIST_FALLBACK];
	ac.preferred_zoneref = first_zones_zonelist(ac.zonelist, ac.highest_zoneidx);
	page = get_page_from_freelist(gfp, order, ALLOC_WMARK_LOW, &ac);
	if (unlikely(!page))
		page = __alloc_pages_slowpath(gfp, order, &ac);
	return page;
}

/* ---- freeing ---- */

/* A block of an order without per-CPU lists: prepared, then to the buddy lists. */
static void __free_pages_ok(struct page *page, unsigned int order)
{
	if (free_pages_prepare(page, order))
		free_one_page(page_zone(page), page, order, get_pageblock_migratetype(page));
}

/* The last reference to a block is gone: a pcp order goes to this CPU's list
 * (free_unref_page()), the rest to the buddy lists. */
static __always_inline void free_the_page(struct page *page, unsigned int order)
{
	VM_BUG_ON(order > MAX_ORDER);
	if (pcp_allowed_order(order))
		free_unref_page(page, order);
	else
		__free_pages_ok(page, order);
}

/*
 * No pin check here, as in Linux: a pin holds references of its own (mm/gup.h), so dropping
 * the caller's one cannot free a pinned page, and page_maybe_dma_pinned() has false
 * positives (1024 plain references look like a pin) that must not turn a lawful free away.
 */
void __free_pages(struct page *page, unsigned int order)
{
	if (!free_ref_ok(page))
		return;
	if (__atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		free_the_page(page, order);
}

void put_page(struct page *page)
{
	if (!free_ref_ok(page))
		return;
	if (__atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		free_the_page(page, page->order);
}

/* The slow part of check_new_pages(): every page of the block, reported if in use. */
bool check_new_block(struct page *page, unsigned int order)
{
	for (unsigned int i = 0; i < (1u << order); i++)
		if (unlikely(page_count(page + i) || (page_flags(page + i) & ~PG_poisoned))) {
			bad_page(page + i, "free page in use (order-%u allocation)", order);
			return false;
		}
	return true;
}

/* prep_new_page() for all but a clean order-0 page: check the poison, clear the pin count
 * mm/gup.h reads, zero if asked. */
struct page *prep_new_block(struct page *page, unsigned int order, gfp_t gfp)
{
	check_poison_pages(page, 1u << order);
	if (order)
		page[1].compound_pincount = 0;
	set_page_allocated(page, order, gfp);
	if (gfp & __GFP_ZERO)
		memset(page_address(page), 0, PAGE_SIZE << order);
	return page;
}
