; The multiboot2 header: tells GRUB this is a multiboot2 kernel. Only the header lives here.
; GRUB finds it in the first 32 KiB of the image (the linker puts .multiboot2 first).

MB2_MAGIC     equ 0xe85250d6        ; multiboot2 header magic
MB2_ARCH_I386 equ 0                 ; protected-mode i386 entry (GRUB does this on BIOS and EFI)

section .multiboot2
align 8
mb2_header_start:
	dd MB2_MAGIC                                ; magic
	dd MB2_ARCH_I386                            ; architecture
	dd mb2_header_end - mb2_header_start        ; header length
	dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header_start)) ; checksum: fields sum to 0

	; Information request tag (type 1): ask for what boot needs; GRUB fails the boot if it
	; cannot give a non-optional one, so mark the header optional bit off only for mmap.
	align 8
	dw 1, 0                                     ; type 1, flags 0 (required)
	dd 8 + 4 * 2                                ; size
	dd 1                                        ; boot command line
	dd 6                                        ; memory map

	; Module alignment tag (type 6): page-align modules (none used yet, harmless).
	align 8
	dw 6, 0
	dd 8

	; End tag.
	align 8
	dw 0, 0
	dd 8
mb2_header_end:
