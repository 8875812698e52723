/*
 * The host simulates x86-64 page tables: the same entry format, walked in software (mm/vm.c,
 * mm/gup.c), so this names the x86-64 header on purpose rather than through the include path.
 */
#include "arch/x86_64/include/arch/pgtable.h"
