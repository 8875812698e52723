/* Host stand-in for cross-CPU calls: nothing pending yet. */
#include "kernel/arch.h"

void host_irq_poll(void)
{
}
