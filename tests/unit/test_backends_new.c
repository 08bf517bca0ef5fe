// SPDX-License-Identifier: MIT
/*
 * Dispatch of the issue-15 backends (suite "backends_new"): the 4-lane
 * AVX2 SHA-512 is what the default dispatch uses once AVX-512 is masked
 * off, OpenSSL once AVX2 is masked off too, and a forced "avx2" hashes
 * sha512 itself; every digest is checked against OpenSSL.  (The length,
 * batch and guard-page sweeps of every engine are in test_hash.c, the FEC
 * paths in test_fec.c.)
 */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>
#include "lib/hash/hash_priv.h"

#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"

#if defined(__x86_64__)
#define NMSG 11		/* 2 x 4 lanes + 3: full and part-filled groups */
#define MSG 4096

/* Hashes NMSG messages of buf with the hasher, checks each with OpenSSL. */
static void check_digests(struct dmt_hasher *h, const char *ossl,
			  const uint8_t *buf)
{
	const uint8_t *msgs[NMSG];
	uint8_t out[NMSG * 64], want[64];
	unsigned int wl;
	size_t i;

	for (i = 0; i < NMSG; i++)
		msgs[i] = buf + i * (MSG + 1);	/* odd offsets */
	cr_assert_eq(dmt_hasher_digest(h, NMSG, msgs, NULL, out), 0);
	for (i = 0; i < NMSG; i++) {
		cr_assert(EVP_Digest(msgs[i], MSG, want, &wl,
				     EVP_get_digestbyname(ossl), NULL));
		cr_assert_eq(memcmp(out + i * wl, want, wl), 0,
			     "%s engine %s: message %zu", ossl,
			     dmt_hasher_engine(h), i);
	}
}

static uint8_t *random_msgs(void)
{
	uint8_t *buf = malloc(NMSG * (MSG + 1));
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t i;

	cr_assert_not_null(buf);
	for (i = 0; i < NMSG * (MSG + 1); i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		buf[i] = (uint8_t)s;
	}
	return buf;
}

static struct dmt_hasher *hasher(const char *alg, const char *engine)
{
	struct dmt_hasher_params p = { .alg = alg, .msg_size = MSG,
				       .engine = engine };
	struct dmt_hasher *h = NULL;

	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), 0, "%s engine %s", alg,
		     engine ? engine : "default");
	return h;
}

Test(backends_new, sha512_avx2_without_avx512)
{
	static const char *const algs[][2] = {
		{ "sha512", "SHA512" }, { "sha384", "SHA384" },
	};
	uint8_t *buf = random_msgs();
	struct dmt_hasher *h;
	size_t a;

	if (!(dmt_cpu_features() & DMT_CPU_X86_AVX2))
		cr_skip_test("no AVX2 on this CPU");
	dmt_cpu_mask_off(DMT_CPU_X86_AVX512);
	for (a = 0; a < 2; a++) {
		h = hasher(algs[a][0], NULL);
		cr_assert_str_eq(dmt_hasher_engine(h), "avx2", "%s",
				 algs[a][0]);
		cr_assert_eq(dmt_hasher_batch_width(h), 4);
		check_digests(h, algs[a][1], buf);
		dmt_hasher_free(h);
	}
	/* nothing wide left: OpenSSL, still right */
	dmt_cpu_mask_off(DMT_CPU_X86_AVX2);
	h = hasher("sha512", NULL);
	cr_assert_str_eq(dmt_hasher_engine(h), "openssl");
	check_digests(h, "SHA512", buf);
	dmt_hasher_free(h);
	free(buf);
}

Test(backends_new, sha512_avx2_forced)
{
	uint8_t *buf = random_msgs();
	struct dmt_hasher *h;

	if (!(dmt_cpu_features() & DMT_CPU_X86_AVX2))
		cr_skip_test("no AVX2 on this CPU");
	h = hasher("sha512", "avx2");
	cr_assert_str_eq(dmt_hasher_engine(h), "avx2");
	check_digests(h, "SHA512", buf);
	dmt_hasher_free(h);
	/* strict per-primitive form */
	h = hasher("sha384", "sha512=avx2");
	cr_assert_str_eq(dmt_hasher_engine(h), "avx2");
	check_digests(h, "SHA384", buf);
	dmt_hasher_free(h);
	free(buf);
}
#endif
