# SPDX-License-Identifier: MIT
# `make check-valgrind`: a reduced suite under valgrind memcheck (about 3
# minutes on 2 cores): the library's parsers, verifiers and error paths
# in-process, and the tools on hostile superblocks and faults (valgrind
# follows the test workers and the tools they run; veritysetup and
# friends are not traced).  Valgrind hides SHA-NI and AVX-512 from CPUID,
# so the engine dispatches to what CPUID reports there (AVX2) and tests
# of forced backends skip.  Any valgrind report (one log per process in
# $(O)/valgrind/) fails the target.  The tools run are their test builds
# ($(O)/test-tools/, through DMT_TOOL_DIR): only those carry the probe
# that drops what valgrind cannot run (lib/common/cpu.c) and DMT_IO_FAULT.  VALGRIND_FILTER picks the tests
# (Criterion's extended glob).

VALGRIND ?= valgrind
VALGRIND_FLAGS ?= --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite
VALGRIND_FILTER ?= @(hash/@(kat_*|registry|oneshot|bad_params|clone_and_zero|engine_force|threads_with_clones|xxhash64)|verity/@(superblock_roundtrip_and_rejects|rejects_bad_parameters|verify_*|io_errors_are_returned|one_file_overlap_and_small_data|geometry_matches_formats_example|progress_and_abort)|integrity_sb/*|integrity_journal/*|integrity_tags/kernel_vectors|integrity_ops/*|fec/@(rs_decoder_limits|parameter_errors|tv2_golden_vector|clean_image_has_nothing_to_correct)|badinput_verity/hostile_superblocks|badinput_integrity/truncated_image|faults/hook_reaches_the_tools)

.PHONY: check-valgrind
check-valgrind: test-build
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh valgrind valgrind
	$(Q)rm -rf $(O)/valgrind && mkdir -p $(O)/valgrind
	DMT_BUILD=$(abspath $(O)) DMT_TOOL_DIR=$(abspath $(O))/test-tools \
		DMT_SRC=$(CURDIR) $(VALGRIND) -q \
		--error-exitcode=99 --trace-children=yes \
		--trace-children-skip='*/veritysetup,*/integritysetup,*/cryptsetup,*/openssl' \
		--log-file=$(abspath $(O))/valgrind/%p.log $(VALGRIND_FLAGS) \
		$(TEST_BIN) --jobs 1 --filter '$(VALGRIND_FILTER)'
	$(Q)bad=$$(find $(O)/valgrind -name '*.log' -size +0); \
	if [ -n "$$bad" ]; then \
		for f in $$bad; do echo "== $$f"; head -n 60 "$$f"; done; \
		echo "check-valgrind: valgrind reported errors (above)"; \
		exit 1; \
	fi; echo "check-valgrind: no valgrind reports"
