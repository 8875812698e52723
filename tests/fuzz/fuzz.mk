# libFuzzer targets (clang, ASan + UBSan) over the kernel's pure parsers, the allocator, and
# the boot's firmware input through the code that consumes it (boot: tests/fuzz/boot_fuzz.c).
# `make fuzz-smoke` (part of make test): each target for FUZZ_SMOKE_SECONDS from its seed
# corpus alone, with a fixed seed (-seed=1): the same start every time; the first finding
# fails it. `make fuzz`: each target for FUZZ_SECONDS; new inputs go to build/fuzz/corpus/,
# never the tree; the boot target keeps going after a broken promise (BOOT_FUZZ_FOUND) and
# after a crash or a hang (-fork=1), and what it found is listed at the end.

FUZZ_CC            ?= clang
FUZZ_SMOKE_SECONDS ?= 10
# make fuzz: FUZZ_SECONDS per target (6 targets: 15 minutes in all)
FUZZ_SECONDS       ?= 150
# An input still running after this many seconds is a hang (a boot that never ends).
FUZZ_TIMEOUT       ?= 20
FUZZ_BUILD         := $(BUILD)/fuzz
FUZZ_CFLAGS := \
	-std=gnu11 \
	-g \
	-O1 \
	-fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined \
	-Wall \
	-Wextra \
	-Werror \
	-Wno-unused-parameter \
	-I. \
	-Itests/host/shim

# Each target: tests/fuzz/<name>_fuzz.c plus the kernel sources it drives.
FUZZ_TARGETS := multiboot acpi acpi_numa cmdline mm_ops boot
FUZZ_SRCS_multiboot := kernel/multiboot.c
FUZZ_SRCS_acpi := kernel/acpi.c
FUZZ_SRCS_acpi_numa := kernel/acpi_numa.c kernel/acpi.c
FUZZ_SRCS_cmdline := kernel/cmdline.c
# The allocator runs on the host shim, as in tests/host (one thread: CPU 0); the program
# decoder and the reference model are the mm API generator's (tests/gen).
FUZZ_SRCS_mm_shim := $(wildcard mm/*.c) kernel/printk.c kernel/smp.c kernel/spinlock.c kernel/rwlock.c kernel/lockdep.c kernel/cmdline.c kernel/numa.c \
	kernel/acpi_numa.c kernel/acpi.c $(wildcard tests/host/shim/*.c)
FUZZ_SRCS_mm_ops := $(FUZZ_SRCS_mm_shim) tests/gen/gen_prog.c tests/gen/gen_run.c tests/gen/gen_model.c
FUZZ_EXTRA_mm_ops := -pthread -DCONFIG_DEBUG_VM=1 -fsanitize-coverage-ignorelist=tests/fuzz/mm_ops.ignorelist
# The boot's firmware input through its consumers: kmain's steps from the multiboot2
# information to mm_init(), on the same host shim.
FUZZ_SRCS_boot := $(FUZZ_SRCS_mm_shim) kernel/multiboot.c kernel/cmdline_boot.c
FUZZ_EXTRA_boot := -pthread -DCONFIG_DEBUG_VM=1 -fsanitize-coverage-ignorelist=tests/fuzz/boot.ignorelist

$(FUZZ_BUILD)/%_fuzz: tests/fuzz/%_fuzz.c tests/fuzz/fuzz.mk $(wildcard tests/fuzz/*.ignorelist) $(wildcard kernel/*.[ch] mm/*.[ch] tests/host/shim/*.[ch] tests/gen/*.[ch])
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA_$*) $< $(FUZZ_SRCS_$*) -o $@

.PHONY: fuzz fuzz-smoke fuzz-build
fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%_fuzz)

# fuzz-smoke: every target for $(1) seconds, from a fresh copy of its seed corpus, seed 1.
define fuzz_smoke_run
	@set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_BUILD)/smoke/$$t; mkdir -p $(FUZZ_BUILD)/smoke/$$t; \
		cp tests/fuzz/corpus/$$t/* $(FUZZ_BUILD)/smoke/$$t/; \
		echo "fuzz: $$t for $(1) s"; \
		$(FUZZ_BUILD)/$${t}_fuzz -seed=1 -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/crash-$$t- \
			$(FUZZ_BUILD)/smoke/$$t > $(FUZZ_BUILD)/$$t.log 2>&1 || { tail -40 $(FUZZ_BUILD)/$$t.log; \
			echo "fuzz: $$t FAILED (reproducer in $(FUZZ_BUILD)/crash-$$t-*)"; exit 1; }; \
		grep -E "^stat::number_of_executed_units" $(FUZZ_BUILD)/$$t.log | \
			sed "s/^stat::number_of_executed_units: */fuzz: $$t ok, executions: /"; \
	done
endef

# make fuzz: every target for $(1) seconds on its growing corpus; the boot target keeps
# going (a broken promise, a crash, a hang) and lists its findings. Fails if any was found.
define fuzz_long_run
	@set -e; found=0; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		cp -n tests/fuzz/corpus/$$t/* $(FUZZ_BUILD)/corpus/$$t/ 2>/dev/null || true; \
		echo "fuzz: $$t for $(1) s"; \
		if [ $$t = boot ]; then \
			rm -rf $(FUZZ_BUILD)/found; mkdir -p $(FUZZ_BUILD)/found/art; \
			BOOT_FUZZ_FOUND=$(FUZZ_BUILD)/found BOOT_FUZZ_T0=$$(date +%s) \
			$(FUZZ_BUILD)/boot_fuzz -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
				-use_value_profile=1 \
				-ignore_ooms=1 -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) \
				-artifact_prefix=$(FUZZ_BUILD)/found/art/ $(FUZZ_BUILD)/corpus/boot \
				> $(FUZZ_BUILD)/boot.log 2>&1 || true; \
			grep -E "^#[0-9]+:" $(FUZZ_BUILD)/boot.log | tail -1 | sed "s/^/fuzz: boot /"; \
			if [ -s $(FUZZ_BUILD)/found/found.log ] || [ -n "$$(ls $(FUZZ_BUILD)/found/art)" ]; then \
				echo "fuzz: boot FOUND (inputs and consoles in $(FUZZ_BUILD)/found/):"; \
				sort -n $(FUZZ_BUILD)/found/found.log 2>/dev/null | sed "s/^/  /"; \
				for a in $(FUZZ_BUILD)/found/art/*; do [ -e "$$a" ] && \
					echo "  crash or hang: $$a"; done; found=1; \
			else echo "fuzz: boot ok, nothing found"; fi; \
			continue; \
		fi; \
		$(FUZZ_BUILD)/$${t}_fuzz -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t \
			> $(FUZZ_BUILD)/$$t.log 2>&1 || { tail -40 $(FUZZ_BUILD)/$$t.log; \
			echo "fuzz: $$t FAILED (reproducer in $(FUZZ_BUILD)/crash-$$t-*)"; found=1; continue; }; \
		grep -E "^stat::number_of_executed_units" $(FUZZ_BUILD)/$$t.log | \
			sed "s/^stat::number_of_executed_units: */fuzz: $$t ok, executions: /"; \
	done; [ $$found = 0 ]
endef

fuzz-smoke: fuzz-build
	$(call fuzz_smoke_run,$(FUZZ_SMOKE_SECONDS))

fuzz: fuzz-build
	$(call fuzz_long_run,$(FUZZ_SECONDS))
