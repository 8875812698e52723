/*
 * Printing a failing (shrunk) program as a test case for tests/host/: a new file there,
 * test_<name>.c, with one case named <api>_<scenario>, the program's ops as plain
 * mm API calls on the same CPUs, each result checked as the model expects it, the check that
 * failed, and the release of everything at the end. Only the ops that ran are printed.
 */
#include <string.h>
#include "tests/gen/gen_internal.h"

/* What the printed code has to track: references, orders, pin kinds, disabled zones (at the
 * end), and, for each op, what it needs of them (track(), in program order, before printing). */
static struct {
	u8 blk_order[GEN_BLOCKS], blk_refs[GEN_BLOCKS], grp_order[GEN_GROUPS];
	bool blk_used[GEN_BLOCKS], grp_used[GEN_GROUPS], pin_used[GEN_PINS], pin_get[GEN_PINS];
	int depth[GEN_NODE_ZONES];
	bool deferred, deferred_alone;
	u8 op_order[GEN_MAX_OPS], op_refs[GEN_MAX_OPS];
	bool op_get[GEN_MAX_OPS];
} E;

/* Is op i a step of its own (not part of a phase)? */
static bool step_alone(const struct gen_prog *p, unsigned int i)
{
	return !p->ops[i].join && (i + 1 >= p->nr_ops || !p->ops[i + 1].join);
}

static void track(const struct gen_prog *p, const struct gen_run_opts *o)
{
	memset(&E, 0, sizeof(E));
	for (unsigned int i = 0; i < p->nr_ops; i++) {
		const struct gen_op *op = &p->ops[i];

		if (!gen_res[i].ran)
			continue;
		switch (op->kind) {
		case GEN_ALLOC:
			E.blk_order[op->slot] = op->order;
			E.blk_refs[op->slot] = 0;
			E.blk_used[op->slot] = true;
			break;
		case GEN_FREE:
			E.op_order[i] = E.blk_order[op->slot];
			E.op_refs[i] = E.blk_refs[op->slot];
			E.blk_refs[op->slot] = 0;
			break;
		case GEN_REF:
			E.blk_refs[op->slot] += op->flags ? 1 : -1;
			break;
		case GEN_FILL:
			E.grp_order[op->slot] = op->order;
			E.grp_used[op->slot] = true;
			break;
		case GEN_FREE_SOME:
			E.op_order[i] = E.grp_order[op->slot];
			break;
		case GEN_PIN:
			E.pin_used[op->slot] = true;
			E.pin_get[op->slot] = op->flags & GEN_PIN_GET;
			break;
		case GEN_UNPIN:
			E.op_get[i] = E.pin_get[op->slot];
			break;
		case GEN_PCP_DISABLE: case GEN_PCP_ENABLE:
			E.depth[op->node] += op->kind == GEN_PCP_DISABLE ? 1 : -1;
			break;
		case GEN_DEFERRED_INIT:
			E.deferred = true;
			E.deferred_alone |= o->sched == GEN_SCHED_SERIAL || step_alone(p, i);
			break;
		}
	}
}

static const char *api_name(const struct gen_op *op)
{
	static const char *const drains[] = { "drain_local_pages", "drain_cpu_pages",
					      "drain_all_pages", "drain_all_pages_machine" };

	switch (op->kind) {
	case GEN_ALLOC: case GEN_FILL: return "alloc_pages_node";
	case GEN_FREE: case GEN_FREE_SOME: return "free_pages";
	case GEN_REF: return op->flags ? "get_page" : "put_page";
	case GEN_MM_CREATE: return "mm_create";
	case GEN_MM_DESTROY: return "mm_destroy";
	case GEN_MMAP: return "mm_mmap_anon";
	case GEN_MUNMAP: return "mm_munmap";
	case GEN_FAULT: return "handle_mm_fault";
	case GEN_WRITE: case GEN_READ: return "get_user_pages_fast";
	case GEN_PIN: return (op->flags & GEN_PIN_GET) ? "get_user_pages_fast" :
			     (op->flags & GEN_PIN_SLOW) ? "pin_user_pages" : "pin_user_pages_fast";
	case GEN_UNPIN: return "unpin_user_pages";
	case GEN_DRAIN: return drains[op->flags & 3];
	case GEN_PCP_DISABLE: return "zone_pcp_disable";
	case GEN_PCP_ENABLE: return "zone_pcp_enable";
	case GEN_PCP_UPDATE: return "zone_pcp_update";
	case GEN_FAIL: return "fail_page_alloc";
	case GEN_VERIFY: return "mm_verify";
	default: return "deferred_init_memmap";
	}
}

