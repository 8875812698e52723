/*
 * Windows for the c2c plugin (tests/c2c/, docs/c2c.md): a benchmark runs a function on every
 * CPU inside a window and names it on the console, where tests/c2c/report.py finds it.
 * Without the plugin a window costs four NOPs and two console lines.
 */
#ifndef BENCH_C2C_H
#define BENCH_C2C_H

#include "kernel/compiler.h"
#include "kernel/smp.h"
#include "mm/mm.h"
#include "tests/c2c/c2c_mark.h"

/*
 * Print `C2C {"window":N,"name":NAME,<json>}`, open window N, run fn(arg) on every online
 * CPU (smp_run_on_all()), close it. fn must call c2c_cpu_begin() and c2c_cpu_end() once on
 * every CPU, around its part only (what it reads before begin is not counted). json: more
 * fields (without braces), or NULL. Returns N.
 */
unsigned int c2c_window(const char *name, const char *json, smp_call_fn fn, void *arg);

/*
 * Inside a window's function, on every CPU: wait until all online CPUs have come here
 * (*arrived counts them; zero it before the window), then leave together in the model's
 * time too (c2c_cpu_sync()).
 */
void c2c_barrier(int *arrived);

/* After a window: `C2C {"window":N,<json>}` (results the report needs, e.g. operations). */
void c2c_window_result(unsigned int window, const char *json);

/* `C2C {"object":NAME,"phys":P,"size":S}`: a dynamic object's physical range, by which the
 * report names the lines inside it (struct pages, per-CPU lists, an mm). */
void c2c_object(const char *name, const void *addr, unsigned long size);
/* The same with its C type ("struct zone", "struct page"), by which tests/c2c/layout.py
 * names the field at each offset (an array of them: the element's index too). */
void c2c_object_type(const char *name, const char *type, const void *addr, unsigned long size);

/* The same for a node's zones (each one, its lock, free lists and per-CPU lists) and its
 * memory map (struct page), so that the report can name their lines. */
void c2c_node_objects(struct pglist_data *pgdat);

#endif
