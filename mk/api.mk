# SPDX-License-Identifier: MIT
# The public API's own checks (<dmt/reason.h>, <dmt/dmt.h>):
#   make check-reasons   every DMT_REASON_* code of include/dmt/*.h has a
#                        unique name (dmt_reason_code_name) and a sentence
#                        (tests/api/check-reasons.sh, against $(LIB))
# `make check` runs it.

.PHONY: check-reasons
check-reasons: $(LIB)
	$(Q)CC="$(CC)" sh tests/api/check-reasons.sh $(O)/api-test $(LIB) \
		$(DEP_LIBS)
check: check-reasons
