/*
 * libFuzzer target for the multiboot2 information parser (kernel/multiboot.c).
 * Expect: any byte string is parsed or rejected with a message; never a crash, never a read
 * outside the buffer (ASan), never undefined behaviour (UBSan); parsed output is well formed:
 * the command line's whole length counted, a full memory map's dropped entries counted.
 */
#include <stdlib.h>
#include <string.h>
#include "kernel/bootinfo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct boot_info bi;
	const char *err;
	/* A heap copy of exactly `size` bytes, so ASan sees every overread. */
	unsigned char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
	memset(&bi, 0, sizeof(bi));
	if (multiboot2_parse(buf, size, &bi, &err) != 0) {
		if (!err)
			abort();	/* a rejection must say why */
	} else {
		if (bi.nr_mmap > BOOT_MMAP_MAX || strnlen(bi.cmdline, BOOT_CMDLINE_MAX) == BOOT_CMDLINE_MAX)
			abort();
		/* the whole line is counted, what fits is kept: a prefix, cut only if too long */
		if (bi.cmdline_len < strlen(bi.cmdline) ||
		    (bi.cmdline_len < BOOT_CMDLINE_MAX && bi.cmdline_len != strlen(bi.cmdline)))
			abort();
		if (bi.nr_mmap_dropped && (bi.nr_mmap != BOOT_MMAP_MAX ||
					   bi.nr_mmap_dropped_reserved > bi.nr_mmap_dropped))
			abort();
		if (strnlen(bi.loader_name, sizeof(bi.loader_name)) == sizeof(bi.loader_name))
			abort();
	}
	free(buf);
	return 0;
}
