// SPDX-License-Identifier: MIT
/*
 * What every dm-integrity operation sets up from its options: the
 * algorithms and keys checked, the journal cipher, the tagger.
 */
#include "lib/common/reserved.h"
#include "lib/integrity/integrity_internal.h"

#include <errno.h>

#include <dmt/hash.h>

static int check_mac_alg(const struct dmt_integrity_mac *m, const char *field,
			 size_t key_size, struct dmt_reason *why)
{
	const struct dmt_hash_alg *a;

	if (dmt_hash_alg_lookup(m->alg, &a)) {
		dmt_reason_set(why, -EINVAL, DMT_REASON_UNKNOWN_ALG, field, 0);
		if (why)
			why->name = m->alg;
		return -EINVAL;
	}
	if (dmt_hash_alg_needs_key(a) && !key_size) {
		dmt_reason_set(why, -EINVAL, DMT_REASON_NEEDS_KEY, field, 0);
		if (why)
			why->name = m->alg;
		return -EINVAL;
	}
	return 0;
}

/* -EINVAL with DMT_REASON_BAD_VALUE "reserved" for a nonzero word. */
int dmt_integrity_check_reserved(const struct dmt_integrity_params *o,
				 struct dmt_reason *r)
{
	int err = DMT_CHECK_RESERVED(o, r);

	return err ? err : DMT_CHECK_RESERVED(&o->layout, r);
}

int dmt_integrity_params_check(const struct dmt_integrity_params *o,
			       struct dmt_reason *why)
{
	const struct dmt_integrity_mac tag = { .alg = o->alg };
	const struct dmt_hash_alg *a;
	int err;

	err = dmt_integrity_check_reserved(o, why);
	if (err)
		return err;
	if (!o->alg)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_MISSING, "alg",
				      0);
	err = check_mac_alg(&tag, "alg", o->key_size, why);
	if (err)
		return err;
	dmt_hash_alg_lookup(o->alg, &a);
	if (o->key_size && !dmt_hash_alg_takes_key(a))
		return dmt_reason_set(why, -EINVAL,
				      DMT_REASON_INTEGRITY_KEY_UNUSED, "key",
				      o->key_size);
	if (o->journal_mac.alg)
		return check_mac_alg(&o->journal_mac, "journal_mac.alg",
				     o->journal_mac.key_size, why);
	return 0;
}

int dmt_integrity_open_jcrypt(const struct dmt_integrity_params *o,
			      const struct dmt_integrity_geom *g,
			      struct dmt_integrity_jcrypt **out,
			      struct dmt_integrity_result *r)
{
	const struct dmt_integrity_cipher *c = &o->journal_crypt;
	int err;

	*out = NULL;
	if (!c->alg)
		return 0;
	err = dmt_integrity_jcrypt_new(c->alg, c->key, c->key_size, g, out);
	if (err == -ENOENT) {
		dmt_integrity_why(r, -EINVAL, DMT_REASON_UNSUPPORTED, NULL,
				  "journal_crypt.alg", 0);
		DMT_INTEGRITY_REASON(r)->name = c->alg;
		return -EINVAL;
	}
	if (err == -EINVAL)
		dmt_integrity_why(r, err, DMT_REASON_KEY_SIZE, NULL,
				  "journal_crypt.key", c->key_size);
	return err;
}

int dmt_integrity_make_tagger(const struct dmt_integrity_params *o,
			      const struct dmt_integrity_sb *sb,
			      struct dmt_integrity_tagger **t,
			      struct dmt_integrity_result *r)
{
	bool salted = sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC;
	int err;

	err = dmt_integrity_tagger_new(o->alg, o->key, o->key_size,
				       salted ? sb->salt : NULL,
				       512u << sb->log2_sectors_per_block,
				       sb->tag_size, o->engine, t);
	if (err)
		return dmt_integrity_why(r, err, DMT_REASON_INTEGRITY_TAGGER,
					 NULL, "alg", (uint64_t)-err);
	r->engine = dmt_integrity_tagger_engine(*t);
	return 0;
}
