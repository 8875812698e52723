; 32-bit entry from GRUB: check the machine, build the boot page tables, enter long mode,
; jump to the higher-half kernel. Runs once, on the bootstrap CPU; APs use the trampoline.
; Reads as a table of contents: `start` calls one small routine per step.

global start
global boot_pml4
extern kernel_entry64          ; arch/x86_64/entry64.asm (higher half)
extern __kernel_phys_end       ; from linker.ld

KERNEL_VMA      equ 0xffffffff80000000
MB2_BOOT_MAGIC  equ 0x36d76289 ; what a multiboot2 loader leaves in eax
COM1            equ 0x3f8

PTE_P    equ 1 << 0            ; present
PTE_W    equ 1 << 1            ; writable
PTE_PS   equ 1 << 7            ; 2 MiB page (in a PD entry)

section .boot.text progbits alloc exec nowrite
bits 32

; Entry: eax = multiboot2 magic, ebx = physical address of the multiboot2 information.
start:
	cli
	mov esp, boot_stack_top            ; a stack in low memory, identity addressed
	mov edi, eax                       ; keep the magic for C (edi: first C argument later)
	mov esi, ebx                       ; keep the mbi address (esi: second C argument)
	call serial_init
	call check_multiboot
	call check_cpuid
	call check_long_mode
	call set_up_page_tables
	call enable_long_mode
	lgdt [gdt64.pointer]               ; 64-bit code segment
	jmp gdt64.code:long_mode_trampoline

; ---- checks: each failure names what is wrong ---------------------------------------------

check_multiboot:
	cmp edi, MB2_BOOT_MAGIC
	jne .fail
	ret
.fail:
	mov esi, msg_no_multiboot
	jmp error

check_cpuid:                           ; CPUID exists if EFLAGS.ID (bit 21) can be flipped
	pushfd
	pop eax
	mov ecx, eax
	xor eax, 1 << 21
	push eax
	popfd
	pushfd
	pop eax
	push ecx
	popfd                              ; restore the original flags
	cmp eax, ecx
	je .fail
	ret
.fail:
	mov esi, msg_no_cpuid
	jmp error

check_long_mode:
	mov eax, 0x80000000                ; highest extended leaf
	cpuid
	cmp eax, 0x80000001
	jb .fail
	mov eax, 0x80000001
	cpuid
	test edx, 1 << 29                  ; LM bit
	jz .fail
	ret
.fail:
	mov esi, msg_no_long_mode
	jmp error

; ---- page tables ------------------------------------------------------------------------
; PML4[0]   -> pdpt_low : identity map of 0-4 GiB (needed while switching modes)
; PML4[256] -> pdpt_low : the same 4 GiB at DIRECT_MAP_BASE (0xffff800000000000)
; PML4[511] -> pdpt_high: PDPT[510] maps 0-1 GiB at KERNEL_VMA (0xffffffff80000000)
; Four page directories of 512 x 2 MiB pages cover 4 GiB. C code replaces all of this later.

set_up_page_tables:
	mov eax, boot_pdpt_low
	or eax, PTE_P | PTE_W
	mov [boot_pml4], eax
	mov [boot_pml4 + 256 * 8], eax
	mov eax, boot_pdpt_high
	or eax, PTE_P | PTE_W
	mov [boot_pml4 + 511 * 8], eax

	xor ecx, ecx                       ; pdpt_low[0..3] -> pd0..pd3
.pdpt:
	mov eax, ecx
	shl eax, 12
	add eax, boot_pd
	or eax, PTE_P | PTE_W
	mov [boot_pdpt_low + ecx * 8], eax
	inc ecx
	cmp ecx, 4
	jne .pdpt

	mov eax, boot_pd                   ; pdpt_high[510] -> pd0 (first GiB)
	or eax, PTE_P | PTE_W
	mov [boot_pdpt_high + 510 * 8], eax

	xor ecx, ecx                       ; 2048 PD entries: entry i maps i * 2 MiB
