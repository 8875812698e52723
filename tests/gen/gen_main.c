/*
 * mmtest --gen: generate mm API programs from seeds, run each in a child process (so that a
 * sanitizer report, a panic or a hang ends the child, not the search), and on a failure
 * replay it, shrink it and print it as a test case. The options are in usage().
 */
#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
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
	unsigned int pct_runs, depth, free_runs;
	u64 pct_seed;
	bool pct_given, shrink, inproc, verbose, print, keep_going, list_only;
	unsigned int timeout;	/* seconds per child */
	unsigned int shrink_tries, shrink_seconds;
	unsigned int progress;	/* seconds between progress lines */
	const char *replay;	/* a program file (gen_program_write()) */
};

static void usage(void)
{
	printf("usage: mmtest --gen [--seed S] [--seeds N] [--seconds T] [--ops N] [--cpus C]\n"
	       "                    [--sched free|pct|serial] [--pct-runs R] [--depth D]\n"
	       "                    [--pct P] [--no-shrink] [--inproc] [--print] [--list] [-v]\n"
	       "                    [--free-runs N] [--verify-alone] [--timeout S] [--keep-going]\n"
	       "       mmtest --gen --replay FILE [same options]   (a shrunk program)\n"
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

/*
 * In this process: the program once (pct: under PCT seed pct, as mmtest --pct runs a case: a
 * first run without change points measures k, the steps of a run, and warms lockdep; then
 * the run with the seed's d - 1 change points in 1..k). Each schedule runs in a fresh child,
 * so that (program, PCT seed) replays exactly.
 */
static void run_program(const struct gen_opts *g, const struct gen_prog *p, u64 pct,
			struct gen_verdict *v)
{
	struct gen_run_opts o = run_opts(g, p, pct);

	if (o.sched != GEN_SCHED_PCT) {
		gen_run(p, &o, v);
		return;
	}
	static u64 k[GEN_MAX_OPS];

	o.phase_k = NULL;
	o.phase_k_out = k;
	gen_run(p, &o, v);
	if (v->failed)
		return;
	o.phase_k = k;
	o.phase_k_out = NULL;
	gen_run(p, &o, v);
}

/* ---- each program in a child process ---- */

/* What a child leaves for the parent (shared memory). */
struct child_out {
	struct gen_verdict v;
	int progress;
	bool done;
	u8 ran[GEN_MAX_OPS];
	long ret[GEN_MAX_OPS];
	struct gen_exp exp[GEN_MAX_OPS];
};

static struct child_out *out;		/* MAP_SHARED */
static char text[1 << 16];		/* the child's stdout and stderr: head, then tail */
static size_t text_len;

static void text_add(const char *buf, size_t n)
{
	if (text_len + n >= sizeof(text)) {	/* keep the first half, and the latest rest */
		size_t keep = sizeof(text) / 2;

		memmove(text + keep, text + text_len - MIN(text_len - keep, keep / 2),
			MIN(text_len - keep, keep / 2));
		text_len = keep + MIN(text_len - keep, keep / 2);
		n = MIN(n, sizeof(text) - text_len - 1);
	}
	memcpy(text + text_len, buf, n);
	text_len += n;
	text[text_len] = '\0';
}

/* A crash's class from what the child printed: sanitizer report, panic, or signal. */
static void crash_class(int status, struct gen_verdict *v)
{
	const char *t;

	v->failed = true;
	v->op = out->progress;
	if ((t = strstr(text, "ERROR: AddressSanitizer: "))) {
		snprintf(v->fail_class, sizeof(v->fail_class), "asan:%.*s", (int)strcspn(t + 25, " \n"), t + 25);
	} else if ((t = strstr(text, "runtime error: "))) {
		const char *l = t;

		while (l > text && l[-1] != '\n')
			l--;
		snprintf(v->fail_class, sizeof(v->fail_class), "ubsan:%.*s", (int)strcspn(l, ": \n"), l);
		snprintf(v->message, sizeof(v->message), "%.*s", (int)strcspn(l, "\n"), l);
		return;
	} else if ((t = strstr(text, "WARNING: ThreadSanitizer: "))) {
		snprintf(v->fail_class, sizeof(v->fail_class), "tsan:%.*s", (int)strcspn(t + 26, "(\n"), t + 26);
	} else if ((t = strstr(text, "PANIC (uncaught): "))) {
		snprintf(v->fail_class, sizeof(v->fail_class), "panic:%.*s", (int)MIN(strcspn(t + 18, "\n"), 40ul), t + 18);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		strcpy(v->fail_class, "hang:pct");
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		strcpy(v->fail_class, "hang");
	} else {
		snprintf(v->fail_class, sizeof(v->fail_class), "crash:%s %d",
			 WIFSIGNALED(status) ? "signal" : "exit",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	if (t)
		snprintf(v->message, sizeof(v->message), "%.*s", (int)strcspn(t, "\n"), t);
	else
		snprintf(v->message, sizeof(v->message), "the child died (%s), last step at op %d",
			 v->fail_class, out->progress);
}

/* Run the program once in a child (one PCT schedule, if it has phases); its verdict in *v. */
static void child_run_one(const struct gen_opts *g, const struct gen_prog *p, u64 pct,
			  struct gen_verdict *v)
{
	int fd[2], status = 0;
	u64 deadline = now_ms() + (u64)g->timeout * 1000;
	pid_t pid;

	if (g->inproc) {
		run_program(g, p, pct, v);
		return;
	}
	memset(out, 0, sizeof(*out));
	out->progress = -1;
	text_len = 0;
	text[0] = '\0';
	fflush(stdout);
	if (pipe(fd) || (pid = fork()) < 0) {
		perror("gen: fork");
		exit(2);
	}
	if (!pid) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		gen_progress = &out->progress;
		run_program(g, p, pct, &out->v);
		for (unsigned int i = 0; i < p->nr_ops; i++) {
			out->ran[i] = gen_res[i].ran;
			out->ret[i] = gen_res[i].ret;
			out->exp[i] = gen_res[i].exp;
		}
		if (out->v.failed && g->verbose)
			host_console_dump();
		out->done = true;
		fflush(stdout);
		_exit(0);
	}
	close(fd[1]);
	for (;;) {
		struct pollfd pfd = { fd[0], POLLIN, 0 };
		char buf[4096];
		long left = (long)(deadline - now_ms());
		ssize_t n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)MIN(left, 1000l)) <= 0)
			continue;
		if ((n = read(fd[0], buf, sizeof(buf))) <= 0)
			break;
		text_add(buf, (size_t)n);
	}
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (g->verbose)
		fputs(text, stdout);
	if (out->done && WIFEXITED(status) && !WEXITSTATUS(status)) {
		*v = out->v;
		return;
	}
	memset(v, 0, sizeof(*v));
	crash_class(status, v);
}

