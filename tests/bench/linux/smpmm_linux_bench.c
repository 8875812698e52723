// SPDX-License-Identifier: GPL-2.0
/*
 * Linux side of `make bench-linux`: the same alloc+free patterns as smpmm's bench=scaling and
 * bench=page (tests/bench/bench_page.c), run on Debian's Linux and printed as the same BENCH lines,
 * plus a debugfs ioctl that pins a user range the way gup_test does (tests/bench/linux/gup_pin.c
 * drives it). A test module for a throw-away VM, not something to load on a real machine.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/completion.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/utsname.h>

#define SCALING_HELD 8		/* pages each CPU holds between its allocs and frees, as ours */
#define MAX_WINDOWS 32

static char *benches = "scaling,page";
static unsigned int scaling_pairs = 20000, page_loops = 20000, windows = 5, max_order = 3;
static char *points = "1,2,4,8,16,24,32,40";
static char *model = "linux";
module_param(benches, charp, 0444);
MODULE_PARM_DESC(benches, "comma list: scaling, page (empty: only the gup ioctl)");
module_param(scaling_pairs, uint, 0444);
MODULE_PARM_DESC(scaling_pairs, "alloc+free pairs per CPU per window (bench.scaling_pairs)");
module_param(page_loops, uint, 0444);
MODULE_PARM_DESC(page_loops, "alloc+free pairs per window of the one-CPU page bench");
module_param(windows, uint, 0444);
MODULE_PARM_DESC(windows, "repeats (windows) per point, each one sample");
module_param(max_order, uint, 0444);
MODULE_PARM_DESC(max_order, "page bench: orders 0..max_order");
module_param(points, charp, 0444);
MODULE_PARM_DESC(points, "scaling: CPU counts, comma list");
module_param(model, charp, 0444);
MODULE_PARM_DESC(model, "name in the metric (linux, linux-noinit, ...)");

