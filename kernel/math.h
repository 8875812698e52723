/* Integer arithmetic the kernel and the lab share (no floating point in the kernel). */
#ifndef KERNEL_MATH_H
#define KERNEL_MATH_H

#include "kernel/compiler.h"

/*
 * Floor of the square root, a bit at a time (no division): r collects the root from the top
 * bit pair down, subtracting (2r + bit) * bit from x whenever it fits. Used for
 * min_free_kbytes = sqrt(lowmem KiB * 16), as Linux, and for the benchmarks' spread.
 */
static inline u64 int_sqrt(u64 x)
{
	u64 r = 0, bit = 1ull << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

#endif
