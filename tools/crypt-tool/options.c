// SPDX-License-Identifier: MIT
/*
 * crypt-tool's options into the library's parameters, with cryptsetup
 * 2.6.1's units and defaults (LUKS2 as luksFormat on a file; plain with
 * cryptsetup 2.7's defaults, which the printed open line spells out).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/crypt-tool/ct.h"

int ct_parse_type(struct cli *c)
{
	struct ct *ct = ct_of(c);
	const char *t = cli_str(c, O_TYPE);

	ct->type = CT_LUKS2;
	if (!t || !strcmp(t, "luks2") || !strcmp(t, "luks"))
		return 0;
	if (!strcmp(t, "plain")) {
		ct->type = CT_PLAIN;
		return 0;
	}
	tool_err("--type: '%s' is not supported (plain or luks2)", t);
	return -EINVAL;
}

static int map_cipher(struct cli *c, struct ct_map *m,
		      struct dmt_crypt_cipher *ci)
{
	struct dmt_reason why = { 0 };
	int err;

	m->cipher = cli_given(c, O_CIPHER) ? cli_str(c, O_CIPHER) :
					       "aes-xts-plain64";
	err = dmt_crypt_cipher_lookup(m->cipher, ci, &why);
	if (err)
		cli_reason_err(c, &why);
	return err;
}

/* --hash: a hash this OpenSSL computes; plain mode also takes "plain" and
 * ":LEN" (the library checks LEN against the key size). */
static int check_hash(struct cli *c, bool plain)
{
	const char *h = cli_str(c, O_HASH);
	size_t n = h ? strcspn(h, ":") : 0;
	char name[64];

	if (!h)
		return 0;
	if (h[n] && !plain) {
		tool_err("--hash: '%s': a LUKS2 hash takes no ':LEN' (that is plain mode's)",
			 h);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)n, h);
	if ((plain && !strcmp(name, "plain")) || dmt_crypt_hash_usable(name))
		return 0;
	tool_err("--hash: '%s' is not supported here (supported: %s%s)", name,
		 plain ? "plain, " : "", dmt_crypt_supported_hashes());
	return -EINVAL;
}

int ct_map_options(struct cli *c, struct ct_map *m)
{
	struct ct *ct = ct_of(c);
	struct dmt_crypt_cipher ci;
	struct dmt_reason why = { 0 };
	uint64_t bits;
	int err;

	memset(m, 0, sizeof(*m));
	err = check_hash(c, ct->type == CT_PLAIN);
	if (!err)
		err = map_cipher(c, m, &ci);
	if (err)
		return err;
	/* plain: 2.7's 256-bit XTS key; LUKS2: luksFormat's 512 */
	bits = ct->type == CT_PLAIN && ci.mode == DMT_CRYPT_XTS ?
		       256 : ci.default_key_size * 8;
	bits = cli_num(c, O_KEY_SIZE, bits);
	if (bits % 8) {
		tool_err("--key-size: %" PRIu64 " is not a multiple of 8 bits",
			 bits);
		return -EINVAL;
	}
	m->key_size = (unsigned int)(bits / 8);
	err = dmt_crypt_check_key_size(&ci, m->key_size, &why);
	if (err) {
		cli_reason_err(c, &why);
		return err;
	}
	m->sector_size_given = cli_given(c, O_SECTOR_SIZE);
	m->sector_size = (unsigned int)cli_num(c, O_SECTOR_SIZE,
					       ct->type == CT_PLAIN ? 512 : 4096);
	if (m->sector_size < 512 || m->sector_size > 4096 ||
	    (m->sector_size & (m->sector_size - 1))) {
		tool_err("--sector-size: %u is not a power of 2 in 512..4096",
			 m->sector_size);
		return -EINVAL;
	}
	if (ct->type == CT_PLAIN) {
		m->offset = cli_num(c, O_OFFSET, 0) * 512;
		m->iv_offset = cli_num(c, O_SKIP, 0);
		m->iv_large_sectors = cli_given(c, O_IV_LARGE);
		/* cryptsetup takes it, the kernel does not: dm-crypt's
		 * logical block is the sector ("start=N not aligned to h/w
		 * logical block size") */
		if (m->offset % m->sector_size) {
			tool_err("--offset %" PRIu64 ": not a multiple of the %u-byte sector size (%u sectors): the kernel cannot map it",
				 m->offset / 512, m->sector_size,
				 m->sector_size / 512);
			return -EINVAL;
		}
		/* dm-crypt's rule, with or without --iv-large-sectors
		 * ("Invalid iv_offset sector") */
		if (m->iv_offset % (m->sector_size / 512)) {
			tool_err("--skip %" PRIu64 ": not a multiple of the %u-byte sector size (%u sectors): dm-crypt refuses such an IV offset",
				 m->iv_offset, m->sector_size,
				 m->sector_size / 512);
			return -EINVAL;
		}
	}
	return 0;
}

