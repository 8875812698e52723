# The mm API generator (tests/gen/README.md): `mmtest --gen` of the host builds.
# `make gen-smoke` (part of make test): a fixed set of seeds in the plain, ASan+UBSan and TSan
# builds, about a minute on 2 cores. `make stress-api`: new seeds for as long as asked.
# Included by the top Makefile, after tests/host/host.mk.

# make stress-api: SECONDS of seeds from SEED (default: the time), or SEEDS of them, in the
# GEN_BUILD host build (plain, asan, tsan); OPS per program; CPUS per phase (default: by seed).
SECONDS   ?= 600
SEEDS     ?= 0
SEED      ?=
OPS       ?= 150
CPUS      ?=
GEN_BUILD ?= plain

.PHONY: gen-smoke stress-api
gen-smoke: $(HOST_BUILD)/plain/mmtest $(HOST_BUILD)/asan/mmtest $(HOST_BUILD)/tsan/mmtest
	@sh tests/gen/smoke.sh $(HOST_BUILD)

stress-api: $(HOST_BUILD)/$(GEN_BUILD)/mmtest
	@ASAN_OPTIONS=detect_leaks=0 \
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/host/tsan.supp" \
	nice -n 5 $(HOST_BUILD)/$(GEN_BUILD)/mmtest --gen --keep-going \
		--seed $(if $(SEED),$(SEED),$$(date +%s)) --ops $(OPS) \
		$(if $(filter-out 0,$(SEEDS)),--seeds $(SEEDS),--seconds $(SECONDS)) \
		$(if $(CPUS),--cpus $(CPUS)) $(if $(filter tsan,$(GEN_BUILD)),--sched free --verify-alone) \
		| tee $(HOST_BUILD)/stress-api.log
