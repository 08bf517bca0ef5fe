// SPDX-License-Identifier: MIT
/*
 * crypt-tool --integrity end to end: each of the six combinations formats,
 * checks and decrypts back to the payload; libcryptsetup loads the header
 * and reports the integrity parameters cryptsetup would give; our dump
 * equals cryptsetup luksDump of the same image; a flipped ciphertext byte
 * and a flipped tag byte (located through the dm-integrity superblock the
 * image carries, with the library's mapping) are named by check at their
 * 512-byte sector and make decrypt refuse; bad input exits as documented
 * and leaves nothing under the output's name.  PBKDF2 at 1000 iterations,
 * images of a few MiB.
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <criterion/criterion.h>
#include <inttypes.h>
#include <libcryptsetup.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/integrity.h>

#include "tests/support/helpers.h"

#define PASS "auth tool passphrase"
#define CHEAP "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file pw"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
	char *pw = th_path(dir, "pw");

	th_write_file(pw, PASS, strlen(PASS));
	free(pw);
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static int ct(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int ct(char **out, char **err, const char *fmt, ...)
{
	char *args, *tool = realpath(th_tool("crypt-tool"), NULL);
	va_list ap;
	int rc;

	cr_assert(tool, "crypt-tool not built");
	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && </dev/null '%s' %s", dir, tool, args);
	free(args);
	free(tool);
	return rc;
}

static char *path(const char *name)
{
	return th_path(dir, name);
}

static bool exists(const char *name)
{
	char *pa = path(name);
	bool e = access(pa, F_OK) == 0;

	free(pa);
	return e;
}

static bool no_leftovers(void)
{
	char *out = NULL;
	bool none;

	th_sh(&out, NULL, "ls -a '%s' | grep -c tmp || true", dir);
	none = out && atoi(out) == 0;
	free(out);
	return none;
}

/* A number member of the tool's JSON (flat objects only). */
static uint64_t json_u64(const char *json, const char *key)
{
	char pat[64];
	const char *at;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	at = strstr(json, pat);
	cr_assert(at, "%s not in %s", key, json);
	return strtoull(at + strlen(pat), NULL, 10);
}

static const struct combo {
	const char *cipher, *integrity, *extra;
	const char *luks2_type;		/* crypt_get_integrity_info */
	unsigned int tag, mac_key, vk;	/* bytes */
} combos[] = {
	{ "aes-xts-random", "hmac-sha256", "", "hmac(sha256)", 48, 32, 96 },
	{ "aes-xts-random", "hmac-sha512", "", "hmac(sha512)", 80, 64, 128 },
	{ "aes-xts-random", "hmac-sha1", "", "hmac(sha1)", 36, 20, 84 },
	{ "aes-gcm-random", "aead", "", "aead", 28, 0, 32 },
	{ "chacha20-random", "poly1305", "", "poly1305", 28, 0, 32 },
	{ "aegis128-random", "aead", "--key-size 128", "aead", 32, 0, 16 },
};
#define N_COMBOS (sizeof(combos) / sizeof(combos[0]))

/* libcryptsetup's view of the header: cipher, integrity, key sizes, and
 * the passphrase opens a keyslot to a volume key of the right size. */
static void libcryptsetup_view(const char *img, const struct combo *k)
{
	struct crypt_device *cd;
	struct crypt_params_integrity ip;
	char mode[64], vk[256];
	size_t vk_len = sizeof(vk);
	char *pa = path(img);

	cr_assert_eq(crypt_init(&cd, pa), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0, "crypt_load %s",
		     k->cipher);
	snprintf(mode, sizeof(mode), "%s-%s", crypt_get_cipher(cd),
		 crypt_get_cipher_mode(cd));
	cr_expect_str_eq(mode, k->cipher);
	cr_expect_eq(crypt_get_volume_key_size(cd), (int)k->vk);
	cr_assert_eq(crypt_get_integrity_info(cd, &ip), 0);
	cr_expect_str_eq(ip.integrity, k->luks2_type);
	cr_expect_eq(ip.tag_size, k->tag, "%s: tag %u", k->integrity,
		     ip.tag_size);
	cr_expect_eq(ip.integrity_key_size, k->mac_key);
	cr_assert_geq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk, &vk_len,
					   PASS, strlen(PASS)), 0);
	cr_expect_eq(vk_len, k->vk);
	crypt_free(cd);
	free(pa);
}

