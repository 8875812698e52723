/*
 * QEMU fw_cfg (I/O-port interface): reads the file "opt/smpmm/cmdline" so a test runner can
 * give each boot its own command line without rebuilding the ISO. Absent device: nothing.
 */
#include <arch/console.h>
#include "io.h"

#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000
#define FW_CFG_FILE_DIR 0x0019
#define FWCFG_CMDLINE_FILE "opt/smpmm/cmdline"

static void fwcfg_read(void *buf, size_t len)
{
	u8 *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = inb(FW_CFG_PORT_DATA);
}

static u32 be32(u32 v) { return __builtin_bswap32(v); }
static u16 be16(u16 v) { return __builtin_bswap16(v); }

static bool fwcfg_present(void)
{
	char sig[4];

	outw(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
	fwcfg_read(sig, sizeof(sig));
	return sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U';
}

/* Find a file by name in the fw_cfg directory; returns its size and selector key. */
static bool fwcfg_find(const char *name, u32 *size, u16 *key)
{
	struct { u32 size; u16 select; u16 reserved; char name[56]; } __packed f;
	u32 count;

	outw(FW_CFG_PORT_SEL, FW_CFG_FILE_DIR);
	fwcfg_read(&count, sizeof(count));
	for (u32 i = 0; i < be32(count); i++) {
		fwcfg_read(&f, sizeof(f));
		size_t n = 0;
		while (name[n] && f.name[n] == name[n])
			n++;
		if (!name[n] && !f.name[n]) {
			*size = be32(f.size);
			*key = be16(f.select);
			return true;
		}
	}
	return false;
}

size_t arch_fwcfg_cmdline(char *buf, size_t len, size_t cap)
{
	u32 size;
	u16 key;

	if (!fwcfg_present() || !fwcfg_find(FWCFG_CMDLINE_FILE, &size, &key))
		return len;
	if (len && size) {
		if (len + 1 < cap)
			buf[len] = ' ';
		len++;
	}
	outw(FW_CFG_PORT_SEL, key);
	for (u32 i = 0; i < size; i++) {	/* all of it is counted, what fits is kept */
		char c;
		fwcfg_read(&c, 1);
		if (c == '\0')
			break;
		if (len + 1 < cap)
			buf[len] = c;
		len++;
	}
	buf[MIN(len, cap - 1)] = '\0';
	return len;
}
