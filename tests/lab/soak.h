/* The soak test (tests/lab/soak.c): run by lab_main() after the tests when `soak=SECONDS`. */
#ifndef LAB_SOAK_H
#define LAB_SOAK_H

#include "kernel/compiler.h"

/* -1: no soak asked for; 0: it passed; 1: it found a problem. */
int soak_run(void);

#endif
