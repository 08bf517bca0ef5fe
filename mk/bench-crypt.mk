# SPDX-License-Identifier: MIT
# crypt-tool benchmarks (part of `make bench`):
# - bench-crypt: LUKS2 format of a random payload against cryptsetup
#   reencrypt --encrypt and the copy floors (dd, bench/copy_floor.c on 1
#   and 2 threads), see bench/bench_crypt.sh;
# - bench-crypt-auth: authenticated LUKS2 (gcm+aead, xts+hmac-sha256)
#   against plain LUKS2, the engine's hmac + OpenSSL's xts, and dd, see
#   bench/bench_crypt_auth.sh.
#   make bench-crypt BENCH_CRYPT_SIZE=512M BENCH_CRYPT_RUNS=1
#   make bench-crypt-auth BENCH_CRYPT_AUTH_SIZE=512M BENCH_CRYPT_AUTH_RUNS=1

.PHONY: bench-crypt bench-crypt-auth
bench-all: bench-crypt bench-crypt-auth

# The copy floor of an in-place format, 1 or 2 threads (bench/copy_floor.c).
COPY_FLOOR := $(O)/bench/copy_floor

$(COPY_FLOOR): $(O)/bench/copy_floor.o
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

bench-crypt: $(O)/crypt-tool $(COPY_FLOOR)
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	$(Q)mkdir -p $(O)/bench
	CRYPT_TOOL=$(abspath $(O)/crypt-tool) \
		COPY_FLOOR=$(abspath $(COPY_FLOOR)) \
		BENCH_SUMMARY_DIR=$(abspath $(O)/bench) sh bench/bench_crypt.sh

# bench_hash's rule is in mk/bench-hash.mk
bench-crypt-auth: $(O)/crypt-tool $(O)/bench/bench_hash
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	CRYPT_TOOL=$(abspath $(O)/crypt-tool) \
		BENCH_HASH=$(abspath $(O)/bench/bench_hash) \
		sh bench/bench_crypt_auth.sh
-include $(O)/bench/copy_floor.d