/* The program under `runs` schedules (PCT seeds pct0, pct0 + 1, ...; one run if it has no
 * phases): the first failure, and the PCT seed it came with (0: none). */
static void child_run(const struct gen_opts *g, const struct gen_prog *p, u64 pct0,
		      unsigned int runs, struct gen_verdict *v, u64 *pct_failed)
{
	bool pct = run_opts(g, p, pct0).sched == GEN_SCHED_PCT;

	*pct_failed = 0;
	memset(v, 0, sizeof(*v));
	for (unsigned int r = 0; r < (pct ? runs : 1); r++) {
		child_run_one(g, p, pct0 + r, v);
		if (v->failed) {
			*pct_failed = pct ? pct0 + r : 0;
			return;
		}
	}
	/* Then on free-running threads: races whose window is a few steps of a long phase, where
	 * PCT's change points seldom fall, but real time often does (no exact replay). */
	for (unsigned int r = 0; pct && r < g->free_runs && !v->failed; r++) {
		struct gen_opts f = *g;

		f.sched = GEN_SCHED_FREE;
		f.sched_given = true;
		child_run_one(&f, p, pct0, v);
		v->free_sched = v->failed;
	}
}

/* ---- shrinking ---- */

static struct {
	unsigned int tries, budget;
	u64 deadline;
} shrink_budget;

/* Does the candidate still fail the same way (the same check, or the same crash)? */
static bool still_fails(const struct gen_opts *g, const struct gen_prog *c, const char *cls,
			u64 *pct)
{
	struct gen_verdict v;
	u64 pf = 0;

	if (shrink_budget.tries >= shrink_budget.budget || now_ms() > shrink_budget.deadline)
		return false;
	shrink_budget.tries++;
	child_run(g, c, *pct ? *pct : c->seed, *pct ? g->pct_runs : 1, &v, &pf);
	if (!v.failed || strcmp(v.fail_class, cls))
		return false;
	if (pf)
		*pct = pf;
	return true;
}

