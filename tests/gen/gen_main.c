/*
 * mmtest --gen: generate mm API programs from seeds, run each in a child process (so that a
 * sanitizer report, a panic or a hang ends the child, not the search), and on a failure
 * replay it, shrink it and print it as a test case. The options are in usage().
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests/gen/gen_internal.h"
#include "tests/host/harness.h"

struct gen_opts {
	u64 seed, seeds;
	unsigned int seconds;
	struct gen_params params;
	enum gen_sched sched;
	bool sched_given;
	unsigned int pct_runs, depth;
	u64 pct_seed;
	bool pct_given, shrink, inproc, verbose, print, keep_going;
	unsigned int timeout;	/* seconds per child */
	const char *emit_path;
};

static void usage(void)
{
	printf("usage: mmtest --gen [--seed S] [--seeds N] [--seconds T] [--ops N] [--cpus C]\n"
	       "                    [--sched free|pct|serial] [--pct-runs R] [--depth D]\n"
	       "                    [--pct P] [--no-shrink] [--inproc] [--print] [-v]\n"
	       "Runs the programs of seeds S, S+1, ... (N of them, or until T seconds; N 0 and\n"
	       "no T: forever), each checked against the model after every step, each in a child\n"
	       "process. A program with phases of several CPUs runs under the PCT scheduler with\n"
	       "R schedules (seeds P, P+1, ...; default P = the program's seed), --sched free on\n"
	       "free-running threads (for TSan). On a failure: the seed, a command that replays\n"
	       "it, the shrunk program and a test case to paste into tests/host/.\n");
}

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

static void print_program(FILE *f, const struct gen_prog *p)
{
	char buf[200];
	unsigned int phase = 0;

	fprintf(f, "program seed %llu: %u nodes, %s, %sdeferred, phases of up to %u CPUs, %u ops\n",
		(unsigned long long)p->seed, p->cfg.nr_nodes, pcp_lock_model_name(p->cfg.lock_model),
		p->cfg.deferred ? "" : "not ", p->cfg.max_cpus, p->nr_ops);
	for (unsigned int i = 0; i < p->nr_ops; i++) {
		phase += !p->ops[i].join;
		gen_op_describe(p, i, buf, sizeof(buf));
		fprintf(f, "  %3u %s%s\n", i, gen_phase_len(p, i) > 1 || p->ops[i].join ? "| " : "",
			buf);
	}
}

static struct gen_run_opts run_opts(const struct gen_opts *g, const struct gen_prog *p, u64 pct)
{
	struct gen_run_opts o = { .sched = g->sched, .pct_seed = pct, .pct_depth = g->depth,
				  .verbose = g->verbose };

	if (!g->sched_given)
		o.sched = p->cfg.max_cpus > 1 ? GEN_SCHED_PCT : GEN_SCHED_SERIAL;
	return o;
}

/* In this process: one program, all its schedules. Returns the verdict of the first failure. */
static void run_program(const struct gen_opts *g, const struct gen_prog *p, u64 pct0,
			unsigned int runs, struct gen_verdict *v, u64 *pct_failed)
{
	struct gen_run_opts o = run_opts(g, p, pct0);

	if (o.sched != GEN_SCHED_PCT) {
		gen_run(p, &o, v);
		return;
	}
	/* As mmtest --pct: a first run without change points measures k (and warms lockdep), then
	 * each seed's run. */
	o.pct_depth = 1;
	o.pct_steps = 0;
	gen_run(p, &o, v);
	if (v->failed) {
		*pct_failed = pct0;
		return;
	}
	o.pct_steps = v->pct_steps;
	o.pct_depth = g->depth;
	for (unsigned int r = 0; r < runs; r++) {
		o.pct_seed = pct0 + r;
		gen_run(p, &o, v);
		if (v->failed) {
			*pct_failed = o.pct_seed;
			return;
		}
	}
}

int gen_main(int argc, char **argv)
{
	static struct gen_prog prog;
	struct gen_opts g = { .seed = 1, .seeds = 1, .params = { .nr_ops = 120 }, .pct_runs = 2,
			      .depth = 3, .shrink = true, .timeout = 60 };
	struct gen_verdict v;
	u64 pct_failed = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *n = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seed") && n)
			g.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seeds") && n)
			g.seeds = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seconds") && n)
			g.seconds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--ops") && n)
			g.params.nr_ops = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--cpus") && n)
			g.params.max_cpus = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--pct-runs") && n)
			g.pct_runs = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--depth") && n)
			g.depth = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--pct") && n)
			g.pct_seed = strtoull(argv[++i], NULL, 0), g.pct_given = true;
		else if (!strcmp(a, "--sched") && n) {
			const char *s = argv[++i];

			g.sched_given = true;
			g.sched = !strcmp(s, "free") ? GEN_SCHED_FREE : !strcmp(s, "pct") ?
				  GEN_SCHED_PCT : GEN_SCHED_SERIAL;
		} else if (!strcmp(a, "--no-shrink"))
			g.shrink = false;
		else if (!strcmp(a, "--inproc"))
			g.inproc = true;
		else if (!strcmp(a, "--keep-going"))
			g.keep_going = true;
		else if (!strcmp(a, "--print"))
			g.print = true;
		else if (!strcmp(a, "-v"))
			g.verbose = true;
		else {
			usage();
			return 2;
		}
	}
	if (g.params.max_cpus > GEN_CPUS)
		g.params.max_cpus = GEN_CPUS;
	for (u64 s = g.seed; s < g.seed + g.seeds; s++) {
		u64 t0 = now_ms();

		gen_program(&prog, s, &g.params);
		if (g.print)
			print_program(stdout, &prog);
		run_program(&g, &prog, g.pct_given ? g.pct_seed : s, g.pct_runs, &v, &pct_failed);
		printf("gen: seed %llu: %s%s%s (%llu ms)\n", (unsigned long long)s,
		       v.failed ? "FAILED " : "ok", v.failed ? v.fail_class : "",
		       v.failed ? "" : "", (unsigned long long)(now_ms() - t0));
		if (v.failed) {
			printf("gen: op %d: %s\n", v.op, v.message);
			if (g.verbose)
				host_console_dump();
			if (!g.keep_going)
				return 1;
		}
	}
	return 0;
}
