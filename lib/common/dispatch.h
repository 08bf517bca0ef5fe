/* SPDX-License-Identifier: MIT */
/*
 * The one dispatcher for every CPU-dispatched primitive (internal to lib/):
 * the backend table, the default choice per primitive, and the engine
 * spec that forces a choice ("NAME", or "PRIMITIVE=NAME[,...]"; see
 * <dmt/hash.h>).  It sits in lib/common, below every subsystem, and
 * includes nothing of theirs: lib/hash/hash.c builds hashers on it, lib/fec
 * gets its GF(2^8) multiply-accumulate and lib/crypt its AES code from it
 * as function pointers; the backends live in each subsystem's arch/.
 */
#ifndef DMT_COMMON_DISPATCH_H
#define DMT_COMMON_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/common/backends.h"

/* What a backend can be chosen for. */
enum dmt_prim {
	DMT_PRIM_SHA256,	/* sha256, sha224 and their hmac(...) */
	DMT_PRIM_SHA512,	/* sha512, sha384 and their hmac(...) */
	DMT_PRIM_CRC32C,
	DMT_PRIM_CRC32,
	DMT_PRIM_XXH64,
	DMT_PRIM_OTHER,		/* sha1, sha3-*, sm3, ...: OpenSSL only */
	DMT_PRIM_GF256,		/* FEC: GF(2^8) multiply-accumulate */
	DMT_PRIM_AES_XTS,	/* dm-crypt sectors */
	DMT_PRIM_AES_CBC,
	DMT_PRIM_AES_GCM,	/* authenticated dm-crypt */
	DMT_PRIM_COUNT
};

/*
 * A GF(2^8) multiply-accumulate backend (defined by lib/fec and
 * lib/fec/arch/, which include this header; nothing here includes theirs):
 * prep turns each Reed-Solomon coefficient into the coef_size bytes mac
 * reads (NULL: mac reads the coefficient bytes themselves), mac is
 * lib/fec/fec_gf256.h's multiply-accumulate over those prepared forms.
 */
struct dmt_gf256_ops {
	void (*prep)(uint8_t c, void *out);
	void (*mac)(uint8_t *acc, size_t acc_stride, unsigned int roots,
		    const uint8_t *in, size_t in_stride, size_t nrows,
		    const void *coefs, size_t len);
	size_t coef_size;
};

extern const struct dmt_gf256_ops dmt_gf256_ops_portable;
#if defined(__x86_64__)
extern const struct dmt_gf256_ops dmt_gf256_ops_gfni;
extern const struct dmt_gf256_ops dmt_gf256_ops_avx2;
extern const struct dmt_gf256_ops dmt_gf256_ops_ssse3;
#endif

/*
 * An AES backend (its sector functions, defined and typed by
 * lib/crypt/aes_arch.h; opaque here so nothing below lib/crypt includes
 * it).  NULL in a choice means OpenSSL's EVP code.
 */
struct dmt_aes_ops;
#if defined(__x86_64__)
extern const struct dmt_aes_ops dmt_aes_ops_vaes;
#endif

enum dmt_eng_kind { DMT_EK_MB, DMT_EK_OPENSSL, DMT_EK_CRC, DMT_EK_XXH,
		    DMT_EK_GF, DMT_EK_AES };

struct dmt_engine {
	const char *name;
	const char *alias;	/* an older name still accepted, or NULL */
	const char *desc;
	enum dmt_eng_kind kind;
	const struct dmt_sha256_backend *s256;
	const struct dmt_sha512_backend *s512;
	dmt_crc32_fn crc32c;
	dmt_crc32_fn crc32;
	uint32_t needs;		/* CPU bits of its CRC, GF(2^8), AES code */
	const struct dmt_gf256_ops *gf;	/* GF(2^8) code, or NULL */
	const struct dmt_aes_ops *aes;	/* AES-XTS/CBC/GCM code, or NULL */
	dmt_hmac_batch_fn hmac_batch;
};

/* Per primitive: the forced backend, NULL for the default. */
struct dmt_engine_choice {
	const struct dmt_engine *eng[DMT_PRIM_COUNT];
};

/* One-time initialisation (platform probe); every entry point calls it. */
void dmt_dispatch_init(void);

/* Does e have code for prim (whatever the CPU)? */
bool dmt_engine_has(const struct dmt_engine *e, enum dmt_prim prim);
/* ... and can this CPU run it? */
bool dmt_engine_runs(const struct dmt_engine *e, enum dmt_prim prim,
		     uint32_t cpu);

/*
 * Parses and checks an engine spec against this CPU.  NULL, "" and "auto"
 * choose nothing.  A bare NAME forces that backend for every primitive
 * that has one by that name and that this CPU runs it for (the others keep
 * their default); PRIMITIVE=NAME forces it for that primitive only and
 * fails if it cannot.  Later items win.  Returns 0, -EINVAL (malformed
 * item or unknown primitive), -ENOENT (no such backend, or none by that
 * name for the primitive) or -ENOTSUP (this CPU cannot run it); on error
 * the offending item is copied to bad (when bad_size > 0).
 */
int dmt_engine_choose(const char *spec, uint32_t cpu,
		      struct dmt_engine_choice *c, char *bad, size_t bad_size);

/*
 * SHA-2 default plan: the usable backends, fastest per message first
 * (NULL = the OpenSSL one-message fallback), with their speed figures.
 * openssl_ok says whether OpenSSL has the hash.
 */
#define DMT_PLAN_MAX 8

struct dmt_plan {
	const struct dmt_engine *eng[DMT_PLAN_MAX];
	unsigned int speed[DMT_PLAN_MAX];
	unsigned int n;
};

void dmt_default_plan(enum dmt_prim prim, bool openssl_ok, uint32_t cpu,
		      struct dmt_plan *p);
/* The default backend of a non-SHA-2 primitive (never NULL). */
const struct dmt_engine *dmt_engine_default(enum dmt_prim prim,
					    uint32_t cpu);
const struct dmt_engine *dmt_engine_named(const char *name);

/*
 * FEC's GF(2^8) multiply-accumulate under spec (the params' engine field),
 * chosen once per call: 0 and *ops, or the errors of dmt_engine_choose().
 */
int dmt_gf256_choose(const char *spec, const struct dmt_gf256_ops **ops);

/*
 * The AES code for prim (DMT_PRIM_AES_*) under spec, chosen once per
 * context: 0 and *ops (NULL: OpenSSL), or the errors of
 * dmt_engine_choose().
 */
int dmt_aes_choose(const char *spec, enum dmt_prim prim,
		   const struct dmt_aes_ops **ops);

#endif /* DMT_COMMON_DISPATCH_H */