/* Drop ops [i, i + n); an op that joined the first dropped one starts its own phase. */
static void drop_ops(struct gen_prog *c, unsigned int i, unsigned int n)
{
	bool starts = !c->ops[i].join;

	memmove(&c->ops[i], &c->ops[i + n], (c->nr_ops - i - n) * sizeof(c->ops[0]));
	c->nr_ops -= n;
	if (i < c->nr_ops && starts)
		c->ops[i].join = 0;
	if (c->nr_ops && c->ops[0].join)
		c->ops[0].join = 0;
}

static bool has_phases(const struct gen_prog *c)
{
	for (unsigned int i = 0; i < c->nr_ops; i++)
		if (c->ops[i].join)
			return true;
	return false;
}

/* Try one change of the program: keep it if the failure stays. */
static bool try_keep(const struct gen_opts *g, struct gen_prog *p, const struct gen_prog *c,
		     const char *cls, u64 *pct)
{
	u64 pc = *pct;

	if (!still_fails(g, c, cls, &pc))
		return false;
	*p = *c;
	*pct = pc;
	return true;
}

static bool shrink_delete(const struct gen_opts *g, struct gen_prog *p, const char *cls, u64 *pct)
{
	static struct gen_prog c;
	bool changed = false;

	for (unsigned int chunk = MAX(p->nr_ops / 2, 1u); chunk >= 1; chunk /= 2) {
		for (unsigned int i = 0; i + chunk <= p->nr_ops;) {
			c = *p;
			drop_ops(&c, i, chunk);
			if (try_keep(g, p, &c, cls, pct))
				changed = true;
			else
				i += chunk;
		}
		if (chunk == 1)
			break;
	}
	return changed;
}

/* Simpler arguments, one at a time: no phases, CPU 0, node 0, fewer pages, lower orders. */
static bool shrink_args(const struct gen_opts *g, struct gen_prog *p, const char *cls, u64 *pct)
{
	static struct gen_prog c;
	bool changed = false;

	if (has_phases(p)) {
		c = *p;
		for (unsigned int i = 0; i < c.nr_ops; i++)
			c.ops[i].join = 0;
		c.cfg.max_cpus = 1;
		changed |= try_keep(g, p, &c, cls, pct);
	}
	for (unsigned int i = 0; i < p->nr_ops; i++) {
		struct gen_op *o;

#define TRY(cond, change) do {							\
		c = *p;								\
		o = &c.ops[i];							\
		if (cond) {							\
			change;							\
			changed |= try_keep(g, p, &c, cls, pct);		\
		}								\
	} while (0)
		TRY(o->cpu && (!o->join && (i + 1 >= c.nr_ops || !c.ops[i + 1].join)), o->cpu = 0);
		TRY(o->node, o->node = 0);
		TRY(o->len > 1 && o->kind != GEN_FREE_SOME, o->len = MAX(o->len / 2, 1u));
		TRY(o->len > 1 && o->kind != GEN_FREE_SOME, o->len--);
		TRY(o->order && o->order <= MAX_ORDER, o->order--);
		TRY(o->gfp, o->gfp = 0);
		for (u8 bit = 1; bit; bit <<= 1)
			TRY((o->flags & bit) && o->kind != GEN_DRAIN, o->flags &= (u8)~bit);
#undef TRY
	}
	c = *p;
	if (c.cfg.nr_nodes > 1 && (c.cfg.nr_nodes = 1))
		changed |= try_keep(g, p, &c, cls, pct);
	c = *p;
	if (c.cfg.deferred && !(c.cfg.deferred = 0))
		changed |= try_keep(g, p, &c, cls, pct);
	c = *p;
	if (c.cfg.lock_model != PCP_LOCK_TRYLOCK && (c.cfg.lock_model = PCP_LOCK_TRYLOCK))
		changed |= try_keep(g, p, &c, cls, pct);
	return changed;
}

static void shrink(const struct gen_opts *g, struct gen_prog *p, const char *cls, u64 *pct)
{
	shrink_budget.tries = 0;
	shrink_budget.budget = g->shrink_tries;
	shrink_budget.deadline = now_ms() + (u64)g->shrink_seconds * 1000;
	while (shrink_delete(g, p, cls, pct) | shrink_args(g, p, cls, pct))
		;
}

/* ---- the search ---- */

