/*
 * The guest's side of the c2c plugin (tests/c2c/plugin.c): markers that open and close a
 * measurement window and begin and end each CPU's part in it. A marker is a NOP whose
 * displacement carries the command: it costs nothing without the plugin, which finds it
 * when QEMU translates the code. x86-64 only, like the plugin that decodes it.
 *
 * A window: one CPU calls c2c_window_begin(); every online CPU then runs
 * c2c_cpu_begin() ... c2c_cpu_end() once (a CPU with no work in it too: the model waits for
 * every CPU's begin, since each one's clock starts at 0 there); when all have ended, the
 * first CPU calls c2c_window_end(). Only accesses between a CPU's begin and end are counted.
 */
#ifndef C2C_MARK_H
#define C2C_MARK_H

#define C2C_MAGIC 0x0c2c0000	/* nopl C2C_MAGIC + cmd(%rax): 0f 1f 80, then the displacement */
#define C2C_WINDOW_BEGIN 1
#define C2C_WINDOW_END 2
#define C2C_CPU_BEGIN 3
#define C2C_CPU_END 4
#define C2C_CPU_UNCOUNTED 5
#define C2C_CPU_COUNTED 6
#define C2C_CPU_SYNC 7

#define c2c_mark(cmd) asm volatile("nopl %c0(%%rax)" : : "i"(C2C_MAGIC + (cmd)) : "memory")

static inline void c2c_window_begin(void) { c2c_mark(C2C_WINDOW_BEGIN); }
static inline void c2c_window_end(void) { c2c_mark(C2C_WINDOW_END); }
static inline void c2c_cpu_begin(void) { c2c_mark(C2C_CPU_BEGIN); }
static inline void c2c_cpu_end(void) { c2c_mark(C2C_CPU_END); }
/* Between these two a CPU's accesses warm the caches of the model but are not counted: a
 * window can set up the state it measures (fill lists, say) with every line where it is. */
static inline void c2c_cpu_uncounted(void) { c2c_mark(C2C_CPU_UNCOUNTED); }
static inline void c2c_cpu_counted(void) { c2c_mark(C2C_CPU_COUNTED); }
/* A barrier in the model's time, after a real one in the guest (every CPU in the window
 * must reach it): all CPUs leave it together, as they would on hardware. */
static inline void c2c_cpu_sync(void) { c2c_mark(C2C_CPU_SYNC); }

#endif
