// SPDX-License-Identifier: MIT
/*
 * The conventions of <dmt/dmt.h> (suite "api"): the version header agrees
 * with the build's VERSION and the library; every params struct rejects a
 * nonzero reserved word with -EINVAL and BAD_VALUE "reserved"; result
 * structs come back with their reserved words zeroed; reason names and
 * sentences (dmt_reason_code_name, dmt_reason_format).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/dmt.h>

#include "tests/support/helpers.h"

static bool all_zero(const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (w[i])
			return false;
	}
	return true;
}

#define RESERVED_ZERO(s) \
	all_zero((s).reserved, sizeof((s).reserved) / sizeof((s).reserved[0]))

static void expect_reserved_reason(int err, const struct dmt_reason *r)
{
	cr_expect_eq(err, -EINVAL);
	cr_expect_eq(r->code, DMT_REASON_BAD_VALUE);
	cr_expect(r->field && !strcmp(r->field, "reserved"), "field %s",
		  r->field ? r->field : "(null)");
}

Test(api, version)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", DMT_VERSION_MAJOR,
		 DMT_VERSION_MINOR, DMT_VERSION_PATCH);
	cr_expect_str_eq(DMT_VERSION_STRING, want);
	/* the Makefile's VERSION (passed as -DDMT_VERSION) */
	cr_expect_str_eq(DMT_VERSION_STRING, DMT_VERSION);
	cr_expect_str_eq(dmt_version(), DMT_VERSION_STRING);
	cr_expect(DMT_VERSION_NUMBER >= DMT_VERSION_AT(0, 1, 0));
	cr_expect(DMT_VERSION_AT(0, 2, 0) > DMT_VERSION_AT(0, 1, 9));
}

Test(api, reserved_hasher)
{
	struct dmt_hasher_params p;
	struct dmt_reason r = { 0 };
	struct dmt_hasher *h = NULL;

	dmt_hasher_params_init(&p);
	p.alg = "sha256";
	p.msg_size = 64;
	cr_assert_eq(dmt_hasher_new(&p, &h, &r), 0);
	dmt_hasher_free(h);
	p.reserved[7] = 1;
	expect_reserved_reason(dmt_hasher_new(&p, &h, &r), &r);
	cr_expect_null(h);
	cr_expect_eq(r.value, 7);
}

Test(api, reserved_verity)
{
	struct dmt_verity_params p;
	struct dmt_verity_geometry g;
	struct dmt_reason r = { 0 };
	uint8_t sb[DMT_VERITY_SB_SIZE];

	dmt_verity_params_init(&p);
	p.data_blocks = 100;
	memset(&g, 0xff, sizeof(g));
	cr_assert_eq(dmt_verity_geometry(&p, &g, &r), 0);
	cr_expect(RESERVED_ZERO(g));
	p.reserved[0] = 1;
	expect_reserved_reason(dmt_verity_check_params(&p, &r), &r);
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_verity_geometry(&p, &g, &r), &r);
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_verity_sb_encode(&p, sb, &r), &r);
}

Test(api, reserved_verity_files)
{
	char *dir = th_mkdtemp(), *dpath = th_path(dir, "data"),
	     *hpath = th_path(dir, "hash");
	struct dmt_verity_params p;
	struct dmt_verity_fec_params fec;
	struct dmt_verity_result res;
	struct dmt_verity_check_result cres;
	struct dmt_fec_layout fl;
	struct dmt_reason r = { 0 };
	struct dmt_file *d = NULL, *h = NULL;

	th_write_random_file(dpath, 16 * 4096, 1);
	th_write_file(hpath, "", 0);
	cr_assert_eq(dmt_file_open(dpath, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_file_open(hpath, DMT_OPEN_RW, &h), 0);
	dmt_verity_params_init(&p);
	memset(&res, 0xff, sizeof(res));
	cr_assert_eq(dmt_verity_build(&p, d, h, &res, &r), 0);
	cr_expect(RESERVED_ZERO(res));
	cr_expect(RESERVED_ZERO(res.geo));

	memset(&cres, 0xff, sizeof(cres));
	cr_expect_eq(dmt_verity_check(&p, d, h, NULL, res.root_hash,
				      res.root_hash_size, 0, NULL, &cres, &r),
		     0);
	cr_expect(RESERVED_ZERO(cres));
	cr_expect(RESERVED_ZERO(cres.rep));
	dmt_verity_check_result_free(&cres);

	dmt_verity_fec_params_init(&fec);
	fec.reserved[3] = 5;
	expect_reserved_reason(dmt_verity_format(&p, d, h, &fec, NULL, &res,
						 &fl, &r), &r);
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_verity_check(&p, d, h, &fec,
						res.root_hash,
						res.root_hash_size, 0, NULL,
						&cres, &r), &r);
	dmt_verity_check_result_free(&cres);

	p.reserved[1] = 1;
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_verity_build(&p, d, h, &res, &r), &r);
	dmt_file_close(d);
	dmt_file_close(h);
	th_rmtree(dir);
	free(dpath);
	free(hpath);
	free(dir);
}

