// SPDX-License-Identifier: MIT
/*
 * integrity-tool: the options into struct dmt_integrity_params: layout
 * choices, the three keys (read from their files with one rule: a file
 * that is missing or unreadable is exit 4, one of the wrong size exit 1)
 * and the salt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/io.h>

#include "tools/integrity-tool/it.h"

static int sector_and_tag(struct cli *c, struct dmt_integrity_layout *l)
{
	if (cli_given(c, O_SECTOR_SIZE)) {
		uint64_t v = cli_num(c, O_SECTOR_SIZE, 0);

		if (v < 512 || v > 4096 || (v & (v - 1))) {
			tool_err("--sector-size: must be 512, 1024, 2048 or 4096");
			return -EINVAL;
		}
		l->sector_size = (unsigned int)v;
	}
	if (cli_given(c, O_TAG_SIZE)) {
		uint64_t v = cli_num(c, O_TAG_SIZE, 0);

		if (!v || v > DMT_INTEGRITY_MAX_TAG) {
			tool_err("--tag-size: must be 1..%d",
				 DMT_INTEGRITY_MAX_TAG);
			return -EINVAL;
		}
		l->tag_size = (unsigned int)v;
	}
	return 0;
}

static int journal_and_bitmap(struct cli *c, struct dmt_integrity_layout *l)
{
	uint64_t js = cli_num(c, O_JOURNAL_SIZE, 0);

	/* integritysetup passes bytes / 512; 0 becomes 1 */
	if (js)
		l->journal_sectors = js / 512 ? js / 512 : 1;
	if (l->journal_sectors > UINT32_MAX) {
		tool_err("--journal-size: too large");
		return -EINVAL;
	}
	if (cli_given(c, O_BITMAP_SPB)) {
		if (!cli_given(c, O_BITMAP)) {
			tool_err("--bitmap-sectors-per-bit needs --integrity-bitmap-mode");
			return -EINVAL;
		}
		if (!cli_num(c, O_BITMAP_SPB, 0)) {
			tool_err("--bitmap-sectors-per-bit: invalid number '%s'",
				 cli_str(c, O_BITMAP_SPB));
			return -EINVAL;
		}
		l->sectors_per_bit = cli_num(c, O_BITMAP_SPB, 0);
	}
	if (cli_given(c, O_BITMAP) &&
	    (cli_given(c, O_JMAC) || cli_given(c, O_JCRYPT))) {
		tool_err("--%s is not allowed with --integrity-bitmap-mode",
			 cli_given(c, O_JMAC) ? "journal-integrity" :
						"journal-crypt");
		return -EINVAL;
	}
	return 0;
}

int it_fill_layout(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_layout *l = &it->o.layout;
	int err;

	l->sector_size = 512;
	l->fix_padding = !cli_given(c, O_LEGACY_PADDING);
	l->fix_hmac = !cli_given(c, O_LEGACY_HMAC);
	err = sector_and_tag(c, l);
	if (!err)
		err = journal_and_bitmap(c, l);
	if (err)
		return err;
	l->interleave_sectors = (unsigned int)cli_num(c, O_INTERLEAVE, 0);
	l->buffer_sectors = (unsigned int)cli_num(c, O_BUFFER, 0);
	it->o.buffer_sectors = l->buffer_sectors;
	l->journal_mac = cli_given(c, O_JMAC);
	return 0;
}

/* ---- keys ---- */

/*
 * A key file as integritysetup reads it: exactly --*-key-size bytes, or
 * the whole file (at most IT_MAX_KEY_SIZE) without one; pipes and
 * process substitution too.  tools/common/secret.h has the refusals.
 */
static int read_key(struct cli *c, int file_opt, int size_opt,
		    struct tool_secret *key)
{
	char size_name[64];
	uint64_t want = cli_num(c, size_opt, 0);
	struct tool_secret_src src = {
		.path = cli_str(c, file_opt), .size = (size_t)want,
		.max = IT_MAX_KEY_SIZE, .size_opt = size_name,
	};

