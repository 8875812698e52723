# The c2c plugin (tests/c2c/, docs/c2c.md): a cache-coherence model in QEMU, and what it reports.
# Included by the top Makefile. The plugin API header comes from Debian's qemu source package
# (tests/c2c/plugin_header.sh), into $(C2C_BUILD)/include: never into the tree.

C2C_BUILD := $(BUILD)/c2c
C2C_PLUGIN := $(C2C_BUILD)/c2c.so
C2C_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -I.

$(C2C_BUILD)/include/qemu-plugin.h: tests/c2c/plugin_header.sh tests/private_apt.sh
	$(Q)sh tests/c2c/plugin_header.sh $(C2C_BUILD)

$(C2C_PLUGIN): tests/c2c/plugin.c tests/c2c/model.c tests/c2c/model.h tests/c2c/c2c_mark.h \
		$(C2C_BUILD)/include/qemu-plugin.h tests/c2c/c2c.mk
	@echo "  CC      $@"
	$(Q)$(HOST_CC) $(C2C_CFLAGS) -fPIC -shared -I$(C2C_BUILD)/include -o $@ tests/c2c/plugin.c \
		tests/c2c/model.c -lpthread

$(C2C_BUILD)/test_model: tests/c2c/test_model.c tests/c2c/model.c tests/c2c/model.h tests/c2c/c2c.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(HOST_CC) $(C2C_CFLAGS) -pthread -o $@ tests/c2c/test_model.c tests/c2c/model.c

.PHONY: c2c c2c-test c2c-plugin
c2c-plugin: $(C2C_PLUGIN)

# The plugin's own cases (part of make test): the model alone on hand-written streams, then
# the kernel's bench=c2c_selftest under the plugin at 4 CPUs, every count exact.
c2c-test: check-tools $(C2C_BUILD)/test_model $(C2C_PLUGIN) iso
	$(PYTHON) tests/c2c/check.py --model $(C2C_BUILD)/test_model --plugin $(C2C_PLUGIN) \
		--iso $(ISO) --out $(C2C_BUILD)/check

# The experiments (docs/c2c.md) under the plugin, on the release kernel booted from RAM (the
# Makefile's LNX: no host-timed disk reads before kmain, so every window repeats), and their report:
# $(C2C_BUILD)/report.txt, report.json and plots. C2C_ONLY=gup,pages,drain,false_sharing picks.
C2C_ONLY ?=
c2c: check-tools $(C2C_PLUGIN) release
	$(PYTHON) tests/c2c/run.py --plugin $(C2C_PLUGIN) --iso $(RELEASE_LNX) --out $(C2C_BUILD) \
		--make "$(MAKE)" $(if $(C2C_ONLY),--only $(C2C_ONLY))