.pd:
	mov eax, ecx
	shl eax, 21                        ; low 32 bits of the physical address
	or eax, PTE_P | PTE_W | PTE_PS
	mov [boot_pd + ecx * 8], eax
	mov eax, ecx
	shr eax, 11                        ; high bits: i * 2 MiB >> 32
	mov [boot_pd + ecx * 8 + 4], eax
	inc ecx
	cmp ecx, 2048
	jne .pd
	ret

enable_long_mode:
	mov eax, boot_pml4
	mov cr3, eax
	mov eax, cr4
	or eax, 1 << 5                     ; PAE
	mov cr4, eax
	mov eax, 0x80000001
	cpuid
	mov ebx, 1 << 8                    ; EFER.LME
	test edx, 1 << 20                  ; NX supported?
	jz .no_nx
	or ebx, 1 << 11                    ; EFER.NXE
.no_nx:
	mov ecx, 0xc0000080                ; EFER
	rdmsr
	or eax, ebx
	wrmsr
	mov eax, cr0
	or eax, (1 << 31) | (1 << 16)      ; PG, and WP so the kernel honours read-only pages
	mov cr0, eax
	ret

; ---- error: print "smpmm boot error: <msg>" on COM1 and VGA text, then halt --------------

serial_init:                           ; COM1 at 115200 8N1, FIFO on
	mov dx, COM1 + 1
	xor al, al
	out dx, al                         ; no interrupts
	mov dx, COM1 + 3
	mov al, 0x80
	out dx, al                         ; DLAB on
	mov dx, COM1
	mov al, 1
	out dx, al                         ; divisor 1 = 115200 baud
	mov dx, COM1 + 1
	xor al, al
	out dx, al
	mov dx, COM1 + 3
	mov al, 0x03
	out dx, al                         ; 8N1, DLAB off
	mov dx, COM1 + 2
	mov al, 0xc7
	out dx, al                         ; FIFO on, cleared
	ret

error:                                 ; esi = message (NUL-terminated); never returns
	push esi
	mov esi, msg_prefix
	call print
	pop esi
	call print
	mov esi, msg_halt
	call print
.halt:
	cli
	hlt
	jmp .halt

print:                                 ; esi = string; to COM1 and the VGA text screen
	mov edi, [vga_cursor]
.next:
	lodsb
	test al, al
	jz .done
	mov ah, al
	mov dx, COM1 + 5
.wait:
	in al, dx
	test al, 0x20                      ; transmitter holding register empty
	jz .wait
	mov al, ah
	mov dx, COM1
	out dx, al
	cmp al, 10
	je .next                           ; newline: not drawn on VGA
	mov byte [edi], al
	mov byte [edi + 1], 0x4f           ; white on red
	add edi, 2
	jmp .next
.done:
	mov [vga_cursor], edi
	ret

bits 64
long_mode_trampoline:                  ; still at a low address: jump to the higher half
	mov rax, kernel_entry64
	jmp rax

section .boot.data progbits alloc noexec write
align 8
gdt64:
	dq 0                                                       ; null
.code: equ $ - gdt64
	dq (1 << 43) | (1 << 44) | (1 << 47) | (1 << 53)           ; code, present, 64-bit
.data: equ $ - gdt64
	dq (1 << 41) | (1 << 44) | (1 << 47)                       ; data, writable, present
.pointer:
	dw $ - gdt64 - 1
	dq gdt64

vga_cursor:     dd 0xb8000
msg_prefix:       db 10, "smpmm boot error: ", 0
msg_no_multiboot: db "no multiboot2 magic in eax: boot this kernel with a multiboot2 loader (GRUB 2)", 0
msg_no_cpuid:     db "this CPU has no CPUID instruction", 0
msg_no_long_mode: db "this CPU cannot run 64-bit code (no long mode); smpmm needs x86-64", 0
msg_halt:         db 10, "smpmm boot error: halted.", 10, 0

section .boot.bss nobits alloc noexec write
align 4096
boot_pml4:      resb 4096
boot_pdpt_low:  resb 4096
boot_pdpt_high: resb 4096
boot_pd:        resb 4096 * 4
boot_stack:     resb 4096
boot_stack_top:
