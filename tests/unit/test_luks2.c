// SPDX-License-Identifier: MIT
/*
 * lib/crypt LUKS2 headers against libcryptsetup 2.6.1 and the cryptsetup
 * CLI (on copies under /var/tmp: cryptsetup may repair what it opens):
 * it loads our headers, accepts our passphrases (activation without a
 * name: no kernel), returns our volume key, and sectors our engine wrote
 * decrypt through plain OpenSSL; luksDump / luksAddKey / luksChangeKey /
 * repair work on them; we read what luksFormat writes; damage is refused
 * with a reason, one bad copy is survived.  PBKDF costs are forced cheap.
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>) && __has_include(<argon2.h>)
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libcryptsetup.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include <dmt/crypt.h>
#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

#include "lib/crypt/luks2_priv.h"

static const char pass[] = "test passphrase";
static const struct dmt_luks2_pbkdf cheap_pbkdf2 = {.type = "pbkdf2",
						    .hash = "sha256",
						    .iterations = 1000,
						    .memory_kb = 0,
						    .parallel = 0};
static const struct dmt_luks2_pbkdf cheap_argon2id = {.type = "argon2id",
						      .hash = NULL,
						      .iterations = 1,
						      .memory_kb = 32,
						      .parallel = 1};

struct image {
	char *path;		/* header (and data, unless detached) */
	char *data;		/* data device (== path when attached) */
	uint8_t vk[64];
	size_t vk_len;
	uint64_t data_offset;
	unsigned int sector_size;
	const char *cipher;
};

/*
 * Our header plus n sectors of payload (seeded) encrypted by the engine at
 * the segment's offset.
 */
static void make_image(const char *dir, const char *name,
		       struct dmt_luks2_params *p,
		       const struct dmt_luks2_keyslot_params *kp, size_t n,
		       struct image *img)
{
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL, *d = NULL;
	struct dmt_luks2_segment seg;
	struct dmt_crypt *c;
	const uint8_t *vk;
	uint8_t *buf;

	memset(img, 0, sizeof(*img));
	img->path = th_path(dir, name);
	cr_assert_eq(dmt_luks2_create(p, &h, &r), 0, "create: %d %s", r.code,
		     r.field ? r.field : "");
	cr_assert_geq(dmt_luks2_add_keyslot(h, kp, pass, strlen(pass), &r), 0,
		      "add_keyslot: %d", r.code);
	cr_assert_eq(
		dmt_file_open(img->path, DMT_OPEN_RW | DMT_OPEN_CREATE, &f), 0);
	cr_assert_eq(dmt_luks2_write(h, f, &r), 0, "write: %d", r.code);
	cr_assert_eq(dmt_luks2_get_segment(h, &seg), 0);
	vk = dmt_luks2_volume_key(h, &img->vk_len);
	memcpy(img->vk, vk, img->vk_len);
	img->data_offset = seg.offset;
	img->sector_size = seg.sector_size;
	img->cipher = p->cipher ? p->cipher : "aes-xts-plain64";
	img->data = p->detached ? th_path(dir, "data.img") : strdup(img->path);
	if (p->detached)
		cr_assert_eq(dmt_file_open(img->data,
					   DMT_OPEN_RW | DMT_OPEN_CREATE, &d),
			     0);
	buf = malloc(n * seg.sector_size);
	th_fill_random(buf, n * seg.sector_size, 77);
	cr_assert_eq(dmt_crypt_new(
			     &(struct dmt_crypt_params){
				     .cipher = seg.cipher,
				     .key = vk,
				     .key_size = img->vk_len,
				     .sector_size = seg.sector_size,
				     .iv_offset = seg.iv_tweak},
			     &c, &r),
		     0);
	cr_assert_eq(dmt_crypt_encrypt(c, 0, n, buf, buf), 0);
	cr_assert_eq(dmt_pwrite_full(p->detached ? d : f, buf,
				     n * seg.sector_size, seg.offset), 0);
	dmt_crypt_free(c);
	free(buf);
	if (p->detached)
		dmt_file_close(d);
	dmt_file_close(f);
	dmt_luks2_free(h);
}

static void image_free(struct image *img)
{
	free(img->path);
	free(img->data);
}

/* OpenSSL alone: sector s of the data decrypts to the seeded payload. */
static void check_payload_openssl(const struct image *img, size_t n)
{
	size_t ss = img->sector_size, len;
	uint8_t *want = malloc(n * ss), *file = th_read_file(img->data, &len);
	bool xts = strstr(img->cipher, "xts") != NULL;
	bool essiv = strstr(img->cipher, "essiv") != NULL;
	const EVP_CIPHER *evp =
		xts ? (img->vk_len == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts()) :
		      (img->vk_len == 16 ? EVP_aes_128_cbc() :
		       img->vk_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc());
	uint8_t salt[32];

	th_fill_random(want, n * ss, 77);
	cr_assert_geq(len, img->data_offset + n * ss);
	EVP_Digest(img->vk, img->vk_len, salt, NULL, EVP_sha256(), NULL);
	for (size_t s = 0; s < n; s++) {
		/* LUKS2: the IV counts 512-byte sectors (no iv_large_sectors) */
		uint64_t ivs = s * (ss / 512);
		uint8_t iv[16] = { 0 }, out[4096];
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		int l;

		for (int i = 0; i < 8; i++)
			iv[i] = (uint8_t)(ivs >> (8 * i));
		if (essiv) {
			EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new();

			EVP_EncryptInit_ex(e, EVP_aes_256_ecb(), NULL, salt, NULL);
			EVP_CIPHER_CTX_set_padding(e, 0);
			EVP_EncryptUpdate(e, iv, &l, iv, 16);
			EVP_CIPHER_CTX_free(e);
		}
		cr_assert(EVP_DecryptInit_ex(ctx, evp, NULL, img->vk, iv));
		EVP_CIPHER_CTX_set_padding(ctx, 0);
		cr_assert(EVP_DecryptUpdate(ctx, out, &l,
					    file + img->data_offset + s * ss,
					    (int)ss));
		EVP_CIPHER_CTX_free(ctx);
		cr_expect_eq(memcmp(out, want + s * ss, ss), 0,
			     "%s ss %zu: sector %zu", img->cipher, ss, s);
	}
	free(want);
	free(file);
}

