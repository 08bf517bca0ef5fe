# SPDX-License-Identifier: MIT
# The public API's own checks (<dmt/reason.h>, <dmt/dmt.h>):
#   make check-reasons   every DMT_REASON_* code of include/dmt/*.h has a
#                        unique name (dmt_reason_code_name) and a sentence
#                        (tests/api/check-reasons.sh, against $(LIB))
# `make check` runs it.

.PHONY: check-reasons
# built only when a header, the library or the script changed (a second
# `make check` rebuilds nothing); run every time
$(O)/api-test/reasons: $(LIB) $(wildcard include/dmt/*.h) tests/api/check-reasons.sh
	$(Q)CC="$(CC) $(SAN_FLAGS)" sh tests/api/check-reasons.sh build $(O)/api-test \
		$(LIB) $(DEP_LIBS)
check-reasons: $(O)/api-test/reasons
	$(Q)sh tests/api/check-reasons.sh run $(O)/api-test
check: check-reasons
