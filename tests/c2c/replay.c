/*
 * The c2c model without QEMU: replays the streams a run recorded (the plugin's trace=DIR,
 * zstd-compressed) through tests/c2c/model.c on any machine, and writes the same JSON lines
 * as the plugin, for tests/c2c/report.py. The guest's streams do not depend on the machine
 * modelled, so one run serves every value of an assumed parameter (tests/c2c/sweep.py).
 *
 * usage: replay DIR [-o FILE] [-w N[,N...]] [-l N] [-log PREFIX] MACHINE-ARG...
 *   MACHINE-ARG: the plugin's machine arguments (tests/c2c/machine.py args FILE)
 *   -log PREFIX: every access in the order the model replayed it, to PREFIX.wNNN
 *                (tests/c2c/mesi_check.py reads it)
 */
#include "tests/c2c/model.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t cost_fs[C2C_NR_ICLASSES];
static uint64_t *pcs;
static size_t nr_pcs;

static uint64_t pc_of(void *arg, uint32_t id)
{
	return id < nr_pcs ? pcs[id] : 0;
}

static void *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	buf[n] = 0;
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* One access as the merge replayed it (-log): tests/c2c/mesi_check.py reads these. */
struct log_rec {
	uint16_t cpu;
	uint8_t flags;			/* 1: a store, 2: counted, 4: cross-socket */
	uint8_t outcome;
	uint32_t line;
};

static void log_access(void *arg, unsigned int cpu, bool store, uint32_t line, bool counted,
		       enum c2c_outcome o, bool cross)
{
	struct log_rec r = { .cpu = (uint16_t)cpu, .outcome = (uint8_t)o, .line = line,
			     .flags = (uint8_t)(store | counted << 1 | cross << 2) };

	fwrite(&r, sizeof(r), 1, arg);
}

/* Push CPU c's recorded stream into the model, each event's clock costed by class. */
static void push_stream(struct c2c_model *m, unsigned int c, const char *path)
{
	char cmd[4200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "zstd -dcq '%s'", path);
	f = popen(cmd, "r");
	struct c2c_trace_rec r[4096];
	size_t n;

	if (!f) {
		perror(path);
		exit(1);
	}
	while ((n = fread(r, sizeof(r[0]), 4096, f)) > 0)
		for (size_t i = 0; i < n; i++) {
			uint64_t fs = 0;

			for (int k = 0; k < C2C_NR_ICLASSES; k++)
				fs += (uint64_t)r[i].n[k] * cost_fs[k];
			c2c_push(m, c, (struct c2c_event){ .icount = fs, .kind = r[i].kind, .off = r[i].off,
							    .line = r[i].line, .insn = r[i].insn });
		}
	if (pclose(f)) {
		fprintf(stderr, "replay: %s: zstd failed\n", path);
		exit(1);
	}
}

static bool wanted(const char *list, unsigned int w)
{
	char num[16];
	size_t len;

	if (!list)
		return true;
	len = (size_t)snprintf(num, sizeof(num), "%u", w);
	for (const char *p = list; (p = strstr(p, num)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

static int replay_window(const char *dir, unsigned int w, const struct c2c_params *p,
			 const struct c2c_output *o, const char *log_prefix)
{
	static struct c2c_model m;
	char path[4096];
	FILE *log = NULL;
	bool any = false;

	if (c2c_model_init(&m, p)) {
		fprintf(stderr, "replay: bad machine for %u CPUs\n", p->nr_cpus);
		return -1;
	}
	for (unsigned int c = 0; c < p->nr_cpus; c++) {
		snprintf(path, sizeof(path), "%s/w%03u.cpu%03u.bin.zst", dir, w, c);
		if (access(path, R_OK))
			continue;
		push_stream(&m, c, path);
		any = true;
	}
	if (log_prefix) {
		snprintf(path, sizeof(path), "%s.w%03u", log_prefix, w);
		if (!(log = fopen(path, "wb"))) {
			perror(path);
			exit(1);
		}
		m.log = log_access;
		m.log_arg = log;
	}
	for (int tries = 0; any && !c2c_merge(&m, true); tries++)
		if (tries > 1000000) {
			fprintf(stderr, "replay: window %u: the merge makes no progress\n", w);
			return -1;
		}
	c2c_write_window(o, &m, w, false);
	if (log)
		fclose(log);
	c2c_model_free(&m);
	return 0;
}

int main(int argc, char **argv)
{
	struct c2c_params p = { .ps_per_insn = 1, .clock_div = 1000, .sockets = 1 };
	struct c2c_output o = { .out = stdout, .top_lines = 64, .pc_of = pc_of };
	const char *dir, *windows = NULL, *log_prefix = NULL, *cpus;
	unsigned int max_w = 0;
	char path[4096], *text;
	size_t size;
	DIR *d;
	struct dirent *e;

	if (argc < 2) {
		fprintf(stderr, "usage: replay DIR [-o FILE] [-w N,N] [-l LINES] [-log PREFIX] MACHINE-ARG...\n");
		return 2;
	}
	dir = argv[1];
	snprintf(path, sizeof(path), "%s/params.json", dir);	/* the run's CPUs, unless cpus= */
	if (!(text = read_file(path, &size)) || !(cpus = strstr(text, "\"cpus\":")))
		return fprintf(stderr, "replay: no %s\n", path), 1;
	p.nr_cpus = (unsigned int)atoi(cpus + 7);
	free(text);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			if (!(o.out = fopen(argv[++i], "w")))
				return perror(argv[i]), 1;
		} else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			windows = argv[++i];
		} else if (!strcmp(argv[i], "-l") && i + 1 < argc) {
			o.top_lines = (unsigned int)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-log") && i + 1 < argc) {
			log_prefix = argv[++i];
		} else if (c2c_machine_arg(&p, cost_fs, argv[i])) {
			fprintf(stderr, "replay: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	snprintf(path, sizeof(path), "%s/pcs.bin", dir);
	pcs = read_file(path, &size);
	nr_pcs = pcs ? size / sizeof(*pcs) : 0;
	if (!(d = opendir(dir)))
		return perror(dir), 1;
	while ((e = readdir(d))) {
		unsigned int w, c;

		if (sscanf(e->d_name, "w%3u.cpu%3u.bin.zst", &w, &c) == 2 && w > max_w)
			max_w = w;
	}
	closedir(d);
	c2c_write_params(o.out, &p, cost_fs);
	for (unsigned int w = 1; w <= max_w; w++)
		if (wanted(windows, w) && replay_window(dir, w, &p, &o, log_prefix))
			return 1;
	return 0;
}