/* libcryptsetup: load, passphrase right and wrong, volume key, fields. */
static void check_with_libcryptsetup(const struct image *img, bool detached)
{
	struct crypt_device *cd = NULL;
	char vk[64];
	size_t vk_len = sizeof(vk);
	int slot;

	if (detached)
		cr_assert_eq(crypt_init_data_device(&cd, img->path, img->data), 0);
	else
		cr_assert_eq(crypt_init(&cd, img->path), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0, "crypt_load %s",
		     img->path);
	slot = crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT, pass,
					    strlen(pass), 0);
	cr_expect_geq(slot, 0, "passphrase refused: %d", slot);
	cr_expect_lt(crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT,
						  "wrong", 5, 0), 0);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk, &vk_len, pass,
					  strlen(pass)), slot < 0 ? 0 : slot);
	cr_assert_eq(vk_len, img->vk_len);
	cr_expect_eq(memcmp(vk, img->vk, vk_len), 0, "volume key differs");
	cr_expect_eq(crypt_get_data_offset(cd) * 512, img->data_offset);
	cr_expect_eq((unsigned int)crypt_get_sector_size(cd), img->sector_size);
	crypt_free(cd);
}

static struct dmt_luks2_keyslot_params kp_pbkdf2(void)
{
	return (struct dmt_luks2_keyslot_params){ .keyslot = -1,
						  .pbkdf = cheap_pbkdf2 };
}

Test(luks2, every_cipher_and_sector_size, .timeout = 120)
{
	static const char *const ciphers[] = { "aes-xts-plain64", "aes-xts-plain",
					       "aes-cbc-essiv:sha256",
					       "aes-cbc-plain64" };
	static const unsigned int sizes[] = { 512, 4096 };
	char *dir = th_mkdtemp();

	for (int ci = 0; ci < 4; ci++) {
		for (int si = 0; si < 2; si++) {
			struct dmt_luks2_params p = {
				.cipher = ciphers[ci],
				.sector_size = sizes[si],
				.data_offset = 2u << 20,
				.digest_iterations = 1000,
			};
			struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
			struct image img;

			if (ci == 1)
				p.volume_key_size = 32; /* aes-128-xts */
			if (si)
				kp.pbkdf = cheap_argon2id;
			make_image(dir, "img", &p, &kp, 24, &img);
			check_with_libcryptsetup(&img, false);
			check_payload_openssl(&img, 24);
			image_free(&img);
		}
	}
	th_rmtree(dir);
	free(dir);
}

/* The unused end of the keyslots area (the last MiB before the 16 MiB data
 * offset) is random filler, as luksFormat leaves it: every byte value about
 * equally often (1 MiB: 4096 expected, sd 64). */
static void expect_random_filler(const char *path)
{
	size_t n = 1u << 20, count[256] = { 0 };
	uint8_t *buf = malloc(n);
	int fd = open(path, O_RDONLY);

	cr_assert(buf && fd >= 0);
	cr_assert_eq(pread(fd, buf, n, (16u << 20) - n), (ssize_t)n);
	for (size_t i = 0; i < n; i++)
		count[buf[i]]++;
	for (int v = 0; v < 256; v++)
		cr_expect(count[v] > 3600 && count[v] < 4600,
			  "byte %#x occurs %zu times in the filler", v,
			  count[v]);
	close(fd);
	free(buf);
}

/* luksFormat's defaults on a file: 16 MiB offset, 4096-byte sectors,
 * aes-xts-plain64 with a 512-bit key, keyslots_size 16 MiB - 32 KiB. */
