/*
 * The one call from the kernel to its lab: kmain() ends with lab_main(), once every CPU is
 * online and the page allocator is up. The lab (tests/lab/lab_main.c: tests, soak,
 * benchmarks, the monitor) defines it; a bare kernel (`make LAB=0`) keeps the weak default
 * in kernel/main.c, which says so and idles. docs/architecture.md draws the layers.
 */
#ifndef KERNEL_LAB_H
#define KERNEL_LAB_H

#include "kernel/compiler.h"

__noreturn void lab_main(void);

#endif