/* What the case shows, in the words of its name. */
static const char *scenario(const struct gen_verdict *v, const struct gen_op *op)
{
	static const struct { const char *cls, *what; } names[] = {
		{ "mapping", "maps_what_the_vmas_say" },
		{ "mapping-huge", "maps_a_huge_region_whole_or_not_at_all" },
		{ "rss", "keeps_rss_equal_to_the_pages_mapped" },
		{ "vma-table-full", "that_needs_a_vma_too_many_changes_nothing" },
		{ "vma-table", "leaves_the_vmas_linux_would" },
		{ "data", "keeps_each_pages_data" },
		{ "alloc-must-succeed", "succeeds_while_free_pages_remain" },
		{ "counter-remote_home", "counts_every_page_sent_home" },
		{ "conservation", "loses_no_page" },
		{ "mm_verify", "leaves_mm_verify_clean" },
		{ "bad-page", "reports_no_bad_page" },
		{ "gup-longterm-count", "pins_every_page_longterm" },
		{ "gup-count", "returns_the_pages_asked_for" },
		{ "fault", "returns_what_the_vma_allows" },
		{ "mmap", "returns_what_the_arguments_allow" },
		{ "drain", "empties_the_lists" },
		{ "pcp-disabled", "keeps_a_disabled_zone_empty" },
		{ "warn", "warns_not" },
		{ "asan", "stays_in_bounds" },
		{ "ubsan", "stays_defined" },
		{ "tsan", "does_not_race" },
		{ "hang", "returns" },
		{ "panic", "does_not_panic" },
	};

	if (!strcmp(v->fail_class, "fail_page_alloc-counters"))
		return op->kind == GEN_ALLOC && op->order > MAX_ORDER ?
		       "above_max_order_is_refused_before_fault_injection" : "counts_injections_once";
	for (unsigned int k = 0; k < ARRAY_SIZE(names); k++)
		if (!strncmp(v->fail_class, names[k].cls, strlen(names[k].cls)) &&
		    (v->fail_class[strlen(names[k].cls)] == '\0' || v->fail_class[strlen(names[k].cls)] == ':'))
			return names[k].what;
	return "matches_the_model";
}

static void zone_expr(char *buf, size_t len, u8 zid)
{
	snprintf(buf, len, "&s.m->node[%u]->node_zones[%u]", zid / MAX_NR_ZONES, zid % MAX_NR_ZONES);
}

static const char *gfp_expr(const struct gen_op *op, bool nowarn)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%s%s", gen_gfps[op->gfp].name, nowarn ? " | __GFP_NOWARN" : "");
	return buf;
}

