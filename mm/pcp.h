/*
 * The per-CPU lists' hit paths, inline: taking this CPU's pcp as the zone's lock model says,
 * then the allocation (rmqueue_pcplist) and the free (free_unref_page) on it, as Linux v6.1
 * names them. What a hit does not need (refills, spills, drains, sizing) is out of line in
 * mm/pcp.c. mm/ only, like mm/internal.h.
 */
#ifndef MM_PCP_H
#define MM_PCP_H

#include "mm/internal.h"

/* ---- the three lock models: how a CPU takes its own lists, one block each ---- */

/*
 * trylock, Linux 6.2+ (574907741599 "leave IRQs enabled for per-cpu page allocations"):
 * the pcp's spinlock, tried with interrupts on. An interrupt on this CPU that finds it held
 * fails its own trylock and goes to the buddy lists, instead of deadlocking; a remote
 * drainer holding it makes the owner fail the same way. Debug builds take it through the
 * whole spinlock API (owner and recursion checks, lock statistics, the validator); release
 * builds use the lock word alone, which belongs to one CPU (pcp_stats counts what matters).
 */
static __always_inline bool pcp_spin_trylock(struct per_cpu_pages *pcp)
{
	return CONFIG_DEBUG_VM ? spin_trylock(&pcp->lock) : arch_spin_trylock(&pcp->lock);
}

static __always_inline void pcp_spin_unlock(struct per_cpu_pages *pcp)
{
	if (CONFIG_DEBUG_VM)
		spin_unlock(&pcp->lock);
	else
		arch_spin_unlock(&pcp->lock);
}

/* irqsave, Linux 6.0 and 6.1 (pcp_spin_trylock_irqsave()): the same trylock with this CPU's
 * interrupts saved and disabled first, and restored if it fails. */
static __always_inline bool pcp_spin_trylock_irqsave(struct per_cpu_pages *pcp,
						     unsigned long *flags)
{
	*flags = arch_irq_save();
	if (likely(pcp_spin_trylock(pcp)))
		return true;
	arch_irq_restore(*flags);
	return false;
}

static __always_inline void pcp_spin_unlock_irqrestore(struct per_cpu_pages *pcp,
						       unsigned long flags)
{
	pcp_spin_unlock(pcp);
	arch_irq_restore(flags);
}

/* irqoff, Linux up to 5.19 (local_lock_irqsave(&pagesets.lock)): interrupts off is the whole
 * protection, and it cannot fail: no other CPU ever touches these lists, a drain asks their
 * owner by IPI (mm/pcp.c drain_cpu()). */
static __always_inline bool pcp_local_lock_irqsave(struct per_cpu_pages *pcp,
						   unsigned long *flags)
{
	*flags = arch_irq_save();
	return true;
}

static __always_inline void pcp_local_unlock_irqrestore(struct per_cpu_pages *pcp,
							unsigned long flags)
{
	arch_irq_restore(flags);
}

/* The owner's take of its pcp in model, without waiting; false if the lock is held. flags:
 * the interrupt state to give back (the trylock model leaves it alone). */
static __always_inline bool pcp_trylock(struct per_cpu_pages *pcp, enum pcp_lock_model model,
					unsigned long *flags)
{
	if (model == PCP_LOCK_TRYLOCK)
		return pcp_spin_trylock(pcp);
	if (model == PCP_LOCK_IRQSAVE)
		return pcp_spin_trylock_irqsave(pcp, flags);
	return pcp_local_lock_irqsave(pcp, flags);
}

static __always_inline void pcp_unlock(struct per_cpu_pages *pcp, enum pcp_lock_model model,
				       unsigned long flags)
{
	if (model == PCP_LOCK_TRYLOCK)
		pcp_spin_unlock(pcp);
	else if (model == PCP_LOCK_IRQSAVE)
		pcp_spin_unlock_irqrestore(pcp, flags);
	else
		pcp_local_unlock_irqrestore(pcp, flags);
}

/*
 * fn(args..., model) with model the lock model of zone's lists as a constant: fn is inlined
 * once per model, so nothing inside it tests the model again, and choosing costs one compare
 * and branch in the trylock model (one more in the others). The model never changes while
 * the zone lives (enum pcp_lock_model), so a hold and its release cannot disagree.
 */
#define pcp_model_call(zone, fn, ...)							\
	(likely((zone)->pcp_lock > PCP_LOCK_IRQSAVE) ? fn(__VA_ARGS__, PCP_LOCK_TRYLOCK) :	\
	 (zone)->pcp_lock == PCP_LOCK_IRQSAVE ? fn(__VA_ARGS__, PCP_LOCK_IRQSAVE) :		\
						fn(__VA_ARGS__, PCP_LOCK_IRQOFF))

/* What every list operation needs: pcp's lock, or (irqoff model, the owner) interrupts off.
 * Debug builds check it first thing. */
static inline void pcp_assert_held(const struct zone *zone, struct per_cpu_pages *pcp)
{
	VM_BUG_ON(!spin_is_held_by_me(&pcp->lock) &&
		  !(zone->pcp_lock == PCP_LOCK_IRQOFF && arch_irqs_disabled()));
}

/* This CPU's pcp of zone. There is no preemption in this kernel, so the CPU cannot change
 * before the lock is taken (Linux pins the task first: pcpu_task_pin() in 4b23a68f9536
 * "mm/page_alloc: protect PCP lists with a spinlock"). */