Test(crypt_tool_auth, every_combination_round_trips, .init = setup,
     .fini = teardown, .timeout = 120)
{
	const uint64_t plen = 100000;
	char *pay = path("pay"), *out_path = path("out");
	char *out, *err, *ours, *theirs;

	th_write_random_file(pay, plen, 7);
	for (size_t i = 0; i < N_COMBOS; i++) {
		const struct combo *k = &combos[i];
		unsigned int ss = i % 2 ? 512 : 4096;
		bool wipe = i % 3 == 0;
		uint64_t mapped, dev, sz;
		size_t len;
		uint8_t *got, *want;
		int rc;

		unlink(out_path);
		rc = ct(&out, &err, "format --json " CHEAP " --integrity %s --cipher %s %s "
			"--sector-size %u %s --data-from pay a%zu.img", k->integrity,
			k->cipher, k->extra, ss, wipe ? "--wipe --device-size 20M" : "",
			i);
		cr_assert_eq(rc, 0, "%s: %s", k->integrity, err);
		mapped = json_u64(out, "mapped_size");
		dev = json_u64(out, "device_size");
		cr_expect_eq(json_u64(out, "iterations"), 1000);
		cr_expect_eq(json_u64(out, "tag_size"), k->tag);
		cr_assert_geq(mapped, plen);
		free(out);
		free(err);
		if (!wipe) {
			/* auto size is what `size` says */
			cr_assert_eq(ct(&out, NULL, "size --payload-size %" PRIu64
					" --integrity %s --cipher %s %s --sector-size %u",
					plen, k->integrity, k->cipher, k->extra, ss), 0);
			sz = strtoull(out, NULL, 10);
			free(out);
			cr_expect_eq(sz, dev, "%s: size %" PRIu64 " format %" PRIu64,
				     k->integrity, sz, dev);
			char name[32];

			snprintf(name, sizeof(name), "a%zu.img", i);
			char *img = path(name);
			struct stat st;

			cr_assert_eq(stat(img, &st), 0);
			cr_expect_eq((uint64_t)st.st_size, dev);
			free(img);
		}
		/* every sector before the padded payload end authenticates;
		 * without --wipe the ones after fail (as --integrity-no-wipe) */
		uint64_t tail = mapped - (plen + ss - 1) / ss * ss;

		rc = ct(&out, &err, "check --key-file pw a%zu.img", i);
		if (wipe || !tail) {
			cr_expect_eq(rc, 0, "%s check: %s", k->integrity, err);
			cr_expect_str_eq(out, "");
		} else {
			cr_expect_eq(rc, 2, "%s check", k->integrity);
			char first[64];

			snprintf(first, sizeof(first), "bad sector %" PRIu64 "\n",
				 (plen + ss - 1) / ss * ss / 512);
			cr_expect(!strncmp(out, first, strlen(first)), "%s", out);
		}
		free(out);
		free(err);
		rc = ct(NULL, &err, "decrypt --key-file pw %s a%zu.img out",
			tail && !wipe ? "--allow-bad-sectors" : "", i);
		cr_expect_eq(rc, tail && !wipe ? 2 : 0, "%s decrypt: %s",
			     k->integrity, err);
		free(err);
		got = th_read_file(out_path, &len);
		cr_assert_eq(len, mapped);
		want = th_read_file(pay, &len);
		cr_expect_eq(memcmp(got, want, plen), 0, "%s: payload differs",
			     k->integrity);
		if (wipe)
			for (uint64_t b = plen; b < mapped; b++)
				if (got[b]) {
					cr_expect_fail("%s: byte %" PRIu64 " not zero",
						       k->integrity, b);
					break;
				}
		free(got);
		free(want);
		char name[32];

		snprintf(name, sizeof(name), "a%zu.img", i);
		libcryptsetup_view(name, k);
		cr_assert_eq(ct(&ours, NULL, "dump %s", name), 0);
		cr_assert_eq(th_sh(&theirs, NULL, "cd '%s' && cryptsetup luksDump %s",
				   dir, name), 0);
		cr_expect_str_eq(ours, theirs);
		cr_expect(strstr(ours, "\tintegrity: "));
		free(ours);
		free(theirs);
		unlink(out_path);
		char *img = path(name);

		unlink(img);
		free(img);
	}
	free(pay);
	free(out_path);
}

/* The dm-integrity geometry of an image, from its own superblock. */
static void image_geom(const char *img, uint64_t doff,
		       struct dmt_integrity_geom *g)
{
	struct dmt_integrity_sb sb;
	size_t len;
	uint8_t *all = th_read_file(img, &len);
	uint64_t sectors = (len - doff) >> 9;

	cr_assert_eq(dmt_integrity_sb_decode(all + doff, &sb, NULL), 0);
	cr_assert_eq(dmt_integrity_geom_from_sb(&sb, false, sectors, sectors, 0,
						g, NULL), 0);
	free(all);
}

static void corrupt_case(const char *cipher, const char *integ,
			 unsigned int ss, const char *detached)
{
	char *out, *err, *img = path("c.img"), hdr[64] = "";
	uint64_t doff, a = 10 * (ss / 512), b = 21 * (ss / 512);
	struct dmt_integrity_geom g;
	char want[128];
	int rc;

	if (detached)
		snprintf(hdr, sizeof(hdr), "--header %s", detached);
	rc = ct(&out, &err, "format --json " CHEAP " %s --integrity %s --cipher %s "
		"--sector-size %u --wipe --device-size %s --data-from pay c.img",
		hdr, integ, cipher, ss, detached ? "4M" : "20M");
	cr_assert_eq(rc, 0, "%s", err);
	doff = json_u64(out, "data_offset");
	cr_expect_gt(json_u64(out, "tag_size"), 0);
	free(out);
	free(err);
	rc = ct(&out, NULL, "check --key-file pw %s c.img", hdr);
	cr_assert_eq(rc, 0);
	free(out);
	image_geom(img, doff, &g);
	/* a ciphertext byte of sector a, the first tag byte (the MAC/AEAD
	 * tag, before the IV) of sector b */
	th_flip_byte(img, doff + (dmt_integrity_data_sector(&g, a) << 9) + 100,
		     0x04);
	th_flip_byte(img, doff + dmt_integrity_tag_offset(&g, b), 0x80);
	rc = ct(&out, &err, "check --key-file pw %s c.img", hdr);
	cr_expect_eq(rc, 2, "%s %u check after flips", integ, ss);
	snprintf(want, sizeof(want), "bad sector %" PRIu64 "\nbad sector %" PRIu64
		 "\n", a, b);
	cr_expect_str_eq(out, want, "%s %u", integ, ss);
	cr_expect(strstr(err, "2 of "), "%s", err);
	free(out);
	free(err);
	rc = ct(NULL, &err, "decrypt --key-file pw %s c.img out", hdr);
	cr_expect_eq(rc, 2, "%s decrypt refused", integ);
	cr_expect(!exists("out") && no_leftovers(), "output left behind");
	free(err);
	rc = ct(&out, NULL, "decrypt --json --allow-bad-sectors --key-file pw %s c.img out",
		hdr);
	cr_expect_eq(rc, 2);
	cr_expect(exists("out"));
	cr_expect_eq(json_u64(out, "bad_sectors"), 2);
	free(out);
	unlink(img);
	char *o = path("out");

	unlink(o);
	free(o);
	free(img);
}

Test(crypt_tool_auth, corruption_named_and_refused, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char *pay = path("pay");

	th_write_random_file(pay, 200 * 1024, 3);
	corrupt_case("aes-xts-random", "hmac-sha256", 512, NULL);
	corrupt_case("aes-gcm-random", "aead", 4096, NULL);
	corrupt_case("chacha20-random", "poly1305", 4096, "c.hdr");
	free(pay);
}

/* A journal with a used entry (the device was not closed cleanly: newer
 * sectors are in the journal, not the data area) or with damaged commit
 * ids: check and decrypt refuse it (exit 4) before reading the data. */
Test(crypt_tool_auth, unclean_journal_refused, .init = setup,
     .fini = teardown, .timeout = 60)
{
	char *out, *err, *img = path("j.img"), *pay = path("pay");
	uint64_t doff, jstart;
	int rc;

	th_write_random_file(pay, 64 * 1024, 4);
	rc = ct(&out, &err, "format --json " CHEAP " --integrity hmac-sha256 "
		"--cipher aes-xts-random --sector-size 512 --device-size 20M --wipe "
		"--data-from pay j.img");
	cr_assert_eq(rc, 0, "%s", err);
	doff = json_u64(out, "data_offset");
	free(out);
	free(err);
	/* the journal follows the 4 KiB dm-integrity superblock; entry 0's
	 * sector field (upper half all ones: unused) opens its first sector */
	jstart = doff + DMT_INTEGRITY_SB_SECTORS * 512;
	th_flip_byte(img, jstart + 4, 0x01);
	rc = ct(&out, &err, "check --key-file pw j.img");
	cr_expect_eq(rc, 4, "check of an unclean journal: %d", rc);
	cr_expect(strstr(err, "journal is not empty (section 0 entry 0)"), "%s",
		  err);
	cr_expect(strstr(err, "j.img"), "%s", err);
	free(out);
	free(err);
	rc = ct(NULL, &err, "decrypt --key-file pw j.img out");
	cr_expect_eq(rc, 4, "decrypt of an unclean journal: %d", rc);
	cr_expect(!exists("out") && no_leftovers(), "output left behind");
	free(err);
	th_flip_byte(img, jstart + 4, 0x01);
	/* a commit id (the last 8 bytes of every journal sector) */
	th_flip_byte(img, jstart + 3 * 512 + 504 + 2, 0x10);
	rc = ct(&out, &err, "check --key-file pw j.img");
	cr_expect_eq(rc, 4, "check of a damaged journal: %d", rc);
	cr_expect(strstr(err, "journal is damaged"), "%s", err);
	free(out);
	free(err);
	th_flip_byte(img, jstart + 3 * 512 + 504 + 2, 0x10);
	rc = ct(&out, &err, "check --key-file pw j.img");
	cr_expect_eq(rc, 0, "restored: %s", err);
	free(out);
	free(err);
	free(img);
	free(pay);
}

Test(crypt_tool_auth, bad_input, .init = setup, .fini = teardown,
     .timeout = 60)
{
	char *out, *err, *pay = path("pay");
	uint64_t need;
	int rc;

	th_write_random_file(pay, 3 << 20, 5);
	/* unsupported combinations: usage error with the list, no image */
	rc = ct(NULL, &err, "format " CHEAP " --integrity poly1305 --cipher "
		"aes-xts-random --data-from pay x.img");
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "aegis128-random"), "%s", err);
	free(err);
	rc = ct(NULL, &err, "format " CHEAP " --integrity hmac-sha256 --cipher "
		"aes-xts-plain64 --data-from pay x.img");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	rc = ct(NULL, &err, "format " CHEAP " --integrity aead --data-from pay x.img");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	rc = ct(NULL, &err, "format " CHEAP " --type plain --integrity aead "
		"--cipher aes-gcm-random --data-from pay x.img");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	cr_expect(!exists("x.img") && no_leftovers());
	/* too large a payload for the device: the size needed, which is
	 * what size gives and what format accepts */
	rc = ct(NULL, &err, "format " CHEAP " --integrity hmac-sha256 --cipher "
		"aes-xts-random --device-size 18M --data-from pay x.img");
	cr_expect_eq(rc, 4, "%s", err);
	cr_assert_eq(ct(&out, NULL, "size --payload-size %d --integrity "
			"hmac-sha256 --cipher aes-xts-random", 3 << 20), 0);
	need = strtoull(out, NULL, 10);
	free(out);
	char msg[64];

	snprintf(msg, sizeof(msg), "needs a device of %" PRIu64 " bytes", need);
	cr_expect(strstr(err, msg), "%s / %s", err, msg);
	free(err);
	cr_expect(!exists("x.img") && no_leftovers());
	rc = ct(NULL, &err, "format --progress-json " CHEAP " --integrity "
		"hmac-sha256 --cipher aes-xts-random --device-size %" PRIu64
		" --data-from pay x.img", need);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(err, "{\"device\":\"x.img\""), "no progress: %s", err);
	free(err);
	rc = ct(NULL, &err, "check --progress-json --key-file pw x.img");
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(err, "{\"device\":\"x.img\""), "no progress: %s", err);
	free(err);
	/* wrong passphrase: check and decrypt exit 2, no output */
	th_write_file(pay, "wrong", 5);
	rc = ct(NULL, &err, "check --key-file pay x.img");
	cr_expect_eq(rc, 2, "%s", err);
	free(err);
	rc = ct(NULL, &err, "decrypt --key-file pay x.img out");
	cr_expect_eq(rc, 2, "%s", err);
	free(err);
	cr_expect(!exists("out") && no_leftovers());
	/* check of a LUKS2 image without integrity; --allow-bad-sectors on it */
	th_write_random_file(pay, 8192, 1);
	cr_assert_eq(ct(NULL, NULL, "format " CHEAP " --data-from pay y.img"), 0);
	rc = ct(NULL, &err, "check --key-file pw y.img");
	cr_expect_eq(rc, 4, "%s", err);
	free(err);
	rc = ct(NULL, &err, "check --type plain --key-file pw y.img");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	rc = ct(NULL, &err, "decrypt --allow-bad-sectors --key-file pw y.img out");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	cr_expect(!exists("out") && no_leftovers());
	free(pay);
}