static void emit_gup(FILE *f, const struct gen_prog *p, unsigned int i, const char *in)
{
	const struct gen_op *op = &p->ops[i];
	u64 a = GEN_WIN_BASE + (u64)op->addr * PAGE_SIZE;

	if (op->kind == GEN_FAULT) {
		fprintf(f, "%ss.ret[%u] = handle_mm_fault(s.mm[%u], 0x%llx);\n", in, i, op->mm,
			(unsigned long long)a);
		return;
	}
	if (op->kind == GEN_PIN) {
		unsigned int foll = ((op->flags & GEN_PIN_WRITE) ? FOLL_WRITE : 0);
		const char *fl = (op->flags & GEN_PIN_WRITE) ? ((op->flags & GEN_PIN_LONG) ?
				 "FOLL_WRITE | FOLL_LONGTERM" : "FOLL_WRITE") :
				 (op->flags & GEN_PIN_LONG) ? "FOLL_LONGTERM" : "0";

		(void)foll;
		fprintf(f, "%ss.ret[%u] = s.pin_n[%u] = %s(s.mm[%u], 0x%llx, %u, %s, s.pin[%u]);\n",
			in, i, op->slot, api_name(op), op->mm, (unsigned long long)a, op->len, fl,
			op->slot);
		return;
	}
	fprintf(f, "%ss.ret[%u] = get_user_pages_fast(s.mm[%u], 0x%llx, %u, %s, s.pages[%u]);\n", in,
		i, op->mm, (unsigned long long)a, op->len, op->kind == GEN_WRITE ? "FOLL_WRITE" : "0",
		op->cpu);
	if (op->kind == GEN_WRITE)
		fprintf(f, "%sfor (long k = 0; k < s.ret[%u]; k++)\n"
			"%s\tgen_store_tag(page_address(s.pages[%u][k]), GEN_TAG(%u, k));\n",
			in, i, in, op->cpu, i);
	fprintf(f, "%sif (s.ret[%u] > 0)\n%s\tput_user_pages(s.pages[%u], (unsigned long)s.ret[%u]);\n",
		in, i, in, op->cpu, i);
}

static void emit_op(FILE *f, const struct gen_prog *p, unsigned int i, const char *in)
{
	const struct gen_op *op = &p->ops[i];
	char z[64];
	u64 start, len;

	zone_expr(z, sizeof(z), op->node);
	gen_op_range(op, &start, &len);
	switch (op->kind) {
	case GEN_ALLOC:
		fprintf(f, "%ss.blk[%u] = alloc_pages_node(s.m->node[%u], %s, %u);\n", in, op->slot,
			op->node, gfp_expr(op, op->flags), op->order);
		break;
	case GEN_FREE:
		for (unsigned int r = 0; r < E.op_refs[i]; r++)
			fprintf(f, "%sput_page(s.blk[%u]);\n", in, op->slot);
		fprintf(f, "%s__free_pages(s.blk[%u], %u);\n%ss.blk[%u] = NULL;\n", in, op->slot,
			E.op_order[i], in, op->slot);
		break;
	case GEN_REF:
		fprintf(f, "%s%s(s.blk[%u]);\n", in, op->flags ? "get_page" : "put_page", op->slot);
		break;
	case GEN_FILL:
		fprintf(f, "%swhile (s.grp_n[%u] < %u &&\n%s       (s.grp[%u][s.grp_n[%u]] = "
			"alloc_pages_node(s.m->node[%u], %s, %u)))\n%s\ts.grp_n[%u]++;\n", in, op->slot,
			GEN_FILL_MAX >> op->order, in, op->slot, op->slot, op->node,
			gfp_expr(op, true), op->order, in, op->slot);
		break;
	case GEN_FREE_SOME:
		fprintf(f, "%sfor (unsigned int k = 0; k < %u && s.grp_n[%u]; k++)\n"
			"%s\t__free_pages(s.grp[%u][--s.grp_n[%u]], %u);\n", in, op->len, op->slot, in,
			op->slot, op->slot, E.op_order[i]);
		break;
	case GEN_MM_CREATE:
		fprintf(f, "%ss.mm[%u] = mm_create(s.m->node[%u]);\n", in, op->slot, op->node);
		break;
	case GEN_MM_DESTROY:
		fprintf(f, "%smm_destroy(s.mm[%u]);\n%ss.mm[%u] = NULL;\n", in, op->slot, in, op->slot);
		break;
	case GEN_MMAP:
		fprintf(f, "%ss.ret[%u] = mm_mmap_anon(s.mm[%u], 0x%llx, 0x%llx, %s, %s, %s);\n", in,
			i, op->mm, (unsigned long long)start, (unsigned long long)len,
			(op->flags & GEN_MAP_WRITE) ? "true" : "false",
			(op->flags & GEN_MAP_HUGE) ? "true" : "false",
			(op->flags & GEN_MAP_POP) ? "true" : "false");
		break;
	case GEN_MUNMAP:
		fprintf(f, "%ss.ret[%u] = mm_munmap(s.mm[%u], 0x%llx, 0x%llx);\n", in, i, op->mm,
			(unsigned long long)start, (unsigned long long)len);
		break;
	case GEN_FAULT: case GEN_WRITE: case GEN_READ: case GEN_PIN:
		emit_gup(f, p, i, in);
		break;
	case GEN_UNPIN:
		fprintf(f, "%s%s(s.pin[%u], (unsigned long)s.pin_n[%u]);\n%ss.pin_n[%u] = 0;\n", in,
			E.op_get[i] ? "put_user_pages" : "unpin_user_pages", op->slot, op->slot,
			in, op->slot);
		break;
	case GEN_DRAIN:
		switch (op->flags & 3) {
		case GEN_DRAIN_LOCAL: fprintf(f, "%sdrain_local_pages(%s);\n", in, z); break;
		case GEN_DRAIN_CPU: fprintf(f, "%sdrain_cpu_pages(s.m, %u);\n", in, op->len % GEN_CPUS); break;
		case GEN_DRAIN_ZONE: fprintf(f, "%sdrain_all_pages(%s);\n", in, z); break;
		default: fprintf(f, "%sdrain_all_pages_machine(s.m);\n", in);
		}
		break;
	case GEN_PCP_DISABLE: case GEN_PCP_ENABLE:
		fprintf(f, "%s%s(%s);\n", in, api_name(op), z);
		break;
	case GEN_PCP_UPDATE:
		fprintf(f, "%szone_pcp_update(s.m->node[%u], %u);\n", in, op->node, op->len);
		break;
	case GEN_FAIL:
		if (op->flags)
			fprintf(f, "%sfail_page_alloc_configure(&(struct fault_attr){ .interval = %u, "
				".probability = %u, .times = %d,\n%s\t.min_order = %u, .seed = %lluull });\n",
				in, op->addr, op->len, op->slot ? op->slot : -1, in, op->order,
				(unsigned long long)op->wild);
		else
			fprintf(f, "%sfail_page_alloc_configure(NULL);\n", in);
		break;
	case GEN_VERIFY:
		fprintf(f, "%ss.ret[%u] = (long)mm_verify(s.m->node[%u]);\n", in, i, op->node);
		break;
	case GEN_DEFERRED_INIT:
		fprintf(f, "%sdeferred_init_memmap(s.m->node[%u]);\n", in, op->node);
		break;
	}
}

