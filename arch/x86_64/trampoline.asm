; AP start-up code. smp.c copies smp_trampoline_start..end to a free page P below 1 MiB and
; fills in the tramp_* fields; a SIPI with vector P >> 12 starts an AP at P:0 in real mode.
; Real mode -> 32-bit protected mode -> long mode (on smp.c's tramp page tables, which map
; P identically and the kernel half) -> ap_entry64 in the kernel text, which switches to the
; kernel page tables, reads this CPU's APIC ID from its local APIC, finds the CPU index listed
; with it, claims that index's slot and calls smp_ap_main() on the slot's stack.
; All APs run this at once: the one shared word an AP writes before it has a stack is its
; slot's state (a compare-and-swap), and a CPU that finds no pending slot adds itself to the
; stray count and halts, having touched nothing else.
global smp_trampoline_start
global smp_trampoline_end
global tramp_gdt, tramp_gdtr, tramp_far32, tramp_far64, tramp_pm32, tramp_lm64
global tramp_cr3, tramp_efer, tramp_entry, tramp_kernel_cr3
global ap_entry64
extern smp_ap_main
extern smp_boot_apic_ids        ; u32[MAX_CPUS]: APIC ID of each CPU index
extern smp_boot_stacks          ; u64[MAX_CPUS]: initial RSP of each CPU index
extern smp_boot_count           ; u32: number of valid entries
extern smp_boot_state           ; u32[MAX_CPUS]: smp.c's enum ap_state of each CPU index
extern smp_boot_x2apic          ; u32: 1 if the BSP runs its local APIC in x2APIC mode
extern smp_boot_xapic_id        ; u64: xAPIC mode: the APIC ID register in the direct map
extern smp_boot_strays          ; u32: CPUs that found no pending slot (for the BSP's report)
extern smp_boot_stray_id        ; u32: the APIC ID the last of them read

%define OFF(label) ((label) - smp_trampoline_start)

CR0_PE  equ 1 << 0
CR0_WP  equ 1 << 16
CR0_NW  equ 1 << 29
CR0_CD  equ 1 << 30
CR0_PG  equ 1 << 31
CR4_PAE equ 1 << 5
MSR_EFER equ 0xc0000080
MSR_APIC_BASE equ 0x1b
MSR_X2APIC_ID equ 0x802         ; x2APIC ID register (xAPIC offset 0x20 / 16 + 0x800)
APIC_BASE_EXTD equ 1 << 10      ; x2APIC mode
APIC_BASE_EN equ 1 << 11        ; local APIC enabled
AP_PENDING equ 1                ; smp.c's enum ap_state, by value
AP_STARTING equ 2

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
; ap_entry64: an AP's first code in the kernel text, on the trampoline's page tables, with
; rbx = the trampoline page. It has no stack until it owns a slot, so its steps are jumped to
; in this order; any step that fails jumps to ap_stray, the one error routine:
;   ap_entry64        the kernel page tables
;   ap_read_apic_id   esi = this CPU's APIC ID, read from its own local APIC
;   ap_find_slot      edi = the CPU index smp.c listed with that ID
;   ap_claim_slot     slot edi: PENDING -> STARTING, or it is not ours to touch
;   ap_enter_c        slot edi's stack, then smp_ap_main(edi): its tables, GS base, ...
;   ap_stray          (error) count ourselves for the BSP's report, and halt
ap_entry64:
	mov rax, [rbx + OFF(tramp_kernel_cr3)]
	mov cr3, rax                ; kernel page tables from here on
	jmp ap_read_apic_id

; The ID the MADT lists and IPIs address is the local APIC's own, so read it there, as Linux's
; head_64.S does. x2APIC (the BSP's mode): switch this APIC to x2APIC too (a CPU starts in
; xAPIC mode; disabled -> xAPIC -> x2APIC, SDM 10.12.5) and read the 32-bit ID from its MSR.
; xAPIC: bits 31:24 of the ID register. Not CPUID: leaf 1 has only the ID's low 8 bits (x2APIC
; ID 257 reads as 1, another CPU's), and leaf 0xb is missing on older models and when firmware
; sets "Limit CPUID Maxval" (smp.c clears it, but only once the CPU runs C).
ap_read_apic_id:
	cmp dword [rel smp_boot_x2apic], 0
	je .xapic
	mov ecx, MSR_APIC_BASE
	rdmsr
	or eax, APIC_BASE_EN
	wrmsr
	or eax, APIC_BASE_EXTD
	wrmsr
	mov ecx, MSR_X2APIC_ID
	rdmsr
	mov esi, eax
	jmp ap_find_slot
.xapic:
	mov rax, [rel smp_boot_xapic_id]
	mov esi, [rax]
	shr esi, 24
	jmp ap_find_slot

; A scan of smp_boot_apic_ids[0 .. smp_boot_count) for esi (smp.c says why not a table
; indexed by ID). Not listed: a CPU smp.c did not ask for (smp.maxcpus with the broadcast).
ap_find_slot:
	mov ecx, [rel smp_boot_count]
	lea rdx, [rel smp_boot_apic_ids]
	xor edi, edi
.scan:
	cmp edi, ecx
	jae ap_stray
	cmp [rdx + rdi * 4], esi
	je ap_claim_slot
	inc edi
	jmp .scan

; One compare-and-swap makes slot edi ours, and nothing of the slot is touched before it
; succeeds. A slot that is not PENDING belongs to someone else: a CPU already running on it
; (another CPU whose ID read the same, or this one started twice) or a BSP that gave up on it
; (smp.c's abandon_late_aps() swaps PENDING -> ABANDONED: whichever swap wins decides).
ap_claim_slot:
	lea rdx, [rel smp_boot_state]
	mov eax, AP_PENDING
	mov ecx, AP_STARTING
	lock cmpxchg [rdx + rdi * 4], ecx
	jne ap_stray
	jmp ap_enter_c

; Slot edi is ours: its stack, then C, where smp_ap_main() loads its GDT, TSS, IDT, GS base.
ap_enter_c:
	lea rdx, [rel smp_boot_stacks]
	mov rsp, [rdx + rdi * 8]
	xor ebp, ebp                ; end of the backtrace chain
	call smp_ap_main            ; edi = CPU index; does not return
	ud2

; The error routine: no slot for this CPU. Tell the BSP (a count, and the ID we read), then
; halt with interrupts off, on the trampoline's tables: no stack, GDT, TSS or GS base of any
; CPU index was loaded or written.
ap_stray:
	mov [rel smp_boot_stray_id], esi
	lock inc dword [rel smp_boot_strays]
.halt:
	cli
	hlt
	jmp .halt
