"""The mutations `make mutate` plants, one at a time: realistic SMP memory-management bugs.

Each entry: a name; the file; `says`, one line a student understands; `edits`, pairs of (the
exact original text, its replacement), each original found exactly once in the file (if it
is not, the mutation is an ERROR: the code moved and this entry must be rewritten); and
`tests`, the tests expected to catch it, fastest first (the first that fails kills it):

    host:FILTER      build/host/plain/mmtest FILTER (host tests whose name contains FILTER)
    asan:FILTER      the same in the ASan+UBSan build
    tsan:FILTER      the TSan build, concurrent tests only (-c FILTER)
    release:FILTER   the release build (CONFIG_DEBUG_VM=0, poisoning off: what users run)
    kernel:N:GLOB    boot the kernel at -smp N with test=GLOB (tests/runner.py)
    matrix:ROWS      rows of make test's QEMU matrix (tests/matrix.py) whose names match the
                     glob ROWS, one QEMU at a time (QEMU 10 for the x2APIC rows: make qemu10)
    acpi:CHECK       tests/host/acpi_test (ASan+UBSan), which must report a failure in its
                     check CHECK (a function of that file) or die of a sanitizer report
    c2c:FILTER       the c2c model's own cases (build/c2c/test_model FILTER)
    conflict:CASES   the conflict-freedom layer (tests/c2c/conflict.py, one boot of the release
                     kernel under the c2c plugin), only the cases whose names hold one of the
                     comma-separated CASES

Optional: `host_timeout`, seconds, for a bug that hangs its host test: the harness's
watchdog then ends it (a kill, TIMEOUT) that soon instead of after --host-timeout's 120 s.

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
    # ---- ACPI tables (kernel/acpi.c, kernel/acpi_numa.c) ----
    dict(
        name="acpi-table-checksum-unchecked",
        file="kernel/acpi.c",
        says="a system description table is used without checking its checksum (acpi.h: "
             "every checksum checked)",
        edits=[("""\
	if (checksum(h, len))
		return acpi_fail(error, ACPI_ERR_CHECKSUM, name, "bad checksum", pa);
	*table = h;
""", """\
	*table = h;
""")],
        tests=["acpi:acpi_parse_madt_bad_checksums"],
    ),
    dict(
        name="acpi-cpus-past-callers-room",
        file="kernel/acpi.c",
        says="the MADT parser stores one CPU more than the caller's array holds (max_cpus)",
        edits=[("""\
	if (out->nr_cpus >= out->max_cpus || !out->cpus)
""", """\
	if (out->nr_cpus > out->max_cpus || !out->cpus)
""")],
        tests=["acpi:acpi_parse_madt_caps_at_callers_room"],
    ),
    dict(
        name="srat-cpu-in-two-nodes-accepted",
        file="kernel/acpi_numa.c",
        says="an SRAT that puts one APIC ID in two nodes is accepted (the first node wins)",
        edits=[("""\
		if (out->cpus[i].node != node)
			return fail2(out, "SRAT", "a CPU in two nodes: APIC ID ", apic_id,
				     " also in node ", (u64)node, pa);
""", "")],
        tests=["acpi:acpi_parse_srat_cpu_in_two_nodes"],
    ),
    dict(
        name="srat-overlap-across-nodes-accepted",
        file="kernel/acpi_numa.c",
        says="SRAT memory ranges of two nodes that overlap are accepted: one page in two nodes",
        edits=[("""\
	return ret ? ret : check_overlaps(out);
""", """\
	(void)check_overlaps;
	return ret;
""")],
        tests=["acpi:acpi_parse_srat_overlapping_ranges"],
    ),
    dict(
        name="slit-asymmetric-accepted",
        file="kernel/acpi_numa.c",
        says="an asymmetric SLIT is accepted: \"nearest\" then depends on which side looks",
        edits=[("""\
			if (m[i * n + j] != m[j * n + i])
				return fail2(out, "SLIT", "asymmetric: distances ", m[i * n + j],
					     " and ", m[j * n + i], pa + SLIT_FIXED_LEN + i * n + j);
""", "")],
        tests=["acpi:acpi_parse_slit_rules"],
    ),
    # ---- time and traps (kernel/timer.c, arch/x86_64/trap.c, arch/x86_64/timer.c) ----
    dict(
        name="tick-hook-removal-does-not-wait",
        file="kernel/timer.c",
        says="timer_remove_tick_hook() returns at once: a CPU may still be running the hook "
             "while its caller frees the hook's data",
        edits=[("""\
	spin_unlock_irqrestore(&hooks_lock, flags);
	wait_for_tick_everywhere(gen);
""", """\
	spin_unlock_irqrestore(&hooks_lock, flags);
	(void)wait_for_tick_everywhere;
	(void)gen;