/* The model's expectation of op i, as a check after its step (unless the failing check is
 * that one). */
static void emit_expect(FILE *f, const struct gen_prog *p, unsigned int i, const char *check)
{
	const struct gen_op *op = &p->ops[i];
	const struct gen_exp *e = &gen_res[i].exp;
	char what[32];

	if (op->kind == GEN_ALLOC)
		snprintf(what, sizeof(what), "s.blk[%u]", op->slot);
	else if (op->kind == GEN_MM_CREATE)
		snprintf(what, sizeof(what), "s.mm[%u]", op->slot);
	else
		snprintf(what, sizeof(what), "s.ret[%u]", i);
	if (check && strstr(check, what))
		return;
	switch (e->kind) {
	case EXP_EQ:
		fprintf(f, "\tKT_EXPECT_EQ(t, %s, %ld);\n", what, e->a);
		break;
	case EXP_RANGE:
		fprintf(f, "\tKT_EXPECT_TRUE(t, (%s >= %ld && %s <= %ld) || %s == %ld);\n", what, e->a,
			what, e->b, what, e->c ? e->c : e->a);
		break;
	case EXP_NULL:
		fprintf(f, "\tKT_EXPECT_NULL(t, %s);\n", what);
		break;
	case EXP_NONNULL:
		fprintf(f, "\tKT_EXPECT_NOT_NULL(t, %s);\n", what);
		break;
	}
}

