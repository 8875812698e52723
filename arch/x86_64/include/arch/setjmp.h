/* Minimal setjmp/longjmp for kernel/trap.h recovery points (arch/x86_64/isr.asm). */
#ifndef ARCH_SETJMP_H
#define ARCH_SETJMP_H

#include "kernel/compiler.h"

/* Callee-saved registers, stack, return address and RFLAGS (so IF comes back as it was). */
struct arch_jmp_buf {
	u64 rbx, rbp, r12, r13, r14, r15, rsp, rip, rflags;
};

__attribute__((returns_twice)) int arch_setjmp(struct arch_jmp_buf *jb);
__noreturn void arch_longjmp(struct arch_jmp_buf *jb, int val);

#endif
