// SPDX-License-Identifier: MIT
/*
 * Option values into the fs-verity parameters every command shares
 * (--hash-alg, --block-size, --salt), and the combinations refused; the
 * option table itself is in main.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/fsverity-tool/fvt.h"

/* A name, or as fsverity-utils takes it a number (1 sha256, 2 sha512). */
static uint32_t hash_alg(const char *s)
{
	uint64_t n;

	if (!tool_parse_u64(s, &n))
		return dmt_fsverity_hash_alg_name((uint32_t)n) && n < 65536
			       ? (uint32_t)n
			       : 0;
	return dmt_fsverity_hash_alg_by_name(s);
}

/* --hash-alg, --block-size, --salt into f->p. */
int fvt_params(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	struct dmt_reason r = { 0 };
	const char *alg = cli_str(c, O_HASH_ALG);
	const char *salt = cli_str(c, O_SALT);
	int err;

	f->p.version = 1;
	f->p.hash_algorithm = DMT_FSVERITY_HASH_SHA256;
	/* what fsverity refuses while it reads the options is a usage
	 * error (its exit 2); sizes it takes and libfsverity then refuses
	 * are not */
	c->usage_error = true;
	if (alg) {
		f->p.hash_algorithm = hash_alg(alg);
		if (!f->p.hash_algorithm) {
			tool_err("--hash-alg: unknown hash algorithm '%s' "
				 "(available: sha256 sha512)", alg);
			return -EINVAL;
		}
	}
	f->p.block_size = (uint32_t)cli_num(c, O_BLOCK_SIZE,
					    DMT_FSVERITY_DEFAULT_BLOCK_SIZE);
	if (cli_given(c, O_BLOCK_SIZE) &&
	    (!f->p.block_size || (f->p.block_size & (f->p.block_size - 1)) ||
	     f->p.block_size >= INT_MAX)) {
		tool_err("--block-size: %s is not a power of 2",
			 cli_str(c, O_BLOCK_SIZE));
		return -EINVAL;
	}
	if (salt) {
		if (!strcmp(salt, "-") ||
		    tool_parse_hex(salt, &f->salt, &f->salt_len)) {
			tool_err("--salt: '%s' is not a valid hex string", salt);
			return -EINVAL;
		}
		f->p.salt = f->salt;
		f->p.salt_size = (uint32_t)f->salt_len;
	}
	c->usage_error = false;
	if (f->salt_len > DMT_FSVERITY_MAX_SALT) {
		tool_err("--salt: %zu bytes, at most %d", f->salt_len,
			 DMT_FSVERITY_MAX_SALT);
		return -EINVAL;
	}
	f->p.threads = c->threads;
	f->p.engine = tool_engine_spec();
	err = dmt_fsverity_check_params(&f->p, &r);
	if (err)
		cli_reason_err(c, &r);
	return err;
}

/* Options that would be ignored in this combination: refused. */
int fvt_combinations(struct cli *c)
{
	int err = -EINVAL;

	c->usage_error = true;
	if (c->json && (cli_given(c, O_COMPACT) ||
			cli_given(c, O_FOR_BUILTIN_SIG)))
		tool_err("--json prints every field (digest and "
			 "formatted_digest); it does not go with --%s",
			 cli_given(c, O_COMPACT) ? "compact"
						 : "for-builtin-sig");
	else if (cli_given(c, O_STRICT) && !cli_given(c, O_RECURSIVE))
		tool_err("--strict applies to the files -r finds; give -r");
	else
		err = c->usage_error = 0;
	return err;
}