/* A step that needs CPU threads: its function, ops by CPU. */
static void emit_step_fn(FILE *f, const struct gen_prog *p, unsigned int first, unsigned int n,
			 unsigned int nr)
{
	fprintf(f, "static void *step%u(void *arg)\n{\n\tgen_wait_cpus();\n\tswitch (arch_cpu_id()) {\n", nr);
	for (unsigned int cpu = 0; cpu < GEN_CPUS; cpu++) {
		bool any = false;

		for (unsigned int i = first; i < first + n; i++)
			any |= gen_res[i].ran && p->ops[i].cpu == cpu;
		if (!any)
			continue;
		fprintf(f, "\tcase %u:\n", cpu);
		for (unsigned int i = first; i < first + n; i++)
			if (gen_res[i].ran && p->ops[i].cpu == cpu)
				emit_op(f, p, i, "\t\t");
		fprintf(f, "\t\tbreak;\n");
	}
	fprintf(f, "\t}\n\treturn NULL;\n}\n\n");
}

static unsigned int step_top(const struct gen_prog *p, unsigned int first, unsigned int n)
{
	unsigned int top = 0;

	for (unsigned int i = first; i < first + n; i++)
		if (gen_res[i].ran)
			top = MAX(top, (unsigned int)p->ops[i].cpu);
	return top;
}

static unsigned int step_len(const struct gen_prog *p, const struct gen_run_opts *o,
			     unsigned int first)
{
	return o->sched == GEN_SCHED_SERIAL ? 1 : gen_phase_len(p, first);
}

static void emit_header(FILE *f, const struct gen_prog *p, const struct gen_run_opts *o,
			const struct gen_verdict *v, const char *name, bool threads)
{
	fprintf(f, "/*\n * %s: found by the mm API generator (tests/gen), program seed %llu, "
		"shrunk to %u ops.\n * %s: %s\n", name, (unsigned long long)p->seed, p->nr_ops,
		v->fail_class, v->message);
	if (v->free_sched)
		fprintf(f, " * Its phases race: it failed on free-running threads (not every run "
			"does).\n");
	else if (o->sched == GEN_SCHED_PCT)
		fprintf(f, " * Its phases race: the failing schedule is PCT seed %llu, depth %u, each "
			"phase a PCT run of its\n * own; replay it exactly with mmtest --gen --replay "
			"FILE --pct %llu --pct-runs 1, FILE holding:\n", (unsigned long long)o->pct_seed,
			o->pct_depth, (unsigned long long)o->pct_seed);
	if (o->sched == GEN_SCHED_PCT || v->free_sched) {
		char buf[256];
		FILE *m = fmemopen(NULL, 1 << 16, "w+");

		gen_program_write(m, p);
		rewind(m);
		while (fgets(buf, sizeof(buf), m))
			fprintf(f, " *   %s", buf);
		fclose(m);
	}
	fprintf(f, " */\n#include <string.h>\n#include \"tests/host/harness.h\"\n"
		"#include \"tests/gen/mm_gen.h\"\n#include \"mm/fail_page_alloc.h\"\n");
	if (threads)
		fprintf(f, "#include \"kernel/smp.h\"\n");
	fprintf(f, "\n/* The program's handles, shared with the CPU threads of its steps. */\n"
		"static struct {\n\tstruct mm_machine *m;\n\tstruct mm_struct *mm[GEN_MMS];\n"
		"\tstruct page *blk[GEN_BLOCKS];\n\tstruct page *pages[GEN_CPUS][GEN_PIN_MAX];\n"
		"\tstruct page *pin[GEN_PINS][GEN_PIN_MAX];\n\tlong pin_n[GEN_PINS];\n"
		"\tstruct page *grp[GEN_GROUPS][GEN_FILL_MAX];\n\tunsigned int grp_n[GEN_GROUPS];\n"
		"\tlong ret[%u];\n} s;\n\n", p->nr_ops);
	if (strstr(v->check_c, "probe("))
		fprintf(f, "/* 1 if addr is mapped in mm (gup's lockless walk finds a page), else "
			"-EFAULT. */\nstatic long probe(struct mm_struct *mm, u64 addr)\n{\n"
			"\tstruct page *page;\n\tlong n = get_user_pages_fast(mm, addr, 1, "
			"FOLL_FAST_ONLY, &page);\n\n\tif (n == 1)\n\t\tput_user_pages(&page, 1);\n"
			"\treturn n;\n}\n\n");
	if (strstr(v->check_c, "peek("))
		fprintf(f, "/* The first word of the page mapped at addr (0 if none). */\n"
			"static u64 peek(struct mm_struct *mm, u64 addr)\n{\n\tstruct page *page;\n"
			"\tu64 w;\n\n\tif (get_user_pages_fast(mm, addr, 1, FOLL_FAST_ONLY, &page) != 1)\n"
			"\t\treturn 0;\n\tw = *(u64 *)page_address(page);\n\tput_user_pages(&page, 1);\n"
			"\treturn w;\n}\n\n");
}

