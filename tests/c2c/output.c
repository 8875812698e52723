/*
 * The c2c model's counts as text: one JSON line per window (and one for the machine), which
 * tests/c2c/report.py reads. Written by the plugin as it runs and by tests/c2c/replay.c from
 * recorded streams, the same way.
 */
#include "tests/c2c/model.h"

#include <stdlib.h>
#include <string.h>

const char *const c2c_outcome_names[C2C_NR_OUTCOMES] = { "hit", "cold", "hitm", "clean", "upgrade" };

static void write_counts(FILE *out, const struct c2c_counts *n)
{
	fprintf(out, "{\"loads\":%lu,\"stores\":%lu", n->loads, n->stores);
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		fprintf(out, ",\"%s\":[%lu,%lu]", c2c_outcome_names[o], n->outcome[o][0], n->outcome[o][1]);
	fprintf(out, ",\"hitm_loads\":%lu,\"invalidated\":%lu,\"wait_ps\":%lu,\"streamed\":%lu}", n->hitm_loads,
		n->invalidated, n->wait_ps, n->streamed);
}

/* Lines that moved or were invalidated, most transfers first. */
static uint64_t line_weight(const struct c2c_line *l)
{
	return c2c_transfers(&l->n) + l->n.outcome[C2C_UPGRADE][0] + l->n.outcome[C2C_UPGRADE][1];
}

static int by_weight(const void *a, const void *b)
{
	const struct c2c_line *la = *(struct c2c_line *const *)a, *lb = *(struct c2c_line *const *)b;
	uint64_t wa = line_weight(la), wb = line_weight(lb);

	if (wa != wb)
		return wa < wb ? 1 : -1;
	return la->line < lb->line ? -1 : 1;
}

static void write_line(const struct c2c_output *o, const struct c2c_line *l, bool with_pcs)
{
	fprintf(o->out, "{\"phys\":%lu,\"cpus\":%u,\"n\":", (uint64_t)(l->line - 1) << C2C_LINE_SHIFT,
		c2c_mask_weight(&l->touched));
	write_counts(o->out, &l->n);
	if (with_pcs) {
		fprintf(o->out, ",\"pcs\":[");
		for (int i = 0; i < C2C_LINE_PCS && l->pc[i].accesses; i++)
			fprintf(o->out, "%s[%lu,%u,%u]", i ? "," : "", o->pc_of(o->arg, l->pc[i].insn),
				l->pc[i].accesses, l->pc[i].transfers);
		fprintf(o->out, "],\"pc_bytes\":[");
		for (int i = 0; i < C2C_LINE_PCS && l->pc[i].accesses; i++)
			fprintf(o->out, "%s%lu", i ? "," : "", l->pc[i].bytes);
		fprintf(o->out, "],\"pc_other\":%u", l->pc_other);
	}
	fprintf(o->out, "}");
}

/* Transfers by (from, to) CPU: the window's heat map (tests/c2c/pictures.py). */
static void write_pairs(FILE *out, const struct c2c_model *m)
{
	unsigned int n = m->p.nr_cpus;
	bool first = true;

	fprintf(out, ",\"pairs\":[");
	for (unsigned int f = 0; f < n; f++)
		for (unsigned int t = 0; t < n; t++)
			if (m->pairs[f * n + t]) {
				fprintf(out, "%s[%u,%u,%lu]", first ? "" : ",", f, t, m->pairs[f * n + t]);
				first = false;
			}
	fprintf(out, "]");
}

/*
 * The history of the hottest lines (the first MOVES_LINES of hot[]), up to MOVES_PER_LINE
 * moves each, in the order they happened: [ps, from, to, outcome, store] (outcome as
 * c2c_outcome_names[]). "moves_dropped": moves of any line past the model's max_moves.
 */
#define MOVES_LINES 4
#define MOVES_PER_LINE 1000
static void write_moves(FILE *out, const struct c2c_model *m, const struct c2c_line **hot, uint64_t n)
{
	fprintf(out, ",\"moves_dropped\":%lu,\"moves\":[", m->moves_dropped);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t line = hot[i]->line - 1, kept = 0;

		fprintf(out, "%s{\"phys\":%lu,\"moves\":[", i ? "," : "", (uint64_t)line << C2C_LINE_SHIFT);
		for (uint64_t k = 0; k < m->nr_moves && kept < MOVES_PER_LINE; k++) {
			const struct c2c_move *mv = &m->moves[k];

			if (mv->line != line)
				continue;
			fprintf(out, "%s[%lu,%u,%u,%u,%u]", kept++ ? "," : "", mv->t, mv->from, mv->to,
				mv->outcome, mv->store);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]");
}

