/* SPDX-License-Identifier: MIT */
/*
 * Our own AES-XTS and AES-CBC for the engine where they beat OpenSSL
 * 3.0's (AES-NI, one block per instruction, and CBC encryption one chain
 * at a time): VAES + VPCLMULQDQ on 512-bit vectors, 16 blocks in flight;
 * CBC encryption runs 16 sectors' chains side by side.  Whole 16-byte
 * blocks only (sectors never need ciphertext stealing).  Not built on
 * other architectures.
 */
#ifndef DMT_LIB_CRYPT_AES_ARCH_H
#define DMT_LIB_CRYPT_AES_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Round keys: data key encryption/decryption, tweak key encryption. */
struct dmt_xts_key {
	uint8_t ek[15][16], dk[15][16], tk[15][16];
	unsigned int rounds;		/* 10 (AES-128) or 14 (AES-256) */
} __attribute__((aligned(64)));

/* AES-GCM: round keys and the GHASH key powers hp[i] = H^(32 - i)
 * (byte-reflected). */
struct dmt_gcm_key {
	uint8_t hp[32][16];		/* first: 64-byte aligned vectors */
	uint8_t ek[15][16];
	unsigned int rounds;		/* 10 (AES-128) or 14 (AES-256) */
} __attribute__((aligned(64)));

typedef void (*dmt_aes_sectors_fn)(const struct dmt_xts_key *k, bool enc,
				   const uint8_t *ivs, size_t n,
				   const uint8_t *in, uint8_t *out, size_t len);

/*
 * One AES backend as the dispatcher hands it out (lib/common/dispatch.h's
 * dmt_aes_choose(); NULL there means OpenSSL): the functions below, as
 * pointers, chosen once per context.
 */
struct dmt_aes_ops {
	void (*xts_setkey)(struct dmt_xts_key *k, const uint8_t *key,
			   size_t key_len);
	dmt_aes_sectors_fn xts_crypt;
	void (*xts_crypt_tweaks)(const struct dmt_xts_key *k, bool enc,
				 const uint8_t *ivs, size_t iv_stride,
				 size_t n, const uint8_t *in, uint8_t *out,
				 size_t len);
	void (*cbc_setkey)(struct dmt_xts_key *k, const uint8_t *key,
			   size_t key_len);
	dmt_aes_sectors_fn cbc_crypt;
	void (*gcm_setkey)(struct dmt_gcm_key *k, const uint8_t *key,
			   size_t key_len);
	void (*gcm_crypt)(const struct dmt_gcm_key *k, bool enc,
			  const uint8_t *iv, const uint8_t *aad,
			  size_t aad_len, const uint8_t *in, uint8_t *out,
			  size_t len, uint8_t *tag);
};

#if defined(__x86_64__)
bool dmt_xts_vaes_usable(void);
/* key: 32 or 64 bytes (two halves: data key, tweak key). */
void dmt_xts_vaes_setkey(struct dmt_xts_key *k, const uint8_t *key,
			 size_t key_len);
/* n sectors of len bytes (a multiple of 256: sectors are 512..4096),
 * consecutive in memory, with their IVs ivs[16 * n]. */
void dmt_xts_vaes_crypt(const struct dmt_xts_key *k, bool enc,
			const uint8_t *ivs, size_t n, const uint8_t *in,
			uint8_t *out, size_t len);
/* Same, each sector's 16-byte tweak (IV) at ivs + i * iv_stride: the
 * random IVs of authenticated dm-crypt, where they sit in the tags. */
void dmt_xts_vaes_crypt_tweaks(const struct dmt_xts_key *k, bool enc,
			       const uint8_t *ivs, size_t iv_stride, size_t n,
			       const uint8_t *in, uint8_t *out, size_t len);
/* CBC with a 16- or 32-byte key (AES-192 stays with OpenSSL). */
void dmt_cbc_vaes_setkey(struct dmt_xts_key *k, const uint8_t *key,
			 size_t key_len);
void dmt_cbc_vaes_crypt(const struct dmt_xts_key *k, bool enc,
			const uint8_t *ivs, size_t n, const uint8_t *in,
			uint8_t *out, size_t len);
/* GCM with a 16- or 32-byte key and a 12-byte IV, for sectors: len a
 * multiple of 256, aad_len <= 64; in == out allowed.  tag receives the
 * 16-byte tag (over the ciphertext: out when encrypting, in when not;
 * the caller compares). */
void dmt_gcm_vaes_setkey(struct dmt_gcm_key *k, const uint8_t *key,
			 size_t key_len);
void dmt_gcm_vaes_crypt(const struct dmt_gcm_key *k, bool enc,
			const uint8_t *iv, const uint8_t *aad, size_t aad_len,
			const uint8_t *in, uint8_t *out, size_t len,
			uint8_t *tag);
#else
static inline bool dmt_xts_vaes_usable(void)
{
	return false;
}
static inline void dmt_xts_vaes_setkey(struct dmt_xts_key *k,
				       const uint8_t *key, size_t key_len)
{
}
static inline void dmt_xts_vaes_crypt(const struct dmt_xts_key *k, bool enc,
				      const uint8_t *ivs, size_t n,
				      const uint8_t *in, uint8_t *out,
				      size_t len)
{
}
static inline void dmt_xts_vaes_crypt_tweaks(const struct dmt_xts_key *k,
					     bool enc, const uint8_t *ivs,
					     size_t iv_stride, size_t n,
					     const uint8_t *in, uint8_t *out,
					     size_t len)
{
}
static inline void dmt_cbc_vaes_setkey(struct dmt_xts_key *k,
				       const uint8_t *key, size_t key_len)
{
}
static inline void dmt_cbc_vaes_crypt(const struct dmt_xts_key *k, bool enc,
				      const uint8_t *ivs, size_t n,
				      const uint8_t *in, uint8_t *out,
				      size_t len)
{
}
static inline void dmt_gcm_vaes_setkey(struct dmt_gcm_key *k,
				       const uint8_t *key, size_t key_len)
{
}
static inline void dmt_gcm_vaes_crypt(const struct dmt_gcm_key *k, bool enc,
				      const uint8_t *iv, const uint8_t *aad,
				      size_t aad_len, const uint8_t *in,
				      uint8_t *out, size_t len, uint8_t *tag)
{
}
#endif

#endif /* DMT_LIB_CRYPT_AES_ARCH_H */