static bool selected(const char *name)
{
	size_t len = strlen(name);
	const char *p = benches;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == len && !strncmp(p, name, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/* One BENCH line, the format tests/bench/bench.c prints: values in thousandths. */
static void emit(const char *bench, const char *metric, const char *unit, bool higher,
		 const u64 *milli, unsigned int n, const char *extra)
{
	char *line = kmalloc(4096, GFP_KERNEL);
	int pos;

	if (!line)
		return;
	pos = scnprintf(line, 4096, "BENCH {\"bench\":\"%s\",\"metric\":\"%s\",\"unit\":\"%s\","
			"\"higher\":%s,\"samples\":[", bench, metric, unit, higher ? "true" : "false");
	for (unsigned int i = 0; i < n; i++)
		pos += scnprintf(line + pos, 4096 - pos, "%s%llu.%03llu", i ? "," : "",
				 milli[i] / 1000, milli[i] % 1000);
	scnprintf(line + pos, 4096 - pos, "],\"kernel\":\"linux %s\"%s%s}", init_utsname()->release,
		  extra ? "," : "", extra ? extra : "");
	pr_info("%s\n", line);
	kfree(line);
}

/* ---- scaling: n kthreads, one bound per CPU, 8 held per CPU, as bench=scaling ---- */

struct scaling_run {
	unsigned int cpus, pairs;
	atomic_t left;
	struct completion done;
	u64 start[NR_CPUS], end[NR_CPUS];
	struct task_struct *task[NR_CPUS];
	atomic64_t failures;
};

struct scaling_arg {
	struct scaling_run *run;
	unsigned int cpu;
};

static int scaling_thread(void *data)
{
	struct scaling_arg *a = data;
	struct scaling_run *run = a->run;
	struct page *held[SCALING_HELD];

	run->start[a->cpu] = ktime_get_ns();
	for (unsigned int done = 0; done < run->pairs; done += SCALING_HELD) {
		for (unsigned int i = 0; i < SCALING_HELD; i++)
			if (!(held[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0)))
				atomic64_inc(&run->failures);
		for (unsigned int i = 0; i < SCALING_HELD; i++)
			if (held[i])
				__free_pages(held[i], 0);
	}
	run->end[a->cpu] = ktime_get_ns();
	if (atomic_dec_and_test(&run->left))
		complete(&run->done);
	return 0;
}

/* One window: pairs/s x 1000 over the span from the first start to the last end. */
static u64 scaling_window(struct scaling_run *run, struct scaling_arg *args, unsigned int cpus)
{
	struct task_struct **t = run->task;
	u64 first = U64_MAX, last = 0;
	unsigned int c;

	run->cpus = cpus;
	run->pairs = scaling_pairs;
	atomic_set(&run->left, cpus);
	init_completion(&run->done);
	for (c = 0; c < cpus; c++) {
		args[c] = (struct scaling_arg){ .run = run, .cpu = c };
		t[c] = kthread_create(scaling_thread, &args[c], "smpmm_bench/%u", c);
		if (IS_ERR(t[c])) {
			while (c--)
				kthread_stop(t[c]);	/* never woken: exits without running */
			return 0;
		}
		kthread_bind(t[c], c);
	}
	for (c = 0; c < cpus; c++)
		wake_up_process(t[c]);
	wait_for_completion(&run->done);
	for (c = 0; c < cpus; c++) {
		first = min(first, run->start[c]);
		last = max(last, run->end[c]);
	}
	return div64_u64((u64)cpus * scaling_pairs * NSEC_PER_SEC * 1000, max(last - first, 1ull));
}

static void scaling_bench(void)
{
	struct scaling_run *run = kvzalloc(sizeof(*run), GFP_KERNEL);
	struct scaling_arg *args = kcalloc(NR_CPUS, sizeof(*args), GFP_KERNEL);
	unsigned int nwin = clamp(windows, 1u, (unsigned int)MAX_WINDOWS);
	const char *p = points;
	char metric[48], extra[96];
	u64 rate[MAX_WINDOWS];

	while (run && args && p && *p) {
		unsigned int cpus;

		if (sscanf(p, "%u", &cpus) == 1 && cpus >= 1 && cpus <= num_online_cpus()) {
			for (unsigned int w = 0; w < nwin; w++)
				rate[w] = scaling_window(run, args, cpus);
			pr_info("scaling: %-8s %2u CPUs: %9llu pairs/s (first of %u windows), %lld failures\n",
				model, cpus, rate[0] / 1000, nwin, atomic64_read(&run->failures));
			snprintf(metric, sizeof(metric), "%s.cpus%u", model, cpus);
			snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"cpus\":%u", model, cpus);
			emit("scaling", metric, "pairs/s", true, rate, nwin, extra);
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	kfree(args);
	kvfree(run);
}

/* ---- page: one CPU, the page freed is the next allocated (pcp_hit), as bench=page ---- */

static int page_thread(void *data)
{
	unsigned int nwin = clamp(windows, 1u, (unsigned int)MAX_WINDOWS);
	unsigned int loops = max(page_loops, 100u);
	char metric[48], extra[96];
	u64 ns[MAX_WINDOWS];

	for (unsigned int order = 0; order <= max_order; order++) {
		for (unsigned int w = 0; w < nwin; w++) {
			struct page *p = alloc_pages(GFP_KERNEL, order);
			u64 t0;

			if (p)
				__free_pages(p, order);
			t0 = ktime_get_ns();
			for (unsigned int i = 0; i < loops; i++) {
				p = alloc_pages(GFP_KERNEL, order);
				if (p)
					__free_pages(p, order);
			}
			ns[w] = div_u64((ktime_get_ns() - t0) * 1000, loops);
		}
		pr_info("page_bench: %-8s pcp_hit    order %u: %6llu.%01llu ns per alloc+free pair (first window)\n",
			model, order, ns[0] / 1000, ns[0] % 1000 / 100);
		snprintf(metric, sizeof(metric), "%s.pcp_hit.o%u.ns", model, order);
		snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"case\":\"pcp_hit\",\"order\":%u",
			 model, order);
		emit("page", metric, "ns/pair", false, ns, nwin, extra);
	}
	complete((struct completion *)data);
	return 0;
}

static void page_bench(void)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct task_struct *t = kthread_create(page_thread, &done, "smpmm_page");

	if (IS_ERR(t))
		return;
	kthread_bind(t, 0);
	wake_up_process(t);
	wait_for_completion(&done);
}

/* ---- gup: pin a user range, as gup_test's PIN_FAST_BENCHMARK ---- */

struct pin_bench {
	__u64 addr, size;
	__u32 nr_per_call, flags;
	__u64 get_ns, put_ns;	/* out */
	__u64 pinned;		/* out */
};
#define PIN_BENCH_IOCTL _IOWR('s', 1, struct pin_bench)

static long pin_bench_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pin_bench pb;
	unsigned long nr_pages, nr, i;
	struct page **pages;
	u64 t0;
	long got;

	if (cmd != PIN_BENCH_IOCTL || copy_from_user(&pb, (void __user *)arg, sizeof(pb)))
		return -EINVAL;
	nr_pages = pb.size >> PAGE_SHIFT;
	nr = pb.nr_per_call ? pb.nr_per_call : nr_pages;
	pages = kvcalloc(nr_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	pb.pinned = 0;
	t0 = ktime_get_ns();
	for (i = 0; i < nr_pages; i += got) {
		got = pin_user_pages_fast(pb.addr + (i << PAGE_SHIFT), min(nr, nr_pages - i),
					  FOLL_WRITE, pages + i);
		if (got <= 0)
			break;
	}
	pb.get_ns = ktime_get_ns() - t0;
	pb.pinned = i;
	t0 = ktime_get_ns();
	unpin_user_pages(pages, i);
	pb.put_ns = ktime_get_ns() - t0;
	kvfree(pages);
	return copy_to_user((void __user *)arg, &pb, sizeof(pb)) ? -EFAULT : 0;
}

static const struct file_operations pin_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pin_bench_ioctl,
};

static struct dentry *dir;

static int __init smpmm_linux_bench_init(void)
{
	dir = debugfs_create_dir("smpmm_bench", NULL);
	debugfs_create_file("pin", 0600, dir, NULL, &pin_fops);
	pr_info("smpmm_linux_bench: benches=%s points=%s pairs=%u windows=%u init_on_alloc=%d\n",
		benches, points, scaling_pairs, windows, want_init_on_alloc(GFP_KERNEL));
	if (selected("page"))
		page_bench();
	if (selected("scaling"))
		scaling_bench();
	pr_info("smpmm_linux_bench: done\n");
	return 0;
}

static void __exit smpmm_linux_bench_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(smpmm_linux_bench_init);
module_exit(smpmm_linux_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("smpmm's alloc+free and pin benchmarks, on Linux");