static void replay_cmd(char *buf, size_t len, const struct gen_opts *g, const struct gen_prog *p,
		       u64 pct)
{
	int n = g->replay ? snprintf(buf, len, "mmtest --gen --replay %s", g->replay) :
		snprintf(buf, len, "mmtest --gen --seed %llu --ops %u", (unsigned long long)p->seed,
			 g->params.nr_ops);

	if (g->params.max_cpus && !g->replay)
		n += snprintf(buf + n, len - (size_t)n, " --cpus %u", g->params.max_cpus);
	if (g->sched_given)
		n += snprintf(buf + n, len - (size_t)n, " --sched %s", g->sched == GEN_SCHED_FREE ?
			      "free" : g->sched == GEN_SCHED_PCT ? "pct" : "serial");
	if (pct)
		snprintf(buf + n, len - (size_t)n, " --pct %llu --pct-runs 1 --depth %u",
			 (unsigned long long)pct, g->depth);
}

/* A failing program: say so, replay command, shrink, print the program and the test case.
 * nr_run: programs run so far, this one included; t_found: ms since the start, t_search: the
 * same less the time earlier reports took (how long this kind took to find). */
static void report(const struct gen_opts *g, const struct gen_prog *p, const struct gen_verdict *v,
		   u64 pct, unsigned int nr_run, u64 t_found, u64 t_search)
{
	static struct gen_prog s;
	struct gen_opts gs = *g;
	struct gen_verdict fv;
	char cmd[256];
	u64 t0 = now_ms(), pf = 0;

	replay_cmd(cmd, sizeof(cmd), g, p, pct);
	printf("gen: FOUND %s: seed %llu%s, program %u, after %.1f s (%.1f s searching): %s\n",
	       v->fail_class, (unsigned long long)p->seed, pct ? " (PCT)" : v->free_sched ?
	       " (free-running: replays only now and then)" : "", nr_run, (double)t_found / 1000,
	       (double)t_search / 1000, v->message);
	printf("gen: replay: %s\n", cmd);
	s = *p;
	if (v->free_sched) {	/* shrink on free-running runs only, a few of them each time */
		gs.pct_runs = 0;
		gs.free_runs = 6;
	} else {		/* the failing PCT seed first (each phase's seed stays while the
				 * phase does), then one more; no free-running run */
		gs.pct_runs = 2;
		gs.free_runs = 0;
	}
	g = &gs;
	if (g->shrink) {
		shrink(g, &s, v->fail_class, &pct);
		printf("gen: shrunk from %u ops to %u in %.1f s (%u runs)\n", p->nr_ops, s.nr_ops,
		       (double)(now_ms() - t0) / 1000, shrink_budget.tries);
	}
	print_program(stdout, &s);
	printf("--- the shrunk program (mmtest --gen --replay FILE runs it) ---\n");
	gen_program_write(stdout, &s);
	printf("--- end of program ---\n");
	child_run(g, &s, pct ? pct : s.seed, pct ? g->pct_runs : 1, &fv, &pf);
	if (!fv.failed) {
		printf("gen: (the shrunk program passed when run again: flaky; the unshrunk seed is "
		       "the evidence)\n");
		return;
	}
	if (pf)
		pct = pf;
	for (unsigned int i = 0; i < s.nr_ops; i++) {
		gen_res[i].ran = out->ran[i];
		gen_res[i].ret = out->ret[i];
		gen_res[i].exp = out->exp[i];
	}
	printf("--- test case: paste into tests/host/ (a new file, or a suite's cases[]) ---\n");
	{
		struct gen_run_opts o = run_opts(g, &s, pct);

		o.pct_seed = pct;
		gen_emit_test(stdout, &s, &o, &fv);
	}
	printf("--- end of test case ---\n");
}