Test(luks2, defaults_as_luksformat_and_dump, .timeout = 60)
{
	char *dir = th_mkdtemp(), *out = NULL, *err = NULL;
	struct dmt_luks2_params p = { .digest_iterations = 1000,
				      .label = "our label",
				      .subsystem = "our subsystem",
				      .uuid = "0f2c6bd4-2a4b-4dc3-9d6e-8a3a2fb4c5d1" };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct image img;

	make_image(dir, "img", &p, &kp, 8, &img);
	cr_expect_eq(img.data_offset, 16u << 20);
	cr_expect_eq(img.sector_size, 4096);
	cr_expect_eq(img.vk_len, 64);
	check_with_libcryptsetup(&img, false);
	check_payload_openssl(&img, 8);
	cr_assert_eq(th_sh(&out, &err, "cryptsetup luksDump '%s'", img.path), 0,
		     "%s", err);
	cr_expect(strstr(out, "UUID:          \t0f2c6bd4-2a4b-4dc3-9d6e-8a3a2fb4c5d1"),
		  "%s", out);
	cr_expect(strstr(out, "Label:         \tour label"), "%s", out);
	cr_expect(strstr(out, "Subsystem:     \tour subsystem"), "%s", out);
	cr_expect(strstr(out, "Keyslots area: \t16744448 [bytes]"), "%s", out);
	cr_expect(strstr(out, "Cipher:     aes-xts-plain64"), "%s", out);
	cr_expect(strstr(out, "Cipher key: 512 bits"), "%s", out);
	cr_expect(strstr(out, "AF stripes: 4000"), "%s", out);
	cr_expect(strstr(out, "Area length:258048 [bytes]"), "%s", out);
	expect_random_filler(img.path);
	free(out);
	free(err);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

/* Our reader after cryptsetup changed our header; cryptsetup after us. */
static void unlock_expect(const char *path, const char *pw, int slot,
			  const uint8_t *vk, size_t vk_len)
{
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	const uint8_t *got;
	size_t len;

	cr_assert_eq(dmt_file_open(path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0, "load %s: %d %s", path,
		     r.code, r.field ? r.field : "");
	cr_expect_eq(dmt_luks2_unlock(h, -1, pw, strlen(pw), &r), slot,
		     "unlock '%s'", pw);
	got = dmt_luks2_volume_key(h, &len);
	cr_assert_not_null(got);
	cr_expect_eq(len, vk_len);
	cr_expect_eq(memcmp(got, vk, vk_len), 0);
	dmt_luks2_free(h);
	dmt_file_close(f);
}

Test(luks2, cryptsetup_addkey_changekey_repair, .timeout = 120)
{
	char *dir = th_mkdtemp(), *err = NULL;
	struct dmt_luks2_params p = { .data_offset = 2u << 20,
				      .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	const char *cheap = "--pbkdf pbkdf2 --pbkdf-force-iterations 1000";
	struct image img;

	make_image(dir, "img", &p, &kp, 4, &img);
	cr_assert_eq(th_sh(NULL, &err,
			   "cd '%s' && printf '%%s' '%s' > pw && printf second > pw2 && "
			   "printf third > pw3 && "
			   "cryptsetup luksAddKey -q %s --key-file pw img pw2 && "
			   "cryptsetup luksChangeKey -q %s --key-file pw img pw3",
			   dir, pass, cheap, cheap), 0, "%s", err);
	free(err);
	/* slot 0 changed (luksChangeKey may move it), slot 1 added */
	unlock_expect(img.path, "second", 1, img.vk, img.vk_len);
	{
		struct dmt_luks2 *h = NULL;
		struct dmt_file *f = NULL;
		struct dmt_reason r = { 0 };

		cr_assert_eq(dmt_file_open(img.path, DMT_OPEN_READ, &f), 0);
		cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
		cr_expect_geq(dmt_luks2_unlock(h, -1, "third", 5, &r), 0);
		cr_expect_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), &r),
			     -EPERM);
		cr_expect_eq(r.code, DMT_REASON_LUKS2_WRONG_PASSPHRASE);
		dmt_luks2_free(h);
		dmt_file_close(f);
	}
	err = NULL;
	cr_expect_eq(th_sh(NULL, &err, "cryptsetup repair -q '%s'", img.path),
		     0, "%s", err);
	free(err);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

/* Headers luksFormat wrote: same volume key as libcryptsetup reports. */
static void read_theirs(const char *dir, const char *opts, unsigned int ss,
			const char *cipher, size_t ks)
{
	char *path = th_path(dir, "theirs.img"), *err = NULL;
	struct crypt_device *cd = NULL;
	struct dmt_luks2 *h = NULL;
	struct dmt_luks2_segment seg;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	char vk[64];
	size_t vk_len = sizeof(vk);

	th_write_random_file(path, 20u << 20, 3);
	cr_assert_eq(th_sh(NULL, &err,
			   "printf '%%s' '%s' | cryptsetup luksFormat -q --type luks2 "
			   "%s --label theirs --sector-size %u --cipher %s "
			   "--key-size %zu --key-file - '%s'",
			   pass, opts, ss, cipher, ks * 8, path), 0, "%s", err);
	free(err);
	cr_assert_eq(crypt_init(&cd, path), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
	cr_assert_geq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk, &vk_len,
					   pass, strlen(pass)), 0);
	cr_assert_eq(dmt_file_open(path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0, "%s: %d %s", opts, r.code,
		     r.field ? r.field : "");
	cr_expect_str_eq(dmt_luks2_uuid(h), crypt_get_uuid(cd));
	cr_expect_str_eq(dmt_luks2_label(h), "theirs");
	cr_assert_eq(dmt_luks2_get_segment(h, &seg), 0);
	cr_expect_eq(seg.offset, crypt_get_data_offset(cd) * 512);
	cr_expect_eq(seg.sector_size, ss);
	cr_expect_str_eq(seg.cipher, cipher);
	cr_expect_eq(seg.size, DMT_LUKS2_SIZE_DYNAMIC);
	cr_expect_eq(dmt_luks2_unlock(h, -1, "nope", 4, &r), -EPERM);
	cr_expect_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), &r), 0, "%s",
		     opts);
	cr_assert_not_null(dmt_luks2_volume_key(h, NULL));
	cr_expect_eq(memcmp(dmt_luks2_volume_key(h, NULL), vk, vk_len), 0);
	dmt_luks2_free(h);
	dmt_file_close(f);
	crypt_free(cd);
	free(path);
}

Test(luks2, reads_luksformat_headers, .timeout = 120)
{
	char *dir = th_mkdtemp();

	read_theirs(dir, "--pbkdf pbkdf2 --pbkdf-force-iterations 1000", 4096,
		    "aes-xts-plain64", 64);
	read_theirs(dir, "--pbkdf argon2id --pbkdf-force-iterations 4 "
			 "--pbkdf-memory 32 --pbkdf-parallel 1", 512,
		    "aes-xts-plain64", 32);
	read_theirs(dir, "--pbkdf argon2i --pbkdf-force-iterations 4 "
			 "--pbkdf-memory 64 --pbkdf-parallel 2", 4096,
		    "aes-cbc-essiv:sha256", 32);
	read_theirs(dir, "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 --hash sha512 "
			 "--luks2-metadata-size 64k --luks2-keyslots-size 1m", 512,
		    "aes-cbc-plain64", 16);
	th_rmtree(dir);
	free(dir);
}

/* ---- damage ---- */

static int load_reason(const char *path, struct dmt_reason *r, int *copy)
{
	struct dmt_luks2 *h = NULL;
	struct dmt_file *f = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	cr_assert_eq(dmt_file_open(path, DMT_OPEN_READ, &f), 0);
	ret = dmt_luks2_load(f, &h, r);
	if (!ret) {
		*copy = dmt_luks2_loaded_copy(h);
		cr_expect_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), r), 0);
	}
	dmt_luks2_free(h);
	dmt_file_close(f);
	return ret;
}

static bool cryptsetup_loads(const char *path)
{
	struct crypt_device *cd = NULL;
	int ret;

	cr_assert_eq(crypt_init(&cd, path), 0);
	ret = crypt_load(cd, CRYPT_LUKS2, NULL);
	crypt_free(cd);
	return ret == 0;
}

/* Rewrites the sha256 checksum of the copy at off (after a JSON edit). */
static void fix_checksum(const char *path, uint64_t off, uint64_t hdr_size)
{
	size_t len;
	uint8_t *b = th_read_file(path, &len);
	FILE *fp = fopen(path, "r+b");

	memset(b + off + 448, 0, 64);
	EVP_Digest(b + off, hdr_size, b + off + 448, NULL, EVP_sha256(), NULL);
	cr_assert(fp);
	cr_assert_eq(fseek(fp, (long)off + 448, SEEK_SET), 0);
	cr_assert_eq(fwrite(b + off + 448, 1, 32, fp), 32);
	fclose(fp);
	free(b);
}

