; First 64-bit code of the bootstrap CPU, in the higher half: load data segments, switch to
; the BSP's kernel stack and call kmain(). Nothing else: APs enter through the trampoline.

global kernel_entry64
global bsp_stack_top
global bsp_stack_guard
extern kmain

BSP_STACK_SIZE equ 16384

section .text
bits 64
kernel_entry64:                 ; edi = multiboot2 magic, esi = mbi physical address
	mov ax, 0x10                ; boot GDT data selector
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor ax, ax
	mov fs, ax
	mov gs, ax
	mov rsp, bsp_stack_top
	xor ebp, ebp                ; end of the frame-pointer chain for backtraces
	mov edi, edi                ; upper halves are undefined after the mode switch
	mov esi, esi
	call kmain
.hang:                          ; kmain does not return; if it does, halt quietly
	cli
	hlt
	jmp .hang

section .bss
align 4096
bsp_stack_guard: resb 4096      ; kept unmapped once the kernel page tables are built
bsp_stack:       resb BSP_STACK_SIZE
bsp_stack_top:
