/*
 * User side of the Linux gup bench (`make bench-linux`): map and pre-fault a range, then pin
 * it from N threads at once, each bound to its own CPU, through smpmm_linux_bench's debugfs
 * ioctl (gup_test's PIN_FAST_BENCHMARK, which Debian's kernel does not build), and print the
 * per-thread times as the same BENCH lines as smpmm's bench=gup. Runs inside the test VM only.
 *
 * usage: gup_pin THREADS SIZE_MB NR_PER_CALL REPEATS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>

struct pin_bench {
	uint64_t addr, size;
	uint32_t nr_per_call, flags;
	uint64_t get_ns, put_ns;
	uint64_t pinned;
};
#define PIN_BENCH_IOCTL _IOWR('s', 1, struct pin_bench)
#define MAX_THREADS 256

static int fd, threads, repeats;
static uint64_t size;
static unsigned int nr_per_call;
static char *buf;
static pthread_barrier_t barrier;
static uint64_t get_us[MAX_THREADS * 16], put_us[MAX_THREADS * 16], failed;

static void *pin_thread(void *arg)
{
	long t = (long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("gup_pin: sched_setaffinity");
	for (int r = 0; r < repeats; r++) {
		struct pin_bench pb = { .addr = (uintptr_t)buf, .size = size, .nr_per_call = nr_per_call };

		pthread_barrier_wait(&barrier);
		if (ioctl(fd, PIN_BENCH_IOCTL, &pb) || pb.pinned != size / 4096)
			__atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
		get_us[t * repeats + r] = pb.get_ns / 1000;
		put_us[t * repeats + r] = pb.put_ns / 1000;
	}
	return NULL;
}

static void emit(const char *metric, const uint64_t *us, int n, const char *release)
{
	printf("BENCH {\"bench\":\"gup\",\"metric\":\"%s\",\"unit\":\"us\",\"higher\":false,\"samples\":[",
	       metric);
	for (int i = 0; i < n; i++)
		printf("%s%llu.000", i ? "," : "", (unsigned long long)us[i]);
	printf("],\"kernel\":\"linux %s\",\"mode\":\"if-clear\",\"cmd\":\"a\",\"size_mb\":%llu,"
	       "\"threads\":%d,\"failed\":%llu}\n", release, (unsigned long long)(size >> 20), threads,
	       (unsigned long long)failed);
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	struct utsname u;
	uint64_t sum = 0;

	if (argc != 5)
		return fprintf(stderr, "usage: gup_pin THREADS SIZE_MB NR_PER_CALL REPEATS\n"), 2;
	threads = atoi(argv[1]);
	size = strtoull(argv[2], NULL, 0) << 20;
	nr_per_call = (unsigned int)atoi(argv[3]);
	repeats = atoi(argv[4]);
	if (threads < 1 || threads > MAX_THREADS || repeats < 1 || repeats > 16)
		return fprintf(stderr, "gup_pin: 1..%d threads, 1..16 repeats\n", MAX_THREADS), 2;
	fd = open("/sys/kernel/debug/smpmm_bench/pin", O_RDWR);
	if (fd < 0)
		return perror("gup_pin: /sys/kernel/debug/smpmm_bench/pin"), 1;
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return perror("gup_pin: mmap"), 1;
	/* 4 KiB pages like smpmm's range (no THP), pre-faulted as gup_test does. */
	madvise(buf, size, MADV_NOHUGEPAGE);
	memset(buf, 1, size);
	pthread_barrier_init(&barrier, NULL, threads);
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, pin_thread, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	for (int i = 0; i < threads * repeats; i++)
		sum += get_us[i];
	uname(&u);
	printf("gup: linux -a -m %llu -j %d -n %u -r %d: mean get %llu us, %llu failed calls\n",
	       (unsigned long long)(size >> 20), threads, nr_per_call, repeats,
	       (unsigned long long)(sum / (threads * repeats)), (unsigned long long)failed);
	emit("get_us_if_clear", get_us, threads * repeats, u.release);
	emit("put_us_if_clear", put_us, threads * repeats, u.release);
	return failed ? 1 : 0;
}
