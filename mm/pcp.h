/*
 * The per-CPU lists' lock: how a pcp is taken and released in each of the three lock models
 * (enum pcp_lock_model, mm/mmzone.h), in one place. The lists themselves are worked in
 * mm/page_alloc.c (the hit paths, refills, spills) and mm/pcp.c (sizing, drains). mm/ only,
 * like mm/internal.h.
 */
#ifndef MM_PCP_H
#define MM_PCP_H

#include "mm/internal.h"

/* This CPU's pcp of zone. There is no preemption in this kernel, so the CPU cannot change
 * before the lock is taken (Linux pins the task first: pcpu_task_pin() in 4b23a68f9536). */
static __always_inline struct per_cpu_pages *this_cpu_pcp(struct zone *zone)
{
	return &zone->pcp[arch_cpu_id()];
}

/*
 * The lock word of a pcp. Debug builds go through the whole spinlock API (owner and
 * recursion checks, lockdep, lock statistics); release builds use the word alone, as Linux's
 * spin_lock() is without CONFIG_DEBUG_SPINLOCK and CONFIG_LOCK_STAT (pcp_stats counts what
 * matters). A hold is always taken and released through the same layer.
 */
#if CONFIG_DEBUG_VM
#define pcp_spin_trylock(pcp)	spin_trylock(&(pcp)->lock)
#define pcp_spin_lock(pcp)	spin_lock(&(pcp)->lock)
#define pcp_spin_unlock(pcp)	spin_unlock(&(pcp)->lock)
#else
#define pcp_spin_trylock(pcp)	arch_spin_trylock(&(pcp)->lock)
#define pcp_spin_lock(pcp)	arch_spin_lock(&(pcp)->lock)
#define pcp_spin_unlock(pcp)	arch_spin_unlock(&(pcp)->lock)
#endif

enum pcp_wait { PCP_TRY, PCP_WAIT };

/*
 * Take pcp as zone's lock model says; flags: the interrupt state pcp_unlock() gives back.
 * PCP_TRY, the owner's hit paths: false if the lock is busy, never a wait (the caller may be
 * an interrupt on the code that holds it, or a remote drain holds it: either way it goes to
 * the buddy lists). PCP_WAIT, drains: always true, once it has the lists.
 *
 *   trylock, Linux 6.2+ (574907741599, "leave IRQs enabled for per-cpu page allocations"):
 *            the spinlock, interrupts left on. An interrupt on this CPU that finds it held
 *            fails its own trylock.
 *   irqsave, Linux 6.0 and 6.1 (4b23a68f9536, pcp_spin_trylock_irqsave()): the spinlock
 *            with this CPU's interrupts saved and disabled first, given back if it fails.
 *   irqoff,  Linux up to 5.19 (local_lock_irqsave(&pagesets.lock)): interrupts off is the
 *            whole protection, and it cannot fail: no other CPU ever touches these lists (a
 *            drain asks their owner by IPI, mm/pcp.c drain_cpu()).
 *
 * The model never changes while the zone lives, so a hold and its release cannot disagree.
 */
static __always_inline bool pcp_lock(struct zone *zone, struct per_cpu_pages *pcp,
				     enum pcp_wait wait, unsigned long *flags)
{
	if (likely(zone->pcp_lock == PCP_LOCK_TRYLOCK)) {
		*flags = 0;	/* interrupts are left alone: nothing to give back */
		if (likely(wait == PCP_TRY))
			return pcp_spin_trylock(pcp);
		pcp_spin_lock(pcp);
		return true;
	}
	*flags = arch_irq_save();
	if (zone->pcp_lock == PCP_LOCK_IRQOFF)
		return true;
	/* PCP_LOCK_IRQSAVE */
	if (wait == PCP_WAIT)
		pcp_spin_lock(pcp);
	else if (unlikely(!pcp_spin_trylock(pcp))) {
		arch_irq_restore(*flags);
		return false;
	}
	return true;
}

static __always_inline void pcp_unlock(struct zone *zone, struct per_cpu_pages *pcp,
				       unsigned long flags)
{
	if (likely(zone->pcp_lock == PCP_LOCK_TRYLOCK)) {
		pcp_spin_unlock(pcp);
		return;
	}
	if (zone->pcp_lock == PCP_LOCK_IRQSAVE)
		pcp_spin_unlock(pcp);
	arch_irq_restore(flags);
}

/* What every list operation needs: pcp's lock, or (irqoff model, the owner) interrupts off.
 * Debug builds check it first thing. */
static inline void pcp_assert_held(const struct zone *zone, struct per_cpu_pages *pcp)
{
	VM_BUG_ON(!spin_is_held_by_me(&pcp->lock) &&
		  !(zone->pcp_lock == PCP_LOCK_IRQOFF && arch_irqs_disabled()));
}

#endif
