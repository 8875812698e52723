"""The mutations `make mutate` plants, one at a time: realistic SMP memory-management bugs.

Each entry: a name; the file; `says`, one line a student understands; `edits`, pairs of (the
exact original text, its replacement), each original found exactly once in the file (if it
is not, the mutation is an ERROR: the code moved and this entry must be rewritten); and
`tests`, the tests expected to catch it, fastest first (the first that fails kills it):

    host:FILTER      build/host/plain/mmtest FILTER (host tests whose name contains FILTER)
    asan:FILTER      the same in the ASan+UBSan build
    tsan:FILTER      the TSan build, concurrent tests only (-c FILTER)
    kernel:N:GLOB    boot the kernel at -smp N with test=GLOB (tests/runner.py)
    matrix:ROWS      rows of make test's QEMU matrix (tests/matrix.py) whose names match the
                     glob ROWS, one QEMU at a time (QEMU 10 for the x2APIC rows: make qemu10)

Not a list of everything that could go wrong: each entry is a bug someone could plausibly
write (many did, in Linux), and each must be caught by some test in the tree.
"""

MUTATIONS = [
    # ---- bring-up and the kernel page tables (arch/x86_64) ----
    dict(
        name="ap-uses-unclaimed-slot",
        file="arch/x86_64/trampoline.asm",
        says="an AP loads its slot's stack and runs on it even when the slot is not PENDING "
             "(its compare-and-swap failed: the slot is another CPU's, or given up on)",
        edits=[("""\
	lock cmpxchg [rdx + rdi * 4], ecx
	jne ap_stray
""", """\
	lock cmpxchg [rdx + rdi * 4], ecx
""")],
        tests=["matrix:bios-q35-smp4-nosipi-last"],
    ),
    dict(
        name="ap-id-from-cpuid-leaf1",
        file="arch/x86_64/trampoline.asm",
        says="in x2APIC mode an AP takes its APIC ID from CPUID.1:EBX[31:24], 8 bits (what "
             "4961178 fell back to without leaf 0xb): x2APIC ID 257 reads as 1, cpu1's",
        edits=[("""\
	mov ecx, MSR_X2APIC_ID
	rdmsr
	mov esi, eax
""", """\
	mov eax, 1
	cpuid
	shr ebx, 24
	mov esi, ebx
""")],
        tests=["matrix:x2apic-*"],
    ),
    dict(
        name="direct-map-text-alias-writable",
        file="arch/x86_64/paging.c",
        says="the direct map's alias of kernel text and rodata is writable (RW+NX like the "
             "rest of the direct map): code can be rewritten through arch_phys_to_virt()",
        edits=[("""\
			pt[i] = pa | PTE_P | PTE_G | pte_nx | (pa >= start && pa < end ? 0 : PTE_W);
""", """\
			pt[i] = pa | PTE_P | PTE_G | pte_nx | PTE_W;
""")],
        tests=["kernel:2:protect.*"],
    ),
    # ---- per-CPU lists: drains (mm/pcp.c) ----
    dict(
        name="drain-skips-pcp-lock",
        file="mm/pcp.c",
        says="drain_pages_zone() empties another CPU's list without taking that list's lock",
        edits=[("""\
		if (!irqsave)
			spin_lock(&pcp->lock);
		count = pcp->count;
""", """\
		count = pcp->count;
"""), ("""\
		if (irqsave)
			spin_unlock_irqrestore(&pcp->lock, flags);
		else
			spin_unlock(&pcp->lock);
	} while (count);
""", """\
		if (irqsave)
			spin_unlock_irqrestore(&pcp->lock, flags);
	} while (count);
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "tsan:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="drain-all-skips-last-cpu",
        file="mm/pcp.c",
        says="a global drain (__drain_all_pages) stops one CPU short: the last CPU keeps its pages",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
""", """\
	for (unsigned int cpu = 0; cpu + 1 < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
""")],
        tests=["host:pcp_stress_random_orders", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="drain-all-skips-cpu0",
        file="mm/pcp.c",
        says="a global drain (__drain_all_pages) starts at CPU 1: CPU 0 keeps its pages",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
""", """\
	for (unsigned int cpu = 1; cpu < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
""")],
        tests=["host:pcp_stress_random_orders", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    # Linux 66eca1021a42 "mm: page_alloc: fix pcp->count race between drain_pages_zone()
    # vs __rmqueue_pcplist()" fixed this (memory offlining looped forever).
    dict(
        name="drain-count-before-lock",
        file="mm/pcp.c",
        says="the drain before Linux 66eca1021a42: count is read before taking the lock, and "
             "that many pages are freed (a refill in flight is left behind)",
        edits=[("""\
	int count;

	do {
		unsigned long flags = irqsave ? spin_lock_irqsave(&pcp->lock) : 0;

		if (!irqsave)
			spin_lock(&pcp->lock);
		count = pcp->count;
		if (count) {
			int chunk = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, chunk, pcp, 0);
			pcp_stat(zone, cpu)->drained += (u64)(count - pcp->count);
		}
		if (irqsave)
			spin_unlock_irqrestore(&pcp->lock, flags);
		else
			spin_unlock(&pcp->lock);
	} while (count);
""", """\
	int count = READ_ONCE(pcp->count);

	while (count) {
		int chunk = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);
		unsigned long flags = irqsave ? spin_lock_irqsave(&pcp->lock) : 0;

		if (!irqsave)
			spin_lock(&pcp->lock);
		count -= chunk;
		free_pcppages_bulk(zone, chunk, pcp, 0);
		pcp_stat(zone, cpu)->drained += (u64)chunk;
		if (irqsave)
			spin_unlock_irqrestore(&pcp->lock, flags);
		else
			spin_unlock(&pcp->lock);
	}
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="force-all-ignored",
        file="mm/pcp.c",
        says="zone_pcp_disable()'s forced drain skips CPUs whose count it peeked at as 0 "
             "(a refill in flight is missed)",
        edits=[("""\
		if (force_all || cpu_has_pcp_pages(req, cpu))
""", """\
		if (cpu_has_pcp_pages(req, cpu))
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="zone-drain-gives-up",
        file="mm/pcp.c",
        says="a zone drain that finds another drain running returns at once instead of "
             "waiting for it (zone_pcp_disable returns with pages still listed)",
        edits=[("""\
	if (!spin_trylock(&pcp_drain_lock)) {
		if (!req->zone)
			return;
		spin_lock(&pcp_drain_lock);
	}
""", """\
	if (!spin_trylock(&pcp_drain_lock))
		return;
""")],
        tests=["host:zone_pcp_disable_waits_for_running_drain",
               "host:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="irqoff-remote-drain-direct",
        file="mm/pcp.c",
        says="in the irqoff model a drain empties another CPU's list itself instead of asking "
             "that CPU (whose list is protected only by its own interrupts being off)",
        edits=[("""\
	if (req->model == PCP_LOCK_IRQOFF) {
		if (cpu == arch_cpu_id()) {
""", """\
	if (false) {
		if (cpu == arch_cpu_id()) {
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "tsan:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    # Bug (a) of dffc0ff, planted back: killed by the lock validator (kernel/lockdep.c), which
    # reports the pattern even when nobody holds the lock and nothing hangs.
    dict(
        name="drain-in-interrupt",
        file="mm/page_alloc.c",
        says="the allocation slow path drains this CPU's lists for a caller that cannot wait: "
             "in an interrupt that spins on the pcp lock the interrupted code may hold",
        edits=[("""\
	if (page || !(gfp & __GFP_DIRECT_RECLAIM) || arch_irqs_disabled())
		return page;
	__atomic_fetch_add(&ac->pgdat->drain_retries, 1, __ATOMIC_RELAXED);
	drain_all_pages_machine(ac->pgdat->machine);
""", """\
	if (page)
		return page;
	__atomic_fetch_add(&ac->pgdat->drain_retries, 1, __ATOMIC_RELAXED);
	if ((gfp & __GFP_DIRECT_RECLAIM) && !arch_irqs_disabled())
		drain_all_pages_machine(ac->pgdat->machine);
	else
		drain_local_pages(NULL);
""")],
        tests=["host:lockdep_host_atomic_alloc_in_irq", "host:pcp_irq_alloc_exhausted_no_drain",
               "kernel:2:lockdep_mm.*"],
    ),
    dict(
        name="drain-from-irqs-off",
        file="mm/page_alloc.c",
        says="the allocation slow path drains every CPU's lists even when called with "
             "interrupts off (two such CPUs wait for each other's IPI forever)",
        edits=[("""\
	if (page || !(gfp & __GFP_DIRECT_RECLAIM) || arch_irqs_disabled())
""", """\
	if (page || !(gfp & __GFP_DIRECT_RECLAIM))
""")],
        tests=["host:alloc_pages_slowpath_irqs_off", "host:mm_private_pcp_exhaustion_all_cpus",
               "kernel:4:mm_pcp*,mm_private.*"],
    ),
    dict(
        name="trylock-model-spins",
        file="mm/pcp.h",
        says="the trylock model takes this CPU's pcp lock with a spinning spin_lock: an "
             "interrupt that arrives while the lock is held deadlocks on it",
        edits=[("""\
	if (model == PCP_LOCK_TRYLOCK)
		return pcp_spin_trylock(pcp);
""", """\
	if (model == PCP_LOCK_TRYLOCK) {
		spin_lock(&pcp->lock);
		return true;
	}
""")],
        tests=["host:pcp_irq_reentry_all_models", "host:pcp_alloc_pages_bulk",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="alloc-after-unlock",
        file="mm/pcp.c",
        says="rmqueue_pcplist() releases the pcp lock one line too early: the list is "
             "taken from without the lock",
        edits=[("""\
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
	pcp_unlock(pcp, hold);
	return page;
""", """\
	pcp_unlock(pcp, hold);
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
	return page;
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_remote_drain_under_fire",
               "tsan:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    # ---- per-CPU lists: bookkeeping (mm/pcp.c) ----
    dict(
        name="pcp-flag-kept-on-alloc",
        file="mm/pcp.h",
        says="a page taken off a per-CPU list for an allocation keeps its PG_pcp flag",
        edits=[("""\
	list_del(&page->lru);
	__clear_page_flag(page, PG_pcp);
	WRITE_ONCE(pcp->count, pcp->count - (1 << order));
""", """\
	list_del(&page->lru);
	WRITE_ONCE(pcp->count, pcp->count - (1 << order));
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="pcp-flag-kept-on-spill",
        file="mm/pcp.c",
        says="a page spilled from a per-CPU list to the buddy lists keeps its PG_pcp flag",
        edits=[("""\
			list_del(&page->lru);
			__clear_page_flag(page, PG_pcp);
			count -= nr_pages;
""", """\
			list_del(&page->lru);
			count -= nr_pages;
""")],
        tests=["host:pcp_spill_grows", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="refill-counted-in-blocks",
        file="mm/pcp.c",
        says="a refill of order-n blocks adds the number of blocks to pcp->count, not pages",
        edits=[("""\
	WRITE_ONCE(pcp->count, pcp->count + (rmqueue_bulk(zone, order, batch, list, mt) << order));
""", """\
	WRITE_ONCE(pcp->count, pcp->count + rmqueue_bulk(zone, order, batch, list, mt));
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="refill-not-counted",
        file="mm/pcp.c",
        says="a refill puts pages on the list without adding them to pcp->count",
        edits=[("""\
	WRITE_ONCE(pcp->count, pcp->count + (rmqueue_bulk(zone, order, batch, list, mt) << order));
""", """\
	rmqueue_bulk(zone, order, batch, list, mt);
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="pcp-disable-keeps-high",
        file="mm/pcp.c",
        says="zone_pcp_disable() drains but leaves high and batch as they were, so the lists "
             "fill up again at once",
        edits=[("""\
	zone->pcp_disable_depth++;
	__pageset_set_high_and_batch(zone, BOOT_PAGESET_HIGH, BOOT_PAGESET_BATCH);
""", """\
	zone->pcp_disable_depth++;
""")],
        tests=["host:pcp_boot_pageset_frees_to_buddy", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    # ---- buddy allocator (mm/page_alloc.c) ----
    dict(
        name="merge-once",
        file="mm/page_alloc.c",
        says="__free_one_page() merges a freed block with its buddy once, never further up",
        edits=[("""\
		pfn &= buddy_pfn;
		order++;
	}
""", """\
		pfn &= buddy_pfn;
		order++;
		break;
	}
""")],
        tests=["host:mm_private_split_merge_every_order", "host:alloc_pages_",
               "kernel:4:mm_buddy.*,mm_private.*"],
    ),
    dict(
        name="buddy-order-unchecked",
        file="mm/page_alloc.c",
        says="a free block is merged with its buddy without checking that the buddy is a "
             "free block of the same order",
        edits=[("""\
	if (!PageBuddy(buddy) || buddy->order != order)
		return NULL;
""", """\
	if (!PageBuddy(buddy))
		return NULL;
""")],
        tests=["host:mm_private_split_merge_every_order", "host:alloc_pages_",
               "kernel:4:mm_buddy.*,mm_private.*"],
    ),
    dict(
        name="watermark-off-by-one",
        file="mm/page_alloc.c",
        says="the watermark check lets an allocation take the zone's free count down to "
             "exactly the mark (< instead of <=)",
        edits=[("""\
	if (free <= min + (long)z->lowmem_reserve[highest_zoneidx])
""", """\
	if (free < min + (long)z->lowmem_reserve[highest_zoneidx])
""")],
        tests=["host:watermarks", "host:alloc_pages_", "kernel:4:mm_buddy.*"],
    ),
    # ---- spinlocks (kernel/spinlock.h: the lock word under every spinlock function) ----
    dict(
        name="unlock-without-release",
        file="kernel/spinlock.h",
        says="arch_spin_unlock() (under spin_unlock()) clears the lock word with a relaxed "
             "store: the critical section's writes may become visible after the next owner's reads",
        edits=[("""\
	smp_store_release(&lock->locked, 0);
""", """\
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELAXED);
""")],
        tests=["tsan:alloc_pages_concurrent_random_orders", "tsan:pcp_stress_random_orders"],
    ),
    dict(
        name="lock-without-acquire",
        file="kernel/spinlock.h",
        says="arch_spin_trylock() (under spin_lock()) takes the lock word with a relaxed "
             "exchange: the new owner may read the data before the previous owner's writes",
        edits=[("""\
	return !__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE);
""", """\
	return !__atomic_exchange_n(&lock->locked, 1, __ATOMIC_RELAXED);
""")],
        tests=["tsan:alloc_pages_concurrent_random_orders", "tsan:pcp_stress_random_orders"],
    ),
    # ---- pinning (mm/gup.c, mm/vm.c) ----
    # Linux 292648ac5cf1 "mm: gup: allow FOLL_PIN to scale in SMP" fixed this.
    # ---- the reader/writer lock (kernel/rwlock.c) ----
    dict(
        name="rwlock-readers-first",
        file="kernel/rwlock.c",
        says="a writer waits for the reader count to reach 0 instead of stopping new readers "
             "first: readers that keep the lock busy starve it (a munmap among 40 faulting CPUs)",
        edits=[("""\
	__atomic_fetch_or(&rw->cnts, RW_WRITER, __ATOMIC_RELAXED);
	while (__atomic_load_n(&rw->cnts, __ATOMIC_ACQUIRE) != RW_WRITER)
		arch_cpu_relax();
""", """\
	for (u32 free = 0; !__atomic_compare_exchange_n(&rw->cnts, &free, RW_WRITER, false,
						       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED); free = 0)
		arch_cpu_relax();
""")],
        tests=["host:rwlock_writer_not_starved_by_readers"],
    ),
    dict(
        name="rwlock-reader-ignores-writer",
        file="kernel/rwlock.c",
        says="read_lock() adds itself and goes in even when a writer holds the lock",
        edits=[("""\
	while (__atomic_fetch_add(&rw->cnts, RW_READER, __ATOMIC_ACQUIRE) & RW_WRITER) {
""", """\
	while (__atomic_fetch_add(&rw->cnts, RW_READER, __ATOMIC_ACQUIRE) & 0) {
""")],
        tests=["host:rwlock_readers_share_writer_excludes", "host:handle_mm_fault_vs_munmap_4k_vma"],
    ),
    dict(
        name="has-pinned-always",
        file="mm/gup.c",
        says="every pin writes mm->flags (has_pinned), even when the flag is already set: "
             "the cache line bounces between CPUs (Linux before 292648ac5cf1)",
        edits=[("""\
	if (gup_has_pinned_mode == GUP_HAS_PINNED_ONCE &&
	    (READ_ONCE(mm->flags) & (1ul << MMF_HAS_PINNED)))
		return;
""", "")],
        tests=["host:gup_has_pinned_written_once", "kernel:4:gup_private.gup_has_pinned*"],
    ),
    dict(
        name="pin-adds-one",
        file="mm/gup.c",
        says="a pin of an order-0 page adds 1 to its refcount instead of "
             "GUP_PIN_COUNTING_BIAS (1024), so it does not look pinned",
        edits=[("""\
		more = refs * GUP_PIN_COUNTING_BIAS - 1;
""", """\
		more = refs - 1;
""")],
        tests=["host:gup_pin_unpin_balance", "host:gup_", "kernel:4:gup.*,gup_private.*"],
    ),
    dict(
        name="gup-fast-irqs-on",
        file="mm/gup.c",
        says="gup-fast walks the page tables with interrupts on: the unmapping CPU's "
             "shootdown no longer waits for the walk, and frees tables under it",
        edits=[("""\
	unsigned long irq = arch_irq_save();
	long n = gup_fast_walk(mm, start, nr, flags, pages);

	arch_irq_restore(irq);
""", """\
	long n = gup_fast_walk(mm, start, nr, flags, pages);

""")],
        tests=["host:gup_fast_unmap_while_walker_reads_table",
               "kernel:4:gup_private.gup_fast_unmap_while_walker_reads_table",
               "host:gup_unmap_vs_fast_walk", "kernel:4:gup_private.gup_unmap_vs_fast_walk"],
    ),
    dict(
        name="gup-fast-no-recheck",
        file="mm/gup.c",
        says="gup-fast keeps a page it grabbed without re-reading the entries to see "
             "whether an unmap cleared them meanwhile (the caller pins a page the mm no "
             "longer maps)",
        edits=[("""\
		/* Grabbed, then re-check: if either entry changed, an unmap raced with us. */
		if (ptep_get(pmdp) != pmd || ptep_get(ptep) != pte) {
			gup_put_page(page, 1, flags);
			break;
		}
""", "")],
        tests=["host:gup_fast_unmap_while_walker_grabs_page",
               "kernel:4:gup_private.gup_fast_unmap_while_walker_grabs_page",
               "host:gup_unmap_vs_fast_walk", "kernel:4:gup_private.gup_unmap_vs_fast_walk"],
    ),
    dict(
        name="munmap-frees-before-shootdown",
        file="mm/vm.c",
        says="munmap frees the data pages and page tables before the TLB shootdown, while "
             "other CPUs may still be walking them",
        edits=[("""\
	/* Entries are gone; CPUs still walking with IRQs off hold up this shootdown. */
	mm_tlb_shootdown(mm);
	spin_unlock(&mm->lock);
""", """\
	spin_unlock(&mm->lock);
"""), ("""\
		__atomic_fetch_sub(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		__free_pages(page, 0);
	}
}
""", """\
		__atomic_fetch_sub(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		__free_pages(page, 0);
	}
	mm_tlb_shootdown(mm);
}
""")],
        tests=["host:gup_fast_unmap_while_walker_reads_table",
               "kernel:4:gup_private.gup_fast_unmap_while_walker_reads_table",
               "host:gup_unmap_vs_fast_walk", "kernel:4:gup_private.gup_unmap_vs_fast_walk"],
    ),
    dict(
        name="migrate-pinned-page",
        file="mm/gup.c",
        says="FOLL_LONGTERM migration copies and replaces a page even though someone else "
             "holds a pin on it (the pin then points at a page nobody maps)",
        edits=[("""\
	if (page_count(old) != 1) {	/* someone else holds it: it cannot move */
""", """\
	if (false) {	/* someone else holds it: it cannot move */
""")],
        tests=["host:pin_user_pages_longterm_leaves_pinned_page", "host:gup_", "kernel:4:gup.*"],
    ),
    dict(
        name="migrate-commits-without-shootdown",
        file="mm/gup.c",
        says="FOLL_LONGTERM migration commits (checks that nobody holds the page, copies it, "
             "frees the old one) without first waiting, by a TLB shootdown, for the lockless "
             "walkers that read the old entry",
        edits=[("""\
	while ((n = __migrate_prepare(mm, &addr, end, m, &err))) {
		mm_tlb_shootdown(mm);
""", """\
	while ((n = __migrate_prepare(mm, &addr, end, m, &err))) {
""")],
        tests=["host:gup_fast_migration_while_walker_grabs_page",
               "kernel:4:gup_private.gup_fast_migration_while_walker_grabs_page"],
    ),
    dict(
        name="fault-without-mmap-lock",
        file="mm/vm.c",
        says="a fault looks its VMA up and installs its page without mmap_lock: a munmap of "
             "the range meanwhile frees the table it installs into, or leaves its page mapped "
             "with no VMA",
        edits=[("""\
	VM_BUG_ON(arch_irqs_disabled());
	read_lock(&mm->mmap_lock);
	err = __do_fault(mm, addr, GFP_USER);
	read_unlock(&mm->mmap_lock);
""", """\
	VM_BUG_ON(arch_irqs_disabled());
	err = __do_fault(mm, addr, GFP_USER);
"""), ("""\
	assert_rwlock_locked(&mm->mmap_lock);
	for (unsigned int i = 0; i < mm->nr_vmas; i++)
""", """\
	for (unsigned int i = 0; i < mm->nr_vmas; i++)
""")],
        tests=["host:handle_mm_fault_vs_munmap_4k_vma", "host:handle_mm_fault_vs_munmap_2m_vma",
               "kernel:4:gup_private.handle_mm_fault_vs_munmap_*"],
    ),
    # ---- NUMA (mm/numa.c, mm/pcp.c, mm/memblock.c) ----
    dict(
        name="drain-zone-only-its-node-cpus",
        file="mm/pcp.c",
        says="drain_all_pages(zone) asks only the CPUs of the zone's own node: a page another "
             "node's CPU freed stays on that CPU's list (zone_pcp_disable returns with it)",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < req->machine->nr_cpus; cpu++)
		if (force_all || cpu_has_pcp_pages(req, cpu))
""", """\
	for (unsigned int cpu = 0; cpu < req->machine->nr_cpus; cpu++)
		if (req->zone && machine_cpu_nid(req->machine, cpu) !=
				 (unsigned int)req->zone->node->nid)
			continue;
		else if (force_all || cpu_has_pcp_pages(req, cpu))
""")],
        tests=["host:numa_zone_drain_reaches_other_node_cpu", "host:numa_remote_free_vs_drain",
               "tsan:numa_remote_free_vs_drain",
               "kernel:4:mm_numa.numa_remote_free_parks_then_drains_home"],
    ),
    dict(
        name="free-to-local-node-zone",
        file="mm/pcp.c",
        says="a freed page goes to this CPU's list of the same zone type on the CPU's own node, "
             "not of the page's zone: the page changes node",
        edits=[("""\
void free_unref_page(struct page *page, unsigned int order)
{
	struct zone *zone = page_zone(page);
""", """\
void free_unref_page(struct page *page, unsigned int order)
{
	struct zone *zone = &local_node(page_pgdat(page))->node_zones[page->zone];
""")],
        tests=["host:numa_remote_free_vs_drain", "asan:numa_remote_free_vs_drain",
               "kernel:4:mm_numa.*"],
    ),
    dict(
        name="zonelist-by-column",
        file="mm/numa.c",
        says="build_zonelists() orders the other nodes by their distance to this node "
             "(column) instead of this node's distance to them (row): wrong with an "
             "asymmetric table",
        edits=[("""\
	return to == nid ? 0 : m->distance[nid][to];
""", """\
	return to == nid ? 0 : m->distance[to][nid];
""")],
        tests=["host:numa_zonelist_follows_own_row",
               "kernel:1:mm_numa.numa_zonelist_follows_distance"],
    ),
    dict(
        name="numa-miss-counted-as-hit",
        file="mm/page_alloc.c",
        says="zone_statistics() compares the zone with itself: every allocation counts as "
             "numa_hit, a fallback to another node is never a miss",
        edits=[("""\
	if (likely(zone->node == preferred->node)) {
""", """\
	if (likely(zone->node == zone->node)) {
""")],
        tests=["host:numa_exhaustion_counts_miss_and_foreign",
               "kernel:1:mm_numa.numa_exhaust_node_falls_back"],
    ),
    dict(
        name="fast-path-ignores-thisnode",
        file="mm/page_alloc.c",
        says="the order-0 fast path serves __GFP_THISNODE from the preferred zone even when it "
             "is another node's (a memoryless node gets a page of its neighbour)",
        edits=[("""\
	if (((gfp & __GFP_THISNODE) && zone->node != pgdat) || !READ_ONCE(pcp_enabled) ||
""", """\
	if (!READ_ONCE(pcp_enabled) ||
""")],
        tests=["host:alloc_pages_memoryless_node_fast_hit_thisnode_fails"],
    ),
    dict(
        name="fast-path-numa-hit-not-counted",
        file="mm/page_alloc.c",
        says="a hit of the order-0 fast path counts alloc_hit but not numa_hit (nor, summed, "
             "local_node/other_node)",
        edits=[("""\
		stats->alloc_hit++;
		stats->numa_hit++;
""", """\
		stats->alloc_hit++;
""")],
        tests=["host:alloc_pages_memoryless_node_fast_hit_thisnode_fails"],
    ),
    dict(
        name="memblock-merges-across-nodes",
        file="mm/memblock.c",
        says="memblock merges touching ranges of two nodes into one: the second node's memory "
             "is counted as the first's",
        edits=[("""\
		if (out && r[i].base <= region_end(&r[out - 1]) && r[i].nid == r[out - 1].nid) {
""", """\
		if (out && r[i].base <= region_end(&r[out - 1])) {
""")],
        tests=["host:memblock_set_node_splits_and_merges", "host:numa_section_holds_one_node"],
    ),
    # ---- deferred memory-map init (mm/mm_init.c) ----
    dict(
        name="deferred-claim-without-lock",
        file="mm/mm_init.c",
        says="deferred init: a CPU reads the zone's chunk cursor and moves it without "
             "zone->lock, so two CPUs can take (write and free) the same chunk",
        edits=[("""\
	flags = spin_lock_irqsave(&zone->lock);
	claimed = __deferred_claim_chunk(zone, &spfn, &epfn);
	spin_unlock_irqrestore(&zone->lock, flags);
""", """\
	spfn = READ_ONCE(zone->deferred_pfn);
	while (spfn < zone->deferred_end_pfn && !pfn_in_node(zone->node, spfn))
		spfn = ALIGN_UP(spfn + 1, PAGES_PER_SECTION);
	epfn = MIN(ALIGN_DOWN(spfn, DEFERRED_CHUNK_PAGES) + DEFERRED_CHUNK_PAGES,
		   zone->deferred_end_pfn);
	WRITE_ONCE(zone->deferred_pfn, MAX(spfn, epfn));
	claimed = spfn < epfn;
	(void)__deferred_claim_chunk;
""")],
        tests=["host:deferred_init_memmap_threads_rounds",
               "tsan:deferred_init_memmap_threads_rounds"],
    ),
    dict(
        name="deferred-chunk-not-max-order-aligned",
        file="mm/mm_init.c",
        says="deferred init in chunks of 3 MiB: a buddy can lie in the chunk another CPU is "
             "still writing, and a merge reads its half-written struct page",
        edits=[("""\
#define DEFERRED_CHUNK_PAGES MAX_ORDER_NR_PAGES
""", """\
#define DEFERRED_CHUNK_PAGES (MAX_ORDER_NR_PAGES * 3 / 4)
"""), ("""\
BUILD_BUG_ON(DEFERRED_CHUNK_PAGES % MAX_ORDER_NR_PAGES || PAGES_PER_SECTION % DEFERRED_CHUNK_PAGES);
""", "")],
        tests=["host:deferred_grow_zone_max_order_with_watermarks",
               "tsan:deferred_init_matches_eager_build"],
    ),
    dict(
        name="deferred-no-grow-on-demand",
        file="mm/page_alloc.c",
        says="an allocation before the deferred init has run fails when the first chunks are "
             "used up, instead of growing the zone",
        edits=[("""\
					 ac->highest_zoneidx, alloc_flags) &&
		    !(zone_has_deferred(zone) && deferred_grow_zone(zone, order)))
""", """\
					 ac->highest_zoneidx, alloc_flags))
"""), ("""\
		} while (!page && zone_has_deferred(zone) && deferred_grow_zone(zone, order));
""", """\
		} while (0);
""")],
        tests=["host:deferred_grow_zone_exhausts_node"],
    ),
    dict(
        name="deferred-no-grow-at-watermark",
        file="mm/page_alloc.c",
        says="a zone below its watermark is skipped even though it still has deferred memory "
             "(it grows only when its lists are empty)",
        edits=[("""\
					 ac->highest_zoneidx, alloc_flags) &&
		    !(zone_has_deferred(zone) && deferred_grow_zone(zone, order)))
""", """\
					 ac->highest_zoneidx, alloc_flags))
""")],
        tests=["host:deferred_grow_zone_max_order_with_watermarks",
               "host:deferred_grow_zone_grows_the_zone_asked_for"],
    ),
    dict(
        name="deferred-done-keeps-early-limits",
        file="mm/mm_init.c",
        says="after the deferred init the watermarks, lowmem_reserve and pageset sizes stay "
             "those computed for the first few chunks",
        edits=[("""\
			WARN_ON(zone_has_deferred(zone) || zone->deferred_free);
		}
	machine_size_limits(m);
}
""", """\
			WARN_ON(zone_has_deferred(zone) || zone->deferred_free);
		}
}
""")],
        tests=["host:deferred_init_matches_eager_build"],
    ),
    dict(
        name="deferred-claims-other-nodes-sections",
        file="mm/mm_init.c",
        says="a node's deferred init claims every section with a memory map in its span, "
             "also those of a node interleaved inside it: their pages are written and freed "
             "twice, once as the wrong node's",
        edits=[("""\
	while (pfn < zone->deferred_end_pfn && !pfn_in_node(zone->node, pfn))
""", """\
	while (pfn < zone->deferred_end_pfn && !pfn_valid(zone->node, pfn))
""")],
        tests=["host:deferred_init_numa_interleaved_nodes"],
    ),
    dict(
        name="deferred-cpu-home-node-only",
        file="mm/mm_init.c",
        says="each CPU does the deferred init of its own node only: a node without CPUs "
             "keeps its memory map unwritten and its memory off the free lists",
        edits=[("""\
	for (unsigned int i = 0; i < m->nr_nodes; i++) {
		struct pglist_data *pgdat = m->node[(home + i) % m->nr_nodes];
""", """\
	for (unsigned int i = 0; i < 1; i++) {
		struct pglist_data *pgdat = m->node[(home + i) % m->nr_nodes];
""")],
        tests=["host:deferred_init_numa_interleaved_nodes"],
    ),
    dict(
        name="deferred-memmap-skips-last-page",
        file="mm/mm_init.c",
        says="the memory-map init of a range stops one struct page short",
        edits=[("""\
	for (unsigned long pfn = spfn; pfn < epfn; pfn++, page++)
		*page = (struct page){""", """\
	for (unsigned long pfn = spfn; pfn + 1 < epfn; pfn++, page++)
		*page = (struct page){""")],
        tests=["host:deferred_init_matches_eager_build", "kernel:4:mm_deferred.*"],
    ),
    dict(
        name="deferred-free-range-before-chunk-written",
        file="mm/mm_init.c",
        says="deferred init frees each free range of a chunk as soon as it is written and "
             "drops zone->lock between ranges: a merge of the first range reads the "
             "unwritten rest, a steal walks it (main 4961178's order)",
        edits=[("""\
	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
		memmap_init_range(zone, pfn, fs, false);
		memmap_init_range(zone, fs, fe, true);
		nr_free += fe - fs;
""", """\
	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
		unsigned long flags;

		memmap_init_range(zone, pfn, fs, false);
		memmap_init_range(zone, fs, fe, true);
		flags = spin_lock_irqsave(&zone->lock);
		__free_range(zone, fs, fe);
		spin_unlock_irqrestore(&zone->lock, flags);
		nr_free += fe - fs;
"""), ("""\
	__free_chunk(zone, spfn, epfn);
""", """\
	(void)__free_chunk;
""")],
        tests=["host:deferred_init_memmap_over_previous_boot",
               "host:deferred_init_memmap_races_pageblock_steals",
               "tsan:deferred_init_memmap_races_pageblock_steals",
               "kernel:4:mm_deferred.deferred_init_memmap_*"],
    ),
    dict(
        name="deferred-free-before-holes-written",
        file="mm/mm_init.c",
        says="deferred init writes a chunk's free ranges and its end, puts the ranges on the "
             "lists, and only then writes the holes and reservations between them: a merge "
             "or a steal reads those struct pages first",
        edits=[("""\
	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
		memmap_init_range(zone, pfn, fs, false);
		memmap_init_range(zone, fs, fe, true);
""", """\
	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
		memmap_init_range(zone, fs, fe, true);
"""), ("""\
	zone->deferred_busy--;		/* written and on the lists: the chunk is the zone's */
	spin_unlock_irqrestore(&zone->lock, flags);
	return (long)nr_free;
""", """\
	spin_unlock_irqrestore(&zone->lock, flags);
	{
		u64 cursor = (u64)spfn << PAGE_SHIFT;
		unsigned long pfn = spfn, fs, fe;

		while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
			memmap_init_range(zone, pfn, fs, false);
			pfn = fe;
		}
	}
	flags = spin_lock_irqsave(&zone->lock);
	zone->deferred_busy--;
	spin_unlock_irqrestore(&zone->lock, flags);
	return (long)nr_free;
""")],
        tests=["host:deferred_init_memmap_over_previous_boot",
               "host:deferred_init_memmap_races_pageblock_steals",
               "kernel:4:mm_deferred.deferred_init_memmap_*"],
    ),
    dict(
        name="verify-reads-unwritten-memmap",
        file="mm/debug.c",
        says="mm_verify() walks struct pages the deferred init has not written yet",
        edits=[("""\
	unsigned long end = MIN(zone_end_pfn(zone), READ_ONCE(zone->deferred_pfn));
""", """\
	unsigned long end = zone_end_pfn(zone);
""")],
        tests=["host:mm_init_from_boot_info", "host:deferred_grow_zone_max_order"],
    ),
]
