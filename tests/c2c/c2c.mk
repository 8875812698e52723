# The c2c plugin (tests/c2c/, docs/c2c.md): a cache-coherence model in QEMU, and what it reports.
# Included by the top Makefile. The plugin API header comes from Debian's qemu source package
# (tests/c2c/plugin_header.sh), into $(C2C_BUILD)/include: never into the tree.

C2C_BUILD := $(BUILD)/c2c
C2C_PLUGIN := $(C2C_BUILD)/c2c.so
C2C_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -I.

$(C2C_BUILD)/include/qemu-plugin.h: tests/c2c/plugin_header.sh tests/private_apt.sh
	$(Q)sh tests/c2c/plugin_header.sh $(C2C_BUILD)

$(C2C_PLUGIN): tests/c2c/plugin.c tests/c2c/model.c tests/c2c/output.c tests/c2c/model.h tests/c2c/c2c_mark.h \
		$(C2C_BUILD)/include/qemu-plugin.h tests/c2c/c2c.mk
	@echo "  CC      $@"
	$(Q)$(HOST_CC) $(C2C_CFLAGS) -fPIC -shared -I$(C2C_BUILD)/include -o $@ tests/c2c/plugin.c \
		tests/c2c/model.c tests/c2c/output.c -lpthread

$(C2C_BUILD)/test_model: tests/c2c/test_model.c tests/c2c/model.c tests/c2c/output.c tests/c2c/model.h tests/c2c/c2c.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(HOST_CC) $(C2C_CFLAGS) -pthread -o $@ tests/c2c/test_model.c tests/c2c/model.c tests/c2c/output.c

.PHONY: c2c c2c-test c2c-plugin c2c-small
c2c-plugin: $(C2C_PLUGIN)

# The plugin's own cases (part of make test): every machine file's values sourced or assumed
# with a range, the model alone on hand-written streams, then the kernel's bench=c2c_selftest
# under the plugin at 4 CPUs, every count exact; then the selftest's recorded streams replayed
# without QEMU (the live run's counts again) and on every machine file, each access's outcome
# checked against the MESI table by a second model (tests/c2c/mesi_check.py); then the
# conflict-freedom layer: the release kernel booted from RAM, bench=c2c_conflict
# (tests/c2c/conflict.py), and the pictures of that boot (tests/c2c/pictures.py --check).
# Each part ends with its `N passed, N failed`; the last line adds them up (make test reads it).
C2C_TEST_PARTS = "$(PYTHON) tests/c2c/machine.py check" \
	"$(PYTHON) tests/c2c/check.py --model $(C2C_BUILD)/test_model --plugin $(C2C_PLUGIN) --iso $(ISO) --out $(C2C_BUILD)/check" \
	"$(PYTHON) tests/c2c/replay_check.py --plugin $(C2C_PLUGIN) --replay $(C2C_BUILD)/replay --iso $(ISO) --out $(C2C_BUILD)/replay-check" \
	"$(PYTHON) tests/c2c/conflict.py --plugin $(C2C_PLUGIN) --iso $(RELEASE_LNX) --out $(C2C_BUILD)/conflict" \
	"$(PYTHON) tests/c2c/pictures.py --check --counts $(C2C_BUILD)/conflict/conflict.json --log $(C2C_BUILD)/conflict/conflict.log --elf $(BUILD)/release/smpmm.elf --out $(C2C_BUILD)/conflict/c2c.html"
c2c-test: check-tools $(C2C_BUILD)/test_model $(C2C_BUILD)/replay $(C2C_PLUGIN) iso release
	@rc=0; sums=$(C2C_BUILD)/c2c-test.sums; : > $$sums; \
	for part in $(C2C_TEST_PARTS); do \
		echo "$$part"; $$part > $$sums.part 2>&1 || rc=1; cat $$sums.part; \
		grep -E '^[0-9]+ passed, [0-9]+ failed' $$sums.part | tail -n 1 >> $$sums; \
	done; \
	awk '{ p += $$1; f += $$3 } END { print p " passed, " f " failed" }' $$sums; \
	exit $$rc