static void emit_release(FILE *f)
{
	fprintf(f, "\t/* Release everything; then every page must be free again. */\n");
	for (unsigned int k = 0; k < GEN_PINS; k++)
		if (E.pin_used[k])
			fprintf(f, "\tif (s.pin_n[%u] > 0)\n\t\t%s(s.pin[%u], (unsigned long)s.pin_n[%u]);\n",
				k, E.pin_get[k] ? "put_user_pages" : "unpin_user_pages", k, k);
	for (unsigned int k = 0; k < GEN_BLOCKS; k++)
		if (E.blk_used[k]) {
			fprintf(f, "\tif (s.blk[%u]) {\n", k);
			for (unsigned int r = 0; r < E.blk_refs[k]; r++)
				fprintf(f, "\t\tput_page(s.blk[%u]);\n", k);
			fprintf(f, "\t\t__free_pages(s.blk[%u], %u);\n\t}\n", k, E.blk_order[k]);
		}
	for (unsigned int k = 0; k < GEN_GROUPS; k++)
		if (E.grp_used[k])
			fprintf(f, "\twhile (s.grp_n[%u])\n\t\t__free_pages(s.grp[%u][--s.grp_n[%u]], %u);\n",
				k, k, k, E.grp_order[k]);
	fprintf(f, "\tfor (int k = 0; k < GEN_MMS; k++)\n\t\tif (s.mm[k])\n\t\t\tmm_destroy(s.mm[k]);\n");
	for (unsigned int z = 0; z < GEN_NODE_ZONES; z++)
		for (int d = 0; d < E.depth[z]; d++)
			fprintf(f, "\tzone_pcp_enable(&s.m->node[%u]->node_zones[%u]);\n", z / MAX_NR_ZONES,
				z % MAX_NR_ZONES);
	fprintf(f, "\tfail_page_alloc_configure(NULL);\n\tdrain_all_pages_machine(s.m);\n"
		"\tKT_EXPECT_EQ(t, machine_free_pages(s.m), machine_managed_pages(s.m));\n"
		"\tKT_EXPECT_EQ(t, mm_verify_machine(s.m), 0);\n\tgen_machine_destroy();\n");
}

/* The failing check, after the op (or the step) where the run failed. */
static void emit_check(FILE *f, const struct gen_verdict *v)
{
	const char *c = v->check_c;

	if (!*c) {
		fprintf(f, "\t/* The model's check here failed: %s */\n\tKT_EXPECT_EQ(t, "
			"mm_verify_machine(s.m), 0);\n", v->message);
		return;
	}
	fprintf(f, "\t/* The model: %s */\n", v->message);
	if (v->check_pre[0])
		fprintf(f, "\tfail_page_alloc_read_stats(&fpa1);\n");
	if (strstr(c, "&st)"))
		fprintf(f, "\t{\n\t\tstruct numa_stats st;\n\n");
	for (const char *l = c; *l;) {
		size_t n = strcspn(l, "\n");

		fprintf(f, "%s\t%.*s\n", strstr(c, "&st)") ? "\t" : "", (int)n, l);
		l += n + (l[n] == '\n');
	}
	if (strstr(c, "&st)"))
		fprintf(f, "\t}\n");
}