static __always_inline struct per_cpu_pages *this_cpu_pcp(struct zone *zone)
{
	return &zone->pcp[arch_cpu_id()];
}

/*
 * A hit makes no call at all: every way out of it that is not a hit ends in a jump to an
 * out-of-line function, so the compiler gives alloc_pages_node() and __free_pages() no stack
 * frame (a frame costs 13 to 16 instructions per side). So a spill, which must happen under
 * the hold that reached high, is handed the hold and lets go of it itself; an allocation
 * that finds its list empty lets go and leaves the refill to rmqueue() in the general path,
 * which takes the lock again (once per batch: a few instructions then).
 */

/* ---- allocation: rmqueue_pcplist() -> __rmqueue_pcplist() ---- */

/* Take the head of list (the hottest block) off it, or NULL if it is empty. A block someone
 * used while it sat here (debug builds check) is discarded, left off every list
 * (check_new_pages()): NULL too. Caller holds pcp. */
static __always_inline struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order,
						      struct per_cpu_pages *pcp,
						      struct list_head *list)
{
	struct list_head *first = list->next;	/* the head itself if the list is empty */
	struct page *page;

	pcp_assert_held(zone, pcp);
	if (unlikely(first == list))
		return NULL;
	page = list_entry(first, struct page, lru);
	list_del(&page->lru);
	__clear_page_flag(page, PG_pcp);
	WRITE_ONCE(pcp->count, pcp->count - (1 << order));
	if (CONFIG_DEBUG_VM && unlikely(!check_new_pages(page, order)))
		return NULL;
	return page;
}

/*
 * A block from this CPU's list of zone, or NULL: the list is empty, or its lock was busy (an
 * interrupted holder, a remote drain). An allocation halves free_factor: frees that follow
 * it spill less. The NUMA counters (preferred: the zone the zonelist walk started at) are
 * counted after the hold. On NULL the caller refills (rmqueue_pcplist_refill(), which takes
 * the lock again and counts a busy one) or goes to the buddy lists.
 */
static __always_inline struct page *rmqueue_pcplist(struct zone *preferred, struct zone *zone,
						    unsigned int order, int mt,
						    enum pcp_lock_model model)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	struct list_head *list = &pcp->lists[order_to_pindex(mt, order)];
	unsigned long flags;
	struct page *page;

	if (unlikely(!pcp_trylock(pcp, model, &flags)))
		return NULL;
	pcp->free_factor >>= 1;
	page = __rmqueue_pcplist(zone, order, pcp, list);
	if (likely(page))
		pcp->stats.alloc_hit++;
	pcp_unlock(pcp, model, flags);
	if (likely(page))
		zone_statistics(preferred, zone, pcp);
	return page;
}

/* ---- free: free_unref_page() -> free_unref_page_commit() ---- */

/*
 * Put the block at the head of its list (LIFO: the hottest page is reused first), marked
 * with its list's order and type. True if the pcp must now spill to the buddy lists: count
 * reached high (high 0, the boot pageset or a disabled zone, spills every free), or frees
 * dominate and this one is of order 1..3 (free_high). Caller holds pcp.
 */
static __always_inline bool free_unref_page_commit(struct zone *zone, struct per_cpu_pages *pcp,
						   struct page *page, int mt, unsigned int order)
{
	pcp_assert_held(zone, pcp);
	page->order = (u8)order;
	WRITE_ONCE(page->mt, (u8)mt);
	__set_page_flag(page, PG_pcp);
	list_add(&page->lru, pcp->lists + order_to_pindex(mt, order));
	WRITE_ONCE(pcp->count, pcp->count + (1 << order));
	pcp->stats.free_hit++;
	return pcp->count >= READ_ONCE(pcp->high) ||
	       (order && order <= PAGE_ALLOC_COSTLY_ORDER && pcp->free_factor);
}

/* The free on this CPU's list in model; to the buddy lists if its lock is busy. A spill
 * that is due runs under the same hold, out of line (free_unref_page_spill() lets go). */
static __always_inline void __free_unref_page(struct zone *zone, struct page *page, int mt,
					      unsigned int order, enum pcp_lock_model model)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	unsigned long flags = 0;	/* (the trylock model leaves it alone) */

	if (unlikely(!pcp_trylock(pcp, model, &flags))) {
		pcp->stats.trylock_fail_free++;
		free_one_page(zone, page, order, mt);
		return;
	}
	if (unlikely(free_unref_page_commit(zone, pcp, page, mt, order))) {
		free_unref_page_spill(zone, pcp, order, mt, model, flags);
		return;
	}
	pcp_unlock(pcp, model, flags);
}

/*
 * Free a block of a pcp order whose last reference is gone, prepared (mm/page_alloc.c): to
 * this CPU's list for the page's own zone, whatever node that is on, or straight to the
 * buddy lists if the lists are off.
 */
static __always_inline void free_unref_page(struct page *page, unsigned int order)
{
	struct zone *zone = page_zone(page);

	if (unlikely(!pcp_enabled)) {
		free_one_page(zone, page, order, get_pageblock_migratetype(page));
		return;
	}
	pcp_model_call(zone, __free_unref_page, zone, page, get_pageblock_migratetype(page),
		       order);
}

#endif
