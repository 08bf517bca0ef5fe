// SPDX-License-Identifier: MIT
/*
 * The API rules of the crypt, LUKS2, authenticated-crypt, integrity and
 * fs-verity headers: <dmt/dmt.h> and <dmt/crypt_auth.h> go together (the
 * public headers only, nothing from lib/), every params struct's _init()
 * gives its defaults, a nonzero reserved word is refused with -EINVAL and
 * DMT_REASON_BAD_VALUE "reserved" (value: the word's index) before
 * anything else is looked at, and the reason codes stay in their ranges.
 */
#include <dmt/dmt.h>
#include <dmt/crypt_auth.h>
#include <dmt/dmt.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static const uint8_t key64[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

/* The refusal every reserved word gets, word by word. */
static void expect_reserved(int ret, const struct dmt_reason *r,
			    unsigned int word, const char *what)
{
	cr_expect_eq(ret, -EINVAL, "%s: reserved[%u]: %d", what, word, ret);
	cr_expect_eq(r->code, DMT_REASON_BAD_VALUE, "%s: code %d", what,
		     r->code);
	cr_expect(r->field && !strcmp(r->field, "reserved"), "%s: field %s",
		  what, r->field ? r->field : "(null)");
	cr_expect_eq(r->value, word, "%s: value %llu", what,
		     (unsigned long long)r->value);
}

Test(api_params, reason_ranges)
{
	cr_expect_eq(DMT_REASON_CRYPT_FIRST, 0x400);
	cr_expect_eq(DMT_REASON_CRYPT_CIPHER, 0x401);
	cr_expect_lt(DMT_REASON_CRYPT_BACKEND, 0x500);
	cr_expect_eq(DMT_REASON_LUKS2_FIRST, 0x500);
	cr_expect_eq(DMT_REASON_LUKS2_NO_HEADER, 0x501);
	cr_expect_lt(DMT_REASON_LUKS2_INVALID, 0x600);
	cr_expect_eq(DMT_REASON_AUTH_FIRST, 0x600);
	cr_expect_eq(DMT_REASON_AUTH_COMBINATION, 0x601);
	cr_expect_lt(DMT_REASON_AUTH_SB, 0x700);
	cr_expect_lt(DMT_REASON_FSVERITY_CHANGED, DMT_REASON_CRYPT_FIRST);
}

Test(api_params, crypt)
{
	struct dmt_crypt_params p;
	struct dmt_crypt_stream_params sp;
	struct dmt_reason r;
	struct dmt_crypt *c = NULL;

	dmt_crypt_params_init(&p);
	p.cipher = "aes-xts-plain64";
	p.key = key64;
	p.key_size = 64;
	p.sector_size = 512;
	p.threads = 1;
	for (unsigned int i = 0; i < 8; i++) {
		p.reserved[i] = 1ull << i;
		r = (struct dmt_reason){ 0 };
		expect_reserved(dmt_crypt_new(&p, &c, &r), &r, i, "crypt");
		cr_expect_null(c);
		p.reserved[i] = 0;
	}
	cr_assert_eq(dmt_crypt_new(&p, &c, NULL), 0);
	dmt_crypt_stream_params_init(&sp);
	sp.encrypt = true;
	sp.reserved[7] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_crypt_stream_run(c, &sp, &r), &r, 7, "stream");
	cr_expect_eq(dmt_crypt_stream_run(c, &sp, NULL), -EINVAL);
	dmt_crypt_free(c);
	dmt_crypt_free(NULL);
}

Test(api_params, auth)
{
	struct dmt_auth_spec s;
	struct dmt_auth_params p;
	struct dmt_auth_image_params ip;
	struct dmt_auth_result res;
	struct dmt_reason r = { 0 };
	struct dmt_auth *a = NULL;

	cr_assert_eq(dmt_auth_lookup("aes-gcm-random", "aead", 0, &s, &r), 0);
	dmt_auth_params_init(&p);
	p.spec = &s;
	p.key = key64;
	p.key_size = s.cipher_key_size + s.mac_key_size;
	p.sector_size = 512;
	p.threads = 1;
	p.reserved[2] = 5;
	expect_reserved(dmt_auth_new(&p, &a, &r), &r, 2, "auth");
	cr_expect_null(a);
	p.reserved[2] = 0;
	cr_assert_eq(dmt_auth_new(&p, &a, NULL), 0);
	dmt_auth_free(a);
	dmt_auth_free(NULL);

	/* refused before the (missing) header and files are looked at */
	dmt_auth_image_params_init(&ip);
	ip.reserved[0] = 1;
	r = (struct dmt_reason){ 0 };
	memset(&res, 0xff, sizeof(res));
	expect_reserved(dmt_auth_format(&ip, &res, &r), &r, 0, "auth image");
	cr_expect_eq(res.sectors, 0, "the result is zeroed");
	expect_reserved(dmt_auth_check(&ip, &res, &r), &r, 0, "auth check");
	expect_reserved(dmt_auth_decrypt_image(&ip, &res, &r), &r, 0,
			"auth decrypt");
	cr_expect_eq(dmt_auth_check(&ip, &res, NULL), -EINVAL);
}

