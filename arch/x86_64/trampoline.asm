; AP start-up code. smp.c copies smp_trampoline_start..end to a free page P below 1 MiB and
; fills in the tramp_* fields; a SIPI with vector P >> 12 starts an AP at P:0 in real mode.
; Real mode -> 32-bit protected mode -> long mode (on smp.c's tramp page tables, which map
; P identically and the kernel half) -> ap_entry64 in the kernel text, which switches to the
; kernel page tables, finds this CPU's index by APIC ID and calls smp_ap_main() on its stack.
; All APs run this at once: nothing here writes memory, and each has its own stack.

global smp_trampoline_start
global smp_trampoline_end
global tramp_gdt, tramp_gdtr, tramp_far32, tramp_far64, tramp_pm32, tramp_lm64
global tramp_cr3, tramp_efer, tramp_entry, tramp_kernel_cr3
global ap_entry64
extern smp_ap_main
extern smp_boot_apic_ids        ; u32[MAX_CPUS]: APIC ID of each CPU index
extern smp_boot_stacks          ; u64[MAX_CPUS]: initial RSP of each CPU index
extern smp_boot_count           ; u32: number of valid entries

%define OFF(label) ((label) - smp_trampoline_start)

CR0_PE  equ 1 << 0
CR0_WP  equ 1 << 16
CR0_NW  equ 1 << 29
CR0_CD  equ 1 << 30
CR0_PG  equ 1 << 31
CR4_PAE equ 1 << 5
MSR_EFER equ 0xc0000080

section .rodata                 ; a template: copied, never run in place
align 16
bits 16
smp_trampoline_start:
	cli
	cld
	mov ax, cs
	mov ds, ax                  ; data at offsets from the page start
	movzx ebx, ax
	shl ebx, 4                  ; ebx = physical address of the page, kept to the end
	lgdt [OFF(tramp_gdtr)]
	mov eax, cr0
	or eax, CR0_PE
	mov cr0, eax
	o32 jmp far [OFF(tramp_far32)]      ; -> tramp_pm32, CS = 32-bit code

bits 32
tramp_pm32:
	mov ax, 0x10                ; flat 32-bit data
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov eax, cr4
	or eax, CR4_PAE
	mov cr4, eax
	mov eax, [ebx + OFF(tramp_cr3)]
	mov cr3, eax                ; tramp page tables (below 4 GiB)
	mov ecx, MSR_EFER
	mov eax, [ebx + OFF(tramp_efer)]
	mov edx, [ebx + OFF(tramp_efer) + 4]
	wrmsr                       ; LME (and NXE) as on the BSP
	mov eax, cr0
	and eax, ~(CR0_CD | CR0_NW) ; INIT leaves the caches disabled
	or eax, CR0_PG | CR0_WP
	mov cr0, eax                ; paging on: long mode active, still 32-bit code
	jmp far [ebx + OFF(tramp_far64)]    ; -> tramp_lm64, CS = 64-bit code

bits 64
tramp_lm64:
	mov ebx, ebx                ; upper half of rbx is undefined after the switch
	mov rax, [rbx + OFF(tramp_entry)]
	jmp rax                     ; ap_entry64, in the kernel half (mapped by the tramp tables)

align 8
tramp_gdt:
	dq 0                        ; null
	dq 0x00cf9a000000ffff       ; 0x08: 32-bit code, flat
	dq 0x00cf92000000ffff       ; 0x10: 32-bit data, flat
	dq 0x00209a0000000000       ; 0x18: 64-bit code
tramp_gdt_end:
tramp_gdtr:
	dw tramp_gdt_end - tramp_gdt - 1
	dd 0                        ; smp.c: P + OFF(tramp_gdt)
align 8
tramp_far32:
	dd 0                        ; smp.c: P + OFF(tramp_pm32)
	dw 0x08
align 8
tramp_far64:
	dd 0                        ; smp.c: P + OFF(tramp_lm64)
	dw 0x18
align 8
tramp_cr3:        dq 0          ; smp.c: physical address of the tramp PML4
tramp_efer:       dq 0          ; smp.c: the BSP's EFER (without LMA)
tramp_entry:      dq 0          ; smp.c: ap_entry64
tramp_kernel_cr3: dq 0          ; smp.c: the kernel page tables
smp_trampoline_end:

section .text
bits 64
; rbx = trampoline page (still mapped: we run on the tramp page tables until mov cr3).
ap_entry64:
	mov rax, [rbx + OFF(tramp_kernel_cr3)]
	mov cr3, rax                ; kernel page tables from here on
	jmp .apic_id                ; esi = this CPU's APIC ID (no stack yet: see below)
.apic_id_done:
	mov ecx, [rel smp_boot_count]
	lea rdx, [rel smp_boot_apic_ids]
	xor edi, edi
.scan:                          ; edi = index whose APIC ID is ours
	cmp edi, ecx
	jae .unknown
	cmp [rdx + rdi * 4], esi
	je .found
	inc edi
	jmp .scan
.found:
	lea rdx, [rel smp_boot_stacks]
	mov rsp, [rdx + rdi * 8]
	xor ebp, ebp                ; end of the backtrace chain
	call smp_ap_main            ; edi = CPU index; does not return
.unknown:                       ; a CPU smp.c did not ask for: stay out of the way
	cli
	hlt
	jmp .unknown

; CPUID leaf 0xb gives the full x2APIC ID when it exists (EBX[15:0] != 0), else leaf 1 has
; the 8-bit initial APIC ID. There is no stack yet, so this is jumped to and jumps back.
.apic_id:
	xor eax, eax
	cpuid
	cmp eax, 0xb
	jb .legacy
	mov eax, 0xb
	xor ecx, ecx
	cpuid
	test bx, bx
	jz .legacy
	mov esi, edx
	jmp .apic_id_done
.legacy:
	mov eax, 1
	cpuid
	shr ebx, 24
	mov esi, ebx
	jmp .apic_id_done
