/* SPDX-License-Identifier: MIT */
/*
 * A program outside the tree, built against an installed libdmt through
 * `pkg-config --cflags --libs libdmt` only (tests/install/check-install.sh).
 * It uses the public hash API for real:
 *   consumer kat
 *	known-answer vectors (FIPS 180-2 SHA-256/512, RFC 4231 HMAC-SHA256)
 *	through the one-shot call and a batched hasher, plus batch == one-shot;
 *   consumer verity-root DATA_FILE SALT_HEX BLOCKS
 *	writes BLOCKS generated 4096-byte blocks to DATA_FILE and prints the
 *	dm-verity (format 1, sha256, 4 KiB blocks) root hash of them, built
 *	level by level with a dmt_hasher; the caller compares it with what
 *	verity-tool writes for the same file and salt.
 */
#include <dmt/dmt.h>	/* the umbrella: every public header */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

static int fails;

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void expect_hex(const char *what, const uint8_t *got, size_t n,
		       const char *want)
{
	char hex[2 * DMT_DIGEST_MAX + 1];

	to_hex(got, n, hex);
	if (strcmp(hex, want) != 0) {
		fprintf(stderr, "FAIL %s: got %s, want %s\n", what, hex, want);
		fails++;
	}
}

static void kat_oneshot(const char *alg, const char *key, const char *msg,
			const char *want)
{
	uint8_t out[DMT_DIGEST_MAX];
	size_t n = 0;
	int err = dmt_hash_oneshot(alg, key, key ? strlen(key) : 0, msg,
				   strlen(msg), out, &n);

	if (err) {
		fprintf(stderr, "FAIL %s: dmt_hash_oneshot: %d\n", alg, err);
		fails++;
		return;
	}
	expect_hex(alg, out, n, want);
}