int ct_device_size_opt(struct cli *c, uint64_t *bytes, bool *is_auto,
		       bool *given)
{
	const char *s = cli_str(c, O_DEVICE_SIZE);

	*bytes = 0;
	*is_auto = false;
	*given = s != NULL;
	if (!s)
		return 0;
	if (!strcmp(s, "auto")) {
		*is_auto = true;
		return 0;
	}
	if (tool_parse_size(s, bytes) || !*bytes) {
		tool_err("--device-size: invalid size '%s'", s);
		return -EINVAL;
	}
	if (*bytes % 512) {
		/* cryptsetup: "Device size must be multiple of 512 bytes
		 * sector." */
		tool_err("--device-size %s: %" PRIu64 " bytes is not a multiple of 512 (devices count 512-byte sectors)",
			 s, *bytes);
		return -EINVAL;
	}
	return 0;
}

const char *ct_plain_hash(const struct cli *c)
{
	return cli_given(c, O_HASH) ? cli_str(c, O_HASH) : "sha256";
}

/* A path as one shell word (single quotes unless it needs none). */
static void shell_word(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	if (s[0] && !s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,=@")]) {
		snprintf(buf, size, "%s", s);
		return;
	}
	buf[n++] = '\'';
	for (; *s && n + 5 < size; s++) {
		if (*s == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *s;
		}
	}
	buf[n++] = '\'';
	buf[n] = 0;
}

void ct_plain_open_line(const struct cli *c, const struct ct_map *m,
			bool hashed, char *buf, size_t size)
{
	const struct ct *ct = c->priv;
	char img[1100], kf[1100] = "", hash[160] = "", extra[160] = "";
	const char *key_file = cli_str(c, O_KEY_FILE);

	shell_word(ct->image, img, sizeof(img));
	if (hashed)
		snprintf(hash, sizeof(hash), " --hash %s", ct_plain_hash(c));
	if (key_file) {
		char w[1040];

		shell_word(key_file, w, sizeof(w));
		snprintf(kf, sizeof(kf), " --key-file %s", w);
	}
	if (cli_given(c, O_KEYFILE_OFFSET))
		snprintf(extra, sizeof(extra), " --keyfile-offset %" PRIu64,
			 cli_num(c, O_KEYFILE_OFFSET, 0));
	if (cli_given(c, O_KEYFILE_SIZE) && hashed)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 " --keyfile-size %" PRIu64,
			 cli_num(c, O_KEYFILE_SIZE, 0));
	snprintf(buf, size,
		 "cryptsetup open --type plain --cipher %s --key-size %u%s "
		 "--offset %" PRIu64 " --skip %" PRIu64 " --sector-size %u%s%s%s %s NAME",
		 m->cipher, m->key_size * 8, hash, m->offset / 512, m->iv_offset,
		 m->sector_size, m->iv_large_sectors ? " --iv-large-sectors" : "",
		 kf, extra, img);
}

