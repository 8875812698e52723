/*
 * Multiboot2 information parser: turns the loader's tag list into struct boot_info.
 * Pure function of its input buffer (no globals, no printk), so the host fuzzer can drive it;
 * so are the queries of the parsed memory map at the end.
 */
#include "kernel/bootinfo.h"
#include "kernel/string.h"

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MMAP 6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_TAG_EFI_MMAP 17

struct mb2_tag {
	u32 type;
	u32 size;		/* including this header, not including padding to 8 */
};

struct mb2_mmap_entry {
	u64 base;
	u64 length;
	u32 type;
	u32 reserved;
};

/* Copy a NUL-terminated string of at most len bytes from a tag body, always terminating. */
static void copy_tag_string(char *dst, size_t cap, const u8 *src, size_t len)
{
	size_t n = strnlen((const char *)src, len);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * One entry past BOOT_MMAP_MAX: a full table keeps what keeps the kernel safe. An entry that
 * is not usable RAM takes the place of the last usable one (RAM given up is only lost; a
 * reservation lost would be handed out as free memory); usable RAM is counted and dropped.
 */
static void mmap_full(struct boot_info *bi, struct mem_region e)
{
	struct mem_region *victim = NULL;

	bi->nr_mmap_dropped++;
	for (unsigned int i = BOOT_MMAP_MAX; i-- > 0 && e.type != MEM_USABLE && !victim;)
		if (bi->mmap[i].type == MEM_USABLE)
			victim = &bi->mmap[i];
	if (e.type != MEM_USABLE && !victim) {
		bi->nr_mmap_dropped_reserved++;
		return;
	}
	if (victim) {
		struct mem_region kept = e;

		e = *victim;
		*victim = kept;
	}
	bi->mmap_dropped_usable += MIN(e.length, ~0ull - bi->mmap_dropped_usable);
}

static int parse_mmap(const u8 *body, size_t len, struct boot_info *bi, const char **err)
{
	u32 entry_size;

	if (len < 8) {
		*err = "memory map tag too short";
		return -1;
	}
	memcpy(&entry_size, body, 4);
	if (entry_size < sizeof(struct mb2_mmap_entry) || entry_size % 8) {
		*err = "memory map entry size is invalid";
		return -1;
	}
	for (size_t off = 8; off + entry_size <= len; off += entry_size) {
		struct mb2_mmap_entry e;
		struct mem_region r;

		memcpy(&e, body + off, sizeof(e));
		r = (struct mem_region){ e.base, e.length, e.type };
		if (bi->nr_mmap == BOOT_MMAP_MAX)
			mmap_full(bi, r);
		else
			bi->mmap[bi->nr_mmap++] = r;
	}
	return 0;
}

static void parse_rsdp(const u8 *body, size_t len, struct boot_info *bi, bool is_new)
{
	size_t want = is_new ? 36 : 20;

	/* Prefer the ACPI 2.0 copy when both are present. */
	if (len < want || (bi->rsdp_present && !is_new && bi->rsdp_revision >= 2))
		return;
	memcpy(bi->rsdp_copy, body, want);
	bi->rsdp_revision = body[15];
	bi->rsdp_present = true;
}

static int parse_tag(struct mb2_tag tag, const u8 *body, struct boot_info *bi, const char **err)
{
	size_t len = tag.size - sizeof(tag);
	u32 desc_size;

	switch (tag.type) {
	case MB2_TAG_CMDLINE:
		copy_tag_string(bi->cmdline, sizeof(bi->cmdline), body, len);
		bi->cmdline_len = strnlen((const char *)body, len);	/* all of it: cmdline_fit() */
		break;
	case MB2_TAG_LOADER_NAME:
		copy_tag_string(bi->loader_name, sizeof(bi->loader_name), body, len);
		break;
	case MB2_TAG_MMAP:
		return parse_mmap(body, len, bi, err);
	case MB2_TAG_ACPI_OLD:
	case MB2_TAG_ACPI_NEW:
		parse_rsdp(body, len, bi, tag.type == MB2_TAG_ACPI_NEW);
		break;
	case MB2_TAG_EFI_MMAP:
		if (len < 8)
			break;
		memcpy(&desc_size, body, 4);
		bi->efi_mmap_present = true;
		bi->nr_efi_mmap = desc_size ? (unsigned int)((len - 8) / desc_size) : 0;
		break;
	default:
		break;	/* tags we do not use are skipped */
	}
	return 0;
}

int multiboot2_parse(const void *mbi, size_t buf_len, struct boot_info *bi, const char **err)
{
	const u8 *base = mbi;
	u32 total;

	*err = NULL;
	if (buf_len < 8) {
		*err = "multiboot2 information shorter than its header";
		return -1;
	}
	memcpy(&total, base, 4);
	if (total < 8 || total > buf_len) {
		*err = "multiboot2 total_size is out of range";
		return -1;
	}
	for (size_t off = 8; off + sizeof(struct mb2_tag) <= total;) {
		struct mb2_tag tag;

		memcpy(&tag, base + off, sizeof(tag));
		if (tag.type == MB2_TAG_END)
			return 0;
		if (tag.size < sizeof(tag) || tag.size > total - off) {
			*err = "multiboot2 tag size runs past the end";
			return -1;
		}
		if (parse_tag(tag, base + off + sizeof(tag), bi, err))
			return -1;
		off += ALIGN_UP((size_t)tag.size, (size_t)8);
	}
	*err = "multiboot2 information has no end tag";
	return -1;
}

/* ---- queries of the loader's memory map ---- */

static bool overlaps(u64 a, u64 a_end, u64 b, u64 b_end)
{
	return a < b_end && b < a_end;
}

bool boot_ram_is_free(const struct boot_info *bi, u64 pa, u64 len)
{
	u64 end = pa + len;
	bool usable = false;

	if (!len || end < pa)
		return false;
	for (unsigned int i = 0; i < bi->nr_mmap; i++) {
		const struct mem_region *r = &bi->mmap[i];

		if (!r->length || !overlaps(pa, end, r->base, mem_region_end(r)))
			continue;
		if (r->type != MEM_USABLE)
			return false;
		usable |= r->base <= pa && end <= mem_region_end(r);
	}
	return usable && !overlaps(pa, end, bi->mbi_phys, bi->mbi_phys + bi->mbi_size);
}

const char *boot_mmio_problem(const struct boot_info *bi, u64 pa, u64 len, u64 limit)
{
	if (!pa)
		return "0";
	if (pa & (len - 1))
		return "not aligned";
	if (pa + len < pa || pa + len > limit)
		return "beyond the boot direct map";
	for (unsigned int i = 0; i < bi->nr_mmap; i++) {
		const struct mem_region *r = &bi->mmap[i];

		if (r->type == MEM_USABLE && r->length &&
		    overlaps(pa, pa + len, r->base, mem_region_end(r)))
			return "in usable RAM";
	}
	return NULL;
}
