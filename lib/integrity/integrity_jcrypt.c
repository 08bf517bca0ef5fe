// SPDX-License-Identifier: MIT
/*
 * dm-integrity journal encryption (journal_crypt), as the kernel sets it up
 * when it opens a device (create_journal() in dm-integrity.c):
 *
 * - A stream cipher (block size 1: ctr(aes), chacha20) is run once over
 *   zeros from a zero IV: the keystream for the whole journal, rounded up
 *   to whole pages, followed by 32 more bytes that are XORed into the four
 *   commit-id bases.  A journal byte at offset x is stored XORed with
 *   keystream byte x.
 * - A block cipher mode with an IV (cbc(aes)) encrypts every section on
 *   its own; the IV of section i is the encryption, from a zero IV, of
 *   le32(i) zero-padded to one block.  The commit-id bases stay as they are.
 *
 * Either way the section MACs are computed over the plaintext.  The page
 * size enters the stream layout: images are for 4 KiB-page kernels.
 */
#include <dmt/integrity.h>

#include "lib/integrity/integrity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "lib/common/byteorder.h"

#define KERNEL_PAGE 4096u

enum jc_kind { JC_CTR_AES, JC_CHACHA20, JC_CBC_AES };

struct dmt_integrity_jcrypt {
	enum jc_kind kind;
	const EVP_CIPHER *cipher;
	EVP_CIPHER_CTX *ctx;
	uint8_t key[64];
	size_t key_size;
	size_t section_bytes;
	uint64_t bases[4];
};

static const struct {
	const char *name;
	const char *alias; /* cryptsetup's spelling */
	enum jc_kind kind;
} jc_algs[] = {
	{"ctr(aes)", "ctr-aes", JC_CTR_AES},
	{"cbc(aes)", "cbc-aes", JC_CBC_AES},
	{"chacha20", NULL, JC_CHACHA20},
};


static const EVP_CIPHER *pick_cipher(enum jc_kind kind, size_t key_size)
{
	switch (kind) {
	case JC_CTR_AES:
		return key_size == 16	? EVP_aes_128_ctr()
		       : key_size == 24 ? EVP_aes_192_ctr()
		       : key_size == 32 ? EVP_aes_256_ctr()
					: NULL;
	case JC_CBC_AES:
		return key_size == 16	? EVP_aes_128_cbc()
		       : key_size == 24 ? EVP_aes_192_cbc()
		       : key_size == 32 ? EVP_aes_256_cbc()
					: NULL;
	case JC_CHACHA20:
		return key_size == 32 ? EVP_chacha20() : NULL;
	}
	return NULL;
}

/* One EVP pass over len bytes (in place allowed), with this IV. */
static int run(struct dmt_integrity_jcrypt *jc, bool encrypt,
	       const uint8_t iv[16], const uint8_t *in, uint8_t *out,
	       size_t len)
{
	int n = 0, m = 0;

	if (len > (size_t)INT32_MAX)
		return -EINVAL;
	if (!EVP_CipherInit_ex(jc->ctx, jc->cipher, NULL, jc->key, iv,
			       encrypt ? 1 : 0) ||
	    !EVP_CIPHER_CTX_set_padding(jc->ctx, 0) ||
	    !EVP_CipherUpdate(jc->ctx, out, &n, in, (int)len) ||
	    !EVP_CipherFinal_ex(jc->ctx, out + n, &m) || (size_t)(n + m) != len)
		return -EIO;
	return 0;
}

/*
 * The IV that starts the keystream at byte offset off (a multiple of the
 * cipher's block): ctr(aes) counts in a 128-bit big-endian block counter,
 * chacha20 in the little-endian 32-bit word that opens its IV.
 */
static void stream_iv(enum jc_kind kind, uint64_t off, uint8_t iv[16])
{
	uint64_t ctr;

	memset(iv, 0, 16);
	if (kind == JC_CTR_AES) {
		ctr = off / 16;
		for (int i = 0; i < 8; i++)
			iv[15 - i] = (uint8_t)(ctr >> (8 * i));
	} else {
		ctr = off / 64;
		for (int i = 0; i < 4; i++)
			iv[i] = (uint8_t)(ctr >> (8 * i));
	}
}