Test(api, reserved_fec)
{
	struct dmt_fec_params p;
	struct dmt_fec_layout l;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	char *dir = th_mkdtemp(), *path = th_path(dir, "f");

	th_write_random_file(path, 16 * 4096, 2);
	cr_assert_eq(dmt_file_open(path, DMT_OPEN_RW, &f), 0);
	dmt_fec_params_init(&p);
	cr_expect_eq(p.roots, DMT_FEC_ROOTS_DEFAULT);
	p.data = p.hash = p.fec = f;
	p.block_size = 4096;
	p.reserved[2] = 1;
	expect_reserved_reason(dmt_fec_layout(&p, &l, &r), &r);
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_fec_encode(&p, NULL, &r), &r);
	dmt_file_close(f);
	th_rmtree(dir);
	free(path);
	free(dir);
}

Test(api, reserved_sign)
{
	struct dmt_sign_params p;
	struct dmt_sign_key *k = (struct dmt_sign_key *)&p;
	struct dmt_reason r = { 0 };
	uint8_t *sig = NULL;
	size_t len = 1;

	dmt_sign_params_init(&p);
	cr_expect_null(p.key);
	p.key = p.cert = "/nonexistent/key.pem";
	p.reserved[0] = 1;
	expect_reserved_reason(dmt_sign_key_new(&p, &k, &r), &r);
	cr_expect_null(k);
	memset(&r, 0, sizeof(r));
	expect_reserved_reason(dmt_sign_root_hash(&p, "00", &sig, &len, &r),
			       &r);
	cr_expect_null(sig);
	cr_expect_eq(len, 0);
}

Test(api, reason_names)
{
	cr_expect_str_eq(dmt_reason_code_name(DMT_REASON_BAD_VALUE),
			 "bad-value");
	cr_expect_str_eq(dmt_reason_code_name(DMT_REASON_VERITY_AREA_OVERLAP),
			 "verity-area-overlap");
	cr_expect_str_eq(dmt_reason_code_name(DMT_REASON_LUKS2_KEYSLOT),
			 "luks2-keyslot");
	cr_expect_str_eq(dmt_reason_code_name(DMT_REASON_CRYPT_CIPHER),
			 "crypt-cipher");
	cr_expect_str_eq(dmt_reason_code_name(DMT_REASON_AUTH_SB), "auth-sb");
	cr_expect_null(dmt_reason_code_name(-1));
	cr_expect_null(dmt_reason_code_name(0x7fff));
}

Test(api, reason_format)
{
	struct dmt_reason r = { .code = DMT_REASON_VERITY_DIGEST_TOO_BIG,
				.field = "hash_block_size", .value = 32,
				.min = 64 };
	char buf[128], small[8];
	int n;

	n = dmt_reason_format(&r, buf, sizeof(buf));
	cr_expect_str_eq(buf, "hash_block_size: hash block too small for two "
			      "digests: 32 (min 64)");
	cr_expect_eq(n, (int)strlen(buf));
	/* snprintf semantics: truncated, NUL-terminated, full length back */
	cr_expect_eq(dmt_reason_format(&r, small, sizeof(small)), n);
	cr_expect_eq(strlen(small), sizeof(small) - 1);
	cr_expect_eq(strncmp(small, buf, sizeof(small) - 1), 0);
	cr_expect_eq(dmt_reason_format(&r, NULL, 0), n);

	r = (struct dmt_reason){ .code = DMT_REASON_IO, .path = "/x/y",
				 .field = "hash", .value = ENOSPC };
	dmt_reason_format(&r, buf, sizeof(buf));
	cr_expect(strstr(buf, "/x/y: hash: I/O error: ") == buf, "%s", buf);
	cr_expect(strstr(buf, strerror(ENOSPC)), "%s", buf);

	r = (struct dmt_reason){ .code = DMT_REASON_CONFLICT,
				 .field = "key", .field2 = "cert" };
	dmt_reason_format(&r, buf, sizeof(buf));
	cr_expect_str_eq(buf, "key: conflicts with another field (with "
			      "cert)");
	cr_expect_eq(dmt_reason_format(NULL, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "");
}
