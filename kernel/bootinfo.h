/*
 * What the boot loader told us, parsed out of the multiboot2 information (kernel/multiboot.c)
 * into plain data that the rest of the kernel reads. Nothing here points into loader memory.
 */
#ifndef KERNEL_BOOTINFO_H
#define KERNEL_BOOTINFO_H

#include "kernel/compiler.h"

#define BOOT_CMDLINE_MAX 4096	/* with the NUL; a longer line is cut to whole words, with a message */
#define BOOT_MMAP_MAX 256	/* more: RAM is given up first, reservations last (multiboot.c) */

enum mem_type {
	MEM_USABLE = 1,		/* free RAM */
	MEM_RESERVED = 2,
	MEM_ACPI_RECLAIMABLE = 3,
	MEM_ACPI_NVS = 4,
	MEM_BAD = 5,
};

/* The one label of each type, for the boot log's memory map and memblock's messages. */
static inline const char *mem_type_name(u32 type)
{
	static const char *const names[] = {
		[MEM_USABLE] = "usable", [MEM_RESERVED] = "reserved",
		[MEM_ACPI_RECLAIMABLE] = "ACPI reclaimable", [MEM_ACPI_NVS] = "ACPI NVS",
		[MEM_BAD] = "bad RAM",
	};

	return type < ARRAY_SIZE(names) && names[type] ? names[type] : "unknown";
}

struct mem_region {
	u64 base;
	u64 length;
	u32 type;		/* enum mem_type, as in the multiboot2 mmap tag */
};

/* The end of an entry, base + length, or 2^64 - 1 if that wraps (memblock clamps so too). */
static inline u64 mem_region_end(const struct mem_region *r)
{
	return r->length > ~0ull - r->base ? ~0ull : r->base + r->length;
}

struct boot_info {
	char cmdline[BOOT_CMDLINE_MAX];	/* the first BOOT_CMDLINE_MAX - 1 bytes of the loader's */
	size_t cmdline_len;		/* the loader's line in bytes, all of it (may not fit) */
	char loader_name[64];
	struct mem_region mmap[BOOT_MMAP_MAX];	/* as the loader gave it: may be unsorted/overlapping */
	unsigned int nr_mmap;
	/* Entries past BOOT_MMAP_MAX (multiboot.c keeps reservations first): how many, the
	 * usable RAM in those, and how many of them were not usable RAM (reservations lost). */
	unsigned int nr_mmap_dropped;
	u64 mmap_dropped_usable;
	unsigned int nr_mmap_dropped_reserved;
	bool efi_mmap_present;		/* an EFI memory map tag was seen (UEFI boot) */
	unsigned int nr_efi_mmap;	/* number of EFI descriptors */
	u64 rsdp_phys;			/* physical address of the RSDP copy in the mbi, 0 if none */
	u8 rsdp_copy[36];		/* the RSDP itself (v1: 20 bytes, v2: 36 bytes) */
	u8 rsdp_revision;		/* 0: ACPI 1.0 (RSDT), >= 2: XSDT present */
	bool rsdp_present;
	u64 mbi_phys, mbi_size;		/* the multiboot2 information block, to reserve */
	u64 kernel_phys_start, kernel_phys_end;	/* the loaded image, to reserve */
};

extern struct boot_info boot_info;

/*
 * Parse a multiboot2 information block of at most buf_len bytes into *bi.
 * Returns 0, or a negative number with *err set to a message on malformed input.
 * Pure function of its input: safe to fuzz on the host.
 */
int multiboot2_parse(const void *mbi, size_t buf_len, struct boot_info *bi, const char **err);

/*
 * Queries of the loader's map, pure like the parser. Entries may overlap (any entry that is
 * not usable RAM wins) and may wrap past 2^64 (mem_region_end()).
 * boot_ram_is_free(): [pa, pa + len) lies in usable RAM, in no entry of another type and
 * not in the multiboot2 information: free for the kernel's own use before memblock (the
 * AP trampoline).
 * boot_mmio_problem(): why a device's registers that a firmware table places at
 * [pa, pa + len) cannot be used, or NULL if they can: at 0, not aligned to len, wrapping or
 * past limit (what the boot direct map covers), or overlapping usable RAM (Linux's
 * ioremap() refuses RAM: writing registers there would write someone's memory).
 */
bool boot_ram_is_free(const struct boot_info *bi, u64 pa, u64 len);
const char *boot_mmio_problem(const struct boot_info *bi, u64 pa, u64 len, u64 limit);

#endif
