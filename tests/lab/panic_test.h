/* The panic.test= crash self-tests (tests/lab/panic_test.c). */
#ifndef LAB_PANIC_TEST_H
#define LAB_PANIC_TEST_H

/* Crash as `panic.test=` asks, after bring-up; returns if it asks for nothing. */
void panic_selftest(void);

#endif