void gen_emit_test(FILE *f, const struct gen_prog *p, const struct gen_run_opts *o,
		   const struct gen_verdict *v)
{
	const struct gen_op *fop = &p->ops[v->op >= 0 && (unsigned int)v->op < p->nr_ops ? v->op : 0];
	char name[160];
	bool threads = false, concurrent = false;
	unsigned int nr = 0;

	track(p, o);
	snprintf(name, sizeof(name), "%s_%s", api_name(fop), scenario(v, fop));
	for (unsigned int i = 0; i < p->nr_ops; i += step_len(p, o, i)) {
		threads |= step_top(p, i, step_len(p, o, i)) > 0;
		concurrent |= step_len(p, o, i) > 1;
	}
	emit_header(f, p, o, v, name, threads);
	for (unsigned int i = 0; i < p->nr_ops; i += step_len(p, o, i), nr++)
		if (step_top(p, i, step_len(p, o, i)))
			emit_step_fn(f, p, i, step_len(p, o, i), nr);
	fprintf(f, "static void %s(struct ktest *t)\n{\n\tstatic const struct gen_config cfg = "
		"{ .nr_nodes = %u, .lock_model = %s, .deferred = %u };\n", name, p->cfg.nr_nodes,
		p->cfg.lock_model == PCP_LOCK_IRQOFF ? "PCP_LOCK_IRQOFF" :
		p->cfg.lock_model == PCP_LOCK_IRQSAVE ? "PCP_LOCK_IRQSAVE" : "PCP_LOCK_TRYLOCK",
		p->cfg.deferred);
	if (threads)
		fprintf(f, "\tvoid *cpus[GEN_CPUS] = { NULL };\n");
	if (v->check_pre[0])
		fprintf(f, "\tstruct fail_page_alloc_stats fpa0, fpa1;\n");
	if (E.deferred_alone)
		fprintf(f, "\tbool deferred_done = false;\n");
	fprintf(f, "\n\tmemset(&s, 0, sizeof(s));\n\ts.m = gen_machine_create(&cfg);\n"
		"\tKT_ASSERT_NOT_NULL(t, s.m);\n");
	nr = 0;
	for (unsigned int i = 0; i < p->nr_ops; i += step_len(p, o, i), nr++) {
		unsigned int n = step_len(p, o, i), top = step_top(p, i, n);
		bool failing = v->op >= (int)i && v->op < (int)(i + n);

		if (failing && v->check_pre[0])
			fprintf(f, "\t%s\n", v->check_pre);
		if (top) {
			fprintf(f, "\tgen_run_on_cpus(%u, step%u, cpus, sizeof(cpus[0]));\n", top + 1, nr);
		} else {
			for (unsigned int k = i; k < i + n; k++)
				if (gen_res[k].ran)
					emit_op(f, p, k, "\t");
		}
		for (unsigned int k = i; k < i + n; k++)
			if (gen_res[k].ran && p->ops[k].kind == GEN_DEFERRED_INIT && n == 1)
				fprintf(f, "\tif (!deferred_done && !machine_deferred_pages(s.m)) {\n"
					"\t\tdeferred_init_done(s.m);\n\t\tdeferred_done = true;\n\t}\n");
		for (unsigned int k = i; k < i + n; k++)
			if (gen_res[k].ran)
				emit_expect(f, p, k, failing ? v->check_c : NULL);
		if (failing) {
			emit_check(f, v);
			break;
		}
	}
	emit_release(f);
	fprintf(f, "}\n\nstatic const struct ktest_case %s_cases[] = {\n\t%s(%s),\n};\n"
		"KTEST_SUITE(gen_%s, %s_cases);\n", name,
		concurrent ? "KTEST_CASE_CONCURRENT" : "KTEST_CASE", name, name, name);
}