	snprintf(size_name, sizeof(size_name), "--%s",
		 c->tool->options[size_opt].name);
	if (cli_given(c, size_opt) && (!want || want > IT_MAX_KEY_SIZE)) {
		tool_err("%s: key size must be 1..%d bytes", size_name,
			 IT_MAX_KEY_SIZE);
		return -EINVAL;
	}
	if (!strcmp(src.path, "-")) {
		/* integritysetup opens the name: "-" is a file called "-" */
		tool_err("--%s: '-' (stdin) is not a key file; use /dev/stdin",
			 c->tool->options[file_opt].name);
		return -EINVAL;
	}
	return tool_read_secret(&src, key);
}

/* Options that only make sense together. */
static int key_option_pairs(struct cli *c)
{
	static const struct {
		int opt, needs;
	} pairs[] = {
		{ O_KEY_SIZE, O_KEY_FILE },
		{ O_JMAC_KEY_SIZE, O_JMAC_KEY_FILE },
		{ O_JMAC_KEY_FILE, O_JMAC },
		{ O_JCRYPT_KEY_SIZE, O_JCRYPT_KEY_FILE },
		{ O_JCRYPT, O_JCRYPT_KEY_FILE },
		{ O_JCRYPT_KEY_FILE, O_JCRYPT },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (cli_given(c, pairs[i].opt) &&
		    !cli_given(c, pairs[i].needs)) {
			tool_err("--%s needs --%s",
				 c->tool->options[pairs[i].opt].name,
				 c->tool->options[pairs[i].needs].name);
			return -EINVAL;
		}
	}
	return 0;
}

int it_fill_keys(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_params *o = &it->o;
	int err = key_option_pairs(c);

	if (!err && cli_given(c, O_KEY_FILE)) {
		err = read_key(c, O_KEY_FILE, O_KEY_SIZE, &it->key);
		o->key = it->key.p;
		o->key_size = it->key.len;
	}
	if (!err && cli_given(c, O_JMAC)) {
		o->journal_mac.alg = cli_str(c, O_JMAC);
		if (cli_given(c, O_JMAC_KEY_FILE))
			err = read_key(c, O_JMAC_KEY_FILE, O_JMAC_KEY_SIZE,
				       &it->jkey);
		o->journal_mac.key = it->jkey.p;
		o->journal_mac.key_size = it->jkey.len;
	}
	if (!err && cli_given(c, O_JCRYPT)) {
		err = read_key(c, O_JCRYPT_KEY_FILE, O_JCRYPT_KEY_SIZE,
			       &it->ckey);
		o->journal_crypt.alg = cli_str(c, O_JCRYPT);
		o->journal_crypt.key = it->ckey.p;
		o->journal_crypt.key_size = it->ckey.len;
	}
	return err;
}

/* ---- salt ---- */

static int salt_from_hex(struct it *it, const char *hex)
{
	uint8_t *salt;
	size_t len;
	int err = tool_parse_hex(hex, &salt, &len);

	if (err || len != DMT_INTEGRITY_SALT_SIZE) {
		if (!err)
			free(salt);
		tool_err("--salt: need %d bytes as %d hex digits",
			 DMT_INTEGRITY_SALT_SIZE, 2 * DMT_INTEGRITY_SALT_SIZE);
		return -EINVAL;
	}
	memcpy(it->o.salt, salt, len);
	free(salt);
	it->o.have_salt = true;
	return 0;
}

int it_fill_salt(struct cli *c)
{
	struct it *it = it_of(c);
	int err;

	if (cli_given(c, O_SALT) && cli_given(c, O_SEED)) {
		tool_err("--salt and --seed are mutually exclusive");
		return -EINVAL;
	}
	if ((cli_given(c, O_SALT) || cli_given(c, O_SEED)) &&
	    cli_given(c, O_LEGACY_HMAC)) {
		tool_err("--integrity-legacy-hmac superblocks have no salt: drop --salt/--seed");
		return -EINVAL;
	}
	if (cli_given(c, O_SALT))
		return salt_from_hex(it, cli_str(c, O_SALT));
	if (cli_given(c, O_SEED)) {
		err = tool_seed_derive(cli_str(c, O_SEED), "integrity-salt",
				       it->o.salt, DMT_INTEGRITY_SALT_SIZE);
		if (err) {
			tool_err("--seed: %s", dmt_strerror(err));
			return err;
		}
		it->o.have_salt = true;
	}
	return 0;
}