void c2c_write_window(const struct c2c_output *o, const struct c2c_model *m, unsigned int window,
		      bool overflowed)
{
	const struct c2c_line **hot = malloc((m->nr_lines + 1) * sizeof(*hot));
	uint64_t nr_hot = 0;
	FILE *out = o->out;

	if (!hot)
		abort();
	for (uint64_t s = 0; s < m->nr_slots; s++)
		if (m->lines[s].line && line_weight(&m->lines[s]))
			hot[nr_hot++] = &m->lines[s];
	qsort(hot, nr_hot, sizeof(*hot), by_weight);
	fprintf(out, "{\"window\":%u,\"overflowed\":%s,\"lines_touched\":%lu,\"max_queued\":%lu,\"cut\":%lu,\"spins\":%lu,"
		"\"spins_unanswered\":%lu,\"lock_waits\":%lu,\"forced\":%lu,\"total\":", window,
		overflowed ? "true" : "false", m->nr_lines, m->max_queued, m->cut, m->spins, m->spins_unanswered,
		m->lock_waits, m->forced);
	write_counts(out, &m->total);
	fprintf(out, ",\"cpus\":[");
	for (unsigned int c = 0, first = 1; c < m->p.nr_cpus; c++) {
		const struct c2c_cpu *cpu = &m->cpu[c];

		if (cpu->state == C2C_UNBEGUN)
			continue;
		fprintf(out, "%s{\"cpu\":%u,\"socket\":%u,\"clock\":%lu,\"end_ps\":%lu,\"counted_ps\":%lu,\"n\":",
			first ? "" : ",", c, c2c_socket(&m->p, c), cpu->instructions, cpu->end, cpu->counted_ps);
		write_counts(out, &cpu->n);
		fprintf(out, "}");
		first = 0;
	}
	fprintf(out, "],\"lines\":[");
	for (uint64_t i = 0; i < nr_hot; i++) {
		fprintf(out, "%s", i ? "," : "");
		write_line(o, hot[i], i < o->top_lines);
	}
	fprintf(out, "]");
	write_pairs(out, m);
	write_moves(out, m, hot, nr_hot < MOVES_LINES ? nr_hot : MOVES_LINES);
	fprintf(out, "}\n");
	fflush(out);
	free(hot);
}

const char *const c2c_iclass_names[C2C_NR_ICLASSES] = {
	"plain", "lock", "xchg", "pushf", "popf", "cli", "sti", "string_byte" };

void c2c_write_params(FILE *out, const struct c2c_params *p, const uint64_t *cost_fs)
{
	fprintf(out, "{\"params\":{\"cpus\":%u,\"sockets\":%u,\"threads\":%u,\"line\":%u,\"ps_per_insn\":%lu,"
		"\"clock_div\":%lu,\"mlp\":%u,\"ps\":{", p->nr_cpus, p->sockets, p->threads ? p->threads : 1,
		1u << C2C_LINE_SHIFT, p->ps_per_insn, p->clock_div ? p->clock_div : 1, p->mlp ? p->mlp : 1);
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		fprintf(out, "%s\"%s\":[%lu,%lu]", o ? "," : "", c2c_outcome_names[o], p->ps[o][0], p->ps[o][1]);
	fprintf(out, "},\"cost_fs\":{");
	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		fprintf(out, "%s\"%s\":%lu", k ? "," : "", c2c_iclass_names[k], cost_fs[k]);
	fprintf(out, "}}}\n");
	fflush(out);
}

int c2c_machine_arg(struct c2c_params *p, uint64_t *cost_fs, const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned long a, b;

	if (!eq)
		return -1;
	if (!strncmp(arg, "cpus=", 5))
		return (p->nr_cpus = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "sockets=", 8))
		return (p->sockets = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "threads=", 8))
		return (p->threads = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	if (!strncmp(arg, "mlp=", 4))
		return (p->mlp = (unsigned int)strtoul(eq + 1, NULL, 0)) ? 0 : -1;
	for (int k = 0; k < C2C_NR_ICLASSES; k++)
		if (!strncmp(arg, "cost_", 5) && (size_t)(eq - arg - 5) == strlen(c2c_iclass_names[k]) &&
		    !strncmp(arg + 5, c2c_iclass_names[k], (size_t)(eq - arg - 5)))
			return (cost_fs[k] = strtoull(eq + 1, NULL, 0)) ? 0 : -1;
	for (int o = 0; o < C2C_NR_OUTCOMES; o++)
		if ((size_t)(eq - arg) == strlen(c2c_outcome_names[o]) &&
		    !strncmp(arg, c2c_outcome_names[o], (size_t)(eq - arg)) && sscanf(eq + 1, "%lu:%lu", &a, &b) == 2) {
			p->ps[o][0] = a;
			p->ps[o][1] = b;
			return 0;
		}
	return -1;
}