/* Replaces the first `from` in the JSON area of the copy at off. */
static void edit_json(const char *path, uint64_t off, const char *from,
		      const char *to)
{
	size_t len;
	uint8_t *b = th_read_file(path, &len);
	char *hit = strstr((char *)b + off + 4096, from);
	FILE *fp = fopen(path, "r+b");

	cr_assert(hit, "%s not in the JSON", from);
	cr_assert_eq(strlen(from), strlen(to));
	cr_assert(fp);
	cr_assert_eq(fseek(fp, (long)(hit - (char *)b), SEEK_SET), 0);
	cr_assert_eq(fwrite(to, 1, strlen(to), fp), strlen(to));
	fclose(fp);
	free(b);
}

Test(luks2, damaged_headers, .timeout = 120)
{
	char *dir = th_mkdtemp(), *copy = th_path(dir, "copy.img");
	struct dmt_luks2_params p = { .data_offset = 1u << 20,
				      .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct dmt_reason r;
	struct image img;
	int which = -1;

	make_image(dir, "img", &p, &kp, 2, &img);
	cr_assert_eq(load_reason(img.path, &r, &which), 0);
	cr_expect_eq(which, 0);

	/* primary damaged (label byte): the secondary serves, for both */
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	th_flip_byte(copy, 30, 0x01);
	cr_expect_eq(load_reason(copy, &r, &which), 0);
	cr_expect_eq(which, 1);
	cr_expect(cryptsetup_loads(copy));
	/* secondary damaged (JSON byte): the primary serves */
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	th_flip_byte(copy, 16384 + 4100, 0x20);
	cr_expect_eq(load_reason(copy, &r, &which), 0);
	cr_expect_eq(which, 0);
	/* primary magic gone: secondary found by probing */
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	th_flip_byte(copy, 0, 0xff);
	cr_expect_eq(load_reason(copy, &r, &which), 0);
	cr_expect_eq(which, 1);
	/* both damaged: refused, the primary's problem named */
	th_flip_byte(copy, 16384 + 4100, 0x20);
	cr_expect_eq(load_reason(copy, &r, &which), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_LUKS2_NO_HEADER);
	cr_expect_str_eq(r.field, "magic");
	cr_expect_not(cryptsetup_loads(copy));
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	th_flip_byte(copy, 5000, 0x01);
	th_flip_byte(copy, 16384 + 5000, 0x01);
	cr_expect_eq(load_reason(copy, &r, &which), -EINVAL);
	cr_expect_str_eq(r.field, "checksum");
	/* a JSON the checksum vouches for, with a bad value: refused by
	 * both readers */
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	for (uint64_t off = 0; off <= 16384; off += 16384) {
		edit_json(copy, off, "\"sector_size\":4096", "\"sector_size\":4095");
		fix_checksum(copy, off, 16384);
	}
	cr_expect_eq(load_reason(copy, &r, &which), -EINVAL);
	cr_expect_str_eq(r.field, "segment 0: sector_size 4095 is not a multiple of 512");
	cr_expect_not(cryptsetup_loads(copy));
	/* ... and the checksum fix alone is accepted (the edit is the fault) */
	th_sh(NULL, NULL, "cp '%s' '%s'", img.path, copy);
	for (uint64_t off = 0; off <= 16384; off += 16384) {
		edit_json(copy, off, "\"sector_size\":4096", "\"sector_size\":2048");
		fix_checksum(copy, off, 16384);
	}
	cr_expect_eq(load_reason(copy, &r, &which), 0);
	cr_expect(cryptsetup_loads(copy));

	/* truncated: no header at all, then no room for the keyslots */
	th_sh(NULL, NULL, "head -c 3000 '%s' > '%s'", img.path, copy);
	cr_expect_eq(load_reason(copy, &r, &which), -ENODATA);
	cr_expect_str_eq(r.field, "size");
	th_sh(NULL, NULL, "head -c 40000 '%s' > '%s'", img.path, copy);
	cr_expect_eq(load_reason(copy, &r, &which), -ENODATA);
	cr_expect_eq(r.code, DMT_REASON_DEVICE_TOO_SMALL);
	cr_expect_eq(r.min, 1u << 20);
	/* not LUKS at all */
	th_write_random_file(copy, 1u << 20, 9);
	cr_expect_eq(load_reason(copy, &r, &which), -EMEDIUMTYPE);
	image_free(&img);
	free(copy);
	th_rmtree(dir);
	free(dir);
}

Test(luks2, damaged_keyslot_and_wrong_passphrase, .timeout = 60)
{
	char *dir = th_mkdtemp();
	struct dmt_luks2_params p = { .data_offset = 1u << 20,
				      .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	struct image img;

	make_image(dir, "img", &p, &kp, 2, &img);
	cr_assert_eq(dmt_file_open(img.path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
	cr_expect_eq(dmt_luks2_unlock(h, -1, "wrong", 5, &r), -EPERM);
	cr_expect_eq(r.code, DMT_REASON_LUKS2_WRONG_PASSPHRASE);
	cr_expect_null(dmt_luks2_volume_key(h, NULL));
	cr_expect_eq(dmt_luks2_unlock(h, 3, pass, strlen(pass), &r), -ENOENT);
	cr_expect_eq(r.code, DMT_REASON_LUKS2_KEYSLOT);
	cr_expect_eq(dmt_luks2_unlock(h, 0, pass, strlen(pass), &r), 0);
	dmt_luks2_free(h);
	dmt_file_close(f);
	/* one flipped byte in the keyslot's material: key lost */
	th_flip_byte(img.path, 32768 + 1000, 0x04);
	cr_assert_eq(dmt_file_open(img.path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
	cr_expect_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), &r), -EPERM);
	dmt_luks2_free(h);
	dmt_file_close(f);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

/* ---- layouts ---- */

Test(luks2, detached_header_and_sizes, .timeout = 60)
{
	char *dir = th_mkdtemp(), *out = NULL;
	struct dmt_luks2_params p = { .detached = true,
				      .digest_iterations = 1000,
				      .metadata_size = 64u << 10,
				      .keyslots_size = 1u << 20,
				      .sector_size = 512 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct image img;
	size_t len;
	uint8_t *hdr;

	kp.cipher = "aes-cbc-essiv:sha256";
	kp.key_size = 32;
	kp.keyslot = 5;
	make_image(dir, "hdr", &p, &kp, 16, &img);
	cr_expect_eq(img.data_offset, 0);
	hdr = th_read_file(img.path, &len);
	cr_expect_eq(len, 2 * (64u << 10) + (1u << 20));
	free(hdr);
	check_with_libcryptsetup(&img, true);
	check_payload_openssl(&img, 16);
	cr_assert_eq(th_sh(&out, NULL, "cryptsetup luksDump '%s'", img.path), 0);
	cr_expect(strstr(out, "Metadata area: \t65536 [bytes]"), "%s", out);
	cr_expect(strstr(out, "Keyslots area: \t1048576 [bytes]"), "%s", out);
	cr_expect(strstr(out, "  5: luks2"), "%s", out);
	cr_expect(strstr(out, "Cipher:     aes-cbc-essiv:sha256"), "%s", out);
	free(out);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

/* Keyslots added to a loaded header, kept beside cryptsetup's. */
Test(luks2, add_keyslot_to_loaded_header, .timeout = 60)
{
	char *dir = th_mkdtemp();
	struct dmt_luks2_params p = { .data_offset = 1u << 20,
				      .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct crypt_device *cd = NULL;
	struct dmt_file *f = NULL;
	struct image img;
	int slots[DMT_LUKS2_KEYSLOTS_MAX];

	make_image(dir, "img", &p, &kp, 2, &img);
	cr_assert_eq(dmt_file_open(img.path, DMT_OPEN_RW, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
	cr_expect_eq(dmt_luks2_add_keyslot(h, &kp, "x", 1, &r), -EINVAL,
		     "no volume key before unlock");
	cr_assert_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), &r), 0);
	kp.pbkdf = cheap_argon2id;
	cr_expect_eq(dmt_luks2_add_keyslot(h, &kp, "another", 7, &r), 1);
	kp.keyslot = 1;
	cr_expect_eq(dmt_luks2_add_keyslot(h, &kp, "x", 1, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_LUKS2_KEYSLOT);
	cr_assert_eq(dmt_luks2_write(h, f, &r), 0);
	cr_expect_eq(dmt_luks2_keyslots(h, slots), 2);
	cr_expect_eq(dmt_luks2_seqid(h), 2);
	dmt_luks2_free(h);
	dmt_file_close(f);
	unlock_expect(img.path, "another", 1, img.vk, img.vk_len);
	unlock_expect(img.path, pass, 0, img.vk, img.vk_len);
	cr_assert_eq(crypt_init(&cd, img.path), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
	cr_expect_eq(crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT,
						  "another", 7, 0), 1);
	crypt_free(cd);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

Test(luks2, create_refusals)
{
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_luks2_params p = { .uuid = "not-a-uuid" };

	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_str_eq(r.field, "uuid");
	p = (struct dmt_luks2_params){
		.label = "0123456789012345678901234567890123456789012345678"
	};
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_str_eq(r.field, "label");
	p = (struct dmt_luks2_params){ .cipher = "twofish-xts-plain64" };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_CRYPT_CIPHER);
	p = (struct dmt_luks2_params){ .metadata_size = 24576 };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_str_eq(r.field, "metadata_size");
	p = (struct dmt_luks2_params){ .data_offset = 16384 };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_str_eq(r.field, "data_offset");
	cr_expect_eq(r.min, 32768);
	p = (struct dmt_luks2_params){ .keyslots_size = 1000 };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_str_eq(r.field, "keyslots_size");
	p = (struct dmt_luks2_params){ .keyslots_size = 256u << 20 };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	/* as luksFormat: a data offset below the asked keyslots area shrinks
	 * it; a big data offset gives at most 128 MiB */
	p = (struct dmt_luks2_params){ .data_offset = 1u << 20,
				       .keyslots_size = 2u << 20 };
	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0);
	cr_expect_eq(dmt_luks2_keyslots_size(h), (1u << 20) - 32768);
	dmt_luks2_free(h);
	p = (struct dmt_luks2_params){ .data_offset = 1ull << 30 };
	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0);
	cr_expect_eq(dmt_luks2_keyslots_size(h), 128u << 20);
	dmt_luks2_free(h);
	p = (struct dmt_luks2_params){ .uuid = "0F2C6BD4-2A4B-4DC3-9D6E-8A3A2FB4C5D1" };
	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0);
	cr_expect_str_eq(dmt_luks2_uuid(h), "0f2c6bd4-2a4b-4dc3-9d6e-8a3a2fb4c5d1");
	dmt_luks2_free(h);
	p = (struct dmt_luks2_params){ .volume_key_size = 48 };
	cr_expect_eq(dmt_luks2_create(&p, &h, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_CRYPT_KEY_SIZE);
	/* a keyslots area too small for one keyslot (258048 bytes) */
	p = (struct dmt_luks2_params){ .data_offset = 1u << 20,
				       .keyslots_size = 4096 * 60 };
	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0);
	{
		struct dmt_luks2_keyslot_params kp = kp_pbkdf2();

		cr_expect_eq(dmt_luks2_add_keyslot(h, &kp, "x", 1, &r), -ENOSPC);
		cr_expect_eq(r.code, DMT_REASON_LUKS2_NO_SPACE);
	}
	dmt_luks2_free(h);
}

/* The IV convention proven by cryptsetup's own userspace encryption:
 * luksFormat --header + reencrypt --encrypt, then our engine decrypts. */
Test(luks2, decrypts_cryptsetup_reencrypt, .timeout = 120)
{
	char *dir = th_mkdtemp(), *err = NULL, *data = th_path(dir, "data"),
	     *hdr = th_path(dir, "hdr");
	const unsigned int sizes[] = { 512, 4096 };

	for (int i = 0; i < 2; i++) {
		struct dmt_luks2 *h = NULL;
		struct dmt_reason r = { 0 };
		struct dmt_luks2_segment seg;
		struct dmt_crypt *c = NULL;
		struct dmt_file *f = NULL;
		size_t len, plen = 1u << 20;
		uint8_t *enc, *want = malloc(plen);
		const uint8_t *vk;

		th_fill_random(want, plen, 40 + i);
		th_write_file(data, want, plen);
		unlink(hdr);
		cr_assert_eq(th_sh(NULL, &err,
				   "printf '%%s' '%s' | cryptsetup reencrypt -q --disable-locks --encrypt "
				   "--type luks2 --header '%s' --sector-size %u "
				   "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
				   "--key-file - '%s'", pass, hdr, sizes[i], data),
			     0, "%s", err);
		free(err);
		err = NULL;
		cr_assert_eq(dmt_file_open(hdr, DMT_OPEN_READ, &f), 0);
		cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
		cr_assert_eq(dmt_luks2_unlock(h, -1, pass, strlen(pass), &r), 0);
		cr_assert_eq(dmt_luks2_get_segment(h, &seg), 0);
		cr_expect_eq(seg.sector_size, sizes[i]);
		vk = dmt_luks2_volume_key(h, &len);
		cr_assert_eq(dmt_crypt_new(
				     &(struct dmt_crypt_params){
					     .cipher = seg.cipher,
					     .key = vk,
					     .key_size = len,
					     .sector_size = seg.sector_size,
					     .iv_offset = seg.iv_tweak},
				     &c, &r),
			     0);
		enc = th_read_file(data, &len);
		cr_assert_eq(len, plen);
		cr_assert_eq(dmt_crypt_decrypt(c, seg.offset / seg.sector_size,
					       plen / seg.sector_size, enc, enc),
			     0);
		cr_expect_eq(memcmp(enc, want, plen), 0, "sector size %u",
			     sizes[i]);
		dmt_crypt_free(c);
		dmt_luks2_free(h);
		dmt_file_close(f);
		free(enc);
		free(want);
	}
	free(data);
	free(hdr);
	th_rmtree(dir);
	free(dir);
}

/* Same members in the same order with the same values, salts and
 * digests aside (they are random). */
static void json_same_shape(json_object *a, json_object *b, const char *where)
{
	cr_assert_eq(json_object_get_type(a), json_object_get_type(b), "%s",
		     where);
	if (json_object_is_type(a, json_type_object)) {
		struct json_object_iterator ia = json_object_iter_begin(a),
					    ea = json_object_iter_end(a),
					    ib = json_object_iter_begin(b),
					    eb = json_object_iter_end(b);

		while (!json_object_iter_equal(&ia, &ea) &&
		       !json_object_iter_equal(&ib, &eb)) {
			const char *ka = json_object_iter_peek_name(&ia);

			cr_assert_str_eq(ka, json_object_iter_peek_name(&ib),
					 "member order at %s", where);
			if (strcmp(ka, "salt") && strcmp(ka, "digest"))
				json_same_shape(json_object_iter_peek_value(&ia),
						json_object_iter_peek_value(&ib),
						ka);
			json_object_iter_next(&ia);
			json_object_iter_next(&ib);
		}
		cr_assert(json_object_iter_equal(&ia, &ea) &&
			  json_object_iter_equal(&ib, &eb),
			  "member count at %s", where);
	} else if (json_object_is_type(a, json_type_array)) {
		cr_assert_eq(json_object_array_length(a),
			     json_object_array_length(b), "%s", where);
		for (size_t i = 0; i < json_object_array_length(a); i++)
			json_same_shape(json_object_array_get_idx(a, i),
					json_object_array_get_idx(b, i), where);
	} else {
		cr_expect_str_eq(json_object_get_string(a),
				 json_object_get_string(b), "value of %s", where);
	}
}

Test(luks2, json_as_luksformat_writes_it, .timeout = 60)
{
	char *dir = th_mkdtemp(), *theirs = NULL, *err = NULL;
	char *path;
	struct dmt_luks2_params p = { .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	json_object *a, *b;
	struct dmt_file *f = NULL;
	struct image img;

	make_image(dir, "ours", &p, &kp, 1, &img);
	path = th_path(dir, "theirs");
	th_write_random_file(path, 17u << 20, 5);
	cr_assert_eq(th_sh(&theirs, &err,
			   "printf x | cryptsetup luksFormat -q --type luks2 "
			   "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
			   "--key-file - '%s' && "
			   "cryptsetup luksDump --dump-json-metadata '%s'",
			   path, path), 0, "%s", err);
	cr_assert_eq(dmt_file_open(img.path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
	a = json_tokener_parse(dmt_luks2_json(h));
	b = json_tokener_parse(theirs);
	cr_assert(a && b);
	json_same_shape(a, b, "top");
	json_object_put(a);
	json_object_put(b);
	dmt_luks2_free(h);
	dmt_file_close(f);
	free(theirs);
	free(err);
	free(path);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

Test(luks2, kdf_known_answers_and_benchmark, .timeout = 60)
{
	/* RFC 6070-style PBKDF2-HMAC-SHA256 vector and the Argon2 reference
	 * test vector of the libargon2 sources (v=0x13, t=2, m=64 MiB, p=1,
	 * "password", "somesalt", argon2i: the argon2 CLI's -m 16) */
	static const char pbkdf2_want[] =
		"120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b";
	static const char argon2i_want[] =
		"c1628832147d9720c5bd1cfd61367078729f6dfb6f8fea9ff98158e0d7816ed0";
	struct dmt_luks2_pbkdf k = {.type = "pbkdf2",
				    .hash = "sha256",
				    .iterations = 1,
				    .memory_kb = 0,
				    .parallel = 0};
	struct dmt_reason r = { 0 };
	uint8_t out[32];
	char hex[65];

	cr_assert_eq(dmt_luks2_kdf(&k, "password", 8, (const uint8_t *)"salt", 4,
				   out, 32, &r), 0);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", out[i]);
	cr_expect_str_eq(hex, pbkdf2_want);
	k = (struct dmt_luks2_pbkdf){.type = "argon2i",
				     .hash = NULL,
				     .iterations = 2,
				     .memory_kb = 65536,
				     .parallel = 1};
	cr_assert_eq(dmt_luks2_kdf(&k, "password", 8,
				   (const uint8_t *)"somesalt", 8, out, 32, &r),
		     0);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", out[i]);
	cr_expect_str_eq(hex, argon2i_want);
	k = (struct dmt_luks2_pbkdf){.type = "scrypt",
				     .hash = NULL,
				     .iterations = 1,
				     .memory_kb = 0,
				     .parallel = 0};
	cr_expect_eq(dmt_luks2_kdf(&k, "p", 1, out, 16, out, 32, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_LUKS2_KDF);

	k = (struct dmt_luks2_pbkdf){.type = "pbkdf2",
				     .hash = "sha256",
				     .iterations = 0,
				     .memory_kb = 0,
				     .parallel = 0};
	cr_assert_eq(dmt_luks2_pbkdf_benchmark(&k, 20, 64, &r), 0);
	cr_expect_geq(k.iterations, 1000);
	k = (struct dmt_luks2_pbkdf){.type = "argon2id",
				     .hash = NULL,
				     .iterations = 0,
				     .memory_kb = 1024,
				     .parallel = 1};
	cr_assert_eq(dmt_luks2_pbkdf_benchmark(&k, 10, 64, &r), 0);
	cr_expect_geq(k.iterations, 4);
	cr_expect_geq(k.memory_kb, 32);
	cr_expect_leq(k.memory_kb, 1024);
}

/* cryptsetup's own offline decryption of our detached-header image gives
 * the payload back (2.6.1 refuses attached headers there). */
Test(luks2, cryptsetup_reencrypt_decrypts_ours, .timeout = 120)
{
	char *dir = th_mkdtemp(), *err = NULL;
	struct dmt_luks2_params p = { .detached = true, .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	const size_t n = 64;
	struct image img;
	uint8_t *want = malloc(n * 4096), *got;
	size_t len;

	make_image(dir, "hdr", &p, &kp, n, &img);
	cr_assert_eq(th_sh(NULL, &err,
			   "printf '%%s' '%s' | cryptsetup reencrypt -q --disable-locks --decrypt "
			   "--force-offline-reencrypt --header '%s' "
			   "--key-file - '%s'", pass, img.path,
			   img.data), 0, "%s", err);
	th_fill_random(want, n * 4096, 77);
	got = th_read_file(img.data, &len);
	cr_assert_eq(len, n * 4096);
	cr_expect_eq(memcmp(got, want, len), 0);
	free(got);
	free(want);
	free(err);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}


/* Mutated JSON that the checksum still vouches for: every outcome is a
 * clean refusal or a header that behaves (no crash, no leak under ASan). */
Test(luks2, mutated_json_never_crashes, .timeout = 120)
{
	char *dir = th_mkdtemp(), *copy = th_path(dir, "copy.img");
	struct dmt_luks2_params p = { .data_offset = 1u << 20,
				      .digest_iterations = 1000 };
	struct dmt_luks2_keyslot_params kp = kp_pbkdf2();
	const char charset[] = "{}[]\":,0123456789az-\\";
	struct image img;
	uint8_t *orig;
	size_t len, text;
	int loaded = 0, refused = 0;

	make_image(dir, "img", &p, &kp, 1, &img);
	orig = th_read_file(img.path, &len);
	text = strlen((char *)orig + 4096);
	for (int i = 0; i < (th_reduced() ? 60 : 300); i++) {
		uint8_t *b = malloc(len), rnd[4];
		struct dmt_luks2 *h = NULL;
		struct dmt_reason r = { 0 };
		struct dmt_file *f = NULL;

		memcpy(b, orig, len);
		th_fill_random(rnd, sizeof(rnd), (uint64_t)i + 1000);
		b[4096 + (rnd[0] | rnd[1] << 8) % text] =
			(uint8_t)charset[rnd[2] % (sizeof(charset) - 1)];
		if (rnd[3] & 1) /* a second mutation */
			b[4096 + (rnd[1] | rnd[3] << 8) % text] =
				(uint8_t)charset[rnd[0] % (sizeof(charset) - 1)];
		for (int c = 0; c < 2; c++) {
			uint64_t off = (uint64_t)c * 16384;

			memcpy(b + off + 4096, b + 4096, 12288);
			memset(b + off + 448, 0, 64);
			EVP_Digest(b + off, 16384, b + off + 448, NULL,
				   EVP_sha256(), NULL);
		}
		th_write_file(copy, b, len);
		cr_assert_eq(dmt_file_open(copy, DMT_OPEN_READ, &f), 0);
		if (dmt_luks2_load(f, &h, &r) == 0) {
			struct dmt_luks2_segment seg;
			int slots[DMT_LUKS2_KEYSLOTS_MAX];

			loaded++;
			(void)dmt_luks2_get_segment(h, &seg);
			(void)dmt_luks2_keyslots(h, slots);
			(void)dmt_luks2_unlock(h, -1, pass, strlen(pass), &r);
			cr_assert_not_null(dmt_luks2_json(h));
			dmt_luks2_free(h);
		} else {
			refused++;
			cr_expect_eq(r.code, DMT_REASON_LUKS2_NO_HEADER);
			cr_expect_not_null(r.field);
		}
		dmt_file_close(f);
		free(b);
	}
	cr_expect_gt(refused, 0);
	cr_expect_gt(loaded, 0);
	free(orig);
	free(copy);
	image_free(&img);
	th_rmtree(dir);
	free(dir);
}

/* Keyslot fields as libcryptsetup reports them, on a header of theirs
 * with two keyslots of different PBKDFs. */
Test(luks2, keyslot_info_as_libcryptsetup, .timeout = 60)
{
	char *dir = th_mkdtemp(), *path = th_path(dir, "img"), *err = NULL;
	struct crypt_device *cd = NULL;
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	int slots[DMT_LUKS2_KEYSLOTS_MAX];

	th_write_random_file(path, 17u << 20, 8);
	cr_assert_eq(th_sh(NULL, &err,
			   "cd '%s' && printf one > pw1 && printf two > pw2 && "
			   "cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
			   "--pbkdf-force-iterations 1234 --hash sha512 "
			   "--key-file pw1 img && "
			   "cryptsetup luksAddKey -q --key-file pw1 --pbkdf argon2i "
			   "--pbkdf-force-iterations 5 --pbkdf-memory 64 "
			   "--pbkdf-parallel 1 --key-slot 3 img pw2", dir),
		     0, "%s", err);
	free(err);
	cr_assert_eq(crypt_init(&cd, path), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
	cr_assert_eq(dmt_file_open(path, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_luks2_load(f, &h, &r), 0);
	cr_assert_eq(dmt_luks2_keyslots(h, slots), 2);
	cr_expect_eq(slots[0], 0);
	cr_expect_eq(slots[1], 3);
	for (int i = 0; i < 2; i++) {
		struct dmt_luks2_keyslot_info ki;
		struct crypt_pbkdf_type pb;
		size_t ks = 0;
		const char *enc;

		cr_assert_eq(dmt_luks2_keyslot_info(h, slots[i], &ki), 0);
		cr_assert_eq(crypt_keyslot_get_pbkdf(cd, slots[i], &pb), 0);
		enc = crypt_keyslot_get_encryption(cd, slots[i], &ks);
		cr_expect_str_eq(ki.pbkdf.type, pb.type);
		cr_expect_eq(ki.pbkdf.iterations, pb.iterations);
		cr_expect_eq(ki.pbkdf.memory_kb, pb.max_memory_kb);
		cr_expect_eq(ki.pbkdf.parallel, pb.parallel_threads);
		if (!strcmp(pb.type, "pbkdf2"))
			cr_expect_str_eq(ki.pbkdf.hash, pb.hash);
		cr_expect_str_eq(ki.cipher, enc);
		cr_expect_eq(ki.cipher_key_size, ks);
		cr_expect_eq(ki.key_size, (size_t)crypt_get_volume_key_size(cd));
		cr_expect_eq(ki.af_stripes, 4000);
		cr_expect_str_eq(ki.af_hash, i ? "sha256" : "sha512");
		cr_expect_eq(ki.digest, 0);
		cr_expect_eq(ki.area_size, 258048);
	}
	cr_expect_eq(dmt_luks2_unlock(h, -1, "two", 3, &r), 3);
	cr_expect_eq(dmt_luks2_keyslot_info(h, 1, &(struct dmt_luks2_keyslot_info){ 0 }),
		     -ENOENT);
	dmt_luks2_free(h);
	dmt_file_close(f);
	crypt_free(cd);
	free(path);
	th_rmtree(dir);
	free(dir);
}

/* ---- the Argon2 cost search (cryptsetup 2.6.1's rules) on model machines ---- */

/* A machine where a run takes t * m * num / den ms, exactly. */
struct model {
	uint64_t num, den;
	int runs;
};

static int model_run(void *ctx, uint32_t t, uint32_t m, long *ms)
{
	struct model *mo = ctx;

	mo->runs++;
	*ms = (long)((uint64_t)t * m * mo->num / mo->den);
	return 0;
}

/*
 * The costs crypt_argon2_check chooses, worked out by hand from its rules
 * (lib/crypto_backend/pbkdf_check.c 2.6.1) on each model: 64 MiB at time 4
 * first, memory raised to a 250 ms run, then estimated for the target,
 * memory first; the 64 MiB floor and the ceiling are the fixed points.
 */
Test(luks2, argon2_search_rules)
{
	static const struct {
		uint64_t num, den;
		uint32_t max_m, parallel, target, t, m;
	} cases[] = {
		/* 64 MiB at time 4 take 200 ms */
		{ 25, 32768, 1u << 20, 2, 100, 4, 65536 },	/* the floor */
		{ 25, 32768, 1u << 20, 2, 2000, 4, 655360 },	/* memory */
		{ 25, 32768, 1u << 20, 2, 5000, 6, 1u << 20 },	/* ceiling, time */
		{ 25, 32768, 32768, 1, 1000, 40, 32768 },	/* --pbkdf-memory */
		{ 25, 32768, 32768, 1, 10, 4, 32768 },
		/* a fast machine: 4 ms (x16 steps) */
		{ 1, 65536, 1u << 20, 4, 2000, 125, 1u << 20 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model mo = { cases[i].num, cases[i].den, 0 };
		struct luks2_argon2_timer tm = { model_run, &mo };
		uint32_t t = 0, m = 0;

		cr_assert_eq(luks2_argon2_search(&tm, cases[i].max_m,
						 cases[i].parallel,
						 cases[i].target, &t, &m), 0);
		cr_expect_eq(t, cases[i].t, "case %zu: time %u, want %u", i, t,
			     cases[i].t);
		cr_expect_eq(m, cases[i].m, "case %zu: memory %u, want %u", i,
			     m, cases[i].m);
		cr_expect_lt(mo.runs, 12, "case %zu: %d runs", i, mo.runs);
	}
}

/* A ceiling below 8 KiB per lane cannot be met. */
Test(luks2, argon2_search_refuses)
{
	struct model mo = { 1, 1, 0 };
	struct luks2_argon2_timer tm = { model_run, &mo };
	uint32_t t, m;

	cr_expect_eq(luks2_argon2_search(&tm, 16, 4, 100, &t, &m), -EINVAL);
	cr_expect_eq(luks2_argon2_search(&tm, 1u << 20, 4, 0, &t, &m), -EINVAL);
}

/* cryptsetup's ceilings: half the RAM, 4 lanes and the online CPUs. */
Test(luks2, argon2_limits)
{
	struct dmt_luks2_pbkdf k = {.type = "argon2id",
				    .hash = NULL,
				    .iterations = 0,
				    .memory_kb = 0,
				    .parallel = 0};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t half = (uint64_t)sysconf(_SC_PHYS_PAGES) *
			(uint64_t)sysconf(_SC_PAGESIZE) / 2048;

	dmt_luks2_pbkdf_limit(&k);
	cr_expect_eq(k.memory_kb, half < (1u << 20) ? half : 1u << 20);
	cr_expect_eq(k.parallel, cpus < 4 ? (uint32_t)cpus : 4);
	k = (struct dmt_luks2_pbkdf){.type = "argon2i",
				     .hash = NULL,
				     .iterations = 4,
				     .memory_kb = 4u << 20,
				     .parallel = 8};
	dmt_luks2_pbkdf_limit(&k);
	cr_expect_leq(k.memory_kb, half);
	cr_expect_leq(k.parallel, 4);
	cr_expect_leq(k.parallel, (uint32_t)cpus);
	k = (struct dmt_luks2_pbkdf){.type = "pbkdf2",
				     .hash = "sha256",
				     .iterations = 1000,
				     .memory_kb = 0,
				     .parallel = 0};
	dmt_luks2_pbkdf_limit(&k);
	cr_expect_eq(k.memory_kb, 0);
	cr_expect_eq(k.parallel, 0);
}

#endif /* libcryptsetup and libargon2 present */
