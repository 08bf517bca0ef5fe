# SPDX-License-Identifier: MIT
# crypt-tool benchmarks (part of `make bench`):
# - bench-crypt: LUKS2 format of a random payload against cryptsetup
#   reencrypt --encrypt and dd, see bench/bench_crypt.sh;
# - bench-crypt-auth: authenticated LUKS2 (gcm+aead, xts+hmac-sha256)
#   against plain LUKS2, the engine's hmac + OpenSSL's xts, and dd, see
#   bench/bench_crypt_auth.sh.
#   make bench-crypt BENCH_CRYPT_SIZE=512M BENCH_CRYPT_RUNS=1
#   make bench-crypt-auth BENCH_CRYPT_AUTH_SIZE=512M BENCH_CRYPT_AUTH_RUNS=1

.PHONY: bench-crypt bench-crypt-auth
bench: bench-crypt bench-crypt-auth

bench-crypt: $(O)/crypt-tool
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	CRYPT_TOOL=$(abspath $(O)/crypt-tool) sh bench/bench_crypt.sh

# bench_hash's rule is in mk/bench-hash.mk
bench-crypt-auth: $(O)/crypt-tool $(O)/bench/bench_hash
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	CRYPT_TOOL=$(abspath $(O)/crypt-tool) \
		BENCH_HASH=$(abspath $(O)/bench/bench_hash) \
		sh bench/bench_crypt_auth.sh
