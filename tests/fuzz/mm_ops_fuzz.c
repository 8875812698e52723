/*
 * libFuzzer target for the allocator: the input is a program of operations (alloc, free,
 * get, put, drain, pin, unpin, bulk alloc) on a private 16 MiB allocator instance with
 * per-CPU lists, run by the host shim (tests/host/shim). After every step mm_verify() must
 * find every page in exactly one place; at the end, with everything released, the free
 * count must be exactly what it was. Any bad_page() report, WARN_ON or panic is a finding.
 */
#include <stdlib.h>
#include <string.h>
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "mm/gup.h"
#include "kernel/bootinfo.h"
#include "kernel/panic.h"
#include "tests/host/shim/shim.h"
#include "tests/lab/pcp_bulk.h"

#define HELD_MAX 64
#define PIN_BASE (1ull << 32)
#define PIN_PAGES 64

static struct pglist_data pgdat;
static struct memblock mb;
static unsigned long free_at_start;

struct held {
	struct page *page;
	unsigned int order, extra_refs;
};

static void setup_once(void)
{
	static const struct mem_region map[] = { { 16u << 20, 16u << 20, MEM_USABLE } };

	host_phys_init(64ull << 20);
	memblock_init(&mb, host_boot_map_limit);
	memblock_add_mmap(&mb, map, 1);
	memblock_reserve(&mb, 0, PAGE_SIZE);
	if (pgdat_init(&pgdat, &mb, "fuzz", 2, pcp_lock_default))
		abort();
	drain_all_pages_machine(pgdat.machine);
	free_at_start = node_free_pages(&pgdat);
}

static void check(void)
{
	if (mm_verify(&pgdat) || pgdat.bad_pages || taint_count(TAINT_WARN))
		abort();
}

static void op_alloc(struct held *h, unsigned int *n, unsigned char a, unsigned char b)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_USER, GFP_ATOMIC, GFP_DMA32,
				      GFP_KERNEL | __GFP_ZERO, GFP_KERNEL | __GFP_RECLAIMABLE };
	unsigned int order = (b & 0x80) ? b % (MAX_ORDER + 1) : b % 4;
	struct page *p;

	if (*n == HELD_MAX)
		return;
	p = alloc_pages_node(&pgdat, gfps[a % ARRAY_SIZE(gfps)] | __GFP_NOWARN, order);
	if (p)
		h[(*n)++] = (struct held){ p, order, 0 };
}

static void release(struct held *h)
{
	while (h->extra_refs) {
		put_page(h->page);
		h->extra_refs--;
	}
	__free_pages(h->page, h->order);
}

static void op_free(struct held *h, unsigned int *n, unsigned char a)
{
	unsigned int k;

	if (!*n)
		return;
	k = a % *n;
	release(&h[k]);
	h[k] = h[--*n];
}

static void op_ref(struct held *h, unsigned int n, unsigned char a, bool get)
{
	struct held *x;

	if (!n)
		return;
	x = &h[a % n];
	if (get && x->extra_refs < 8) {
		get_page(x->page);
		x->extra_refs++;
	} else if (!get && x->extra_refs) {
		put_page(x->page);
		x->extra_refs--;
	}
}

static void op_pin(struct mm_struct *mm, struct page **pinned, unsigned int *np, unsigned char a)
{
	unsigned int want = 1 + a % 8, start = (a >> 3) % (PIN_PAGES - 8);
	long got;

	if (*np + want > PIN_PAGES)
		return;
	got = pin_user_pages_fast(mm, PIN_BASE + start * PAGE_SIZE, want,
				  (a & 0x80) ? FOLL_LONGTERM : 0, pinned + *np);
	if (got > 0)
		*np += (unsigned int)got;
}

int LLVMFuzzerTestOneInput(const unsigned char *d, size_t size)
{
	static bool ready;
	struct held h[HELD_MAX];
	struct page *pinned[PIN_PAGES], *bulk[16] = { NULL };
	unsigned int n = 0, np = 0;
	struct mm_struct *mm;

	if (!ready) {
		setup_once();
		ready = true;
	}
	mm = mm_create(&pgdat);
	if (!mm || mm_mmap_anon(mm, PIN_BASE, PIN_PAGES * PAGE_SIZE, true, false, false))
		abort();
	for (size_t i = 0; i + 2 < size && i < 3 * 64; i += 3) {
		unsigned char op = d[i], a = d[i + 1], b = d[i + 2];

		switch (op % 8) {
		case 0: op_alloc(h, &n, a, b); break;
		case 1: op_free(h, &n, a); break;
		case 2: op_ref(h, n, a, true); break;
		case 3: op_ref(h, n, a, false); break;
		case 4: (a & 1) ? drain_all_pages_machine(pgdat.machine) : drain_cpu_pages(pgdat.machine, arch_cpu_id()); break;
		case 5: op_pin(mm, pinned, &np, a); break;
		case 6: unpin_user_pages(pinned, np); np = 0; break;
		case 7: {
			unsigned int got = alloc_pages_bulk_node(&pgdat, GFP_KERNEL, 1 + a % 16, bulk);
			for (unsigned int k = 0; k < 16; k++)
				if (bulk[k]) { __free_pages(bulk[k], 0); bulk[k] = NULL; }
			(void)got;
			break;
		}
		}
		check();
	}
	unpin_user_pages(pinned, np);
	while (n)
		release(&h[--n]);
	mm_destroy(mm);
	drain_all_pages_machine(pgdat.machine);
	check();
	if (node_free_pages(&pgdat) != free_at_start)
		abort();	/* a page was lost or freed twice */
	return 0;
}