int ct_luks2_params(struct cli *c, const struct ct_map *m,
		    struct dmt_luks2_params *p)
{
	memset(p, 0, sizeof(*p));
	p->cipher = m->cipher;
	p->volume_key_size = m->key_size;
	p->sector_size = m->sector_size;
	p->metadata_size = cli_num(c, O_METADATA_SIZE, 0);
	p->keyslots_size = cli_num(c, O_KEYSLOTS_SIZE, 0);
	p->detached = cli_given(c, O_HEADER);
	p->data_offset = cli_num(c, O_OFFSET, 0) * 512;
	if (p->data_offset % 4096) {
		/* crypt_set_data_offset: "Data offset is not multiple of 4096
		 * bytes.", whatever the sector size */
		tool_err("--offset %" PRIu64 ": the data offset is not a multiple of 4096 bytes (8 sectors), as luksFormat requires",
			 p->data_offset / 512);
		return -EINVAL;
	}
	p->uuid = cli_str(c, O_UUID);
	p->label = cli_str(c, O_LABEL);
	p->subsystem = cli_str(c, O_SUBSYSTEM);
	p->digest_hash = cli_str(c, O_HASH);
	/* luksFormat benchmarks the digest (0) unless the costs are forced:
	 * then it takes the minimum */
	p->digest_iterations = cli_given(c, O_PBKDF_FORCE_ITER) ? 1000 : 0;
	if (check_hash(c, false))
		return -EINVAL;
	if (p->label && strlen(p->label) > DMT_LUKS2_LABEL_MAX) {
		tool_err("--label: longer than %d characters", DMT_LUKS2_LABEL_MAX);
		return -EINVAL;
	}
	if (p->subsystem && strlen(p->subsystem) > DMT_LUKS2_LABEL_MAX) {
		tool_err("--subsystem: longer than %d characters",
			 DMT_LUKS2_LABEL_MAX);
		return -EINVAL;
	}
	return 0;
}

/* Forced costs (--pbkdf-force-iterations), checked as luksFormat does. */
static int forced_costs(struct cli *c, struct dmt_luks2_pbkdf *k, bool pbkdf2)
{
	k->iterations = (uint32_t)cli_num(c, O_PBKDF_FORCE_ITER, 0);
	if (k->iterations < (pbkdf2 ? 1000u : 4u)) {
		tool_err("--pbkdf-force-iterations: at least %u for %s",
			 pbkdf2 ? 1000u : 4u, k->type);
		return -EINVAL;
	}
	if (!pbkdf2 && k->memory_kb < 32) {
		tool_err("--pbkdf-memory: at least 32 KiB for %s", k->type);
		return -EINVAL;
	}
	return 0;
}

int ct_keyslot_params(struct cli *c, struct dmt_luks2_keyslot_params *kp)
{
	struct dmt_luks2_pbkdf *k = &kp->pbkdf;
	const char *type = cli_given(c, O_PBKDF) ? cli_str(c, O_PBKDF) :
						     "argon2id";
	bool pbkdf2 = !strcmp(type, "pbkdf2");
	uint64_t iter_time = cli_num(c, O_ITER_TIME, 2000);
	struct dmt_reason why = { 0 };
	uint64_t bits = cli_num(c, O_KEYSLOT_KEY_SIZE, 512);
	int err;

	memset(kp, 0, sizeof(*kp));
	if (!pbkdf2 && strcmp(type, "argon2id") && strcmp(type, "argon2i")) {
		tool_err("--pbkdf: '%s' is not supported (argon2id, argon2i or pbkdf2)",
			 type);
		return -EINVAL;
	}
	if (pbkdf2 && (cli_given(c, O_PBKDF_MEMORY) ||
		       cli_given(c, O_PBKDF_PARALLEL))) {
		tool_err("--pbkdf-memory and --pbkdf-parallel apply to argon2 only");
		return -EINVAL;
	}
	if (bits % 8) {
		tool_err("--keyslot-key-size: %" PRIu64 " is not a multiple of 8 bits",
			 bits);
		return -EINVAL;
	}
	if (!iter_time) {
		tool_err("--iter-time: the PBKDF target time cannot be zero");
		return -EINVAL;
	}
	kp->keyslot = (int)cli_num(c, O_KEY_SLOT, 0);
	kp->cipher = cli_str(c, O_KEYSLOT_CIPHER);
	kp->key_size = (size_t)(bits / 8);
	k->type = type;
	k->hash = pbkdf2 ? ct_plain_hash(c) : NULL;
	k->memory_kb = (uint32_t)cli_num(c, O_PBKDF_MEMORY, 0);
	k->parallel = (uint32_t)cli_num(c, O_PBKDF_PARALLEL, 0);
	/* luksFormat's ceilings, forced costs too: half the RAM, the CPUs */
	dmt_luks2_pbkdf_limit(k);
	if (cli_given(c, O_PBKDF_FORCE_ITER))
		return forced_costs(c, k, pbkdf2);
	tool_info("Benchmarking %s for %" PRIu64 " ms...", type, iter_time);
	err = dmt_luks2_pbkdf_benchmark(k, (unsigned int)iter_time,
					kp->key_size ? kp->key_size : 64, &why);
	if (err)
		ct_print_why(c, &why, err, NULL, "PBKDF benchmark");
	return err;
}