static int parse_args(struct gen_opts *g, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool n = i + 1 < argc;

		if (!strcmp(a, "--seed") && n)
			g->seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seeds") && n)
			g->seeds = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seconds") && n)
			g->seconds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--ops") && n)
			g->params.nr_ops = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--cpus") && n)
			g->params.max_cpus = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--pct-runs") && n)
			g->pct_runs = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--free-runs") && n)
			g->free_runs = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--depth") && n)
			g->depth = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--pct") && n)
			g->pct_seed = strtoull(argv[++i], NULL, 0), g->pct_given = true;
		else if (!strcmp(a, "--timeout") && n)
			g->timeout = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--shrink-seconds") && n)
			g->shrink_seconds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--sched") && n) {
			const char *v = argv[++i];

			g->sched_given = true;
			g->sched = !strcmp(v, "free") ? GEN_SCHED_FREE : !strcmp(v, "pct") ?
				   GEN_SCHED_PCT : GEN_SCHED_SERIAL;
		} else if (!strcmp(a, "--replay") && n)
			g->replay = argv[++i];
		else if (!strcmp(a, "--no-shrink"))
			g->shrink = false;
		else if (!strcmp(a, "--inproc"))
			g->inproc = true;
		else if (!strcmp(a, "--keep-going"))
			g->keep_going = true;
		else if (!strcmp(a, "--verify-alone"))
			g->params.verify_alone = true;
		else if (!strcmp(a, "--list"))
			g->list_only = g->print = true;
		else if (!strcmp(a, "--print"))
			g->print = true;
		else if (!strcmp(a, "-v"))
			g->verbose = true;
		else
			return -1;
	}
	return 0;
}

int gen_main(int argc, char **argv)
{
	static struct gen_prog prog;
	static char found[32][64];
	struct gen_opts g = { .seed = 1, .seeds = 1, .params = { .nr_ops = 120 }, .pct_runs = 2,
			      .free_runs = 1, .depth = 3, .shrink = true, .timeout = 120, .shrink_tries = 600,
			      .shrink_seconds = 240, .progress = 30 };
	unsigned int nr_found = 0, failed = 0, passed = 0;
	u64 start = now_ms(), last = start, t_reports = 0;

	if (!argc || parse_args(&g, argc, argv)) {	/* no option: the usage */
		usage();
		return 2;
	}
	g.params.max_cpus = MIN(g.params.max_cpus, (unsigned int)GEN_CPUS);
	if (!g.seeds || (g.seconds && g.seeds == 1))
		g.seeds = ~0ull;	/* until --seconds, or forever */
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("gen: seeds from %llu, %u ops each, phases of %s CPUs, %s\n",
	       (unsigned long long)g.seed, g.params.nr_ops, g.params.max_cpus ? "up to the given" :
	       "1 to 4 (by seed)", g.sched_given ? (g.sched == GEN_SCHED_FREE ? "free-running" :
	       g.sched == GEN_SCHED_PCT ? "PCT" : "serial") : "PCT for phases");
	if (g.replay) {
		FILE *f = fopen(g.replay, "r");

		if (!f || gen_program_read(f, &prog)) {
			printf("gen: %s: not a program\n", g.replay);
			return 2;
		}
		fclose(f);
		g.seeds = 1;
	}
	for (u64 s = g.seed; s - g.seed < g.seeds; s++) {
		struct gen_verdict v;
		u64 pct = 0;
		bool known = false;

		if (g.seconds && now_ms() - start >= (u64)g.seconds * 1000)
			break;
		if (!g.replay)
			gen_program(&prog, s, &g.params);
		if (g.print)
			print_program(stdout, &prog);
		if (g.list_only)
			continue;
		child_run(&g, &prog, g.pct_given ? g.pct_seed : s, g.pct_runs, &v, &pct);
		if (!v.failed) {
			passed++;
		} else {
			failed++;
			for (unsigned int k = 0; k < nr_found; k++)
				known |= !strcmp(found[k], v.fail_class);
			if (known) {
				printf("gen: seed %llu fails again: %s (op %d)\n", (unsigned long long)s,
				       v.fail_class, v.op);
			} else {
				if (nr_found < ARRAY_SIZE(found))
					strcpy(found[nr_found++], v.fail_class);
				u64 t = now_ms();

				report(&g, &prog, &v, pct, passed + failed, t - start,
				       t - start - t_reports);
				t_reports += now_ms() - t;
			}
			if (!g.keep_going)
				break;
		}
		if (now_ms() - last >= (u64)g.progress * 1000) {
			last = now_ms();
			printf("gen: %.0f s: %u programs, %u failed (%u kinds)\n",
			       (double)(last - start) / 1000, passed + failed, failed, nr_found);
		}
	}
	printf("gen: %u programs in %.1f s: %u failed", passed + failed,
	       (double)(now_ms() - start) / 1000, failed);
	for (unsigned int k = 0; k < nr_found; k++)
		printf("%s%s", k ? ", " : " (", found[k]);
	printf("%s\n%u passed, %u failed, 0 skipped\n", nr_found ? ")" : "", passed, failed);
	return failed ? 1 : 0;
}