/* n equal messages in one batch must each give the one-shot digest. */
static void batch_matches_oneshot(const char *alg, size_t n, size_t len)
{
	struct dmt_hasher_params p = { .alg = alg, .msg_size = len };
	struct dmt_hasher *h = NULL;
	uint8_t *buf = malloc(n * len), *out = malloc(n * DMT_DIGEST_MAX);
	uint8_t one[DMT_DIGEST_MAX];
	size_t ds = 0;
	int err = -ENOMEM;

	if (!buf || !out)
		goto done;
	for (size_t i = 0; i < n * len; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	err = dmt_hasher_new(&p, &h, NULL);
	if (!err)
		err = dmt_hasher_digest_strided(h, n, buf, len, NULL, out);
	for (size_t i = 0; !err && i < n; i++) {
		err = dmt_hash_oneshot(alg, NULL, 0, buf + i * len, len, one,
				       &ds);
		if (!err && memcmp(one, out + i * ds, ds) != 0) {
			fprintf(stderr, "FAIL %s: batch message %zu differs\n",
				alg, i);
			fails++;
			break;
		}
	}
done:
	if (err) {
		fprintf(stderr, "FAIL %s batch: %d\n", alg, err);
		fails++;
	}
	dmt_hasher_free(h);
	free(buf);
	free(out);
}

static int run_kat(void)
{
	const struct dmt_hash_alg *alg;

	kat_oneshot("sha256", NULL, "abc",
		    "ba7816bf8f01cfea414140de5dae2223"
		    "b00361a396177a9cb410ff61f20015ad");
	kat_oneshot("sha512", NULL, "abc",
		    "ddaf35a193617abacc417349ae204131"
		    "12e6fa4e89a97ea20a9eeee64b55d39a"
		    "2192992a274fc1a836ba3c23a3feebbd"
		    "454d4423643ce80e2a9ac94fa54ca49f");
	/* RFC 4231 test case 2 */
	kat_oneshot("hmac(sha256)", "Jefe", "what do ya want for nothing?",
		    "5bdcc146bf60754e6a042426089575c7"
		    "5a003f089d2739839dec58b964ec3843");
	batch_matches_oneshot("sha256", 37, BLOCK);
	batch_matches_oneshot("sha512", 19, 1024);
	if (dmt_hash_alg_lookup("hmac-sha256", &alg) != 0 ||
	    strcmp(dmt_hash_alg_name(alg), "hmac(sha256)") != 0 ||
	    !dmt_hash_alg_needs_key(alg)) {
		fprintf(stderr, "FAIL dmt_hash_alg_lookup(hmac-sha256)\n");
		fails++;
	}
	if (dmt_hash_alg_lookup("nosuchalg", &alg) != -ENOENT) {
		fprintf(stderr, "FAIL lookup of an unknown algorithm\n");
		fails++;
	}
	/* the installed <dmt/version.h> is the installed library's */
	if (strcmp(dmt_version(), DMT_VERSION_STRING) != 0) {
		fprintf(stderr, "FAIL dmt_version() %s, header %s\n",
			dmt_version(), DMT_VERSION_STRING);
		fails++;
	}
	if (!fails)
		printf("kat: ok\n");
	return fails ? 1 : 0;
}

static int parse_hex(const char *s, uint8_t *out, size_t max, size_t *n)
{
	size_t len = strlen(s);

	if (len % 2 || len / 2 > max)
		return -EINVAL;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	*n = len / 2;
	return 0;
}

/*
 * Hash the n blocks of buf into whole hash blocks (digests packed, the rest
 * of the last block zero), in place of the next level.  Returns the number
 * of hash blocks, or a negative errno.
 */
static long hash_level(struct dmt_hasher *h, const uint8_t *buf, size_t n,
		       uint8_t **level)
{
	size_t ds = dmt_hasher_digest_size(h);
	size_t per_block = BLOCK / ds;
	size_t blocks = (n + per_block - 1) / per_block;
	uint8_t *digests = malloc(n * ds);
	uint8_t *out = calloc(blocks, BLOCK);
	int err = -ENOMEM;

	if (digests && out)
		err = dmt_hasher_digest_strided(h, n, buf, BLOCK, NULL,
						digests);
	for (size_t i = 0; !err && i < n; i++)
		memcpy(out + (i / per_block) * BLOCK + (i % per_block) * ds,
		       digests + i * ds, ds);
	free(digests);
	if (err) {
		free(out);
		return err;
	}
	*level = out;
	return (long)blocks;
}

static int run_verity_root(const char *path, const char *salt_hex,
			   const char *count)
{
	struct dmt_hasher_params p = { .alg = "sha256", .msg_size = BLOCK };
	struct dmt_hasher *h = NULL;
	uint8_t salt[256], root[DMT_DIGEST_MAX];
	char hex[2 * DMT_DIGEST_MAX + 1];
	size_t salt_size = 0, n = strtoul(count, NULL, 0);
	uint8_t *data = calloc(n ? n : 1, BLOCK), *cur, *next = NULL;
	uint32_t x = 2463534242u;
	FILE *f;
	int err;

	if (!data || !n || parse_hex(salt_hex, salt, sizeof(salt), &salt_size))
		return 2;
	/* xorshift32 data, with some all-zero blocks in between */
	for (size_t i = 0; i < n * BLOCK; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		data[i] = (i / BLOCK) % 7 == 3 ? 0 : (uint8_t)x;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(data, BLOCK, n, f) != n || fclose(f) != 0) {
		perror(path);
		return 2;
	}
	/* format 1: every block is hashed as salt || block */
	p.prefix = salt;
	p.prefix_size = salt_size;
	err = dmt_hasher_new(&p, &h, NULL);
	cur = data;
	/* levels up to a single block; the root hash is that block's hash */
	while (!err) {
		long blocks = hash_level(h, cur, n, &next);

		if (blocks < 0) {
			err = (int)blocks;
			break;
		}
		free(cur);
		cur = next;
		n = (size_t)blocks;
		if (n == 1)
			break;
	}
	if (!err)
		err = dmt_hasher_digest_strided(h, 1, cur, BLOCK, NULL, root);
	if (err) {
		fprintf(stderr, "FAIL verity-root: %d\n", err);
		dmt_hasher_free(h);
		free(cur);
		return 1;
	}
	to_hex(root, dmt_hasher_digest_size(h), hex);
	printf("%s\n", hex);
	dmt_hasher_free(h);
	free(cur);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "kat") == 0)
		return run_kat();
	if (argc == 5 && strcmp(argv[1], "verity-root") == 0)
		return run_verity_root(argv[2], argv[3], argv[4]);
	fprintf(stderr,
		"usage: consumer kat | consumer verity-root FILE SALT BLOCKS\n");
	return 2;
}
