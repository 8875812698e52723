/* Windows for the c2c plugin: tests/bench/c2c.h. */
#include "tests/bench/c2c.h"
#include "kernel/arch.h"
#include "kernel/printk.h"
#include "kernel/smp.h"

static unsigned int c2c_windows;	/* the plugin numbers windows the same way, from 1 */

unsigned int c2c_window(const char *name, const char *json, smp_call_fn fn, void *arg)
{
	unsigned int n = ++c2c_windows;

	printk("C2C {\"window\":%u,\"name\":\"%s\",\"cpus\":%u%s%s}\n", n, name, nr_cpus_online(),
	       json ? "," : "", json ? json : "");
	c2c_window_begin();
	smp_run_on_all(fn, arg);
	c2c_window_end();
	return n;
}

void c2c_barrier(int *arrived)
{
	int cpus = (int)nr_cpus_online();

	__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(arrived) < cpus)
		arch_cpu_relax();
	c2c_cpu_sync();
}

void c2c_window_result(unsigned int window, const char *json)
{
	printk("C2C {\"window\":%u,%s}\n", window, json);
}

void c2c_object(const char *name, const void *addr, unsigned long size)
{
	printk("C2C {\"object\":\"%s\",\"phys\":%llu,\"size\":%lu}\n", name,
	       (unsigned long long)arch_virt_to_phys(addr), size);
}
