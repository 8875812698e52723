/*
 * The coherence model's own tests (`make c2c-test`, part of make test): access streams
 * written by hand, whose transfers MESI predicts exactly, and the merge fed by threads that
 * push at random moments, which must give the same counts as feeding it all at once.
 * usage: test_model [NAME-FILTER]; prints KTAP-style lines and "N passed, N failed".
 */
#include "tests/c2c/model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned int failures;

#define EXPECT_EQ(a, b)                                                                    \
	do {                                                                               \
		unsigned long long _a = (a), _b = (b);                                      \
		if (_a != _b) {                                                            \
			printf("    # %s:%d: %s == %llu, expected %s == %llu\n", __FILE__,     \
			       __LINE__, #a, _a, #b, _b);                                  \
			failures++;                                                        \
		}                                                                          \
	} while (0)

/* 4 CPUs, two sockets (0-1, 2-3), the plugin's latencies. */
static const struct c2c_params params4 = {
	.nr_cpus = 4, .sockets = 2, .ps_per_insn = 455,
	.ps = { [C2C_COLD] = { 100000, 100000 }, [C2C_HITM] = { 40000, 103000 },
		[C2C_CLEAN] = { 35000, 103000 }, [C2C_UPGRADE] = { 35000, 103000 } },
};

static struct c2c_model m;

static void start(const struct c2c_params *p)
{
	if (c2c_model_init(&m, p))
		abort();
}

static void ev(unsigned int cpu, enum c2c_kind kind, uint64_t icount, uint32_t line)
{
	c2c_push(&m, cpu, (struct c2c_event){ .icount = icount, .kind = kind, .line = line });
}

/* Every CPU of m begins at 0; `stores` accesses of the pattern; all end at icount `end`. */
static void begin_all(void)
{
	for (unsigned int c = 0; c < m.p.nr_cpus; c++)
		ev(c, C2C_BEGIN, 0, 0);
}

static void end_all(uint64_t end)
{
	for (unsigned int c = 0; c < m.p.nr_cpus; c++)
		ev(c, C2C_END, end, 0);
}

static uint64_t outcome(const struct c2c_counts *n, enum c2c_outcome o)
{
	return n->outcome[o][0] + n->outcome[o][1];
}

/* CPUs a and b store to one line n times each, in step (4 instructions a turn), and the
 * window is replayed. */
static void two_writers(unsigned int a, unsigned int b, unsigned int n)
{
	start(&params4);
	begin_all();
	for (unsigned int i = 1; i <= n; i++) {
		ev(a, C2C_STORE, 4 * i, 7);
		ev(b, C2C_STORE, 4 * i, 7);
	}
	end_all(4 * n + 1);
	EXPECT_EQ(c2c_merge(&m, true), 1);
}

/* Two CPUs of one socket: every store but the first finds the line Modified in the other's
 * cache. */
static void c2c_access_two_writers_alternate(void)
{
	const unsigned int n = 1000;

	two_writers(0, 1, n);
	EXPECT_EQ(outcome(&m.total, C2C_COLD), 1);
	EXPECT_EQ(outcome(&m.total, C2C_HITM), 2 * n - 1);
	EXPECT_EQ(c2c_transfers(&m.total), 2 * n - 1);
	EXPECT_EQ(c2c_cross(&m.total), 0);
	EXPECT_EQ(m.total.invalidated, 2 * n - 1);
	/* Serialised: the line's transfers follow one another, 40 ns each, after the cold fill
	 * (which starts at the first store, 4 instructions in); the end marker, 1 more. */
	EXPECT_EQ(m.cpu[1].end, 4 * 455 + 100000 + (2 * n - 1) * 40000ull + 455);
	c2c_model_free(&m);
}

/* The same across sockets: every transfer crosses. */
static void c2c_access_two_writers_across_sockets(void)
{
	const unsigned int n = 100;

	two_writers(0, 3, n);
	EXPECT_EQ(m.total.outcome[C2C_HITM][1], 2 * n - 1);
	EXPECT_EQ(c2c_cross(&m.total), 2 * n - 1);
	c2c_model_free(&m);
}

/* One CPU, loads and stores over a few lines: no other cache, no transfer. */
static void c2c_access_one_cpu_alone_no_transfer(void)
{
	start(&params4);
	begin_all();
	for (unsigned int i = 1; i <= 3000; i++)
		ev(2, i % 3 ? C2C_LOAD : C2C_STORE, i, i % 5);
	end_all(3001);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(c2c_transfers(&m.total), 0);
	EXPECT_EQ(outcome(&m.total, C2C_COLD), 5);
	EXPECT_EQ(outcome(&m.total, C2C_HIT), 3000 - 5);
	c2c_model_free(&m);
}

/* Every CPU on its own line, at every number of CPUs up to the model's limit. */
static void c2c_access_private_lines_no_transfer(void)
{
	for (unsigned int cpus = 1; cpus <= C2C_MAX_CPUS; cpus *= 2) {
		struct c2c_params p = params4;

		p.nr_cpus = cpus;
		p.sockets = cpus > 1 ? 2 : 1;
		start(&p);
		begin_all();
		for (unsigned int i = 1; i <= 200; i++)
			for (unsigned int c = 0; c < cpus; c++) {
				ev(c, C2C_LOAD, 2 * i, 100 + c);
				ev(c, C2C_STORE, 2 * i + 1, 100 + c);
			}
		end_all(500);
		EXPECT_EQ(c2c_merge(&m, true), 1);
		EXPECT_EQ(c2c_transfers(&m.total), 0);
		EXPECT_EQ(outcome(&m.total, C2C_COLD), cpus);
		c2c_model_free(&m);
	}
}

/* CPU 0 writes a line once; CPUs 1-3 read it n times each, later: the first reader takes it
 * Modified (HITM), the others clean (CPU 2 from the other socket, CPU 3 from CPU 2); then
 * every read hits. One transfer per reader. */
static void c2c_access_readers_of_line_written_once(void)
{
	const unsigned int n = 50;

	start(&params4);
	begin_all();
	ev(0, C2C_STORE, 1, 9);
	for (unsigned int c = 1; c < 4; c++)
		for (unsigned int i = 0; i < n; i++)
			ev(c, C2C_LOAD, 300 + i, 9);
	end_all(400);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(c2c_transfers(&m.total), 3);
	EXPECT_EQ(m.total.hitm_loads, 1);
	EXPECT_EQ(outcome(&m.total, C2C_CLEAN), 2);
	EXPECT_EQ(c2c_cross(&m.total), 1);
	EXPECT_EQ(outcome(&m.total, C2C_HIT), 3 * (n - 1));
	c2c_model_free(&m);
}

/* A store to a line this CPU shares with others invalidates them: an upgrade, no transfer. */
static void c2c_access_store_to_shared_line_invalidates(void)
{
	start(&params4);
	begin_all();
	ev(0, C2C_LOAD, 1, 5);
	ev(1, C2C_LOAD, 100, 5);
	ev(2, C2C_LOAD, 200, 5);
	ev(0, C2C_STORE, 1000, 5);
	ev(1, C2C_LOAD, 2000, 5);
	end_all(3000);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(outcome(&m.total, C2C_UPGRADE), 1);
	EXPECT_EQ(m.total.invalidated, 2);
	EXPECT_EQ(m.total.outcome[C2C_UPGRADE][1], 1);	/* CPU 2's copy was on the other socket */
	EXPECT_EQ(m.total.hitm_loads, 1);		/* CPU 1 reads what CPU 0 wrote */
	c2c_model_free(&m);
}

/* 255 CPUs on 2 sockets (0-127, 128-254), one thread a core: `cpus` store to one line n
 * times each, in turn; the sharer masks span 4 words. */
static void writers_in_turn(const unsigned int *cpus, unsigned int k, unsigned int n)
{
	struct c2c_params p = params4;

	p.nr_cpus = 255;
	start(&p);
	begin_all();
	for (unsigned int i = 1; i <= n; i++)
		for (unsigned int j = 0; j < k; j++)
			ev(cpus[j], C2C_STORE, 10 * i + j, 3);
	end_all(10 * n + 10);
	EXPECT_EQ(c2c_merge(&m, true), 1);
}

/* CPUs on every word of the sharer masks: each store after the first takes the line from the
 * one before (HITM), across sockets at the 127 -> 128 and 254 -> 0 steps. */
static void c2c_access_writers_across_mask_words_255_cpus(void)
{
	static const unsigned int cpus[] = { 0, 63, 64, 127, 128, 200, 254 };
	const unsigned int n = 20, k = sizeof(cpus) / sizeof(cpus[0]);

	writers_in_turn(cpus, k, n);
	EXPECT_EQ(outcome(&m.total, C2C_COLD), 1);
	EXPECT_EQ(outcome(&m.total, C2C_HITM), n * k - 1);
	EXPECT_EQ(m.total.outcome[C2C_HITM][1], 2 * n - 1);
	EXPECT_EQ(m.total.invalidated, n * k - 1);
	c2c_model_free(&m);
}

/* CPU 0 writes a line, the other 254 read it, CPU 0 writes it again: one upgrade that
 * invalidates 254 copies, 127 of them on the other socket. */
static void c2c_access_store_invalidates_254_readers(void)
{
	struct c2c_params p = params4;

	p.nr_cpus = 255;
	start(&p);
	begin_all();
	ev(0, C2C_STORE, 1, 8);
	for (unsigned int c = 1; c < 255; c++)
		ev(c, C2C_LOAD, 100, 8);
	ev(0, C2C_STORE, 100000, 8);
	end_all(200000);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(m.total.hitm_loads, 1);
	EXPECT_EQ(outcome(&m.total, C2C_CLEAN), 253);
	EXPECT_EQ(outcome(&m.total, C2C_UPGRADE), 1);
	EXPECT_EQ(m.total.outcome[C2C_UPGRADE][1], 1);
	EXPECT_EQ(m.total.invalidated, 254);
	EXPECT_EQ(m.total.stores, 2);
	c2c_model_free(&m);
}

/* 256 CPUs as 128 cores of 2 threads: siblings 200 and 201 share a cache (no transfer between
 * them); 201 and 202 do not. */
static void c2c_access_smt_siblings_share_cache_256_cpus(void)
{
	struct c2c_params p = params4;
	const unsigned int n = 50;

	p.nr_cpus = 256;
	p.threads = 2;
	start(&p);
	begin_all();
	for (unsigned int i = 1; i <= n; i++) {
		ev(200, C2C_STORE, 4 * i, 11);
		ev(201, C2C_STORE, 4 * i + 1, 11);
		ev(201, C2C_STORE, 4 * i + 2, 12);
		ev(202, C2C_STORE, 4 * i + 3, 12);
	}
	end_all(4 * n + 10);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(c2c_transfers(&m.cpu[200].n) + c2c_transfers(&m.cpu[201].n) - (n - 1), 0);
	EXPECT_EQ(c2c_transfers(&m.total), 2 * n - 1);	/* all on line 12 */
	EXPECT_EQ(outcome(&m.total, C2C_HIT), 2 * n - 1);	/* 201 after 200 on line 11 */
	c2c_model_free(&m);
}

/*
 * One CPU zeroes a page: 64 cold stores to consecutive lines. With mlp = 10 the first fill
 * costs its latency and each later one a tenth of it; with mlp = 1 each costs it all. The
 * clock counts femtoseconds (clock_div 1000), as the plugin's does: 1 ns an instruction.
 */
static void c2c_replay_streaming_stores_overlap(void)
{
	for (unsigned int mlp = 1; mlp <= 10; mlp += 9) {
		struct c2c_params p = params4;

		p.ps_per_insn = 1;
		p.clock_div = 1000;
		p.mlp = mlp;
		start(&p);
		begin_all();
		for (unsigned int i = 0; i < 64; i++)
			ev(1, C2C_STORE, 1000000ull * (i + 1), 4096 + i);
		end_all(1000000ull * 65);
		EXPECT_EQ(c2c_merge(&m, true), 1);
		EXPECT_EQ(outcome(&m.total, C2C_COLD), 64);
		EXPECT_EQ(m.total.streamed, mlp > 1 ? 63 : 0);
		EXPECT_EQ(m.cpu[1].end, 65 * 1000 + 100000 + 63 * (100000 / mlp));
		c2c_model_free(&m);
	}
}

/*
 * Who took the line from whom, and when: two writers in turn (CPUs 0 and 3) give 0 -> 3 n
 * times and 3 -> 0 n - 1 times in the window's pairs, the same moves in its history, in
 * order, each at a later time than the one before, and the byte each store began at in its
 * instruction's slot; with room for 10 moves, the rest are counted as dropped. Then CPU 1
 * and 2 share a line CPU 1 then stores to: an upgrade, in the history but not a transfer.
 */
static void c2c_access_moves_by_pair_and_time(void)
{
	const unsigned int n = 20;

	start(&params4);
	m.max_moves = 10;
	begin_all();
	for (unsigned int i = 1; i <= n; i++) {
		c2c_push(&m, 0, (struct c2c_event){ .icount = 4 * i, .kind = C2C_STORE, .line = 7, .off = 8 });
		c2c_push(&m, 3, (struct c2c_event){ .icount = 4 * i, .kind = C2C_STORE, .line = 7, .off = 40 });
	}
	end_all(4 * n + 1);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(m.pairs[0 * 4 + 3], n);
	EXPECT_EQ(m.pairs[3 * 4 + 0], n - 1);
	EXPECT_EQ(m.pairs[0 * 4 + 1] + m.pairs[1 * 4 + 0] + m.pairs[3 * 4 + 3], 0);
	EXPECT_EQ(m.nr_moves, 10);
	EXPECT_EQ(m.moves_dropped, 2 * n - 1 - 10);
	for (unsigned int k = 0; k < m.nr_moves; k++) {
		EXPECT_EQ(m.moves[k].from, k % 2 ? 3 : 0);
		EXPECT_EQ(m.moves[k].to, k % 2 ? 0 : 3);
		EXPECT_EQ(m.moves[k].outcome, C2C_HITM);
		EXPECT_EQ(k == 0 || m.moves[k].t > m.moves[k - 1].t, 1);
	}
	for (uint64_t s = 0; s < m.nr_slots; s++)
		if (m.lines[s].line == 8)
			EXPECT_EQ(m.lines[s].pc[0].bytes, (1ull << 8) | (1ull << 40));
	c2c_model_free(&m);

	start(&params4);
	m.max_moves = 100;
	begin_all();
	ev(1, C2C_LOAD, 1, 5);
	ev(2, C2C_LOAD, 100, 5);
	ev(1, C2C_STORE, 1000, 5);
	end_all(2000);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(m.nr_moves, 2);		/* CPU 2's clean read, CPU 1's upgrade */
	EXPECT_EQ(m.moves[1].outcome, C2C_UPGRADE);
	EXPECT_EQ(m.moves[1].from, 2);
	EXPECT_EQ(m.pairs[1 * 4 + 2], 1);
	EXPECT_EQ(m.pairs[2 * 4 + 1], 0);	/* an upgrade moves no data */
	c2c_model_free(&m);
}

/* The merge waits for a CPU that has not begun (its events start at time 0) until the window
 * closes; then it took no part. */
static void c2c_merge_waits_for_unbegun_cpu(void)
{
	start(&params4);
	for (unsigned int c = 0; c < 3; c++) {
		ev(c, C2C_BEGIN, 0, 0);
		ev(c, C2C_STORE, 10, 1);
		ev(c, C2C_END, 20, 0);
	}
	EXPECT_EQ(c2c_merge(&m, false), 0);
	EXPECT_EQ(m.total.stores, 0);
	EXPECT_EQ(c2c_merge(&m, true), 1);
	EXPECT_EQ(m.total.stores, 3);
	EXPECT_EQ(m.cpu[3].state, C2C_UNBEGUN);
	c2c_model_free(&m);
}

/*
 * The streams of a lockstep pattern (8 CPUs, 3 shared lines and one of their own each),
 * pushed by 8 threads while a merge runs beside them, must replay exactly as when pushed all
 * at once: the counts do not depend on the host's timing. The threads pause at random, and
 * the last one stops halfway, its clock published, until the merge has been seen to return
 * three times while it stood (5 s at most): the merge must not replay anyone's events past
 * that CPU's clock meanwhile, though the others keep pushing.
 */
#define FEED_CPUS 8
#define FEED_EVENTS 60000

static int feeder_paused;		/* the last feeder is in its long pause (atomic) */
static int merge_seen_pause;		/* the merge returned while it was (atomic) */

static struct c2c_event feed_event(unsigned int cpu, unsigned int i)
{
	uint32_t line = (i * 7 + cpu) % 5 < 3 ? (i % 3) : 1000 + cpu;

	return (struct c2c_event){ .icount = 3 * (uint64_t)i + (cpu & 1), .line = line,
				   .kind = (i + cpu) % 4 ? C2C_LOAD : C2C_STORE };
}

static void pause_us(unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

static void *feeder(void *arg)
{
	unsigned int cpu = (unsigned int)(uintptr_t)arg, seed = cpu * 7919 + 1;

	ev(cpu, C2C_BEGIN, 0, 0);
	for (unsigned int i = 1; i <= FEED_EVENTS; i++) {
		if (cpu == FEED_CPUS - 1 && i == FEED_EVENTS / 2) {
			__atomic_store_n(&feeder_paused, 1, __ATOMIC_RELEASE);
			for (int ms = 0; ms < 5000 && __atomic_load_n(&merge_seen_pause, __ATOMIC_ACQUIRE) < 3; ms++)
				pause_us(1000);
			__atomic_store_n(&feeder_paused, 0, __ATOMIC_RELEASE);
		} else if (rand_r(&seed) % 5000 == 0) {
			pause_us(rand_r(&seed) % 2000);
		}
		c2c_publish_clock(&m, cpu, 3 * (uint64_t)i);
		c2c_push(&m, cpu, feed_event(cpu, i));
	}
	ev(cpu, C2C_END, 3 * (uint64_t)FEED_EVENTS + 3, 0);
	return NULL;
}

static void c2c_merge_independent_of_host_timing(void)
{
	struct c2c_params p = params4;
	struct c2c_counts once, threaded;
	pthread_t t[FEED_CPUS];
	uint64_t end_once[FEED_CPUS], waits_in_pause = 0;

	p.nr_cpus = FEED_CPUS;
	start(&p);
	for (unsigned int c = 0; c < FEED_CPUS; c++) {
		ev(c, C2C_BEGIN, 0, 0);
		for (unsigned int i = 1; i <= FEED_EVENTS; i++)
			c2c_push(&m, c, feed_event(c, i));
		ev(c, C2C_END, 3 * (uint64_t)FEED_EVENTS + 3, 0);
	}
	EXPECT_EQ(c2c_merge(&m, true), 1);
	once = m.total;
	for (unsigned int c = 0; c < FEED_CPUS; c++)
		end_once[c] = m.cpu[c].end;
	c2c_model_free(&m);

	start(&p);
	for (unsigned int c = 0; c < FEED_CPUS; c++)
		pthread_create(&t[c], NULL, feeder, (void *)(uintptr_t)c);
	while (!c2c_merge(&m, false))
		if (__atomic_load_n(&feeder_paused, __ATOMIC_ACQUIRE))
			__atomic_store_n(&merge_seen_pause, (int)++waits_in_pause, __ATOMIC_RELEASE);
	for (unsigned int c = 0; c < FEED_CPUS; c++)
		pthread_join(t[c], NULL);
	threaded = m.total;
	EXPECT_EQ(memcmp(&once, &threaded, sizeof(once)), 0);
	EXPECT_EQ(c2c_transfers(&threaded), c2c_transfers(&once));
	for (unsigned int c = 0; c < FEED_CPUS; c++)
		EXPECT_EQ(m.cpu[c].end, end_once[c]);
	EXPECT_EQ(c2c_transfers(&once) > 1000, 1);	/* the pattern does share lines */
	EXPECT_EQ(waits_in_pause > 0, 1);		/* the merge did wait for the paused feeder */
	c2c_model_free(&m);
}

static const struct { const char *name; void (*fn)(void); } cases[] = {
#define CASE(f) { #f, f }
	CASE(c2c_access_two_writers_alternate),
	CASE(c2c_access_two_writers_across_sockets),
	CASE(c2c_access_one_cpu_alone_no_transfer),
	CASE(c2c_access_private_lines_no_transfer),
	CASE(c2c_access_readers_of_line_written_once),
	CASE(c2c_access_store_to_shared_line_invalidates),
	CASE(c2c_access_moves_by_pair_and_time),
	CASE(c2c_access_writers_across_mask_words_255_cpus),
	CASE(c2c_access_store_invalidates_254_readers),
	CASE(c2c_access_smt_siblings_share_cache_256_cpus),
	CASE(c2c_replay_streaming_stores_overlap),
	CASE(c2c_merge_waits_for_unbegun_cpu),
	CASE(c2c_merge_independent_of_host_timing),
};

int main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0, n = 0;

	printf("KTAP version 1\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int before = failures;

		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		cases[i].fn();
		if (failures == before)
			passed++;
		else
			failed++;
		printf("%s %u %s\n", failures == before ? "ok" : "not ok", ++n, cases[i].name);
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