Test(api_params, luks2)
{
	struct dmt_luks2_params p;
	struct dmt_luks2_keyslot_params kp;
	struct dmt_reason r = { 0 };
	struct dmt_luks2 *h = NULL;

	dmt_luks2_params_init(&p);
	cr_expect_null(p.cipher);
	cr_expect_null(p.volume_key);
	p.digest_iterations = 1000;
	p.reserved[4] = 1;
	expect_reserved(dmt_luks2_create(&p, &h, &r), &r, 4, "luks2");
	cr_expect_null(h);
	p.reserved[4] = 0;
	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0, "create: %d", r.code);

	dmt_luks2_keyslot_params_init(&kp);
	cr_expect_eq(kp.keyslot, -1, "the first free slot by default");
	cr_expect_null(kp.pbkdf.type);
	kp.pbkdf.type = "pbkdf2";
	kp.pbkdf.hash = "sha256";
	kp.pbkdf.iterations = 1000;
	kp.reserved[1] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_luks2_add_keyslot(h, &kp, "pw", 2, &r), &r, 1,
			"keyslot");
	kp.reserved[1] = 0;
	kp.pbkdf.reserved[6] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_luks2_add_keyslot(h, &kp, "pw", 2, &r), &r, 6,
			"pbkdf");
	kp.pbkdf.reserved[6] = 0;
	cr_expect_eq(dmt_luks2_add_keyslot(h, &kp, "pw", 2, NULL), 0);
	dmt_luks2_free(h);

	dmt_luks2_pbkdf_init(&kp.pbkdf);
	cr_expect_null(kp.pbkdf.type);
	cr_expect_eq(kp.pbkdf.iterations, 0);
}

Test(api_params, integrity)
{
	struct dmt_integrity_params p;
	struct dmt_integrity_result res = { 0 };
	struct dmt_integrity_layout l;
	struct dmt_reason r = { 0 };

	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t bytes;

	dmt_integrity_layout_init(&l);
	cr_expect_eq(l.sector_size, 0);
	l.sector_size = 512;
	l.tag_size = 4;
	l.dev_sectors = 1 << 15;
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, &r), 0);
	cr_expect_eq(dmt_integrity_min_device(&l, 1000, &bytes, &r), 0);
	l.reserved[7] = 1;
	expect_reserved(dmt_integrity_geom_format(&l, &sb, &g, &r), &r, 7,
			"geom_format");
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_integrity_min_device(&l, 1000, &bytes, &r), &r, 7,
			"min_device");
	l.reserved[7] = 0;
	l.tag_size = 0;
	r = (struct dmt_reason){ 0 };
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_OUT_OF_RANGE);
	cr_expect_str_eq(r.field, "tag_size");
	r = (struct dmt_reason){ 0 };
	dmt_integrity_params_init(&p);
	cr_expect_null(p.meta);
	p.alg = "crc32c";
	cr_expect_eq(dmt_integrity_params_check(&p, &r), 0);
	p.reserved[3] = 1;
	expect_reserved(dmt_integrity_params_check(&p, &r), &r, 3, "integrity");
	/* before the (missing) files */
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_integrity_format(&p, &res, &r), &r, 3, "format");
	expect_reserved(dmt_integrity_check(&p, &res, &r), &r, 3, "check");
	expect_reserved(dmt_integrity_recalculate(&p, &res, &r), &r, 3,
			"recalculate");
	cr_expect_eq(dmt_integrity_format_plan(&p, &res, NULL), -EINVAL);
	p.reserved[3] = 0;
	p.layout.reserved[5] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_integrity_params_check(&p, &r), &r, 5, "layout");
	expect_reserved(dmt_integrity_format_write(&p, &res, &r), &r, 5,
			"format_write");
}

static int nothing_read(void *fd, void *buf, size_t count)
{
	(void)fd;
	(void)buf;
	(void)count;
	return -EIO;
}

static int no_done(void *ctx, const struct dmt_fsverity_result *res,
		   const struct dmt_reason *r)
{
	(void)ctx;
	(void)res;
	(void)r;
	return 0;
}

Test(api_params, fsverity)
{
	struct dmt_fsverity_params p;
	struct dmt_fsverity_batch_params bp;
	struct dmt_fsverity_file f;
	struct dmt_fsverity_digest d;
	struct dmt_fsverity_batch *b = NULL;
	struct dmt_reason r = { 0 };

	dmt_fsverity_params_init(&p);
	cr_expect_eq(p.version, 1);
	cr_expect_eq(dmt_fsverity_check_params(&p, &r), 0);
	p.reserved[0] = 1;
	expect_reserved(dmt_fsverity_check_params(&p, &r), &r, 0, "fsverity");
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_fsverity_compute_digest(NULL, nothing_read, &p, &d,
						    &r),
			&r, 0, "compute_digest");
	p.reserved[0] = 0;

	dmt_fsverity_batch_params_init(&bp);
	cr_expect_eq(bp.tree.version, 1);
	bp.done = no_done;
	bp.tree.threads = 1;
	bp.reserved[7] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_fsverity_batch_new(&bp, &b, &r), &r, 7, "batch");
	cr_expect_null(b);
	bp.reserved[7] = 0;
	bp.tree.reserved[1] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_fsverity_batch_new(&bp, &b, &r), &r, 1,
			"batch tree");
	bp.tree.reserved[1] = 0;
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);

	dmt_fsverity_file_init(&f);
	cr_expect_eq(f.fd, -1);
	cr_expect_eq(f.size, UINT64_MAX);
	f.read_fn = nothing_read;
	f.size = 0;
	f.reserved[2] = 1;
	r = (struct dmt_reason){ 0 };
	expect_reserved(dmt_fsverity_batch_add(b, &f, &r), &r, 2, "file");
	cr_expect_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
}
