/* COM1 16550 UART console (polled) and the isa-debug-exit device. printk's locking is not here. */
#include <arch/console.h>
#include "io.h"

#define COM1 0x3f8
#define UART_LSR 5
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20
#define DEBUG_EXIT_PORT 0xf4

void arch_console_init(void)
{
	outb(COM1 + 1, 0x00);	/* no UART interrupts */
	outb(COM1 + 3, 0x80);	/* DLAB on */
	outb(COM1 + 0, 0x01);	/* divisor 1: 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1 */
	outb(COM1 + 2, 0xc7);	/* FIFO on and cleared */
	outb(COM1 + 4, 0x03);	/* DTR, RTS */
}

static void serial_putc(char c)
{
	while (!(inb(COM1 + UART_LSR) & LSR_THR_EMPTY))
		__asm__ __volatile__("pause");
	outb(COM1, (u8)c);
}

void arch_console_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}

int arch_console_getc(void)
{
	if (!(inb(COM1 + UART_LSR) & LSR_DATA_READY))
		return -1;
	return inb(COM1);
}

__noreturn void arch_exit_qemu(u8 code)
{
	outl(DEBUG_EXIT_PORT, code);
	for (;;)	/* no isa-debug-exit device: stop here */
		__asm__ __volatile__("cli; hlt");
}
