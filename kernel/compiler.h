/* Compiler helpers shared by the kernel and the host test harness: no kernel state lives here. */
#ifndef KERNEL_COMPILER_H
#define KERNEL_COMPILER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* Host libc headers define some of these too; theirs are equivalent. */
#define CACHELINE_SIZE 64
#ifndef __aligned
#define __aligned(x) __attribute__((aligned(x)))
#endif
#ifndef __cacheline_aligned
#define __cacheline_aligned __aligned(CACHELINE_SIZE)
#endif
#ifndef __packed
#define __packed __attribute__((packed))
#endif
#ifndef __noreturn
#define __noreturn __attribute__((noreturn))
#endif
#ifndef __unused
#define __unused __attribute__((unused))
#endif
#ifndef __used
#define __used __attribute__((used))
#endif
#ifndef __section
#define __section(s) __attribute__((section(s)))
#endif
/*
 * Globals every allocation and free reads and almost nothing writes (the node table, the
 * CPU -> node map, pcp.enable): kept together in a section of their own, away from data
 * that is written often, so that a write elsewhere does not take their cache line from
 * every CPU that reads them (Linux's __read_mostly). Not for const data.
 */
#ifndef __read_mostly
#define __read_mostly __section(".data..read_mostly")
#endif
#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef __noinline
#define __noinline __attribute__((noinline))
#endif
#ifndef __returns_nonnull
#define __returns_nonnull __attribute__((returns_nonnull))
#endif
/* A default the link may replace with a strong definition elsewhere (kernel/lab.h). */
#ifndef __weak
#define __weak __attribute__((weak))
#endif

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define barrier() __asm__ __volatile__("" ::: "memory")

/*
 * Shared memory: the one vocabulary, used by the kernel, the lab and the host harness alike.
 *
 *   READ_ONCE(x), WRITE_ONCE(x, v)   a racy plain access: a variable or field another CPU
 *       writes or reads without holding the lock this access holds (flags, counters, free
 *       counts peeked at without the zone lock, page flags during pageblock scans). One
 *       untorn access the compiler may not merge or repeat; a relaxed atomic, so the same
 *       mov on x86 but not a data race (TSan). Each is an interleave point (kernel/arch.h:
 *       nothing on x86; on the host a simulated interrupt or a thread switch may come here),
 *       so a file using them includes kernel/arch.h.
 *   smp_load_acquire(p), smp_store_release(p, v)   publish data through *p: whatever the
 *       storer wrote before the release is visible to a loader after its acquire.
 *   __atomic_<op>_fetch / __atomic_fetch_<op> / __atomic_exchange_n / _compare_exchange_n
 *       read-modify-write, with the memory order spelled out at the call.
 *
 * No volatile and no plain __atomic_load_n/__atomic_store_n elsewhere: the only exceptions
 * are the arch_ops.h implementations of arch_interleave_point() and the host shim behind it,
 * where READ_ONCE would call back into itself.
 */
#define READ_ONCE(x) ({ arch_interleave_point(); __atomic_load_n(&(x), __ATOMIC_RELAXED); })
#define WRITE_ONCE(x, v) \
	({ arch_interleave_point(); __atomic_store_n(&(x), (v), __ATOMIC_RELAXED); })
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)
/* Type-checks cond without generating code: the "off" form of debug asserts. */
#define BUILD_BUG_ON_INVALID(cond) ((void)sizeof((long)(cond)))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(v, lo, hi) MIN(MAX(v, lo), hi)
#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

#endif