int dmt_integrity_jcrypt_new(const char *alg, const uint8_t *key,
			     size_t key_size,
			     const struct dmt_integrity_geom *g,
			     struct dmt_integrity_jcrypt **out)
{
	struct dmt_integrity_jcrypt *jc;
	uint8_t iv[16], ks[32];
	size_t i, j;
	int err = -ENOENT;

	*out = NULL;
	jc = calloc(1, sizeof(*jc));
	if (!jc)
		return -ENOMEM;
	for (i = 0; i < sizeof(jc_algs) / sizeof(jc_algs[0]); i++) {
		if (!strcmp(alg, jc_algs[i].name) ||
		    (jc_algs[i].alias && !strcmp(alg, jc_algs[i].alias))) {
			jc->kind = jc_algs[i].kind;
			err = 0;
			break;
		}
	}
	if (err)
		goto fail;
	err = -EINVAL;
	if (!key || key_size > sizeof(jc->key))
		goto fail;
	jc->cipher = pick_cipher(jc->kind, key_size);
	if (!jc->cipher)
		goto fail;
	memcpy(jc->key, key, key_size);
	jc->key_size = key_size;
	jc->section_bytes = (size_t)g->section_sectors * 512;
	err = -ENOMEM;
	jc->ctx = EVP_CIPHER_CTX_new();
	if (!jc->ctx)
		goto fail;

	jc->bases[0] = 0x1111111111111111ull;
	jc->bases[1] = 0x2222222222222222ull;
	jc->bases[2] = 0x3333333333333333ull;
	jc->bases[3] = 0x4444444444444444ull;
	if (jc->kind != JC_CBC_AES) {
		/* the 32 keystream bytes after the page-rounded journal */
		uint64_t jbytes = (uint64_t)g->journal_sections *
				  g->section_sectors * 512;
		uint64_t off =
			(jbytes + KERNEL_PAGE - 1) / KERNEL_PAGE * KERNEL_PAGE;

		memset(ks, 0, sizeof(ks));
		stream_iv(jc->kind, off, iv);
		err = run(jc, true, iv, ks, ks, sizeof(ks));
		if (err)
			goto fail;
		for (i = 0; i < 4; i++)
			jc->bases[i] ^= get_le64(ks + 8 * i);
	}
	/* the kernel keeps the four bases distinct */
	for (i = 1; i < 4; i++) {
		for (j = 0; j < i; j++) {
			if (jc->bases[j] == jc->bases[i]) {
				jc->bases[i]++;
				j = (size_t)-1;
			}
		}
	}
	*out = jc;
	return 0;
fail:
	dmt_integrity_jcrypt_free(jc);
	return err;
}

void dmt_integrity_jcrypt_free(struct dmt_integrity_jcrypt *jc)
{
	if (!jc)
		return;
	EVP_CIPHER_CTX_free(jc->ctx);
	OPENSSL_cleanse(jc->key, sizeof(jc->key));
	free(jc);
}

const uint64_t *
dmt_integrity_jcrypt_bases(const struct dmt_integrity_jcrypt *jc)
{
	return jc->bases;
}

int dmt_integrity_jcrypt_section(struct dmt_integrity_jcrypt *jc, bool encrypt,
				 uint32_t section, uint8_t *buf)
{
	uint8_t iv[16], blk[16] = {0};
	uint8_t zero_iv[16] = {0};
	int err;

	if (jc->kind != JC_CBC_AES) {
		stream_iv(jc->kind, (uint64_t)section * jc->section_bytes, iv);
		return run(jc, true, iv, buf, buf, jc->section_bytes);
	}
	for (int i = 0; i < 4; i++)
		blk[i] = (uint8_t)(section >> (8 * i));
	err = run(jc, true, zero_iv, blk, iv, sizeof(blk));
	if (err)
		return err;
	return run(jc, encrypt, iv, buf, buf, jc->section_bytes);
}
