# libFuzzer targets (clang, ASan + UBSan) over the kernel's pure parsers and the allocator.
# `make fuzz-smoke` (part of make test): each target for FUZZ_SMOKE_SECONDS.
# `make fuzz`: each target for FUZZ_SECONDS. New inputs go to build/fuzz/corpus/, never the tree.

FUZZ_CC            ?= clang
FUZZ_SMOKE_SECONDS ?= 12
# make fuzz: FUZZ_SECONDS per target (5 targets: 12.5 minutes in all)
FUZZ_SECONDS       ?= 150
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
FUZZ_TARGETS := multiboot acpi acpi_numa cmdline mm_ops
FUZZ_SRCS_multiboot := kernel/multiboot.c
FUZZ_SRCS_acpi := kernel/acpi.c
FUZZ_SRCS_acpi_numa := kernel/acpi_numa.c kernel/acpi.c
FUZZ_SRCS_cmdline := kernel/cmdline.c
# The allocator runs on the host shim, as in tests/host (one thread: CPU 0); the program
# decoder and the reference model are the mm API generator's (tests/gen).
FUZZ_SRCS_mm_ops := $(wildcard mm/*.c) kernel/printk.c kernel/smp.c kernel/spinlock.c kernel/rwlock.c kernel/lockdep.c kernel/cmdline.c kernel/numa.c \
	kernel/acpi_numa.c kernel/acpi.c \
	$(wildcard tests/host/shim/*.c) tests/gen/gen_prog.c tests/gen/gen_run.c tests/gen/gen_model.c
FUZZ_EXTRA_mm_ops := -pthread -DCONFIG_DEBUG_VM=1 -fsanitize-coverage-ignorelist=tests/fuzz/mm_ops.ignorelist

$(FUZZ_BUILD)/%_fuzz: tests/fuzz/%_fuzz.c tests/fuzz/fuzz.mk $(wildcard tests/fuzz/*.ignorelist) $(wildcard kernel/*.[ch] mm/*.[ch] tests/host/shim/*.[ch] tests/gen/*.[ch])
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA_$*) $< $(FUZZ_SRCS_$*) -o $@

.PHONY: fuzz fuzz-smoke fuzz-build
fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%_fuzz)

# Runs every target for $(1) seconds on a scratch copy of its seed corpus.
define fuzz_run
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		cp -n tests/fuzz/corpus/$$t/* $(FUZZ_BUILD)/corpus/$$t/ 2>/dev/null || true; \
		echo "fuzz: $$t for $(1) s"; \
		$(FUZZ_BUILD)/$${t}_fuzz -max_total_time=$(1) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t \
			> $(FUZZ_BUILD)/$$t.log 2>&1 || { tail -40 $(FUZZ_BUILD)/$$t.log; \
			echo "fuzz: $$t FAILED (reproducer in $(FUZZ_BUILD)/crash-$$t-*)"; exit 1; }; \
		grep -E "^stat::number_of_executed_units" $(FUZZ_BUILD)/$$t.log | \
			sed "s/^stat::number_of_executed_units: */fuzz: $$t ok, executions: /"; \
	done
endef

fuzz-smoke: fuzz-build
	$(call fuzz_run,$(FUZZ_SMOKE_SECONDS))

fuzz: fuzz-build
	$(call fuzz_run,$(FUZZ_SECONDS))
