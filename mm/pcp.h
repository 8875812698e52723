/*
 * The per-CPU lists' inline operations: taking this CPU's pcp as its lock model says, and
 * putting a block on a list or taking one off. The order-0 fast paths (mm/page_alloc.c)
 * are made of these, and so are the general paths of mm/pcp.c, which holds everything
 * slower (refills, spills, drains, sizing). mm/ only, like mm/internal.h.
 */
#ifndef MM_PCP_H
#define MM_PCP_H

#include "mm/internal.h"

/* ---- lock models ---- */

/*
 * The pcp's spinlock. Debug builds take it through the whole API (owner and recursion
 * checks, lock statistics, the lock validator); release builds use the lock word alone:
 * the lock belongs to one CPU, and counting its acquisitions would cost as much as the list
 * operation it protects (pcp_stats counts what matters: hits, refills, trylock failures).
 * Drains take it with spin_lock() in both builds; each hold is released as it was taken.
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

/*
 * Take pcp as model protects it, without waiting; false if its lock is held. flags gets
 * the interrupt state to restore in the models that turn interrupts off; the trylock model
 * leaves interrupts, and flags, alone (pcp_unlock_model() does not read it there).
 *   irqoff:  interrupts off is the whole protection; remote CPUs never touch this pcp.
 *   irqsave: the trylock with interrupts saved and disabled (v6.0).
 *   trylock: the trylock, interrupts stay on (v6.2+); an interrupt on this CPU that finds
 *            the lock held fails its own trylock instead of deadlocking.
 */
static __always_inline bool pcp_trylock_model(struct per_cpu_pages *pcp,
					      enum pcp_lock_model model, unsigned long *flags)
{
	if (model == PCP_LOCK_TRYLOCK)
		return pcp_spin_trylock(pcp);
	*flags = arch_irq_save();
	if (model == PCP_LOCK_IRQOFF || pcp_spin_trylock(pcp))
		return true;
	arch_irq_restore(*flags);
	return false;
}

static __always_inline void pcp_unlock_model(struct per_cpu_pages *pcp,
					     enum pcp_lock_model model, unsigned long flags)
{
	if (model == PCP_LOCK_TRYLOCK) {
		pcp_spin_unlock(pcp);
		return;
	}
	if (model == PCP_LOCK_IRQSAVE)
		pcp_spin_unlock(pcp);
	arch_irq_restore(flags);
}

/* What every list operation needs: the pcp's lock, or (irqoff model, the owner) interrupts
 * off. Debug builds check it at the top of each such function. */
static inline void pcp_assert_held(struct per_cpu_pages *pcp)
{
	VM_BUG_ON(!spin_is_held_by_me(&pcp->lock) &&
		  !(READ_ONCE(pcp_lock_model) == PCP_LOCK_IRQOFF && arch_irqs_disabled()));
}

/* This CPU's pcp of zone. There is no preemption in this kernel, so the CPU cannot change
 * before the lock is taken (Linux pins the task first: pcpu_task_pin() in 4b23a68f9536
 * "mm/page_alloc: protect PCP lists with a spinlock"). */
static __always_inline struct per_cpu_pages *this_cpu_pcp(struct zone *zone)
{
	return &zone->pcp[arch_cpu_id()];
}

/*
 * Take this CPU's pcp (this_cpu_pcp()) as the lock model says, or fail if it is busy (the
 * caller then goes to the buddy lists). The model is read once and kept in the hold with
 * the interrupt state, so pcp_unlock() undoes exactly what this did even if the model
 * changes in between.
 */
static __always_inline bool pcp_trylock(struct per_cpu_pages *pcp, struct pcp_hold *hold)
{
	hold->model = READ_ONCE(pcp_lock_model);
	return pcp_trylock_model(pcp, hold->model, &hold->flags);
}

static __always_inline void pcp_unlock(struct per_cpu_pages *pcp, struct pcp_hold hold)
{
	pcp_unlock_model(pcp, hold.model, hold.flags);
}

/* ---- list operations (caller holds pcp) ---- */

/* Take the block at the head of list (the hottest one), or NULL if the list is empty. */
static __always_inline struct page *pcp_pop(struct per_cpu_pages *pcp, struct list_head *list,
					    unsigned int order)
{
	struct list_head *first = list->next;	/* the head itself if the list is empty */
	struct page *page;

	pcp_assert_held(pcp);
	if (first == list)
		return NULL;
	page = list_entry(first, struct page, lru);
	list_del(&page->lru);
	__clear_page_flag(page, PG_pcp);
	WRITE_ONCE(pcp->count, pcp->count - (1 << order));
	return page;
}

/* Put a block at the head of its list (LIFO: the hottest page is reused first). */
static __always_inline void pcp_push(struct per_cpu_pages *pcp, struct page *page, int mt,
				     unsigned int order)
{
	pcp_assert_held(pcp);
	page->order = (u8)order;
	WRITE_ONCE(page->mt, (u8)mt);
	__set_page_flag(page, PG_pcp);
	list_add(&page->lru, pcp->lists + order_to_pindex(mt, order));
	WRITE_ONCE(pcp->count, pcp->count + (1 << order));
}

#endif
