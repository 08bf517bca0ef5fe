# SPDX-License-Identifier: MIT
# crypt-tool benchmark (part of `make bench`): LUKS2 format of a random
# payload against cryptsetup reencrypt --encrypt and dd, see
# bench/bench_crypt.sh.
#   make bench-crypt BENCH_CRYPT_SIZE=512M BENCH_CRYPT_RUNS=1

.PHONY: bench-crypt
bench: bench-crypt

bench-crypt: $(O)/crypt-tool
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	CRYPT_TOOL=$(abspath $(O)/crypt-tool) sh bench/bench_crypt.sh
