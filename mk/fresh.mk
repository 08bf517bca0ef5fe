# SPDX-License-Identifier: MIT
# `make check-fresh`: the README's quick start, word for word, on a new
# minimal Debian 12 root (mmdebstrap; cached outside the checkout), then
# `make check` again (nothing rebuilt) and the Debian packages built,
# installed and used there: see scripts/check-fresh.sh.  Needs root.
.PHONY: check-fresh
check-fresh:
	$(Q)bash scripts/check-fresh.sh
