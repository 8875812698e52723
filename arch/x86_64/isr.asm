; Interrupt entry stubs for all 256 vectors, and setjmp/longjmp for trap recovery.
; Each stub makes the stack look the same (error code, vector), then isr_common saves the
; general registers as a struct trap_frame (arch/x86_64/cpu.h) and calls trap_dispatch().

global isr_stub_table
global arch_setjmp
global arch_longjmp
extern trap_dispatch

section .text
bits 64

; Vectors for which the CPU pushes an error code itself: #DF #TS #NP #SS #GP #PF #AC #CP #VC #SX
%define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

%macro ISR_STUB 1
isr_stub_%1:
%if HAS_ERROR(%1) == 0
	push 0                      ; dummy error code, so every frame has the same layout
%endif
	push %1                     ; vector number
	jmp isr_common
%endmacro

%assign v 0
%rep 256
	ISR_STUB v
%assign v v + 1
%endrep

isr_common:
	cld                         ; the C ABI expects DF clear
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	mov rdi, rsp                ; struct trap_frame *
	; 22 pushed quadwords (+ the CPU's 16-byte alignment of RSP) keep RSP 16-byte aligned
	call trap_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16                 ; vector and error code
	iretq

; int arch_setjmp(struct arch_jmp_buf *jb): rdi = jb. Returns 0 now, val after longjmp.
arch_setjmp:
	mov [rdi + 0], rbx
	mov [rdi + 8], rbp
	mov [rdi + 16], r12
	mov [rdi + 24], r13
	mov [rdi + 32], r14
	mov [rdi + 40], r15
	lea rax, [rsp + 8]          ; the caller's RSP after our return
	mov [rdi + 48], rax
	mov rax, [rsp]              ; our return address
	mov [rdi + 56], rax
	pushfq
	pop qword [rdi + 64]
	xor eax, eax
	ret

; void arch_longjmp(struct arch_jmp_buf *jb, int val): rdi = jb, esi = val (0 becomes 1).
arch_longjmp:
	mov eax, esi
	test eax, eax
	jnz .nonzero
	inc eax
.nonzero:
	mov rbx, [rdi + 0]
	mov rbp, [rdi + 8]
	mov r12, [rdi + 16]
	mov r13, [rdi + 24]
	mov r14, [rdi + 32]
	mov r15, [rdi + 40]
	mov rsp, [rdi + 48]
	push qword [rdi + 64]
	popfq                       ; IF as it was at setjmp time
	jmp [rdi + 56]

section .rodata
align 8
isr_stub_table:                 ; address of each stub, for idt_init()
%assign v 0
%rep 256
	dq isr_stub_ %+ v
%assign v v + 1
%endrep
