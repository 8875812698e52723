/* The soak test (kernel/soak.c), run by kmain after the tests when `soak=SECONDS` is given. */
#ifndef KERNEL_SOAK_H
#define KERNEL_SOAK_H

#include "kernel/compiler.h"

/* -1: no soak asked for; 0: it passed; 1: it found a problem. */
int soak_run(void);

#endif