""")],
        tests=["kernel:2:smp.timer_remove_tick_hook_waits_for_running_hook"],
    ),
    dict(
        name="tick-hook-table-overfilled",
        file="kernel/timer.c",
        says="timer_add_tick_hook() looks at one slot past its TIMER_MAX_HOOKS: a ninth hook "
             "is written past the end of the table",
        edits=[("""\
	for (unsigned int i = 0; i < TIMER_MAX_HOOKS && ret; i++) {
""", """\
	for (unsigned int i = 0; i <= TIMER_MAX_HOOKS && ret; i++) {
""")],
        tests=["kernel:2:smp.timer_add_tick_hook_full_table_refused"],
    ),
    dict(
        name="trap-recovery-stays-armed",
        file="arch/x86_64/trap.c",
        says="a recovered fault jumps back to its recovery point without disarming it: the "
             "CPU's innermost point is a stack frame that is gone",
        edits=[("""\
		c->recovery = r->prev;
		c->irq_depth = outer_depth;
""", """\
		c->irq_depth = outer_depth;
""")],
        tests=["kernel:2:smp.trap_recover_nested_innermost_first"],
    ),
    dict(
        name="timer-wrapped-window-kept",
        file="arch/x86_64/timer.c",
        says="the first calibration window (open across mm_init()) is kept without the "
             "short window that shows whether its reference counter wrapped",
        edits=[("""\
	if (r.valid && !first_window_holds(&r, check)) {
""", """\
	if (r.valid && !first_window_holds(&r, check) && false) {
""")],
        tests=["matrix:timer-wrap-smp2"],
    ),
    # ---- per-CPU lists: drains (mm/pcp.c) ----
    dict(
        name="drain-skips-pcp-lock",
        file="mm/pcp.c",
        says="a drain (drain_pages_zone) empties another CPU's list without taking that list's "
             "lock (trylock model)",
        edits=[("""\
	unsigned long flags;
	int count;

	do {
		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count = pcp->count;
""", """\
	unsigned long flags = 0;
	int count;

	do {
		if (zone->pcp_lock != PCP_LOCK_TRYLOCK)
			pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count = pcp->count;
"""), ("""\
		pcp_unlock(zone, pcp, flags);
	} while (count > 0);
""", """\
		if (zone->pcp_lock != PCP_LOCK_TRYLOCK)
			pcp_unlock(zone, pcp, flags);
	} while (count > 0);
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "tsan:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="drain-all-skips-last-cpu",
        file="mm/pcp.c",
        says="a drain of every CPU (__drain_all_pages) stops one CPU short: the last CPU keeps "
             "its pages",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""", """\
	for (unsigned int cpu = 0; cpu + 1 < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""")],
        tests=["host:pcp_stress_random_orders", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="drain-all-skips-cpu0",
        file="mm/pcp.c",
        says="a drain of every CPU (__drain_all_pages) starts at CPU 1: CPU 0 keeps its pages",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""", """\
	for (unsigned int cpu = 1; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
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
	unsigned long flags;
	int count;

	do {
		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count = pcp->count;
		if (count) {
			int to_drain = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			__count_pcp_event(pcp, drained, (u64)(count - pcp->count));
			count -= to_drain;
		}
		pcp_unlock(zone, pcp, flags);
	} while (count > 0);
""", """\
	unsigned long flags;
	int count = READ_ONCE(pcp->count);

	while (count) {
		int chunk = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count -= chunk;
		free_pcppages_bulk(zone, chunk, pcp, 0);
		__count_pcp_event(pcp, drained, (u64)chunk);
		pcp_unlock(zone, pcp, flags);
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
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""", """\
		if (cpu_has_pcp_pages(m, zone, cpu))
""")],
        tests=["host:zone_pcp_disable_waits_for_refill", "host:pcp_remote_drain_under_fire",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="remote-home-counts-request",
        file="mm/page_alloc.c",
        says="remote_home counts the pages a spill asked for, not those it sent home: a spill "
             "of 1 page that frees an order-3 block counts 1, not 8 (issue 29, #11)",
        edits=[("""\
	count = MIN(pcp->count, count);
	pindex--;
""", """\
	count = MIN(pcp->count, count);
	count_remote_home(zone, pcp, count);
	pindex--;
"""), ("""\
	count_remote_home(zone, pcp, listed - pcp->count);	/* whole blocks: may be > count */
""", """\
	(void)listed;
""")],
        tests=["host:numa_remote_home_counts_pages_sent_home"],
    ),
    dict(
        name="drain-extra-pass",
        file="mm/pcp.c",
        says="a drain loops while the count it read was non-zero instead of subtracting what it "
             "drained: every drain takes the owner's lock once more to read the 0 it left",
        edits=[("""\
			count -= to_drain;
		}
		pcp_unlock(zone, pcp, flags);
	} while (count > 0);
""", """\
		}
		pcp_unlock(zone, pcp, flags);
	} while (count > 0);
""")],
        tests=["host:drain_pages_zone_one_hold_per_chunk"],
    ),
    dict(
        name="pcp-high-sized-for-one-cpu",
        file="mm/mm_init.c",
        says="a machine's pagesets are sized for 1 CPU whatever its CPUs: each of its lists may "
             "hold the zone's whole low watermark until someone calls zone_pcp_update()",
        edits=[("""\
		zone_pcp_update(m->node[nid], m->nr_cpus);
""", """\
		zone_pcp_update(m->node[nid], 1);
""")],
        tests=["host:pcp_high_split_among_machine_cpus_at_init"],
    ),
    dict(
        name="zone-drain-gives-up",
        file="mm/pcp.c",
        says="a drain that finds another drain running returns at once instead of waiting "
             "for it (zone_pcp_disable returns with pages still listed)",
        edits=[("""\
	spin_lock(&m->pcp_drain_lock);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
""", """\
	if (!spin_trylock(&m->pcp_drain_lock))
		return;
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
""")],
        tests=["host:zone_pcp_disable_waits_for_running_drain",
               "host:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="drain-all-returns-if-busy",
        file="mm/pcp.c",
        says="a drain of every zone that finds another drain running returns at once (Linux's "
             "drain_all_pages(NULL)): the slow path's one retry then fails with pages still on "
             "another CPU's list the running drain never looks at (issue 29, #4)",
        edits=[("""\
	spin_lock(&m->pcp_drain_lock);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
""", """\
	if (!spin_trylock(&m->pcp_drain_lock)) {
		if (!zone)
			return;
		spin_lock(&m->pcp_drain_lock);
	}
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
""")],
        tests=["host:alloc_pages_slowpath_waits_for_running_drain"],
    ),
    dict(
        name="irqoff-remote-drain-direct",
        file="mm/pcp.c",
        says="in the irqoff model a drain empties another CPU's list itself instead of asking "
             "that CPU (whose list is protected only by its own interrupts being off)",
        edits=[("""\
	if (m->pcp_lock == PCP_LOCK_IRQOFF && cpu != arch_cpu_id() &&
""", """\
	if (false && m->pcp_lock == PCP_LOCK_IRQOFF && cpu != arch_cpu_id() &&
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
		if (page || drained || !(gfp & __GFP_DIRECT_RECLAIM) || arch_irqs_disabled())
			break;
		__atomic_fetch_add(&ac->pgdat->drain_retries, 1, __ATOMIC_RELAXED);
		drain_all_pages_machine(ac->pgdat->machine);
""", """\
		if (page || drained)
			break;
		__atomic_fetch_add(&ac->pgdat->drain_retries, 1, __ATOMIC_RELAXED);
		if ((gfp & __GFP_DIRECT_RECLAIM) && !arch_irqs_disabled())
			drain_all_pages_machine(ac->pgdat->machine);
		else
			for (int z = 0; z < MAX_NR_ZONES; z++)
				if (ac->pgdat->node_zones[z].pcp)
					drain_local_pages(&ac->pgdat->node_zones[z]);
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
		if (page || drained || !(gfp & __GFP_DIRECT_RECLAIM) || arch_irqs_disabled())
""", """\
		if (page || drained || !(gfp & __GFP_DIRECT_RECLAIM))
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
		if (likely(wait == PCP_TRY))
			return pcp_spin_trylock(pcp);
		pcp_spin_lock(pcp);
		return true;
""", """\
		pcp_spin_lock(pcp);
		return true;
""")],
        tests=["host:pcp_irq_reentry_all_models", "host:pcp_alloc_pages_bulk",
               "kernel:4:mm_pcp*"],
    ),
    dict(
        name="alloc-after-unlock",
        file="mm/page_alloc.c",
        says="rmqueue_pcplist() releases the pcp lock one line too early: the list is "
             "taken from without the lock",
        edits=[("""\
	pcp->free_factor >>= 1;
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
	pcp_unlock(zone, pcp, flags);
""", """\
	pcp->free_factor >>= 1;
	pcp_unlock(zone, pcp, flags);
	page = __rmqueue_pcplist(zone, order, mt, pcp, &pcp->lists[order_to_pindex(mt, order)]);
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_remote_drain_under_fire",
               "tsan:pcp_remote_drain_under_fire", "kernel:4:mm_pcp*"],
    ),
    # Issue 22 item 7: both lived while the order-0 free had a path of its own that only
    # poisoning-off nodes took and no test node had; the killers run in the release host build
    # (CONFIG_DEBUG_VM=0, mm.poison off), the configuration users run.
    dict(
        name="free-past-high",
        file="mm/page_alloc.c",
        says="an order-0 free pushes past pcp->high: its list never spills to the buddy lists",
        edits=[("""\
	if (pcp->count >= high) {
""", """\
	if (order && pcp->count >= high) {
""")],
        tests=["release:pcp_spill_grows_then_allocation_halves",
               "host:pcp_spill_grows_then_allocation_halves", "kernel:4:mm_pcp.*"],
    ),
    dict(
        name="free-waits-for-pcp-lock",
        file="mm/page_alloc.c",
        says="the free takes this CPU's pcp lock with a waiting spin_lock (trylock model): a "
             "free from an interrupt that lands inside this CPU's own hold spins on itself",
        edits=[("""\
		pcp = this_cpu_pcp(zone);
		if (likely(pcp_lock(zone, pcp, PCP_TRY, &flags))) {
""", """\
		pcp = this_cpu_pcp(zone);
		if (likely(pcp_lock(zone, pcp, zone->pcp_lock == PCP_LOCK_TRYLOCK ? PCP_WAIT :
				    PCP_TRY, &flags))) {
""")],
        tests=["release:pcp_irq_reentry_all_models", "host:pcp_irq_reentry_all_models",
               "kernel:4:mm_pcp_private.pcp_irq_reentry_all_models"],
    ),
    dict(
        name="irqsave-release-keeps-irqs-off",
        file="mm/pcp.h",
        says="the irqsave model's release drops the lock word but does not give the interrupt "
             "state back: a hold and its release disagree, as a hold taken under one model and "
             "released under another did when the model could change at run time",
        edits=[("""\
	if (zone->pcp_lock == PCP_LOCK_IRQSAVE)
		pcp_spin_unlock(pcp);
	arch_irq_restore(flags);
""", """\
	if (zone->pcp_lock == PCP_LOCK_IRQSAVE) {
		pcp_spin_unlock(pcp);
		return;
	}
	arch_irq_restore(flags);
""")],
        tests=["host:pcp_lock_model_fixed_per_instance", "host:pcp_irq_reentry_all_models",
               "kernel:4:mm_pcp*"],
    ),
    # ---- per-CPU lists: bookkeeping (mm/pcp.c) ----
    dict(
        name="pcp-flag-kept-on-alloc",
        file="mm/page_alloc.c",
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
        file="mm/page_alloc.c",
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
        file="mm/page_alloc.c",
        says="a refill of order-n blocks adds the number of blocks to pcp->count, not pages",
        edits=[("""\
			WRITE_ONCE(pcp->count, pcp->count +
				   (rmqueue_bulk(zone, order, batch, list, mt) << order));
""", """\
			WRITE_ONCE(pcp->count, pcp->count + rmqueue_bulk(zone, order, batch, list, mt));
""")],
        tests=["host:pcp_refill_size_per_order", "host:pcp_", "kernel:4:mm_pcp*"],
    ),
    dict(
        name="refill-not-counted",
        file="mm/page_alloc.c",
        says="a refill puts pages on the list without adding them to pcp->count",
        edits=[("""\
			WRITE_ONCE(pcp->count, pcp->count +
				   (rmqueue_bulk(zone, order, batch, list, mt) << order));
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
    # ---- per-CPU lists: the lock order and who writes what (mm/mmzone.h) ----
    dict(
        name="pcp-batch-high-held-across-drain",
        file="mm/pcp.c",
        says="zone_pcp_disable() holds pcp_batch_high_lock across its drain, as Linux holds "
             "its mutex from disable to enable: the leaf of the lock tree gets pcp_drain_lock, "
             "the pcp locks and zone->lock under it",
        edits=[("""\
	__pageset_set_high_and_batch(zone, BOOT_PAGESET_HIGH, BOOT_PAGESET_BATCH);
	spin_unlock(&zone->pcp_batch_high_lock);
	__drain_all_pages(zone->node->machine, zone, true);
}
""", """\
	__pageset_set_high_and_batch(zone, BOOT_PAGESET_HIGH, BOOT_PAGESET_BATCH);
	__drain_all_pages(zone->node->machine, zone, true);
	spin_unlock(&zone->pcp_batch_high_lock);
}
""")],
        tests=["host:mm_locks_follow_the_lock_tree"],
    ),
    dict(
        name="refill-drains-under-own-hold",
        file="mm/page_alloc.c",
        says="a refill that finds the buddy lists empty drains every CPU's lists and refills "
             "again, still holding its own pcp: pcp_drain_lock and other pcp locks taken "
             "under a pcp lock (two CPUs doing it wait for each other's list)",
        edits=[("""\
			__count_pcp_event(pcp, refill, 1);
			if (unlikely(list_empty(list)))
				return NULL;
""", """\
			__count_pcp_event(pcp, refill, 1);
			if (unlikely(list_empty(list))) {
				drain_all_pages(zone);	/* the other CPUs' pages back to the buddy lists */
				WRITE_ONCE(pcp->count, pcp->count +
					   (rmqueue_bulk(zone, order, batch, list, mt) << order));
			}
			if (unlikely(list_empty(list)))
				return NULL;
""")],
        tests=["host:mm_private_pcp_exhaustion_all_cpus", "host:mm_locks_follow_the_lock_tree",
               "kernel:4:mm_private.mm_private_pcp_exhaustion_all_cpus"],
    ),
    dict(
        name="pcp-update-reads-depth-before-lock",
        file="mm/pcp.c",
        says="zone_pcp_update() reads pcp_disable_depth before taking pcp_batch_high_lock: a "
             "zone_pcp_disable() in between is overwritten with live high and batch",
        edits=[("""\
		int batch = zone_batchsize(zone);

		if (!zone->pcp)
			continue;
		spin_lock(&zone->pcp_batch_high_lock);
		zone->pageset_batch = batch;
		zone->pageset_high = zone_highsize(zone, batch, nr_cpus);
		if (!zone->pcp_disable_depth)
""", """\
		int batch = zone_batchsize(zone);
		bool enabled;

		if (!zone->pcp)
			continue;
		enabled = !READ_ONCE(zone->pcp_disable_depth);
		spin_lock(&zone->pcp_batch_high_lock);
		zone->pageset_batch = batch;
		zone->pageset_high = zone_highsize(zone, batch, nr_cpus);
		if (enabled)
""")],
        tests=["host:zone_pcp_update_waiting_behind_disable",
               "host:pcp_disable_enable_update_concurrent",
               "kernel:4:mm_pcp_private.pcp_disable_enable_update_concurrent"],
    ),
    dict(
        name="pageset-high-written-plainly",
        file="mm/pcp.c",
        says="high and batch are written into the pcps with plain stores, not WRITE_ONCE: "
             "the hit paths read them without the lock, and may see a torn or stale value",
        edits=[("""\
		WRITE_ONCE(zone->pcp[cpu].high, high);
		WRITE_ONCE(zone->pcp[cpu].batch, batch);
""", """\
		zone->pcp[cpu].high = high;
		zone->pcp[cpu].batch = batch;
""")],
        tests=["tsan:pcp_disable_enable_update_concurrent"],
    ),
    dict(
        name="pcp-update-without-batch-high-lock",
        file="mm/pcp.c",
        says="zone_pcp_update() writes pageset_high/batch and every pcp's high and batch "
             "without pcp_batch_high_lock (the values are the same for every CPU, so why lock)",
        edits=[("""\
		spin_lock(&zone->pcp_batch_high_lock);
		zone->pageset_batch = batch;
		zone->pageset_high = zone_highsize(zone, batch, nr_cpus);
		if (!zone->pcp_disable_depth)
			__pageset_set_high_and_batch(zone, zone->pageset_high, batch);
		spin_unlock(&zone->pcp_batch_high_lock);
""", """\
		zone->pageset_batch = batch;
		zone->pageset_high = zone_highsize(zone, batch, nr_cpus);
		if (!zone->pcp_disable_depth)
			__pageset_set_high_and_batch(zone, zone->pageset_high, batch);
""")],
        tests=["host:pcp_boot_pageset_frees_to_buddy"],
    ),
    dict(
        name="refill-reads-batch-plainly",
        file="mm/page_alloc.c",
        says="a refill reads pcp->batch with a plain load, not READ_ONCE, while a "
             "zone_pcp_disable() or zone_pcp_update() may be writing it (a data race: the "
             "compiler may read it twice, and see two values)",
        edits=[("""\
			int batch = READ_ONCE(pcp->batch);

			if (batch > 1)
				batch = MAX(batch >> order, 2);
""", """\
			int batch = pcp->batch;

			if (batch > 1)
				batch = MAX(batch >> order, 2);
""")],
        tests=["tsan:zone_pcp_disable_vs_refill_interleavings"],
    ),
    dict(
        name="free-commit-reads-high-plainly",
        file="mm/page_alloc.c",
        says="the free's spill check reads pcp->high with a plain load, not READ_ONCE, while "
             "a zone_pcp_disable() or zone_pcp_update() may be writing it (a data race)",
        edits=[("""\
	int high = READ_ONCE(pcp->high);

	return (!high || free_high) ? 0 : high;
""", """\
	int high = pcp->high;

	return (!high || free_high) ? 0 : high;
""")],
        tests=["tsan:zone_pcp_disable_vs_refill_interleavings"],
    ),
    dict(
        name="pcp-enable-unbalanced-unchecked",
        file="mm/pcp.c",
        says="zone_pcp_enable() without a zone_pcp_disable() to undo goes through: the depth "
             "goes negative, and the next disable/enable pair leaves the lists at high 0",
        edits=[("""\
	VM_BUG_ON(zone->pcp_disable_depth <= 0);
""", "")],
        tests=["host:zone_pcp_enable_without_disable_panics"],
    ),
    dict(
        name="drained-counted-after-unlock",
        file="mm/pcp.c",
        says="a drain counts the pages it drained after letting go of the pcp, reading "
             "pcp->count outside the hold while the owner refills",
        edits=[("""\
		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		count = pcp->count;
		if (count) {
			int to_drain = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			__count_pcp_event(pcp, drained, (u64)(count - pcp->count));
			count -= to_drain;
		}
		pcp_unlock(zone, pcp, flags);
""", """\
		pcp_lock(zone, pcp, PCP_WAIT, &flags);
		int before = count = pcp->count;
		if (count) {
			int to_drain = MIN(count, READ_ONCE(pcp->batch) << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			count -= to_drain;
		}
		pcp_unlock(zone, pcp, flags);
		if (before)
			__count_pcp_event(pcp, drained, (u64)(before - pcp->count));
""")],
        tests=["tsan:pcp_remote_drain_under_fire"],
    ),
    dict(
        name="numa-foreign-counted-on-cpu0",
        file="mm/internal.h",
        says="numa_foreign is counted on CPU 0's pcp of the preferred zone, whoever allocated: "
             "every CPU writes CPU 0's counter, outside any hold",
        edits=[("""\
	__count_pcp_event(&preferred->pcp[pcp - zone->pcp], numa_foreign, 1);
""", """\
	__count_pcp_event(preferred->pcp, numa_foreign, 1);
""")],
        tests=["host:zone_statistics_counted_on_allocating_cpu"],
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
    dict(
        name="deferred-check-holds-two-zone-locks",
        file="mm/mm_init.c",
        says="the check that the deferred init is finished keeps each zone's lock until it "
             "holds the next one's (one snapshot of every zone): two zone locks held at once",
        edits=[("""\
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];
			unsigned long flags = spin_lock_irqsave(&zone->lock);
			bool busy = zone_has_deferred(zone) || zone->deferred_busy;

			spin_unlock_irqrestore(&zone->lock, flags);
			if (busy)
				return false;
		}
	return true;
""", """\
	unsigned long flags = arch_irq_save();
	struct zone *held = NULL;
	bool busy = false;

	for (unsigned int nid = 0; nid < m->nr_nodes && !busy; nid++)
		for (int z = 0; z < MAX_NR_ZONES && !busy; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			spin_lock(&zone->lock);
			if (held)
				spin_unlock(&held->lock);
			held = zone;
			busy = zone_has_deferred(zone) || zone->deferred_busy;
		}
	if (held)
		spin_unlock(&held->lock);
	arch_irq_restore(flags);
	return !busy;
""")],
        tests=["host:mm_init_from_boot_info", "kernel:2:boot.*"],
    ),
    dict(
        name="free-one-page-zone-lock-irqs-on",
        file="mm/page_alloc.c",
        says="the buddy lists' free takes zone->lock with interrupts on: an interrupt on this "
             "CPU that fails its pcp trylock and frees to the buddy lists spins on it forever",
        edits=[("""\
	unsigned long flags = spin_lock_irqsave(&zone->lock);

	__free_one_page(page, page->pfn, zone, order, mt);
	spin_unlock_irqrestore(&zone->lock, flags);
""", """\
	spin_lock(&zone->lock);
	__free_one_page(page, page->pfn, zone, order, mt);
	spin_unlock(&zone->lock);
""")],
        tests=["host:mm_private_split_merge_every_order", "host:alloc_pages_",
               "kernel:4:mm_buddy.*,mm_private.*"],
    ),
    dict(
        name="free-one-page-without-zone-lock",
        file="mm/page_alloc.c",
        says="the buddy lists' free merges and lists the block without zone->lock (the "
             "caller's pcp hold is taken for enough): two CPUs edit one free list at once",
        edits=[("""\
	unsigned long flags = spin_lock_irqsave(&zone->lock);

	__free_one_page(page, page->pfn, zone, order, mt);
	spin_unlock_irqrestore(&zone->lock, flags);
""", """\
	__free_one_page(page, page->pfn, zone, order, mt);
""")],
        tests=["host:mm_private_split_merge_every_order", "host:alloc_pages_"],
    ),
    dict(
        name="deferred-free-range-misaligned",
        file="mm/mm_init.c",
        says="the deferred init hands a free range to __free_one_page() in blocks one order "
             "too large for their start: a block that is not aligned to its order",
        edits=[("""\
		unsigned int order = spfn ? MIN((unsigned int)__builtin_ctzl(spfn), MAX_ORDER)
""", """\
		unsigned int order = spfn ? MIN((unsigned int)__builtin_ctzl(spfn) + 1, MAX_ORDER)
""")],
        tests=["host:deferred_init_matches_eager_build", "host:mm_init_from_boot_info",
               "kernel:4:mm_deferred.*"],
    ),
    dict(
        name="free-reserved-page-unchecked",
        file="mm/page_alloc.c",
        says="the free path checks only the reference count, not PG_reserved: a reserved page "
             "(which holds one reference forever) goes onto the free lists",
        edits=[("""\
	if (!CONFIG_DEBUG_VM || likely(!(page_flags(page) & PG_reserved) && page_count(page) > 0))
""", """\
	if (!CONFIG_DEBUG_VM || likely(page_count(page) > 0))
""")],
        tests=["host:free_pages_reserved_page_reported", "host:mm_private_bad_input_reported",
               "kernel:4:mm_private.*"],
    ),
    dict(
        name="double-free-unchecked",
        file="mm/page_alloc.c",
        says="the free path accepts a page whose count is already 0 (>= 0 for > 0): a double "
             "free takes the count to -1, unreported",
        edits=[("""\
	if (!CONFIG_DEBUG_VM || likely(!(page_flags(page) & PG_reserved) && page_count(page) > 0))
""", """\
	if (!CONFIG_DEBUG_VM || likely(!(page_flags(page) & PG_reserved) && page_count(page) >= 0))
""")],
        tests=["host:free_pages_double_free_reported", "host:mm_private_bad_input_reported",
               "kernel:4:mm_private.*"],
    ),
    dict(
        name="put-page-of-free-page-unchecked",
        file="mm/page_alloc.c",
        says="put_page() drops its reference without the free path's checks (they are "
             "__free_pages()'s): a put of a page already free takes its count to -1, unreported",
        edits=[("""\
void put_page(struct page *page)
{
	if (!free_ref_ok(page))
		return;
""", """\
void put_page(struct page *page)
{
""")],
        tests=["host:free_pages_double_free_reported"],
    ),
    dict(
        name="get-page-of-free-page-unchecked",
        file="mm/mm.h",
        says="get_page() checks for a negative count only (< 0 for <= 0): a reference taken on "
             "a free page, which then sits on a free list with a count of 1",
        edits=[("""\
	VM_BUG_ON(old <= 0);
""", """\
	VM_BUG_ON(old < 0);
""")],
        tests=["host:get_page_of_free_page_panics"],
    ),
    dict(
        name="put-page-count-dropped-plainly",
        file="mm/page_alloc.c",
        says="put_page() drops its reference with a plain decrement: a reference taken or "
             "dropped by another CPU at the same time (a gup-fast grab, an unpin) is lost",
        edits=[("""\
void put_page(struct page *page)
{
	if (!free_ref_ok(page))
		return;
	if (__atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0)
""", """\
void put_page(struct page *page)
{
	if (!free_ref_ok(page))
		return;
	if (--page->refcount == 0)
""")],
        tests=["tsan:gup_has_pinned_written_if_clear", "tsan:gup_unmap_vs_fast_walk"],
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
    # ---- spinlocks: the debug checks, owner and statistics (kernel/spinlock.c) ----
    dict(
        name="spin-owner-cleared-after-release",
        file="kernel/spinlock.c",
        says="spin_unlock() clears owner_cpu after releasing the lock word: the next holder's "
             "owner is wiped, and spin_is_held_by_me() says it does not hold its own lock",
        edits=[("""\
	WRITE_ONCE(lock->owner_cpu, SPIN_NO_OWNER);
	arch_spin_unlock(lock);
""", """\
	arch_spin_unlock(lock);
	WRITE_ONCE(lock->owner_cpu, SPIN_NO_OWNER);
""")],
        tests=["host:spin_lock_holder_is_owner"],
    ),
    dict(
        name="trylock-failure-counted-racily",
        file="kernel/spinlock.c",
        says="a failed trylock counts itself with a plain increment, though the failing CPUs "
             "count trylock_failed together (struct lock_stats): failures are lost",
        edits=[("""\
#define lock_stat_count(lock, item) __atomic_fetch_add(&(lock)->stats.item, 1, __ATOMIC_RELAXED)
""", """\
#define lock_stat_count(lock, item) ((lock)->stats.item++)
""")],
        tests=["tsan:spin_trylock_failures_counted_exactly"],
    ),
    dict(
        name="irqsafe-lock-irqs-on-silent",
        file="kernel/spinlock.c",
        says="an IRQ-safe lock (SPIN_IRQSAFE: zone->lock) taken with interrupts on is not "
             "warned about",
        edits=[("""\
	if (unlikely(!arch_irqs_disabled() && (lock->flags & SPIN_IRQSAFE)))
		warn_slowpath(__FILE__, __LINE__, "IRQ-safe lock taken with interrupts on");
""", "")],
        tests=["host:spin_lock_irqsafe_irqs_on_warns", "host:pcp_lock_debug_checks"],
    ),
    dict(
        name="spin-recursion-unchecked",
        file="kernel/spinlock.c",
        says="spin_lock() of a lock this CPU already holds is not caught: the CPU spins on "
             "itself forever (release builds have no lockdep to say so first)",
        edits=[("""\
	if (unlikely(spin_is_held_by_me(lock)))
		panic("spinlock recursion: cpu%u already holds '%s'", arch_cpu_id(), lock->name);
""", "")],
        tests=["host:spin_lock_recursion_panics"],
    ),
    dict(
        name="unlock-by-non-owner-unchecked",
        file="kernel/spinlock.c",
        says="spin_unlock() by a CPU that does not hold the lock goes through: it frees "
             "another CPU's critical section",
        edits=[("""\
	if (unlikely(!spin_is_held_by_me(lock)))
		panic("spin_unlock of '%s' by cpu%u, owner is cpu%u", lock->name,
		      arch_cpu_id(), lock->owner_cpu);
""", "")],
        tests=["host:spin_unlock_by_other_cpu_panics"],
    ),
    dict(
        name="lockdep-after-the-wait",
        file="kernel/spinlock.c",
        says="spin_lock() of a held lock tells lockdep only once it has the lock: a CPU "
             "spinning into a deadlock is never reported (it never gets the lock)",
        edits=[("""\
	lockdep_acquire_at(lock, false);
	if (unlikely(spin_is_held_by_me(lock)))
""", """\
	if (unlikely(spin_is_held_by_me(lock)))
"""), ("""\
	} while (!arch_spin_trylock(lock));
	return spins;
""", """\
	} while (!arch_spin_trylock(lock));
	lockdep_acquire_at(lock, false);
	return spins;
""")],
        tests=["host:lockdep_report_comes_before_the_wait"],
    ),
    dict(
        name="spin-lock-reads-line-before-xchg",
        file="kernel/spinlock.c",
        says="spin_lock() checks the lock's IRQ-safe flag before its xchg, as smpmm's did until "
             "issue 31: the read brings the line shared, the xchg must upgrade it, two "
             "coherence events per acquisition where one (the xchg's transfer) would do",
        edits=[("""\
	if (likely(arch_spin_trylock(lock)))
		lockdep_acquire_at(lock, false);
""", """\
	if (unlikely((lock->flags & SPIN_IRQSAFE) && !arch_irqs_disabled()))
		warn_slowpath(__FILE__, __LINE__, "IRQ-safe lock taken with interrupts on");
	if (likely(arch_spin_trylock(lock)))
		lockdep_acquire_at(lock, false);
"""), ("""\
	__spin_acquired(lock, spins);
	if (unlikely(!arch_irqs_disabled() && (lock->flags & SPIN_IRQSAFE)))
		warn_slowpath(__FILE__, __LINE__, "IRQ-safe lock taken with interrupts on");
""", """\
	__spin_acquired(lock, spins);
""")],
        tests=["conflict:handoff"],
    ),
    dict(
        name="trylock-held-before-success",
        file="kernel/spinlock.c",
        says="spin_trylock() tells lockdep before it tries: a failed trylock stays in the "
             "CPU's held locks, which then never empty",
        edits=[("""\
	arch_interleave_point();
	if (spin_looks_locked(lock) || !arch_spin_trylock(lock)) {
		lock_stat_count(lock, trylock_failed);
		return false;
	}
	__spin_acquired(lock, 0);
	lockdep_acquire_at(lock, true);
""", """\
	arch_interleave_point();
	lockdep_acquire_at(lock, true);
	if (spin_looks_locked(lock) || !arch_spin_trylock(lock)) {
		lock_stat_count(lock, trylock_failed);
		return false;
	}
	__spin_acquired(lock, 0);
""")],
        tests=["host:spin_trylock_failed_holds_nothing"],
    ),
    dict(
        name="lockstat-register-past-table",
        file="kernel/spinlock.c",
        says="lockstat_register() stores the 513th lock past the end of its 512-entry table",
        edits=[("""\
	if (slot < LOCKSTAT_MAX)
		lockstat_table[slot] = lock;
""", """\
	lockstat_table[slot] = lock;
""")],
        tests=["asan:lockstat_register_past_table_dropped"],
    ),
    # ---- cross-CPU calls (kernel/smp.c) ----
    dict(
        name="smp-call-ring-overfilled",
        file="kernel/smp.c",
        says="enqueue() takes a 33rd call into a CPU's 32-entry call ring: it writes over the "
             "oldest queued call, which is lost while another runs twice",
        edits=[("""\
		bool queued = t->call_tail - t->call_head < SMP_CALL_RING;
""", """\
		bool queued = t->call_tail - t->call_head <= SMP_CALL_RING;
""")],
        tests=["host:smp_call_ring_full_senders_wait"],
    ),
    dict(
        name="smp-call-waiter-read-after-done",
        file="kernel/smp.c",
        says="a call's target reads the waiter from the descriptor after its decrement let the "
             "sender reuse it (or return from the frame it lives in)",
        edits=[("""\
		waiter = READ_ONCE(call->waiter);
		mask_clear(call->pending, c->arch.cpu_id);
		if (__atomic_sub_fetch(&call->remaining, 1, __ATOMIC_ACQ_REL) == 0 && waiter)
""", """\
		mask_clear(call->pending, c->arch.cpu_id);
		if (__atomic_sub_fetch(&call->remaining, 1, __ATOMIC_ACQ_REL) == 0 &&
		    (waiter = READ_ONCE(call->waiter)))
""")],
        tests=["tsan:smp_call_wait_descriptor_reused_after_done"],
    ),
    dict(
        name="smp-async-descriptor-reused-unordered",
        file="kernel/smp.c",
        says="a sender finds a free async descriptor with a relaxed load: it may rewrite fn "
             "and arg before the last target's reads of them are done",
        edits=[("""\
			if (!smp_load_acquire(&pool[i].remaining))
""", """\
			if (!READ_ONCE(pool[i].remaining))
""")],
        tests=["tsan:smp_call_nowait_descriptor_reused_after_done"],
    ),
    dict(
        name="smp-wait-ignores-own-queue",
        file="kernel/smp.c",
        says="a CPU waiting for other CPUs with interrupts off does not run the calls queued "
             "for it: two such CPUs that call each other wait forever",
        edits=[("""\
	if (READ_ONCE(c->call_head) != READ_ONCE(c->call_tail)) {
		flags = arch_irq_save();
		run_queue();
		arch_irq_restore(flags);
	}
""", """\
	(void)c;
	(void)flags;
""")],
        tests=["host:smp_call_wait_irqs_off_both_ways"],
    ),
    dict(
        name="smp-call-to-offline-cpu",
        file="kernel/smp.c",
        says="smp_call_function_single() queues a call for a CPU that is not online (never "
             "started, or past the last one) instead of refusing it",
        edits=[("""\
	if (!cpu_online(cpu))
		return -1;
	if (cpu == arch_cpu_id()) {
""", """\
	if (cpu == arch_cpu_id()) {
""")],
        tests=["kernel:2:smp.smp_call_single_offline_refused"],
    ),
    # ---- the lock validator (kernel/lockdep.c) ----
    dict(
        name="lockdep-class-registered-unlocked",
        file="kernel/lockdep.c",
        says="a lock's class is looked up and registered without the validator's graph lock: "
             "two CPUs using new locks at once race on the class table",
        edits=[("""\
	if (!graph_lock(flags))
		return 0;
	cls = init_site ? class_of_key(c, init_site, init_site->expr, init_site)
			: class_of_key(c, lock, lock->name, NULL);
	WRITE_ONCE(lock->dep_class, (u8)cls);
	graph_unlock();
	return cls;
""", """\
	(void)flags;
	cls = init_site ? class_of_key(c, init_site, init_site->expr, init_site)
			: class_of_key(c, lock, lock->name, NULL);
	WRITE_ONCE(lock->dep_class, (u8)cls);
	return cls;
""")],
        tests=["tsan:lockdep_host_first_use_on_every_cpu_at_once"],
    ),
    dict(
        name="lockdep-trylock-in-irq-irq-safe",
        file="kernel/lockdep.c",
        says="a trylock in an interrupt makes its class IN-HARDIRQ: the legal v6.2 pcp "
             "pattern (held with interrupts on, only trylocked in interrupts) is reported",
        edits=[("""\
	if (!trylock && h->irq_ctx && !has_usage(cls, USED_IN_HARDIRQ))
""", """\
	if (h->irq_ctx && !has_usage(cls, USED_IN_HARDIRQ))
""")],
        tests=["host:lockdep_trylock_in_irq_not_reported"],
    ),
    dict(
        name="lockdep-trylock-adds-dependency",
        file="kernel/lockdep.c",
        says="a trylock is checked for recursion and adds dependencies, though it never "
             "waits: cycles that cannot deadlock are reported",
        edits=[("""\
	if (!trylock) {
		check_recursion(c, h, flags);
		add_dependencies(c, h, flags);
	}
""", """\
	check_recursion(c, h, flags);
	add_dependencies(c, h, flags);
""")],
        tests=["host:lockdep_trylock_adds_no_dependency"],
    ),
    dict(
        name="lockdep-edge-only-from-innermost",
        file="kernel/lockdep.c",
        says="a lock taken under a trylocked one gets an edge from the trylocked lock only, "
             "not from the plain acquisition below it: that cycle goes unreported",
        edits=[("""\
		if (!p->trylock)
			return;
	}
}
""", """\
		return;
	}
}
""")],
        tests=["host:lockdep_edge_from_plain_lock_under_trylock"],
    ),
    dict(
        name="lockdep-irqs-on-at-release-ignored",
        file="kernel/lockdep.c",
        says="a lock taken with interrupts off and held on after they came back on is never "
             "counted as held with interrupts on (HARDIRQ-ON): its inconsistent use is missed",
        edits=[("""\
		if (irqs_on && !h->irqs_on && !has_usage(h->cls, HARDIRQ_ON))
			mark_usage(c, h, HARDIRQ_ON, flags);
""", """\
		(void)irqs_on;
""")],
        tests=["host:lockdep_irqs_enabled_while_held_reported"],
    ),
    dict(
        name="lockdep-held-table-off-by-one",
        file="kernel/lockdep.c",
        says="the table of locks a CPU holds is full at depth MAX_DEPTH + 1: the 49th lock is "
             "written one entry past its end",
        edits=[("""\
	if (c->depth == MAX_DEPTH) {
""", """\
	if (c->depth > MAX_DEPTH) {
""")],
        tests=["host:lockdep_held_depth_overflow_reported"],
        host_timeout=15,	# the corrupted table hangs the next printk: 15 s, not 120
    ),
    dict(
        name="lockdep-expect-end-keeps-pattern",
        file="kernel/lockdep.c",
        says="lockdep_expect_end() does not put the dependency graph back: what one test "
             "planted on purpose is reported against the next",
        edits=[("""\
			if (expecting == e) {
				g = g_saved;
				expecting = NULL;
""", """\
			if (expecting == e) {
				expecting = NULL;
""")],
        tests=["host:lockdep_expect_end_forgets_planted_pattern"],
    ),
    dict(
        name="lockdep-uninitialised-lock-registered",
        file="kernel/lockdep.c",
        says="a lock that was never initialised (zeroed or freed memory) is silently given a "
             "class of its own instead of being reported",
        edits=[("""\
	if (!cls && !lock->name) {
		if (graph_lock(flags)) {
			report_uninitialised(c, lock, site);
			graph_unlock();
		}
		return;
	}
""", """\
	(void)report_uninitialised;
""")],
        tests=["host:lockdep_host_uninitialised_lock_reported"],
    ),
    dict(
        name="lockdep-inconsistent-unchecked",
        file="kernel/lockdep.c",
        says="a class taken in an interrupt and also held with interrupts on is not reported "
             "(the interrupt spins forever on the lock its own CPU holds)",
        edits=[("""\
	if ((g.usage[cls] >> (bit ^ 1)) & 1) {
		report_inconsistent(c, h, bit ^ 1, bit);
		return;
	}
""", """\
	(void)report_inconsistent;
""")],
        tests=["host:lockdep_irq_unsafe_use_reported"],
    ),
    dict(
        name="lockdep-cycle-unchecked",
        file="kernel/lockdep.c",
        says="a new dependency is added without looking for the cycle it closes: ABBA goes "
             "unreported",
        edits=[("""\
	if (graph_bfs(n->cls, true, MATCH_CLASS, p->cls, parent)) {
		report_circular(c, p, n, parent);
		return false;
	}
""", """\
	(void)parent;
	(void)report_circular;
""")],
        tests=["host:lockdep_order_inversion_reported"],
    ),
    dict(
        name="lockdep-irq-inversion-unchecked",
        file="kernel/lockdep.c",
        says="a new dependency from an irq-safe to an irq-unsafe class is not reported",
        edits=[("""\
	if (s && u) {
		snprintf(how, sizeof(how), "cpu%u takes '%s' at %s:%d while holding '%s' (from "
""", """\
	if (s && u && false) {
		snprintf(how, sizeof(how), "cpu%u takes '%s' at %s:%d while holding '%s' (from "
""")],
        tests=["host:lockdep_irq_inversion_reported"],
    ),
    dict(
        name="lockdep-recursion-unchecked",
        file="kernel/lockdep.c",
        says="a CPU taking a class it already holds is not reported (two locks of one class "
             "have no order)",
        edits=[("""\
		check_recursion(c, h, flags);
""", """\
		(void)check_recursion;
""")],
        tests=["host:lockdep_recursion_reported"],
    ),
    dict(
        name="lockdep-scope-takes-any-cpu",
        file="kernel/lockdep.c",
        says="a test's expect scope captures a report from any CPU while it is open: a real "
             "deadlock pattern on another CPU goes uncounted and the validator stays on",
        edits=[("""\
	return expecting && has_bit(expect_cpus, arch_cpu_id()) ? expecting : NULL;
""", """\
	return expecting;
""")],
        tests=["host:lockdep_expect_scope_leaves_other_cpus_reports"],
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
	if (gup_has_pinned_mode == GUP_HAS_PINNED_IF_CLEAR &&
	    (READ_ONCE(mm->flags) & (1ul << MMF_HAS_PINNED)))
		return;
""", "")],
        tests=["host:gup_has_pinned_written_if_clear", "kernel:4:gup_private.gup_has_pinned*"],
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
	write_unlock(&mm->mmap_lock);
""", """\
		__atomic_fetch_sub(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		__free_pages(page, 0);
	}
	mm_tlb_shootdown(mm);
	write_unlock(&mm->mmap_lock);
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
	if (page_count(head) != refs) {	/* someone else holds it: it cannot move */
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
    dict(
        name="gup-slow-mm-lock-before-mmap-lock",
        file="mm/gup.c",
        says="gup's slow path takes mm->lock before mmap_lock: against munmap (mmap_lock, "
             "then mm->lock) each holds what the other waits for",
        edits=[("""\
	read_lock(&mm->mmap_lock);	/* the VMAs, for the faults */
	spin_lock(&mm->lock);
""", """\
	spin_lock(&mm->lock);
	read_lock(&mm->mmap_lock);	/* the VMAs, for the faults */
""")],
        tests=["host:pin_user_pages_longterm_leaves_pinned_page",
               "host:mm_locks_follow_the_lock_tree", "kernel:4:gup.*"],
    ),
    dict(
        name="gup-slow-mm-lock-irqs-off",
        file="mm/gup.c",
        says="gup's slow path takes mm->lock with interrupts off (as zone->lock): a CPU waiting "
             "for it cannot answer the TLB shootdown its holder sends",
        edits=[("""\
	int err, migrate_err = 0;

	VM_BUG_ON(arch_irqs_disabled());	/* waiters must answer the holders' shootdowns */
	read_lock(&mm->mmap_lock);	/* the VMAs, for the faults */
	spin_lock(&mm->lock);
""", """\
	int err, migrate_err = 0;
	unsigned long irqs;

	VM_BUG_ON(arch_irqs_disabled());	/* waiters must answer the holders' shootdowns */
	read_lock(&mm->mmap_lock);	/* the VMAs, for the faults */
	irqs = spin_lock_irqsave(&mm->lock);
"""), ("""\
	spin_unlock(&mm->lock);
	read_unlock(&mm->mmap_lock);
""", """\
	spin_unlock_irqrestore(&mm->lock, irqs);
	read_unlock(&mm->mmap_lock);
""")],
        tests=["host:gup_host_longterm_migrates", "kernel:4:gup.*"],
    ),
    dict(
        name="fault-loser-keeps-its-page",
        file="mm/vm.c",
        says="a fault that loses the install race (another CPU's cmpxchg came first) does "
             "not free the page it allocated: one page leaked per lost race",
        edits=[("""\
		__free_pages(page, order);	/* another fault won (and maybe migration began) */
""", "")],
        tests=["host:handle_mm_fault_same_page_on_every_cpu",
               "kernel:4:gup_private.handle_mm_fault_same_page_on_every_cpu"],
    ),
    dict(
        name="fault-installs-with-plain-store",
        file="mm/vm.c",
        says="a fault installs its page with a plain store instead of a cmpxchg from empty: "
             "racing faults overwrite each other's page, which is leaked and counted in rss",
        edits=[("""\
	if (!__atomic_compare_exchange_n(slot, &old, mk_leaf_entry(page_to_pfn(page), vma->writable,
				leaf == 2), false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
""", """\
	set_pte(slot, mk_leaf_entry(page_to_pfn(page), vma->writable, leaf == 2));
	if (false) {
""")],
        tests=["host:handle_mm_fault_same_page_on_every_cpu",
               "kernel:4:gup_private.handle_mm_fault_same_page_on_every_cpu"],
    ),
    dict(
        name="zap-huge-leaf-counts-one-page",
        file="mm/vm.c",
        says="munmap takes 1 off rss for a 2 MiB leaf as for a 4 KiB one: rss stays 511 per "
             "huge page unmapped, and mm_destroy() finds it nonzero",
        edits=[("""\
	__atomic_fetch_sub(&mm->rss, level == 1 ? 1l : 1l << HUGE_ORDER, __ATOMIC_RELAXED);
""", """\
	__atomic_fetch_sub(&mm->rss, 1l, __ATOMIC_RELAXED);
""")],
        tests=["host:handle_mm_fault_vs_munmap_2m_vma",
               "kernel:4:gup_private.handle_mm_fault_vs_munmap_2m_vma"],
    ),
    dict(
        name="gup-get-and-pin-together-accepted",
        file="mm/gup.c",
        says="FOLL_GET and FOLL_PIN together are accepted: pin_user_pages_fast(FOLL_GET) takes "
             "a plain reference counted as a pin, and its unpin drops 1024",
        edits=[("""\
	if (WARN_ON((flags & FOLL_GET) && (flags & FOLL_PIN)))
		return -EINVAL;
""", "")],
        tests=["host:pin_user_pages_fast_foll_get_refused", "kernel:2:gup.gup_bad_flags_rejected"],
    ),
    dict(
        name="pin-overflow-check-overflows",
        file="mm/gup.c",
        says="the pin count overflow check adds first (old + refs > INT_MAX): the sum itself "
             "overflows, so the check never fires and the count wraps negative",
        edits=[("""\
	return old > PAGE_REF_MAX - refs;
""", """\
	return old + refs > PAGE_REF_MAX;
""")],
        tests=["host:gup_host_pin_count_overflow", "kernel:4:gup.gup_pin_count_overflow"],
    ),
    # Issue 29: the edges of the address-space API (munmap of part of a 2 MiB page, a split
    # with the VMA table full, a FOLL_LONGTERM pin that loses its install).
    dict(
        name="munmap-part-of-2m-zaps-whole-leaf",
        file="mm/vm.c",
        says="munmap of part of a 2 MiB page clears the whole leaf instead of splitting it: "
             "the other 511 pages, still inside a VMA, lose their data",
        edits=[("""\
		if (pte_huge(e) && (lo < start || end < hi))
			e = __split_huge_pmd(mm, &table[i], e);
""", """\
		if (pte_huge(e) && (lo < start || end < hi) && false)
			e = __split_huge_pmd(mm, &table[i], e);
""")],
        tests=["host:mm_munmap_4k_of_2m_page_keeps_the_rest"],
    ),
    dict(
        name="split-huge-pmd-no-refs",
        file="mm/vm.c",
        says="splitting a 2 MiB leaf maps 512 4 KiB entries to its pages but keeps the one "
             "reference of the leaf: unmapping the first 4 KiB page frees the whole block "
             "under the 511 still mapped",
        edits=[("""\
	__atomic_fetch_add(&head->refcount, PTRS_PER_TABLE - 1, __ATOMIC_RELAXED);
""", "")],
        tests=["host:mm_munmap_2m_page_piece_by_piece_frees_it_once"],
    ),
    dict(
        name="zap-queues-split-page-per-entry",
        file="mm/vm.c",
        says="munmap queues the page of every 4 KiB entry it clears, as for order-0 pages: "
             "the head of a split 2 MiB page is put on the queue twice (a corrupted list)",
        edits=[("""\
	if (list_empty(&head->lru))
		list_add_tail(&head->lru, &z->data);
""", """\
	if (true)
		list_add_tail(&head->lru, &z->data);
""")],
        tests=["host:mm_munmap_split_2m_page_and_4k_page_together"],
    ),
    dict(
        name="huge-fault-ignores-vma-bounds",
        file="mm/vm.c",
        says="a fault in a huge VMA that munmap has cut installs a 2 MiB leaf though the "
             "aligned 2 MiB is not all inside the VMA: it maps addresses no VMA covers",
        edits=[("""\
	return vma->huge && haddr >= vma->start && haddr + HUGE_SIZE <= vma->end;
""", """\
	return vma->huge && haddr + HUGE_SIZE <= vma->end;
""")],
        tests=["host:handle_mm_fault_cut_huge_vma_gets_4k_pages"],
    ),
    dict(
        name="huge-fault-no-fallback",
        file="mm/vm.c",
        says="a fault in a huge region that finds no free 2 MiB block fails with -ENOMEM "
             "instead of mapping a 4 KiB page (Linux: VM_FAULT_FALLBACK), with half of the "
             "memory free",
        edits=[("""\
			if (ret != FAULT_FALLBACK)
				return ret;
""", """\
			if (ret != FAULT_FALLBACK)
				return ret;
			return -ENOMEM;
""")],
        tests=["host:handle_mm_fault_huge_without_free_block_falls_back"],
    ),
    dict(
        name="populate-steps-2m-over-fallback",
        file="mm/vm.c",
        says="populate steps 2 MiB wherever a 2 MiB leaf would fit, also where the fault fell "
             "back to a 4 KiB page: mmap returns 0 with 1 page of each 512 mapped",
        edits=[("""\
		size = __mm_find_leaf(mm, addr, &level) ? PT_LEVEL_SIZE(level) : PAGE_SIZE;
""", """\
		size = __mm_find_leaf(mm, addr, &level) ? PT_LEVEL_SIZE(level) : PAGE_SIZE;
		size = vma_huge_fits(__mm_find_vma(mm, addr), addr) ? HUGE_SIZE : size;
""")],
        tests=["host:mm_mmap_anon_populate_huge_falls_back_maps_every_page"],
    ),
    dict(
        name="fault-walks-through-huge-leaf",
        file="mm/vm.c",
        says="a fault that meets a 2 MiB leaf on its way down takes it for a page table (any "
             "present entry above the leaves is one) and writes a 4 KiB entry into the "
             "user's data",
        edits=[("""\
	return pte_present(e) && !pte_huge(e);
""", """\
	return pte_present(e);
""")],
        tests=["host:handle_mm_fault_vs_munmap_2m_vma", "host:gup_migration_vs_faults"],
    ),
    dict(
        name="munmap-split-with-table-full",
        file="mm/vm.c",
        says="a munmap that must split a region with the VMA table full cuts the region at "
             "the hole and unmaps only the hole: its tail stays mapped with no VMA",
        edits=[("""\
	for (unsigned int i = 0; i < mm->nr_vmas && mm->nr_vmas == MM_MAX_VMAS; i++)
		if (mm->vmas[i].start < start && end < mm->vmas[i].end)
			return -ENOMEM;
""", ""), ("""\
		if (v->start < start && end < v->end) {	/* hole in the middle: split */
			VM_BUG_ON(mm->nr_vmas == MM_MAX_VMAS);
""", """\
		if (v->start < start && end < v->end && mm->nr_vmas < MM_MAX_VMAS) {
""")],
        tests=["host:mm_munmap_split_with_vma_table_full_fails"],
    ),
    dict(
        name="munmap-unaligned-start-accepted",
        file="mm/vm.c",
        says="munmap takes a start that is not page aligned (Linux: -EINVAL) and unmaps the "
             "page it falls in",
        edits=[("""\
	if (!IS_ALIGNED(start, PAGE_SIZE) || start > USER_VA_END || len > USER_VA_END - start ||
""", """\
	if (start > USER_VA_END || len > USER_VA_END - start ||
""")],
        tests=["host:mm_munmap_bad_range_rejected"],
    ),
    dict(
        name="longterm-late-install-ebusy",
        file="mm/gup.c",
        says="a FOLL_LONGTERM pin that finds a MOVABLE page installed after its migration "
             "pass (a plain fault won the install) fails with -EBUSY instead of moving it",
        edits=[("""\
	if ((flags & FOLL_LONGTERM) && !page_longterm_pinnable(page))
		return -EAGAIN;
""", """\
	if ((flags & FOLL_LONGTERM) && !page_longterm_pinnable(page))
		return -EBUSY;
""")],
        tests=["host:pin_user_pages_longterm_loses_install_to_plain_fault"],
    ),
    dict(
        name="gup-slow-irqs-off-unchecked",
        file="mm/gup.c",
        says="gup's slow path does not check that interrupts are on: a caller with them off "
             "waits for locks whose holders wait for it to answer a shootdown",
        edits=[("""\
	VM_BUG_ON(arch_irqs_disabled());	/* waiters must answer the holders' shootdowns */
""", "")],
        tests=["host:pin_user_pages_irqs_off_caught"],
    ),
    dict(
        name="migrate-split-page-expects-one-ref",
        file="mm/gup.c",
        says="FOLL_LONGTERM migration expects one reference on any page it moves: a 4 KiB "
             "entry of a split 2 MiB page (one reference per entry) always looks held",
        edits=[("""\
	if (m->level == 2 || !page_is_large(head))
		return 1;
""", """\
	return 1;
""")],
        tests=["host:pin_user_pages_longterm_split_2m_page"],
    ),
    dict(
        name="migrated-2m-leaf-keeps-deposit",
        file="mm/gup.c",
        says="the copy of a migrated 2 MiB leaf does not take over the page table deposited "
             "with it: a later munmap of part of the copy finds none to split with",
        edits=[("""\
	if (m->level == 2)
		pgtable_trans_huge_move(old, m->new);
""", "")],
        tests=["host:mm_munmap_part_of_migrated_2m_page"],
    ),
    # ---- NUMA (mm/numa.c, mm/pcp.c, mm/memblock.c) ----
    dict(
        name="drain-zone-only-its-node-cpus",
        file="mm/pcp.c",
        says="drain_all_pages(zone) asks only the CPUs of the zone's own node: a page another "
             "node's CPU freed stays on that CPU's list (zone_pcp_disable returns with it)",
        edits=[("""\
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""", """\
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (zone && machine_cpu_nid(m, cpu) != (unsigned int)zone->node->nid)
			continue;
		else if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""")],
        tests=["host:numa_zone_drain_reaches_other_node_cpu", "host:numa_remote_free_vs_drain",
               "tsan:numa_remote_free_vs_drain",
               "kernel:4:mm_numa.numa_remote_free_parks_then_drains_home"],
    ),
    dict(
        name="free-to-local-node-zone",
        file="mm/page_alloc.c",
        says="a freed page goes to this CPU's list of the same zone type on the CPU's own node, "
             "not of the page's zone: the page changes node",
        edits=[("""\
	if (!free_pages_prepare(page, order))
		return;
	zone = page_zone(page);
""", """\
	if (!free_pages_prepare(page, order))
		return;
	zone = &local_node(page_pgdat(page))->node_zones[page->zone];
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
        file="mm/internal.h",
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
        name="thisnode-falls-back",
        file="mm/page_alloc.c",
        says="__GFP_THISNODE walks the node's fallback zonelist, not its own zones: a memoryless node "
             "gets a page of its neighbour (the one just freed, off this CPU's list of that zone)",
        edits=[("""\
	ac.zonelist = &pgdat->node_zonelists[(gfp & __GFP_THISNODE) ? ZONELIST_NOFALLBACK :
									ZONELIST_FALLBACK];
""", """\
	ac.zonelist = &pgdat->node_zonelists[ZONELIST_FALLBACK];
""")],
        tests=["host:alloc_pages_memoryless_node_fast_hit_thisnode_fails"],
    ),
    dict(
        name="pcp-hit-numa-not-counted",
        file="mm/page_alloc.c",
        says="an allocation off a per-CPU list (rmqueue_pcplist) counts alloc_hit but not the NUMA "
             "statistics (numa_hit, nor, summed, local_node/other_node)",
        edits=[("""\
	pcp_unlock(zone, pcp, flags);
	if (page)
		zone_statistics(preferred, zone, pcp);
	return page;
""", """\
	pcp_unlock(zone, pcp, flags);
	return page;
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
    # ---- the command line (kernel/cmdline.c) ----
    dict(
        name="cmdline-string-fills-buffer",
        file="kernel/cmdline.c",
        says="a STRING value exactly as long as its buffer is accepted: its NUL goes one byte "
             "past the end (cmdline.h: truncation is an error)",
        edits=[("""\
	if (len >= opt->size)
		return CMDLINE_E_TOO_LONG;
""", """\
	if (len > opt->size)
		return CMDLINE_E_TOO_LONG;
""")],
        tests=["host:cmdline_apply_bad_values"],
    ),
    dict(
        name="cmdline-number-overflow-wraps",
        file="kernel/cmdline.c",
        says="a number past 2^64 - 1 wraps around instead of being refused",
        edits=[("""\
		if (d >= (int)base || v > (~0ull - (u64)d) / base)
""", """\
		if (d >= (int)base)
""")],
        tests=["host:cmdline_apply_bad_values"],
    ),
    dict(
        name="cmdline-suffix-overflow-wraps",
        file="kernel/cmdline.c",
        says="a K/M/G suffix that shifts the number past 2^64 - 1 is not refused",
        edits=[("""\
	if (shift && v > (~0ull >> shift))
		return false;
""", "")],
        tests=["host:cmdline_parse_u64_suffixes"],
    ),
    dict(
        name="cmdline-uint-truncated",
        file="kernel/cmdline.c",
        says="an unsigned int option given a value above 2^32 - 1 keeps its low 32 bits",
        edits=[("""\
		if (v > 0xffffffffull)
			return CMDLINE_E_VALUE;
""", "")],
        tests=["host:cmdline_apply_bad_values"],
    ),
    dict(
        name="cmdline-cut-keeps-half-word",
        file="kernel/cmdline.c",
        says="a command line cut at its buffer's size keeps the word the cut went through: "
             "half of `test=boot.*,mm_p` is applied",
        edits=[("""\
	while (keep && !is_space(buf[keep - 1]))
		keep--;		/* the word running into the limit may have been cut: drop it */
""", "")],
        tests=["host:cmdline_cut_to_words_drops_cut_word"],
    ),
    dict(
        name="cmdline-open-quote-accepted",
        file="kernel/cmdline.c",
        says="a value with an opening quote and no closing one is applied, running to the "
             "end of the line, instead of being an error",
        edits=[("""\
			*err = CMDLINE_E_QUOTE;
""", "")],
        tests=["host:cmdline_next_quotes"],
    ),
    # ---- fault injection (mm/fail_page_alloc.c) ----
    dict(
        name="fail-times-overrun",
        file="mm/fail_page_alloc.c",
        says="the failures left (times) are taken with a read and a write instead of a "
             "compare-and-swap: two CPUs take the same one, and more than times fail",
        edits=[("""\
	while (t != 0) {
		if (t < 0)
			return true;	/* -1: no limit */
		if (__atomic_compare_exchange_n(&fpa.times, &t, t - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
""", """\
	if (t <= 0)
		return t < 0;	/* -1: no limit */
	WRITE_ONCE(fpa.times, t - 1);
	return true;
""")],
        tests=["host:fail_host_times_exact_on_all_cpus"],
    ),
    dict(
        name="fail-space-overrun",
        file="mm/fail_page_alloc.c",
        says="space is taken with a read and a write instead of a compare-and-swap: two CPUs "
             "use the same pages of it, and more calls go through than space allows",
        edits=[("""\
	while (s > pages)
		if (__atomic_compare_exchange_n(&fpa.space, &s, s - pages, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	return false;
""", """\
	if (s <= pages)
		return false;
	WRITE_ONCE(fpa.space, s - pages);
	return true;
""")],
        tests=["host:fail_host_space_exact_on_all_cpus"],
    ),
    dict(
        name="fail-resume-unbalanced-unchecked",
        file="mm/fail_page_alloc.c",
        says="fail_page_alloc_resume() without a pause to undo goes unnoticed: the pause "
             "count goes negative and a later pause no longer pauses",
        edits=[("""\
	VM_BUG_ON(old <= 0);
	(void)old;
""", """\
	(void)old;
""")],
        tests=["host:fail_host_resume_without_pause_panics"],
    ),
    dict(
        name="fail-hook-before-order-check",
        file="mm/page_alloc.c",
        says="the fault-injection hook is asked before an order above MAX_ORDER is refused: "
             "it counts the call and indexes its per-order counters past their end (issue 29, #7)",
        edits=[("""\
	if (unlikely(order > MAX_ORDER)) {	/* first: everything below trusts the order */
		if (!(gfp & __GFP_NOWARN))
			pr_warn("alloc_pages: order %u > MAX_ORDER %u\\n", order, MAX_ORDER);
		return NULL;
	}
	if (should_fail_alloc_page(gfp, order))
		return NULL;	/* on purpose (fail_page_alloc=): counted there, not warned */
""", """\
	if (should_fail_alloc_page(gfp, order))
		return NULL;	/* on purpose (fail_page_alloc=): counted there, not warned */
	if (unlikely(order > MAX_ORDER)) {	/* first: everything below trusts the order */
		if (!(gfp & __GFP_NOWARN))
			pr_warn("alloc_pages: order %u > MAX_ORDER %u\\n", order, MAX_ORDER);
		return NULL;
	}
""")],
        tests=["host:fail_host_order_above_max_refused_before_hook"],
    ),
    dict(
        name="fail-irq-only-ignored",
        file="mm/fail_page_alloc.c",
        says="fail_page_alloc.irq_only is ignored: task-context allocations fail too",
        edits=[("""\
	    (a->irq_only && !in_irq_context()) || READ_ONCE(fpa.paused))
""", """\
	    READ_ONCE(fpa.paused))
""")],
        tests=["host:fail_host_irq_only"],
    ),
    # ---- memblock (mm/memblock.c) ----
    dict(
        name="memblock-ram-rounded-outward",
        file="mm/memblock.c",
        says="usable RAM is rounded out to whole pages instead of in: the partial page at a "
             "region's end is handed out as RAM",
        edits=[("""\
	u64 end = ALIGN_DOWN(clamp_end(base, size), PAGE_SIZE);
""", """\
	u64 end = ALIGN_UP(clamp_end(base, size), PAGE_SIZE);
""")],
        tests=["host:memblock_add_mmap_zero_length_unaligned"],
    ),
    dict(
        name="memblock-reserve-rounded-inward",
        file="mm/memblock.c",
        says="a reservation's end is rounded down instead of up: the partial page it ends in "
             "is left free",
        edits=[("""\
	*end = e > U64_MAX - (PAGE_SIZE - 1) ? ALIGN_DOWN(U64_MAX, PAGE_SIZE) : ALIGN_UP(e, PAGE_SIZE);
""", """\
	*end = ALIGN_DOWN(e, PAGE_SIZE);
""")],
        tests=["host:memblock_next_free_skips_reserved"],
    ),
    dict(
        name="memblock-usable-wins-overlap",
        file="mm/memblock.c",
        says="memory-map entries are applied in their order, so a reserved entry listed "
             "before the usable one it overlaps is overruled by it",
        edits=[("""\
	for (unsigned int i = 0; i < n; i++)
		if (map[i].type == MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
			memblock_add(mb, map[i].base, map[i].length);
	/* Second pass, so that "not usable" wins an overlap whatever the entry order. */
	for (unsigned int i = 0; i < n; i++)
		if (map[i].type != MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
""", """\
	for (unsigned int i = 0; i < n; i++)
		if (map[i].type == MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
			memblock_add(mb, map[i].base, map[i].length);
		else if (map[i].type != MEM_USABLE && mmap_entry_ok(mb, &map[i], i))
""")],
        tests=["host:memblock_add_mmap_reserved_wins_overlap"],
    ),
    dict(
        name="memblock-table-overfilled",
        file="mm/memblock.c",
        says="the table-full check compares with the scratch table's size (one more): a 129th "
             "region is copied past the end of the 128-entry table",
        edits=[("""\
	if (n > MEMBLOCK_MAX_REGIONS) {
""", """\
	if (n > MEMBLOCK_MAX_REGIONS + 1) {
""")],
        tests=["asan:memblock_add_table_full"],
    ),
    dict(
        name="memblock-alloc-above-limit",
        file="mm/memblock.c",
        says="memblock_alloc() ignores alloc_limit: the boot allocator hands out memory the "
             "boot direct map does not cover",
        edits=[("""\
		u64 top = nid >= 0 ? e : MIN(e, mb->alloc_limit), cand;
""", """\
		u64 top = e, cand;
""")],
        tests=["host:memblock_alloc_top_down_below_limit"],
    ),
    dict(
        name="memblock-alloc-not-reserved",
        file="mm/memblock.c",
        says="memblock_alloc() does not reserve what it returns: the next call returns the "
             "same block",
        edits=[("""\
	if (!best || memblock_reserve(mb, best, size))
		return 0;
""", """\
	if (!best)
		return 0;
""")],
        tests=["host:memblock_alloc_top_down_below_limit"],
    ),
    dict(
        name="memblock-alloc-not-zeroed",
        file="mm/memblock.c",
        says="memblock_alloc() returns the block as it was, not zeroed",
        edits=[("""\
	if (phys)
		memset(arch_phys_to_virt(phys), 0, ALIGN_UP(size, PAGE_SIZE));
""", "")],
        tests=["host:memblock_alloc_zeroes_old_contents"],
    ),
    # ---- zonelists (mm/numa.c) ----
    dict(
        name="zonelist-tie-takes-higher-node",
        file="mm/numa.c",
        says="between two nodes at the same distance the zonelist takes the higher-numbered "
             "one first (mm/numa.c: the lower node number first)",
        edits=[("""\
			if (!used[b] && (best < 0 || fallback_distance(m, nid, b) <
						     fallback_distance(m, nid, (unsigned int)best)))
""", """\
			if (!used[b] && (best < 0 || fallback_distance(m, nid, b) <=
						     fallback_distance(m, nid, (unsigned int)best)))
""")],
        tests=["host:numa_zonelist_tie_lower_node_first"],
    ),
    dict(
        name="zonelist-lists-empty-zones",
        file="mm/numa.c",
        says="zonelists list zones without memory too: a memoryless node's fallback starts "
             "at one of its own empty zones",
        edits=[("""\
		if (zone_populated(zone))
			zl->_zonerefs[n++] = (struct zoneref){ zone, z };
""", """\
		zl->_zonerefs[n++] = (struct zoneref){ zone, z };
""")],
        tests=["host:alloc_pages_memoryless_node_fast_hit_thisnode_fails",
               "host:numa_exhaustion_counts_miss_and_foreign"],
    ),
    dict(
        name="zonelist-zones-lowest-first",
        file="mm/numa.c",
        says="a node's zones are listed DMA first: allocations use up the low zones that "
             "only low-memory callers can use, before Normal",
        edits=[("""\
	for (int z = MAX_NR_ZONES - 1; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		if (zone_populated(zone))
""", """\
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (zone_populated(zone))
""")],
        tests=["host:alloc_pages_zone_fallback_lowmem_reserve", "host:numa_"],
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
        name="verify-marks-before-busy-check",
        file="mm/debug.c",
        says="mm_verify() walks (and marks) the free lists before it looks for a chunk of the "
             "deferred init being written; that early return leaves every free page marked, "
             "and the allocator then discards them as in use",
        edits=[("""\
	errors = busy ? 0 : verify_free_lists(zone, end, &free);
""", """\
	errors = verify_free_lists(zone, end, &free);
""")],
        tests=["host:mm_verify_during_deferred_chunk_leaves_no_marks"],
    ),
    dict(
        name="verify-marks-outside-span",
        file="mm/debug.c",
        says="mm_verify() marks a listed block outside the zone it walks, where no span walk "
             "clears the mark: the block is later 'in two places'",
        edits=[("""\
		return errors + verify_fail("%s: free block pfn 0x%lx order %u (node %u zone %u) "
""", """\
		errors += verify_fail("%s: free block pfn 0x%lx order %u (node %u zone %u) "
""")],
        tests=["host:mm_verify_block_of_other_zone_leaves_no_mark"],
    ),
    dict(
        name="verify-reads-unwritten-memmap",
        file="mm/debug.c",
        says="mm_verify() walks struct pages the deferred init has not written yet",
        edits=[("""\
	end = MIN(zone_end_pfn(zone), zone->deferred_pfn);
""", """\
	end = zone_end_pfn(zone);
""")],
        tests=["host:mm_init_from_boot_info", "host:deferred_grow_zone_max_order"],
    ),
    dict(
        name="deferred-managed-counted-unlocked",
        file="mm/mm_init.c",
        says="a deferred-init worker adds its chunk's free pages to managed_pages after "
             "dropping zone->lock, with a plain add: two workers of one zone lose one's pages",
        edits=[("""\
	WRITE_ONCE(zone->managed_pages, zone->managed_pages + (epfn - spfn));
""", ""), ("""\
	zone->deferred_busy--;		/* written and on the lists: the chunk is the zone's */
	spin_unlock_irqrestore(&zone->lock, flags);
""", """\
	zone->deferred_busy--;		/* written and on the lists: the chunk is the zone's */
	spin_unlock_irqrestore(&zone->lock, flags);
	zone->managed_pages += nr_free;
""")],
        tests=["tsan:deferred_init_memmap_threads", "kernel:4:mm_deferred.*"],
    ),
    dict(
        name="deferred-zone-range-widened-into-lower-zone",
        file="mm/mm_init.c",
        says="each zone's deferred range is widened to whole sections at both ends, not only "
             "the node's: DMA32's starts at 0 and rewrites DMA's struct pages (zone, order, "
             "lists) with its own zone number",
        edits=[("""\
		unsigned long dlo = MAX(z ? zone_end_pfns[z - 1] : 0, node_lo);
""", """\
		unsigned long dlo = MAX(ALIGN_DOWN(z ? zone_end_pfns[z - 1] : 0, PAGES_PER_SECTION),
					node_lo);
""")],
        tests=["host:mm_init_from_boot_info", "host:deferred_init_matches_eager_build",
               "kernel:4:mm_deferred.*"],
    ),
    # ---- the boot's firmware input through its consumers (issue 29; tests/host/test_boot_input.c,
    # tests/fuzz/boot_fuzz.c) ----
    dict(
        name="scnprintf-returns-would-be-length",
        file="kernel/printk.c",
        says="scnprintf() returns what snprintf would have written: the next append's size "
             "argument wraps once the line is full",
        edits=[("""\
	return (size_t)n < size ? n : (int)(size - 1);
""", """\
	return n;
""")],
        tests=["asan:scnprintf_append_stays_in_buffer"],
    ),
    dict(
        name="numa-print-ranges-unbounded",
        file="kernel/numa.c",
        says="print_nodes() appends every memory range of a node, with no room kept for the "
             "rest: the line is cut where it fills and never says ranges were left out",
        edits=[("""\
			if (len + 2 * RANGE_TEXT_MAX > sizeof(ranges)) {
""", """\
			if (len + 2 * RANGE_TEXT_MAX > 8 * sizeof(ranges)) {
""")],
        tests=["host:numa_print_nodes_long_line_bounded"],
    ),
    dict(
        name="numa-print-mib-of-printed-ranges",
        file="kernel/numa.c",
        says="a node's MiB count only the ranges its line had room for",
        edits=[("""\
			total += b->hotpluggable ? 0 : b->size;
			if (len + 2 * RANGE_TEXT_MAX > sizeof(ranges)) {
				more++;	/* room kept for " and N more" */
				continue;
			}
""", """\
			if (len + 2 * RANGE_TEXT_MAX > sizeof(ranges)) {
				more++;	/* room kept for " and N more" */
				continue;
			}
			total += b->hotpluggable ? 0 : b->size;
""")],
        tests=["host:numa_print_nodes_long_line_bounded"],
    ),
    dict(
        name="numa-ram-in-no-node-summed-per-range",
        file="kernel/numa.c",
        says="RAM in no node is the region minus each SRAT range's overlap in turn: a range "
             "listed twice (not merged: one hot-pluggable) covers its RAM twice, and RAM in "
             "no range passes the check and is dropped unsaid (issue 29 #9)",
        edits=[("""\
		while (s < e) {
			u64 next = e, reach = accounted_to(s, bi, info, &next);

			if (reach > s) {
				s = MIN(reach, e);
			} else {
				missing += next - s;
				s = next;
			}
		}
""", """\
		for (unsigned int m = 0; m < info->nr_mem; m++) {
			u64 b = MAX(s, info->mem[m].base);
			u64 end = MIN(e, info->mem[m].base + info->mem[m].size);

			e -= end > b ? MIN(end - b, e - s) : 0;
		}
		missing += e - s;
		(void)accounted_to;
""")],
        tests=["host:numa_srat_range_listed_twice_counted_once"],
    ),
    dict(
        name="numa-node-ranges-not-merged",
        file="kernel/numa.c",
        says="overlapping or touching SRAT ranges of one node stay apart (Linux joins them): "
             "the node's line lists them twice and its MiB counts them twice",
        edits=[("""\
	unsigned int merged = 0;

	for (unsigned int i = 0; i < info->nr_mem; i++) {
""", """\
	unsigned int merged = 0;

	for (unsigned int i = 0; i < 0 * info->nr_mem; i++) {
""")],
        tests=["host:numa_srat_ranges_of_a_node_merged"],
    ),
    dict(
        name="numa-ram-in-no-node-partial-pages",
        file="kernel/numa.c",
        says="numa_init() counts node ranges to the byte while memblock counts RAM in whole "
             "pages: the page an SRAT boundary cuts through is dropped unsaid",
        edits=[("""\
	*s = ALIGN_UP(base, PAGE_SIZE);
	*e = ALIGN_DOWN(end, PAGE_SIZE);
""", """\
	*s = base;
	*e = end;
""")],
        tests=["host:numa_srat_boundary_inside_a_page_said"],
    ),
    dict(
        name="assign-nodes-partial-pages",
        file="mm/mm_init.c",
        says="assign_nodes() gives nodes their SRAT ranges to the byte: a page is cut between "
             "two nodes, memblock regions stop being page aligned",
        edits=[("""\
		u64 s = ALIGN_UP(b->base, PAGE_SIZE), e = ALIGN_DOWN(b->base + b->size, PAGE_SIZE);
""", """\
		u64 s = b->base, e = b->base + b->size;
""")],
        tests=["host:numa_srat_boundary_inside_a_page_said"],
    ),
    dict(
        name="sections-of-one-node-table-full-loops",
        file="mm/mm_init.c",
        says="sections_of_one_node() ignores memblock_set_node()'s table full and looks again "
             "from the start: the same region, forever (issue 29 #8)",
        edits=[("""\
		if (memblock_set_node(mb, base, end - base, to)) {
			printk("mm: [0x%llx-0x%llx) cannot change node (memblock table full): "
			       "ignored\\n", (unsigned long long)base, (unsigned long long)end);
			memblock_remove(mb, base, end - base);
		}
""", """\
		memblock_set_node(mb, base, end - base, to);
""")],
        tests=["host:sections_of_one_node_table_full_ends"],
    ),
    dict(
        name="memblock-cut-table-full-keeps-ram",
        file="mm/memblock.c",
        says="a cut that cannot split a region (table full) leaves the region whole: memory "
             "the map reserves, or a section without a memory map, stays RAM",
        edits=[("""\
		if (re > end && rb < base && t->cnt == MEMBLOCK_MAX_REGIONS)
			printk("memblock: %s table full, cannot split [0x%llx-0x%llx) around "
			       "[0x%llx-0x%llx): [0x%llx-0x%llx) ignored too\\n", t->name,
			       (unsigned long long)rb, (unsigned long long)re,
			       (unsigned long long)base, (unsigned long long)end,
			       (unsigned long long)end, (unsigned long long)re);
		else if (re > end)
""", """\
		if (re > end && rb < base && t->cnt == MEMBLOCK_MAX_REGIONS)
			tmp[n - 1].size = re - rb;	/* the cut refused: the region stays whole */
		else if (re > end)
""")],
        tests=["host:memblock_remove_table_full_removes_more"],
    ),
    dict(
        name="multiboot-cmdline-length-of-copy",
        file="kernel/multiboot.c",
        says="the command line's length is taken from the copy boot_info keeps, not the "
             "loader's: a line over 4095 bytes seems to fit and half a word is applied "
             "(issue 29 #10)",
        edits=[("""\
		bi->cmdline_len = strnlen((const char *)body, len);	/* all of it: cmdline_fit() */
""", """\
		bi->cmdline_len = strlen(bi->cmdline);
""")],
        tests=["host:cmdline_fit_boot_long_loader_line"],
    ),
    dict(
        name="multiboot-full-map-drops-reservations",
        file="kernel/multiboot.c",
        says="a memory map past 256 entries keeps its first 256 whatever they are: "
             "reservations after them are lost and their memory handed out",
        edits=[("""\
	for (unsigned int i = BOOT_MMAP_MAX; i-- > 0 && e.type != MEM_USABLE && !victim;)
""", """\
	for (unsigned int i = BOOT_MMAP_MAX; i-- > 0 && e.type != MEM_USABLE && !victim && 0;)
""")],
        tests=["host:multiboot_map_past_max_keeps_reservations"],
    ),
    dict(
        name="mm-init-map-drop-unsaid",
        file="mm/mm_init.c",
        says="mm_init() does not say that map entries past 256 were ignored",
        edits=[("""\
	if (bi->nr_mmap_dropped)
		pr_warn(""", """\
	if (bi->nr_mmap_dropped && 0)
		pr_warn(""")],
        tests=["host:multiboot_map_past_max_keeps_reservations"],
    ),
    dict(
        name="smp-maxcpus-not-clamped",
        file="kernel/smp.c",
        says="smp.maxcpus above MAX_CPUS is taken as is: with an MADT of MAX_CPUS others "
             "the boot CPU's index makes one more than smp_boot_apic_ids[] holds",
        edits=[("""\
	unsigned int limit = MIN(max_cpus, (unsigned int)MAX_CPUS), n = 1, over = 0, bad_id = 0;
""", """\
	unsigned int limit = max_cpus, n = 1, over = 0, bad_id = 0;
""")],
        tests=["host:smp_number_cpus_maxcpus_above_max_cpus",
               "asan:smp_number_cpus_maxcpus_above_max_cpus"],
    ),
    dict(
        name="mmio-address-in-ram-accepted",
        file="kernel/multiboot.c",
        says="a device's registers (the MADT's LAPIC, the HPET) are taken where the table "
             "says, even in usable RAM: every register write lands in someone's memory",
        edits=[("""\
		if (r->type == MEM_USABLE && r->length &&
		    overlaps(pa, pa + len, r->base, mem_region_end(r)))
			return "in usable RAM";
""", """\
		if (r->type == MEM_USABLE && r->length && 0)
			return "in usable RAM";
""")],
        tests=["host:boot_mmio_problem_refuses_ram"],
    ),
    dict(
        name="free-page-wrapping-entry-ignored",
        file="kernel/multiboot.c",
        says="a map entry that wraps past 2^64 ends below its start: a reservation reaching "
             "the top covers nothing, and the AP trampoline may be put in it",
        edits=[("""\
		if (!r->length || !overlaps(pa, end, r->base, mem_region_end(r)))
""", """\
		if (!r->length || !overlaps(pa, end, r->base, r->base + r->length))
""")],
        tests=["host:boot_ram_is_free_wrapping_reservation"],
    ),
    dict(
        name="mm-init-no-memory-unsaid",
        file="mm/mm_init.c",
        says="mm_init() fails without a word when the per-CPU arrays find no memory (kmain "
             "then stops the boot with nothing above to say why)",
        edits=[("""\
	if (ret)
		printk("mm: no memory below 0x%llx for the per-CPU arrays of %u CPUs (RAM in %u "
""", """\
	if (ret && 0)
		printk("mm: no memory below 0x%llx for the per-CPU arrays of %u CPUs (RAM in %u "
""")],
        tests=["host:mm_init_no_memory_says_why"],
    ),
    # ---- the c2c plugin's coherence model (tests/c2c/model.c, docs/c2c.md) ----
    dict(
        name="c2c-store-keeps-other-copies",
        file="tests/c2c/model.c",
        says="a store to a shared line leaves the other caches' copies valid (no invalidation)",
        edits=[("""\
	*invalidated = c2c_mask_weight(&others);
	l->sharers = (struct c2c_mask){ { 0 } };
	c2c_mask_set(&l->sharers, me);
""", """\
	*invalidated = c2c_mask_weight(&others);
	c2c_mask_set(&l->sharers, me);
""")],
        tests=["c2c:c2c_access_two_writers_alternate", "c2c:c2c_access_store_to_shared_line_invalidates"],
    ),
    dict(
        name="c2c-load-leaves-line-dirty",
        file="tests/c2c/model.c",
        says="a load that takes a Modified line from its owner leaves it Modified (no write-back)",
        edits=[("""\
		*cross = !here;
		c2c_mask_set(&l->sharers, me);
		l->dirty = false;
""", """\
		*cross = !here;
		c2c_mask_set(&l->sharers, me);
""")],
        tests=["c2c:c2c_access_readers_of_line_written_once"],
    ),
    dict(
        name="c2c-hot-line-not-serialised",
        file="tests/c2c/model.c",
        says="a transfer starts at once even while the line's previous transfer is in flight",
        edits=[("""\
		uint64_t start = t > l->busy_until ? t : l->busy_until;
""", """\
		uint64_t start = t;
""")],
        tests=["c2c:c2c_access_two_writers_alternate"],
    ),
    dict(
        name="c2c-merge-outruns-lagging-cpu",
        file="tests/c2c/model.c",
        says="the merge replays events without waiting for a CPU whose next event has not come",
        edits=[("""\
		t = due(m, cpu, __atomic_load_n(&m->q[c].clock, __ATOMIC_ACQUIRE));
""", """\
		t = UINT64_MAX + 0 * __atomic_load_n(&m->q[c].clock, __ATOMIC_ACQUIRE);
""")],
        tests=["c2c:c2c_merge_independent_of_host_timing"],
    ),
    dict(
        name="c2c-mask-one-word",
        file="tests/c2c/model.h",
        says="a sharer mask keeps only its first 64 bits: CPUs 64 and up fold onto CPUs 0-63",
        edits=[("""\
	s->w[bit / 64] |= 1ull << (bit % 64);
""", """\
	s->w[0] |= 1ull << (bit % 64);
""")],
        tests=["c2c:c2c_access_writers_across_mask_words_255_cpus", "c2c:c2c_access_store_invalidates_254_readers"],
    ),
    dict(
        name="c2c-streaming-stores-serialised",
        file="tests/c2c/model.c",
        says="cold stores to consecutive lines each wait for the whole fill (no memory-level parallelism)",
        edits=[("""\
		t = start + m->p.ps[o][cross] / (streamed ? m->p.mlp : 1);
""", """\
		t = start + m->p.ps[o][cross];
""")],
        tests=["c2c:c2c_replay_streaming_stores_overlap"],
    ),
    # ---- scalability: lines that CPUs doing things that commute must not share (the
    # conflict-freedom layer, tests/c2c/conflict.py: one boot of the release kernel under the
    # c2c plugin; the case the spec names runs alone) ----
    dict(
        name="share-pcp-unpadded",
        file="mm/mmzone.h",
        says="struct per_cpu_pages is packed (no padding): the line with CPU 0's hit counters "
             "also holds CPU 1's lock, and every hit of either moves it (false sharing)",
        edits=[("""\
#ifndef CONFIG_PCP_PADDING
#define CONFIG_PCP_PADDING 1
#endif
""", """\
#ifndef CONFIG_PCP_PADDING
#define CONFIG_PCP_PADDING 0
#endif
""")],
        tests=["conflict:pairs_vs_pairs"],
    ),
    dict(
        name="share-has-pinned-every-pin",
        file="mm/gup.c",
        says="every pin writes mm->flags' has-pinned bit, set or not (Linux before 292648ac5cf1): "
             "CPUs pinning different pages of one mm pass the flags' line between them",
        edits=[("""\
	if (gup_has_pinned_mode == GUP_HAS_PINNED_IF_CLEAR &&
	    (READ_ONCE(mm->flags) & (1ul << MMF_HAS_PINNED)))
		return;
""", "")],
        tests=["conflict:pin_vs_pin"],
    ),
    dict(
        name="share-zone-lock-on-free-lists-line",
        file="mm/mmzone.h",
        says="zone->lock and the free lists lose their own cache lines (the padding of both "
             "dropped): the lock's hold-time statistics, written at every acquisition, share "
             "the order-0 free lists' line, as zone->lock shared it in Linux before "
             "a368ab67aa55 (aim7 -46%)",
        edits=[("""\
	spinlock_t lock __cacheline_aligned;
	/* Protected by lock: */
	struct free_area free_area[NR_ORDERS] __cacheline_aligned;
""", """\
	spinlock_t lock;
	/* Protected by lock: */
	struct free_area free_area[NR_ORDERS];
""")],
        tests=["conflict:lists_off"],
    ),
    dict(
        name="share-hit-counter",
        file="mm/internal.h",
        says="numa_hit is counted in one slot for the whole zone (CPU 0's), atomically: a shared "
             "counter every hit writes, as Linux's per-CPU vmstat differentials avoid",
        edits=[("""\
		__count_pcp_event(pcp, numa_hit, 1);
""", """\
		__atomic_fetch_add(&zone->pcp[0].stats.numa_hit, 1, __ATOMIC_RELAXED);
""")],
        tests=["conflict:pairs_vs_pairs"],
    ),
    dict(
        name="share-watermark-reads-every-count",
        file="mm/page_alloc.c",
        says="the order-0 watermark check counts the pages on every CPU's list as free "
             "(zone_pcp_count()): every allocation reads the count line every other CPU's hits write",
        edits=[("""\
	long free = READ_ONCE(z->free_pages);
""", """\
	long free = READ_ONCE(z->free_pages) + (long)zone_pcp_count(z);
""")],
        tests=["conflict:pairs_vs_pairs"],
    ),
    dict(
        name="share-drain-takes-empty-lists",
        file="mm/pcp.c",
        says="drain_all_pages() drains every CPU, its list empty or not (no peek at its count, "
             "which Linux's has_pcps check makes): it takes the lock line of a CPU that is "
             "using its empty list",
        edits=[("""\
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu))
""", """\
		if (force_all_cpus || cpu_has_pcp_pages(m, zone, cpu) || 1)
""")],
        tests=["conflict:drain_own_vs_drain_all"],
    ),
    dict(
        name="share-zone-lock-trylock-then-lock",
        file="mm/page_alloc.c",
        says="the buddy free and refill paths try zone->lock before they take it, as Linux's "
             "did in 2025 until c5bb27e2da3a: the try reads the lock's line, then the lock's "
             "xchg upgrades it, two coherence events per acquisition where one would do",
        edits=[("""\
	unsigned long flags = spin_lock_irqsave(&zone->lock);

	__free_one_page(page, page->pfn, zone, order, mt);
""", """\
	unsigned long flags;

	if (!spin_trylock_irqsave(&zone->lock, &flags))
		flags = spin_lock_irqsave(&zone->lock);
	__free_one_page(page, page->pfn, zone, order, mt);
"""), ("""\
		unsigned long flags = spin_lock_irqsave(&zone->lock);

		page = __rmqueue(zone, order, mt);
""", """\
		unsigned long flags;

		if (!spin_trylock_irqsave(&zone->lock, &flags))
			flags = spin_lock_irqsave(&zone->lock);
		page = __rmqueue(zone, order, mt);
"""), ("""\
	unsigned long flags = spin_lock_irqsave(&zone->lock);
	int listed = 0;
""", """\
	unsigned long flags;
	int listed = 0;

	if (!spin_trylock_irqsave(&zone->lock, &flags))
		flags = spin_lock_irqsave(&zone->lock);
""")],
        tests=["conflict:handoff"],
    ),
]