# The experiments (docs/c2c.md) under the plugin, on the release kernel booted from RAM (the
# Makefile's LNX: no host-timed disk reads before kmain, so every window repeats), and their report:
# $(C2C_BUILD)/report.txt, report.json and plots. C2C_ONLY=gup,pages,drain,false_sharing picks.
C2C_ONLY ?=
c2c: check-tools $(C2C_PLUGIN) release
	$(PYTHON) tests/c2c/run.py --plugin $(C2C_PLUGIN) --iso $(RELEASE_LNX) --out $(C2C_BUILD) \
		--make "$(MAKE)" $(if $(C2C_ONLY),--only $(C2C_ONLY))

# The same experiments at 4 CPUs, in under a minute, with their pictures (tests/c2c/small.py):
# $(BUILD)/c2c-small/c2c.html (heat maps, the hottest line's owner over time, struct layouts
# coloured by transfers, annotated source), report*.txt and summary.txt.
c2c-small: check-tools $(C2C_PLUGIN) release
	$(PYTHON) tests/c2c/small.py --plugin $(C2C_PLUGIN) --image $(RELEASE_LNX) --out $(BUILD)/c2c-small \
		--make "$(MAKE)"

# The pictures page of c2c-small as a browser shows it (not in make test: installing Chromium
# costs minutes): headless Chromium renders $(BUILD)/c2c-small/c2c.html (made by c2c-small if
# it is missing) into a screenshot, which tests/c2c/browser_check.py checks is not blank (and
# that a blank page is judged blank). Debian's chromium is installed here if missing, as root,
# as make deps installs the others: it is in no other rule and not in DEBIAN_PKGS.
C2C_SMALL_HTML := $(BUILD)/c2c-small/c2c.html
.PHONY: c2c-browser-check
c2c-browser-check:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "c2c-browser-check needs Debian's chromium; run as root:"; \
			echo "  apt-get update && apt-get install -y chromium"; exit 1; \
		fi; \
		mkdir -p $(BUILD); log=$(BUILD)/chromium-deps.log; \
		echo "c2c-browser-check: installing chromium with apt-get; full log: $$log"; \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } \
			>$$log 2>&1 </dev/null || { echo "apt-get failed; the last lines of $$log:"; \
			tail -n 15 $$log | sed 's/^/    /'; exit 1; }; \
	fi
	@[ -e $(C2C_SMALL_HTML) ] || { echo "c2c-browser-check: no $(C2C_SMALL_HTML): make c2c-small"; \
		$(MAKE) --no-print-directory c2c-small; }
	$(PYTHON) tests/c2c/browser_check.py --html $(C2C_SMALL_HTML) --out $(BUILD)/c2c-small/browser

# The model without QEMU, on recorded streams (the plugin's trace=DIR): tests/c2c/replay.c.
$(C2C_BUILD)/replay: tests/c2c/replay.c tests/c2c/model.c tests/c2c/output.c tests/c2c/model.h tests/c2c/c2c.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(HOST_CC) $(C2C_CFLAGS) -o $@ tests/c2c/replay.c tests/c2c/model.c tests/c2c/output.c

# What make c2c does not run (long): each headline figure's modelled range and sensitivity
# over the machines' assumed parameters, from recorded streams (tests/c2c/sweep.py), for the
# seed's gup_test and the PFT table; has_pinned at 40, 128 and 255 CPUs (255: hours) with
# its ranges; the lists-off pairs at several start phases (their spread). docs/c2c.md.
# C2C_RESUME=1 continues a run cut short: boots already made and sweeps' parameters are kept
# (run.py --resume; a sweep is kept only if its nominal figures replay the same).
C2C_RUN = $(PYTHON) tests/c2c/run.py --plugin $(C2C_PLUGIN) --iso $(RELEASE_LNX) --make "$(MAKE)" \
	$(if $(C2C_RESUME),--resume)
.PHONY: c2c-ranges c2c-scale c2c-phases
c2c-ranges: check-tools $(C2C_PLUGIN) $(C2C_BUILD)/replay release
	$(C2C_RUN) --only gup-smt,pft --pft-phases 3 --trace $(C2C_BUILD)/trace --sweep --replay $(C2C_BUILD)/replay \
		--out $(C2C_BUILD)/ranges
c2c-scale: check-tools $(C2C_PLUGIN) $(C2C_BUILD)/replay release
	$(C2C_RUN) --only scale --trace $(C2C_BUILD)/trace --sweep --replay $(C2C_BUILD)/replay \
		--out $(C2C_BUILD)/scale
c2c-phases: check-tools $(C2C_PLUGIN) release
	$(C2C_RUN) --only phases --out $(C2C_BUILD)/phases
