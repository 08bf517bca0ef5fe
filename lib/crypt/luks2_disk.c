// SPDX-License-Identifier: MIT
/*
 * LUKS2 binary headers (formats.md, LUKS2 binary header): 4096 bytes,
 * big-endian integers, followed by the JSON area; the checksum covers the
 * binary header (checksum field zeroed) and the whole JSON area.
 *
 *	0 magic[6] 6 version be16 8 hdr_size be64 16 seqid be64
 *	24 label[48] 72 checksum_alg[32] 104 salt[64] 168 uuid[40]
 *	208 subsystem[48] 256 hdr_offset be64 264 padding[184]
 *	448 csum[64] 512 padding[3584]
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dmt/io.h>

#include "lib/crypt/luks2_priv.h"

enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 6,
	OFF_HDR_SIZE = 8,
	OFF_SEQID = 16,
	OFF_LABEL = 24,
	OFF_CSUM_ALG = 72,
	OFF_SALT = 104,
	OFF_UUID = 168,
	OFF_SUBSYSTEM = 208,
	OFF_HDR_OFFSET = 256,
	OFF_CSUM = 448,
};

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Copies a NUL-terminated field of n bytes (the last byte always NUL). */
static void field_out(uint8_t *dst, const char *src, size_t n)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
}

static void field_in(char *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n - 1] = '\0';
}

/* libcryptsetup's names for two OpenSSL digests */
static const char *digest_name(const char *alg)
{
	if (!strcasecmp(alg, "blake2b-512"))
		return "blake2b512";
	if (!strcasecmp(alg, "blake2s-256"))
		return "blake2s256";
	return alg;
}

/* H over the binary header (csum zeroed) and the JSON area; returns the
 * digest size (the bytes of csum that count). */
static int checksum(const char *alg, const uint8_t *bin, const char *json,
		    size_t json_len, uint8_t *csum)
{
	EVP_MD *md = EVP_MD_fetch(NULL, digest_name(alg), NULL);
	uint8_t zero[LUKS2_CSUM_LEN] = { 0 };
	EVP_MD_CTX *ctx = NULL;
	int ret = -EINVAL;

	if (!md || EVP_MD_get_size(md) <= 0 ||
	    EVP_MD_get_size(md) > LUKS2_CSUM_LEN)
		goto out;
	ctx = EVP_MD_CTX_new();
	if (ctx && EVP_DigestInit_ex(ctx, md, NULL) &&
	    EVP_DigestUpdate(ctx, bin, OFF_CSUM) &&
	    EVP_DigestUpdate(ctx, zero, LUKS2_CSUM_LEN) &&
	    EVP_DigestUpdate(ctx, bin + OFF_CSUM + LUKS2_CSUM_LEN,
			     DMT_LUKS2_BIN_HDR_SIZE - OFF_CSUM -
				     LUKS2_CSUM_LEN) &&
	    EVP_DigestUpdate(ctx, json, json_len)) {
		memset(csum, 0, LUKS2_CSUM_LEN);
		if (EVP_DigestFinal_ex(ctx, csum, NULL))
			ret = EVP_MD_get_size(md);
	}
out:
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	return ret;
}

/* out: hdr_size bytes (binary header, then json_area's hdr_size - 4096). */
int luks2_bin_encode(const struct luks2_bin *b, bool secondary,
		     const char *json_area, uint8_t *out)
{
	size_t json_len = b->hdr_size - DMT_LUKS2_BIN_HDR_SIZE;

	memset(out, 0, DMT_LUKS2_BIN_HDR_SIZE);
	memcpy(out + OFF_MAGIC, secondary ? LUKS2_MAGIC_2ND : LUKS2_MAGIC_1ST,
	       LUKS2_MAGIC_LEN);
	out[OFF_VERSION + 1] = 2;
	put_be64(out + OFF_HDR_SIZE, b->hdr_size);
	put_be64(out + OFF_SEQID, b->seqid);
	field_out(out + OFF_LABEL, b->label, LUKS2_LABEL_LEN);
	field_out(out + OFF_CSUM_ALG, b->csum_alg, LUKS2_CSUM_ALG_LEN);
	memcpy(out + OFF_SALT, b->salt, LUKS2_SALT_LEN);
	field_out(out + OFF_UUID, b->uuid, LUKS2_UUID_LEN);
	field_out(out + OFF_SUBSYSTEM, b->subsystem, LUKS2_LABEL_LEN);
	put_be64(out + OFF_HDR_OFFSET, secondary ? b->hdr_size : 0);
	memcpy(out + DMT_LUKS2_BIN_HDR_SIZE, json_area, json_len);
	return checksum(b->csum_alg, out, json_area, json_len, out + OFF_CSUM) <
			       0 ?
		       -EINVAL :
		       0;
}

/* The checks before the JSON area is read (hdr_disk_sanity_check_pre);
 * *why names the field. */
static int bin_decode(const uint8_t *in, uint64_t off, bool secondary,
		      struct luks2_bin *b, const char **why)
{
	if (memcmp(in, secondary ? LUKS2_MAGIC_2ND : LUKS2_MAGIC_1ST,
		   LUKS2_MAGIC_LEN)) {
		*why = "magic";
		return -EMEDIUMTYPE;
	}
	if (in[OFF_VERSION] != 0 || in[OFF_VERSION + 1] != 2) {
		*why = "version";
		return -EINVAL;
	}
	b->hdr_size = get_be64(in + OFF_HDR_SIZE);
	b->seqid = get_be64(in + OFF_SEQID);
	b->hdr_offset = get_be64(in + OFF_HDR_OFFSET);
	if (b->hdr_offset != off) {
		*why = "hdr_offset";
		return -EINVAL;
	}
	/* any size in 16K..4M here; the JSON checks take only the legal
	 * powers of two (json_size) */
	if (b->hdr_size < DMT_LUKS2_DEFAULT_METADATA ||
	    b->hdr_size > DMT_LUKS2_MAX_METADATA ||
	    (secondary && b->hdr_size != off)) {
		*why = "hdr_size";
		return -EINVAL;
	}
	field_in(b->label, in + OFF_LABEL, LUKS2_LABEL_LEN);
	field_in(b->subsystem, in + OFF_SUBSYSTEM, LUKS2_LABEL_LEN);
	field_in(b->csum_alg, in + OFF_CSUM_ALG, LUKS2_CSUM_ALG_LEN);
	field_in(b->uuid, in + OFF_UUID, LUKS2_UUID_LEN);
	memcpy(b->salt, in + OFF_SALT, LUKS2_SALT_LEN);
	return 0;
}

/*
 * Reads one copy at off: binary header, its checks, the JSON area and
 * the checksum (hdr_read_disk).  *json_area (hdr_size - 4096 bytes and a
 * NUL) is malloc'ed.  A read past the end is -ENODATA ("size").
 */
int luks2_read_copy(struct dmt_file *f, uint64_t off, bool secondary,
		    struct luks2_bin *b, char **json_area, const char **why)
{
	uint8_t bin[DMT_LUKS2_BIN_HDR_SIZE], csum[LUKS2_CSUM_LEN];
	size_t json_len;
	char *json = NULL;
	int ret, csum_len;

	*json_area = NULL;
	ret = dmt_pread_full(f, bin, sizeof(bin), off);
	if (ret) {
		*why = "size";
		return ret;
	}
	ret = bin_decode(bin, off, secondary, b, why);
	if (ret)
		return ret;
	json_len = b->hdr_size - DMT_LUKS2_BIN_HDR_SIZE;
	json = malloc(json_len + 1);
	if (!json)
		return -ENOMEM;
	ret = dmt_pread_full(f, json, json_len, off + DMT_LUKS2_BIN_HDR_SIZE);
	if (ret) {
		*why = "size";
		goto out;
	}
	json[json_len] = '\0';
	csum_len = checksum(b->csum_alg, bin, json, json_len, csum);
	if (csum_len <= 0 || memcmp(csum, bin + OFF_CSUM, (size_t)csum_len)) {
		*why = "checksum";
		ret = -EINVAL;
		goto out;
	}
	*json_area = json;
	json = NULL;
out:
	free(json);
	return ret;
}

/* The primary's version when it has the LUKS magic (LUKS1 and LUKS2
 * share it), 0 otherwise: which reader libcryptsetup picks. */
int luks2_primary_version(struct dmt_file *f)
{
	uint8_t b[8];

	if (dmt_pread_full(f, b, sizeof(b), 0) ||
	    memcmp(b, LUKS2_MAGIC_1ST, LUKS2_MAGIC_LEN))
		return 0;
	return b[6] << 8 | b[7];
}
