# Host test harness for mm/: the real mm/*.c and kernel/{printk,spinlock,lockdep,...}.c built
# for Linux userspace against tests/host/shim/, four ways: plain, ASan+UBSan and TSan (the
# concurrent tests) are debug builds (CONFIG_DEBUG_VM=1: checks, lockdep, poisoned frees);
# release is what users run (CONFIG_DEBUG_VM=0, so mm.poison's default is off: the path a
# release kernel takes on every free runs under the tests too).
# Included by the top Makefile; `make host-test` builds and runs all four.

HOST_CC    ?= $(CC)
HOST_BUILD := $(BUILD)/host
# Every mm/ source: the page allocator, and what it calls into (page_alloc.c checks pins
# through gup.c, which needs vm.c; fail_page_alloc.c's boot options parse with cmdline.c).
HOST_MM_SRC := $(wildcard mm/*.c)
# Suites of tests/kernel/ that run on the host too (one source, both platforms) use
# tests/lab/lab_platform.h, which harness.c implements for the host.
HOST_SRC   := $(HOST_MM_SRC) kernel/printk.c kernel/smp.c kernel/spinlock.c kernel/rwlock.c kernel/lockdep.c kernel/cmdline.c kernel/numa.c kernel/acpi_numa.c \
	kernel/acpi.c kernel/multiboot.c kernel/cmdline_boot.c tests/ktest/ktest_check.c tests/host/harness.c \
	tests/kernel/mm_private.c tests/kernel/mm_pcp_private.c tests/kernel/gup_private.c \
	tests/kernel/lockdep.c tests/kernel/cmdline_parse.c \
	tests/host/bench_host.c tests/lab/gup_test.c tests/lab/pcp_bulk.c \
	tests/host/preempt.c tests/host/fn_trace.c \
	$(wildcard tests/host/test_*.c) \
	$(wildcard tests/host/shim/*.c) $(wildcard tests/gen/*.c)
HOST_CFLAGS := \
	-std=gnu11 \
	-g \
	-pthread \
	-Wall \
	-Wextra \
	-Werror \
	-Wno-unused-parameter \
	-fno-strict-aliasing \
	-MMD \
	-MP \
	-I. \
	-Itests/host/shim
HOST_VARIANT_FLAGS_plain := -O2 -DCONFIG_DEBUG_VM=1
HOST_VARIANT_FLAGS_asan  := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -DCONFIG_DEBUG_VM=1
# gcc warns that TSan does not model atomic_thread_fence (no mm/ code uses one today)
HOST_VARIANT_FLAGS_tsan  := -O1 -fsanitize=thread $(if $(findstring clang,$(HOST_CC)),,-Wno-tsan) \
	-DCONFIG_DEBUG_VM=1
HOST_VARIANT_FLAGS_release := -O2 -DCONFIG_DEBUG_VM=0
HOST_VARIANTS := plain asan tsan release
# What mm/ and kernel/ functions a scenario runs (tests/host/fn_trace.c: docs/pcp.md's
# reading list (b), checked by make fastpath-check): every function of theirs entered, inlined
# or not, calls a hook; the lab's own and the shim's are left out. Not part of host-test.
HOST_FNTRACE_FLAGS := -finstrument-functions -finstrument-functions-exclude-file-list=tests/
HOST_VARIANT_FLAGS_fntrace := -O2 -DCONFIG_DEBUG_VM=1 $(HOST_FNTRACE_FLAGS)
HOST_VARIANT_FLAGS_fntrace-release := -O2 -DCONFIG_DEBUG_VM=0 $(HOST_FNTRACE_FLAGS)
HOST_FNTRACE_VARIANTS := fntrace fntrace-release

define host_variant
HOST_OBJ_$(1) := $$(patsubst %.c,$(HOST_BUILD)/$(1)/%.o,$(HOST_SRC))
$(HOST_BUILD)/$(1)/%.o: %.c tests/host/host.mk
	@mkdir -p $$(dir $$@)
	@echo "  HOSTCC($(1)) $$<"
	@$(HOST_CC) $(HOST_CFLAGS) $(HOST_VARIANT_FLAGS_$(1)) -c $$< -o $$@
$(HOST_BUILD)/$(1)/mmtest: $$(HOST_OBJ_$(1))
	@echo "  HOSTLD($(1)) $$@"
	@$(HOST_CC) $(HOST_CFLAGS) $(HOST_VARIANT_FLAGS_$(1)) -o $$@ $$^ -lm
-include $$(HOST_OBJ_$(1):.o=.d)
endef
$(foreach v,$(HOST_VARIANTS) $(HOST_FNTRACE_VARIANTS),$(eval $(call host_variant,$(v))))

.PHONY: host-test host-build
host-build: $(foreach v,$(HOST_VARIANTS),$(HOST_BUILD)/$(v)/mmtest) $(HOST_BUILD)/acpi_test

# The ACPI parsers' own test program (hand-built tables, then random corruption), ASan+UBSan.
$(HOST_BUILD)/acpi_test: tests/host/acpi_test.c kernel/acpi.c kernel/acpi.h kernel/acpi_numa.c \
		kernel/acpi_numa.h tests/host/host.mk
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOST_CC) -std=gnu11 -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I. -Itests/host/shim -o $@ tests/host/acpi_test.c kernel/acpi.c \
		kernel/acpi_numa.c

host-test: host-build
	@sh tests/host/run.sh $(HOST_BUILD)
