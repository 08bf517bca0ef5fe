# SPDX-License-Identifier: MIT
# `make check-layers` (part of make check): no include from a lower layer
# of lib/ into a higher one (lib/common below lib/hash below the rest;
# scripts/check-layers.sh has the table), none from include/dmt/ into lib/,
# after the script's self-test shows it catches one.

.PHONY: check-layers
check-layers:
	$(Q)sh scripts/check-layers.sh --self-test
	$(Q)sh scripts/check-layers.sh .
check: check-layers