/* --volume-key-file (cipher key || MAC key), --uuid, --label reach the
 * header libcryptsetup reads; format again in place over an existing
 * image keeps its size and gives the new payload. */
Test(crypt_tool_auth, key_options_and_in_place, .init = setup,
     .fini = teardown, .timeout = 60)
{
	static const char uuid[] = "01234567-89ab-cdef-0123-456789abcdef";
	char *vkp = path("vk"), *pay = path("pay"), *img = path("k.img");
	char *out_path = path("out"), *err, vk[128];
	uint8_t key[96], *got, *want;
	size_t vk_len = sizeof(vk), len;
	struct crypt_device *cd;
	struct stat st;
	uint64_t size;
	int rc;

	th_fill_random(key, sizeof(key), 11);
	th_write_file(vkp, key, sizeof(key));
	th_write_random_file(pay, 50000, 12);
	rc = ct(NULL, &err, "format " CHEAP " --integrity hmac-sha256 --cipher "
		"aes-xts-random --volume-key-file vk --uuid %s --label AUTH "
		"--device-size 18M --data-from pay k.img", uuid);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	cr_assert_eq(crypt_init(&cd, img), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
	cr_expect_str_eq(crypt_get_uuid(cd), uuid);
	cr_expect_str_eq(crypt_get_label(cd), "AUTH");
	cr_assert_geq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk, &vk_len,
					   PASS, strlen(PASS)), 0);
	cr_assert_eq(vk_len, sizeof(key));
	cr_expect_eq(memcmp(vk, key, sizeof(key)), 0, "volume key differs");
	crypt_free(cd);
	/* a volume key file shorter than cipher + MAC key is refused */
	th_write_file(vkp, key, 64);
	rc = ct(NULL, &err, "format " CHEAP " --integrity hmac-sha256 --cipher "
		"aes-xts-random --volume-key-file vk --data-from pay k2.img");
	cr_expect_eq(rc, 1, "%s", err);
	free(err);
	cr_expect(!exists("k2.img") && no_leftovers());
	/* in place: the old size stays, the new payload comes back */
	cr_assert_eq(stat(img, &st), 0);
	size = (uint64_t)st.st_size;
	th_write_random_file(pay, 70000, 13);
	rc = ct(NULL, &err, "format --batch-mode " CHEAP " --integrity aead "
		"--cipher aes-gcm-random --wipe --data-from pay k.img");
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	cr_assert_eq(stat(img, &st), 0);
	cr_expect_eq((uint64_t)st.st_size, size);
	rc = ct(NULL, &err, "check --key-file pw k.img");
	cr_expect_eq(rc, 0, "%s", err);
	free(err);
	cr_assert_eq(ct(NULL, NULL, "decrypt --key-file pw k.img out"), 0);
	got = th_read_file(out_path, &len);
	want = th_read_file(pay, &len);
	cr_expect_eq(memcmp(got, want, len), 0);
	free(got);
	free(want);
	free(vkp);
	free(pay);
	free(img);
	free(out_path);
}
#else
#include <criterion/criterion.h>

/* These tests read every header back through libcryptsetup. */
Test(crypt_tool_auth, needs_libcryptsetup)
{
	cr_skip_test("libcryptsetup is not available for this build");
}
#endif
