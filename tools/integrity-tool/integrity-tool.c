// SPDX-License-Identifier: MIT
/*
 * integrity-tool: format, check, recalculate and dump dm-integrity images
 * offline.  Options are named as in integritysetup where they exist.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dmt/hash.h>
#include <dmt/integrity.h>
#include <dmt/io.h>
#include "tools/common/tool-common.h"

#define MAX_KEY_SIZE 4096

enum cmd { CMD_FORMAT = 1, CMD_CHECK = 2, CMD_RECALC = 4, CMD_DUMP = 8,
	   CMD_SIZE = 16 };
#define CMD_ALL (CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_DUMP | CMD_SIZE)

static const struct {
	const char *name;
	enum cmd cmd;
	const char *args;
	const char *desc;
} commands[] = {
	{ "format", CMD_FORMAT, "<device>",
	  "write superblock, journal, data and every tag" },
	{ "check", CMD_CHECK, "<device>", "verify the journal and every tag" },
	{ "recalculate", CMD_RECALC, "<device>",
	  "recompute tags in place (all, or from recalc_sector)" },
	{ "dump", CMD_DUMP, "<device>",
	  "print the superblock like integritysetup dump" },
	{ "size", CMD_SIZE, "--payload-size BYTES",
	  "print the device size needed for a payload" },
};

/* option ids (popt val) */
enum {
	O_INTEGRITY = 1, O_KEY_FILE, O_KEY_SIZE, O_TAG_SIZE, O_SECTOR_SIZE,
	O_JOURNAL_SIZE, O_INTERLEAVE, O_BUFFER, O_JMAC, O_JMAC_KEY_FILE,
	O_JMAC_KEY_SIZE, O_JCRYPT, O_JCRYPT_KEY_FILE, O_JCRYPT_KEY_SIZE,
	O_DATA_DEVICE, O_BITMAP, O_BITMAP_SPB, O_LEGACY_PADDING,
	O_LEGACY_HMAC, O_SALT, O_SEED, O_THREADS, O_JSON, O_DEVICE_SIZE,
	O_DATA_FROM, O_NO_WIPE, O_PAYLOAD_SIZE, O_ALLOW_DISCARDS,
	O_RECALC_RESET, O_PROGRESS_FREQ, O_PROGRESS_JSON, O_BATCH,
	O_VERBOSE, O_DEBUG, O_VERSION, O_LIST_ENGINES, O_ENGINE, O_HELP,
	O_USAGE, O_MAX
};

/* Which commands accept each option (0: every command). */
static const unsigned int allowed[O_MAX] = {
	[O_INTEGRITY] = CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_SIZE,
	[O_KEY_FILE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_KEY_SIZE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_TAG_SIZE] = CMD_FORMAT | CMD_SIZE,
	[O_SECTOR_SIZE] = CMD_FORMAT | CMD_SIZE,
	[O_JOURNAL_SIZE] = CMD_FORMAT | CMD_SIZE,
	[O_INTERLEAVE] = CMD_FORMAT | CMD_SIZE,
	[O_BUFFER] = CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_SIZE,
	[O_JMAC] = CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_SIZE,
	[O_JMAC_KEY_FILE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_JMAC_KEY_SIZE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_JCRYPT] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_JCRYPT_KEY_FILE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_JCRYPT_KEY_SIZE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_DATA_DEVICE] = CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_SIZE,
	[O_BITMAP] = CMD_FORMAT | CMD_SIZE,
	[O_BITMAP_SPB] = CMD_FORMAT | CMD_SIZE,
	[O_LEGACY_PADDING] = CMD_FORMAT | CMD_SIZE,
	[O_LEGACY_HMAC] = CMD_FORMAT | CMD_SIZE,
	[O_SALT] = CMD_FORMAT,
	[O_SEED] = CMD_FORMAT,
	[O_THREADS] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_JSON] = CMD_FORMAT | CMD_CHECK | CMD_RECALC | CMD_DUMP | CMD_SIZE,
	[O_DEVICE_SIZE] = CMD_FORMAT,
	[O_DATA_FROM] = CMD_FORMAT,
	[O_NO_WIPE] = CMD_FORMAT,
	[O_PAYLOAD_SIZE] = CMD_SIZE,
	[O_ALLOW_DISCARDS] = CMD_CHECK,
	[O_RECALC_RESET] = CMD_RECALC,
	[O_PROGRESS_FREQ] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
	[O_PROGRESS_JSON] = CMD_FORMAT | CMD_CHECK | CMD_RECALC,
};

static struct {
	char *integrity, *key_file, *key_size, *tag_size, *sector_size;
	char *journal_size, *interleave, *buffer, *jmac, *jmac_key_file;
	char *jmac_key_size, *jcrypt, *jcrypt_key_file, *jcrypt_key_size;
	char *data_device, *bitmap_spb, *salt, *seed, *threads;
	char *device_size, *data_from, *payload_size, *progress_freq;
	char *engine;
	int dummy;
} a;

static bool seen[O_MAX];

/*
 * String options are fetched with poptGetOptArg() so that a repeated option
 * frees the earlier value instead of leaking it (the last one wins).
 */
static char **const str_slot[O_MAX] = {
	[O_INTEGRITY] = &a.integrity,
	[O_KEY_FILE] = &a.key_file,
	[O_KEY_SIZE] = &a.key_size,
	[O_TAG_SIZE] = &a.tag_size,
	[O_SECTOR_SIZE] = &a.sector_size,
	[O_JOURNAL_SIZE] = &a.journal_size,
	[O_INTERLEAVE] = &a.interleave,
	[O_BUFFER] = &a.buffer,
	[O_JMAC] = &a.jmac,
	[O_JMAC_KEY_FILE] = &a.jmac_key_file,
	[O_JMAC_KEY_SIZE] = &a.jmac_key_size,
	[O_JCRYPT] = &a.jcrypt,
	[O_JCRYPT_KEY_FILE] = &a.jcrypt_key_file,
	[O_JCRYPT_KEY_SIZE] = &a.jcrypt_key_size,
	[O_DATA_DEVICE] = &a.data_device,
	[O_BITMAP_SPB] = &a.bitmap_spb,
	[O_SALT] = &a.salt,
	[O_SEED] = &a.seed,
	[O_THREADS] = &a.threads,
	[O_DEVICE_SIZE] = &a.device_size,
	[O_DATA_FROM] = &a.data_from,
	[O_PAYLOAD_SIZE] = &a.payload_size,
	[O_PROGRESS_FREQ] = &a.progress_freq,
	[O_ENGINE] = &a.engine,
};

static struct poptOption options[] = {
	{ "integrity", 'I', POPT_ARG_STRING, NULL, O_INTEGRITY,
	  "Data integrity algorithm (default crc32c)", "ALG" },
	{ "integrity-key-file", 0, POPT_ARG_STRING, NULL, O_KEY_FILE,
	  "Read the integrity key (hmac) from a file", "FILE" },
	{ "integrity-key-size", 0, POPT_ARG_STRING, NULL, O_KEY_SIZE,
	  "Size of the integrity key", "BYTES" },
	{ "tag-size", 't', POPT_ARG_STRING, NULL, O_TAG_SIZE,
	  "Tag size per sector (default: algorithm's)", "BYTES" },
	{ "sector-size", 's', POPT_ARG_STRING, NULL, O_SECTOR_SIZE,
	  "Sector size, 512..4096 (default 512)", "BYTES" },
	{ "journal-size", 'j', POPT_ARG_STRING, NULL,
	  O_JOURNAL_SIZE, "Journal size (default 1/128 of the device, max 64M)",
	  "SIZE" },
	{ "interleave-sectors", 0, POPT_ARG_STRING, NULL,
	  O_INTERLEAVE, "Interleave sectors (default 32768)", "SECTORS" },
	{ "buffer-sectors", 0, POPT_ARG_STRING, NULL, O_BUFFER,
	  "Kernel buffer size (default 128)", "SECTORS" },
	{ "journal-integrity", 0, POPT_ARG_STRING, NULL, O_JMAC,
	  "Journal integrity algorithm (journal MAC)", "ALG" },
	{ "journal-integrity-key-file", 0, POPT_ARG_STRING, NULL,
	  O_JMAC_KEY_FILE, "Read the journal integrity key from a file",
	  "FILE" },
	{ "journal-integrity-key-size", 0, POPT_ARG_STRING, NULL,
	  O_JMAC_KEY_SIZE, "Size of the journal integrity key", "BYTES" },
	{ "journal-crypt", 0, POPT_ARG_STRING, NULL, O_JCRYPT,
	  "Journal encryption: ctr(aes), cbc(aes) or chacha20", "ALG" },
	{ "journal-crypt-key-file", 0, POPT_ARG_STRING, NULL,
	  O_JCRYPT_KEY_FILE, "Journal encryption key file", "FILE" },
	{ "journal-crypt-key-size", 0, POPT_ARG_STRING, NULL,
	  O_JCRYPT_KEY_SIZE, "Journal encryption key size", "BYTES" },
	{ "data-device", 0, POPT_ARG_STRING, NULL, O_DATA_DEVICE,
	  "Separate data device (<device> then holds metadata only)", "PATH" },
	{ "integrity-bitmap-mode", 'B', POPT_ARG_NONE, &a.dummy, O_BITMAP,
	  "Image for bitmap mode (stores the bitmap granularity)", NULL },
	{ "bitmap-sectors-per-bit", 0, POPT_ARG_STRING, NULL,
	  O_BITMAP_SPB, "Bitmap granularity (default 32768)", "SECTORS" },
	{ "integrity-legacy-padding", 0, POPT_ARG_NONE, &a.dummy,
	  O_LEGACY_PADDING, "Legacy 128 KiB metadata padding (old kernels)",
	  NULL },
	{ "integrity-legacy-hmac", 0, POPT_ARG_NONE, &a.dummy, O_LEGACY_HMAC,
	  "No salt and no superblock MAC (old kernels)", NULL },
	{ "salt", 0, POPT_ARG_STRING, NULL, O_SALT,
	  "Superblock salt (32 hex digits) instead of a random one", "HEX" },
	{ "seed", 0, POPT_ARG_STRING, NULL, O_SEED,
	  "Derive the salt from STRING (reproducible images)", "STRING" },
	{ "threads", 0, POPT_ARG_STRING, NULL, O_THREADS,
	  "Worker threads (default: available CPUs)", "N" },
	{ "json", 0, POPT_ARG_NONE, &a.dummy, O_JSON,
	  "Print the result as JSON", NULL },
	{ "device-size", 0, POPT_ARG_STRING, NULL, O_DEVICE_SIZE,
	  "Create or grow the device file to SIZE (K/M/G/T: powers of 1024), or 'auto'",
	  "SIZE|auto" },
	{ "data-from", 0, POPT_ARG_STRING, NULL, O_DATA_FROM,
	  "Payload placed at the start of the mapped device", "FILE" },
	{ "no-wipe", 0, POPT_ARG_NONE, &a.dummy, O_NO_WIPE,
	  "Write superblock and journal only (no tags)", NULL },
	{ "payload-size", 0, POPT_ARG_STRING, NULL,
	  O_PAYLOAD_SIZE, "Payload size for the size command", "BYTES" },
	{ "allow-discards", 0, POPT_ARG_NONE, &a.dummy, O_ALLOW_DISCARDS,
	  "Accept discarded blocks (tags all 0xF6)", NULL },
	{ "integrity-recalculate-reset", 0, POPT_ARG_NONE, &a.dummy,
	  O_RECALC_RESET, "Recalculate from sector 0", NULL },
	{ "progress-frequency", 0, POPT_ARG_STRING, NULL,
	  O_PROGRESS_FREQ, "Progress line every N seconds", "SECS" },
	{ "progress-json", 0, POPT_ARG_NONE, &a.dummy, O_PROGRESS_JSON,
	  "Progress as JSON lines on stderr", NULL },
	{ "batch-mode", 'q', POPT_ARG_NONE, &a.dummy, O_BATCH,
	  "Quiet: no messages, no progress", NULL },
	{ "verbose", 'v', POPT_ARG_NONE, &a.dummy, O_VERBOSE,
	  "More messages", NULL },
	{ "debug", 0, POPT_ARG_NONE, &a.dummy, O_DEBUG, "Debug messages",
	  NULL },
	{ "version", 0, POPT_ARG_NONE, &a.dummy, O_VERSION,
	  "Print the version", NULL },
	{ "list-engines", 0, POPT_ARG_NONE, &a.dummy, O_LIST_ENGINES,
	  "List the hash engines of this CPU", NULL },
	{ "engine", 0, POPT_ARG_STRING, NULL, O_ENGINE,
	  "Force a hash engine (also $DMT_ENGINE)", "NAME" },
	{ "help", '?', POPT_ARG_NONE, &a.dummy, O_HELP,
	  "Show this help message", NULL },
	{ "usage", 0, POPT_ARG_NONE, &a.dummy, O_USAGE,
	  "Display brief usage", NULL },
	POPT_TABLEEND
};

static const char *option_name(int id)
{
	for (const struct poptOption *p = options; p->longName; p++)
		if (p->val == id)
			return p->longName;
	return "?";
}

/* ---- parsing helpers ---- */

static int parse_u32(const char *opt, const char *s, unsigned int *out)
{
	uint64_t v;

	if (tool_parse_u64(s, &v) || v > UINT32_MAX) {
		tool_err("--%s: invalid number '%s'", opt, s);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

static int read_key(const char *file, const char *size_opt, uint8_t **key,
		    size_t *len, const char *what)
{
	unsigned int want = 0;
	int err;

	if (size_opt && parse_u32(what, size_opt, &want))
		return -EINVAL;
	if (size_opt && (!want || want > MAX_KEY_SIZE)) {
		tool_err("--%s: key size must be 1..%d bytes", what,
			 MAX_KEY_SIZE);
		return -EINVAL;
	}
	err = tool_read_key_file(file, want, MAX_KEY_SIZE, key, len);
	if (err) {
		tool_err_errno(file, err == -ENODATA ? "key file too short" :
			       "cannot read the key file", err);
		return err;
	}
	return 0;
}

struct config {
	enum cmd cmd;
	const char *device;
	struct dmt_integrity_opts o;
	uint8_t *key, *jkey, *ckey;
	bool json, bitmap;
	uint64_t payload_size;
	struct tool_progress progress;
};

static int fill_layout(struct config *c)
{
	struct dmt_integrity_layout *l = &c->o.layout;
	unsigned int v;

	l->sector_size = 512;
	l->fix_padding = !seen[O_LEGACY_PADDING];
	l->fix_hmac = !seen[O_LEGACY_HMAC];
	if (a.sector_size) {
		if (parse_u32("sector-size", a.sector_size, &v))
			return -EINVAL;
		if (v < 512 || v > 4096 || (v & (v - 1))) {
			tool_err("--sector-size: must be 512, 1024, 2048 or 4096");
			return -EINVAL;
		}
		l->sector_size = v;
	}
	if (a.tag_size) {
		if (parse_u32("tag-size", a.tag_size, &v))
			return -EINVAL;
		if (!v || v > DMT_INTEGRITY_MAX_TAG) {
			tool_err("--tag-size: must be 1..%d",
				 DMT_INTEGRITY_MAX_TAG);
			return -EINVAL;
		}
		l->tag_size = v;
	}
	if (a.journal_size) {
		uint64_t js;

		if (tool_parse_size(a.journal_size, &js)) {
			tool_err("--journal-size: invalid size '%s'",
				 a.journal_size);
			return -EINVAL;
		}
		/* integritysetup passes bytes / 512; 0 becomes 1 */
		if (js)
			l->journal_sectors = js / 512 ? js / 512 : 1;
		if (l->journal_sectors > UINT32_MAX) {
			tool_err("--journal-size: too large");
			return -EINVAL;
		}
	}
	if (a.interleave) {
		if (parse_u32("interleave-sectors", a.interleave, &v))
			return -EINVAL;
		l->interleave_sectors = v;
	}
	if (a.buffer) {
		if (parse_u32("buffer-sectors", a.buffer, &v))
			return -EINVAL;
		l->buffer_sectors = v;
		c->o.buffer_sectors = v;
	}
	if (a.bitmap_spb) {
		uint64_t spb;

		if (!seen[O_BITMAP]) {
			tool_err("--bitmap-sectors-per-bit needs --integrity-bitmap-mode");
			return -EINVAL;
		}
		if (tool_parse_u64(a.bitmap_spb, &spb) || !spb) {
			tool_err("--bitmap-sectors-per-bit: invalid number '%s'",
				 a.bitmap_spb);
			return -EINVAL;
		}
		l->sectors_per_bit = spb;
	}
	if (seen[O_BITMAP] && (a.jmac || a.jcrypt)) {
		tool_err("--%s is not allowed with --integrity-bitmap-mode",
			 a.jmac ? "journal-integrity" : "journal-crypt");
		return -EINVAL;
	}
	l->journal_mac = a.jmac != NULL;
	return 0;
}

static int fill_keys(struct config *c)
{
	size_t len;
	int err;

	if (a.key_size && !a.key_file) {
		tool_err("--integrity-key-size needs --integrity-key-file");
		return -EINVAL;
	}
	if (a.jmac_key_size && !a.jmac_key_file) {
		tool_err("--journal-integrity-key-size needs --journal-integrity-key-file");
		return -EINVAL;
	}
	if (a.jmac_key_file && !a.jmac) {
		tool_err("--journal-integrity-key-file needs --journal-integrity");
		return -EINVAL;
	}
	if (a.jcrypt_key_size && !a.jcrypt_key_file) {
		tool_err("--journal-crypt-key-size needs --journal-crypt-key-file");
		return -EINVAL;
	}
	if (!a.jcrypt != !a.jcrypt_key_file) {
		tool_err(a.jcrypt ? "--journal-crypt needs --journal-crypt-key-file"
				  : "--journal-crypt-key-file needs --journal-crypt");
		return -EINVAL;
	}
	if (a.key_file) {
		err = read_key(a.key_file, a.key_size, &c->key, &len,
			       "integrity-key-size");
		if (err)
			return err;
		c->o.key = c->key;
		c->o.key_size = len;
	}
	if (a.jmac) {
		c->o.journal_mac.alg = a.jmac;
		if (a.jmac_key_file) {
			err = read_key(a.jmac_key_file, a.jmac_key_size,
				       &c->jkey, &len,
				       "journal-integrity-key-size");
			if (err)
				return err;
			c->o.journal_mac.key = c->jkey;
			c->o.journal_mac.key_size = len;
		}
	}
	if (a.jcrypt) {
		err = read_key(a.jcrypt_key_file, a.jcrypt_key_size, &c->ckey,
			       &len, "journal-crypt-key-size");
		if (err)
			return err;
		c->o.journal_crypt.alg = a.jcrypt;
		c->o.journal_crypt.key = c->ckey;
		c->o.journal_crypt.key_size = len;
	}
	return 0;
}

static int fill_salt(struct config *c)
{
	uint8_t *salt;
	size_t len;
	int err;

	if (a.salt && a.seed) {
		tool_err("--salt and --seed are mutually exclusive");
		return -EINVAL;
	}
	if ((a.salt || a.seed) && seen[O_LEGACY_HMAC]) {
		tool_err("--integrity-legacy-hmac superblocks have no salt: drop --salt/--seed");
		return -EINVAL;
	}
	if (a.salt) {
		err = tool_parse_hex(a.salt, &salt, &len);
		if (err || len != DMT_INTEGRITY_SALT_SIZE) {
			if (!err)
				free(salt);
			tool_err("--salt: need %d bytes as %d hex digits",
				 DMT_INTEGRITY_SALT_SIZE,
				 2 * DMT_INTEGRITY_SALT_SIZE);
			return -EINVAL;
		}
		memcpy(c->o.salt, salt, len);
		free(salt);
		c->o.have_salt = true;
	}
	if (a.seed) {
		err = tool_seed_derive(a.seed, "integrity-salt", c->o.salt,
				       DMT_INTEGRITY_SALT_SIZE);
		if (err) {
			tool_err("--seed: %s", dmt_strerror(err));
			return err;
		}
		c->o.have_salt = true;
	}
	return 0;
}

/* ---- output ---- */

static void json_print(json_object *j)
{
	printf("%s\n", json_object_to_json_string_ext(
			       j, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

static void jadd_u64(json_object *j, const char *k, uint64_t v)
{
	json_object_object_add(j, k, json_object_new_uint64(v));
}

static void jadd_str(json_object *j, const char *k, const char *v)
{
	json_object_object_add(j, k, v ? json_object_new_string(v) : NULL);
}

static void flag_names(uint32_t flags, char *buf, size_t size)
{
	static const char *const names[] = { "have_journal_mac",
		"recalculating", "dirty_bitmap", "fix_padding", "fix_hmac",
		"inline" };

	buf[0] = '\0';
	for (unsigned int i = 0; i < 6; i++) {
		if (!(flags & (1u << i)))
			continue;
		strncat(buf, names[i], size - strlen(buf) - 1);
		strncat(buf, " ", size - strlen(buf) - 1);
	}
}

static json_object *sb_json(const struct dmt_integrity_sb *sb)
{
	json_object *j = json_object_new_object(), *fl;
	char salt[2 * DMT_INTEGRITY_SALT_SIZE + 1];
	static const char *const names[] = { "have_journal_mac",
		"recalculating", "dirty_bitmap", "fix_padding", "fix_hmac",
		"inline" };

	jadd_u64(j, "version", sb->version);
	jadd_u64(j, "log2_interleave_sectors", sb->log2_interleave_sectors);
	jadd_u64(j, "integrity_tag_size", sb->tag_size);
	jadd_u64(j, "journal_sections", sb->journal_sections);
	jadd_u64(j, "provided_data_sectors", sb->provided_data_sectors);
	jadd_u64(j, "sector_size", 512u << sb->log2_sectors_per_block);
	jadd_u64(j, "log2_blocks_per_bitmap_bit",
		 sb->log2_blocks_per_bitmap_bit);
	jadd_u64(j, "flags_value", sb->flags);
	fl = json_object_new_array();
	for (unsigned int i = 0; i < 6; i++)
		if (sb->flags & (1u << i))
			json_object_array_add(fl,
					      json_object_new_string(names[i]));
	json_object_object_add(j, "flags", fl);
	if (sb->flags & DMT_INTEGRITY_SB_RECALCULATING)
		jadd_u64(j, "recalc_sector", sb->recalc_sector);
	tool_hex(sb->salt, sizeof(sb->salt), salt);
	jadd_str(j, "salt",
		 (sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) ? salt : NULL);
	return j;
}

static const char *canonical_alg(const char *name)
{
	const struct dmt_hash_alg *alg;

	return dmt_hash_alg_lookup(name, &alg) ? name : dmt_hash_alg_name(alg);
}

/* A dm table for `dmsetup create` (keys left as placeholders). */
static void table_line(const struct config *c,
		       const struct dmt_integrity_sb *sb, char *buf,
		       size_t size)
{
	const char *data = c->o.data_device ? c->o.data_device : c->device;
	char opts[1024];
	int n = 0;

	opts[0] = '\0';
	if (c->o.data_device) {
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts),
			 " meta_device:%s", c->device);
		n++;
	}
	if (sb->log2_sectors_per_block) {
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts),
			 " block_size:%u", 512u << sb->log2_sectors_per_block);
		n++;
	}
	snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts),
		 " internal_hash:%s%s", canonical_alg(c->o.alg),
		 c->o.key_size ? ":<integrity key in hex>" : "");
	n++;
	if (c->o.journal_mac.alg) {
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts),
			 " journal_mac:%s%s", canonical_alg(c->o.journal_mac.alg),
			 c->o.journal_mac.key_size ?
			 ":<journal integrity key in hex>" : "");
		n++;
	}
	if (sb->flags & DMT_INTEGRITY_SB_FIXED_PADDING) {
		strncat(opts, " fix_padding", sizeof(opts) - strlen(opts) - 1);
		n++;
	}
	if (sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) {
		strncat(opts, " fix_hmac", sizeof(opts) - strlen(opts) - 1);
		n++;
	}
	/* tags not (all) written yet: the kernel must recalculate them, or
	 * every read of a sector without a valid tag fails */
	if (c->o.no_wipe || (sb->flags & DMT_INTEGRITY_SB_RECALCULATING)) {
		strncat(opts, " recalculate", sizeof(opts) - strlen(opts) - 1);
		n++;
	}
	snprintf(buf, size, "0 %" PRIu64 " integrity %s 0 %u J %d%s",
		 sb->provided_data_sectors, data, sb->tag_size, n, opts);
}

static void geom_json(json_object *j, const struct dmt_integrity_geom *g)
{
	jadd_u64(j, "initial_sectors", g->initial_sectors);
	jadd_u64(j, "journal_section_sectors", g->section_sectors);
	if (!g->meta_dev) {
		jadd_u64(j, "interleave_sectors", 1ull << g->log2_interleave);
		jadd_u64(j, "metadata_run_sectors", g->metadata_run);
	}
}

static void print_why(const struct dmt_integrity_result *r, const char *dev,
		      int err)
{
	const char *path = r->why_path ? r->why_path : dev;

	if (!r->why) {
		tool_err_errno(path, "failed", err);
		return;
	}
	switch (err) {
	case -EINVAL:
	case -EBADMSG:
	case -EUCLEAN:
	case -EMEDIUMTYPE:
	case -ENODATA:
		tool_err("%s: %s", path, r->why);
		break;
	default:
		tool_err("%s: %s: %s", path, r->why, dmt_strerror(err));
	}
}

/* ---- commands ---- */

/* The kernel ignores a device's partial last sector (or block). */
static void warn_unused_tail(const struct config *c,
			     const struct dmt_integrity_result *r)
{
	uint64_t ss = 512u << r->sb.log2_sectors_per_block;

	if (r->device_bytes % 512)
		tool_info("%s: warning: %s: the last %" PRIu64
			  " bytes are not used (the size is not a multiple of 512)",
			  tool_name, c->device, r->device_bytes % 512);
	if (c->o.data_device && r->data_device_bytes % ss)
		tool_info("%s: warning: %s: the last %" PRIu64
			  " bytes are not used (the size is not a multiple of the %" PRIu64
			  "-byte sector size)", tool_name, c->o.data_device,
			  r->data_device_bytes % ss, ss);
}

static int cmd_format(struct config *c)
{
	struct dmt_integrity_result r;
	int err;

	if (a.device_size) {
		if (!strcmp(a.device_size, "auto")) {
			c->o.device_size_auto = true;
		} else if (tool_parse_size(a.device_size, &c->o.device_size) ||
			   !c->o.device_size) {
			tool_err("--device-size: invalid size '%s'",
				 a.device_size);
			return -EINVAL;
		}
	}
	if (a.data_from && seen[O_NO_WIPE]) {
		tool_err("--data-from needs the data area written: drop --no-wipe");
		return -EINVAL;
	}
	c->o.data_from = a.data_from;
	c->o.no_wipe = seen[O_NO_WIPE];
	tool_progress_init(&c->progress, c->device, "written",
			   c->progress.frequency, seen[O_PROGRESS_JSON]);
	c->o.progress = tool_progress_hook(&c->progress);

	err = dmt_integrity_format(&c->o, &r);
	tool_progress_finish(&c->progress, !err);
	if (!err)
		warn_unused_tail(c, &r);
	if (err) {
		print_why(&r, c->device, err);
		if (err == -ENODATA && r.need_bytes) {
			struct stat st;

			/* a block device cannot be grown: no option to offer */
			if (!stat(c->device, &st) && S_ISBLK(st.st_mode))
				tool_err("%s: needs at least %" PRIu64
					 " bytes", c->device, r.need_bytes);
			else
				tool_err("%s: needs at least %" PRIu64
					 " bytes (--device-size %" PRIu64 ")",
					 c->device, r.need_bytes,
					 r.need_bytes);
		}
		if (err == -EINTR)
			tool_err("%s: format interrupted; %s", c->device,
				 r.created ? "nothing was written" :
				 c->o.data_from ?
				 "run the same format again (the payload may be incomplete)" :
				 "finish with `integrity-tool recalculate` (same options) or run format again");
		return err;
	}
	if (c->json) {
		json_object *j = json_object_new_object();
		char table[2048];

		jadd_str(j, "device", c->device);
		jadd_u64(j, "device_size", r.device_bytes);
		if (c->o.data_device) {
			jadd_str(j, "data_device", c->o.data_device);
			jadd_u64(j, "data_device_size", r.data_device_bytes);
		}
		jadd_str(j, "integrity", canonical_alg(c->o.alg));
		jadd_u64(j, "tag_size", r.sb.tag_size);
		jadd_u64(j, "sector_size", 512u << r.sb.log2_sectors_per_block);
		jadd_u64(j, "provided_data_sectors",
			 r.sb.provided_data_sectors);
		jadd_u64(j, "provided_data_bytes",
			 r.sb.provided_data_sectors * 512);
		if (c->o.data_from) {
			jadd_str(j, "data_from", c->o.data_from);
			jadd_u64(j, "payload_size", r.payload_bytes);
		}
		json_object_object_add(j, "tags_written",
				       json_object_new_boolean(!c->o.no_wipe));
		geom_json(j, &r.geom);
		jadd_str(j, "engine", r.engine);
		json_object_object_add(j, "superblock", sb_json(&r.sb));
		table_line(c, &r.sb, table, sizeof(table));
		jadd_str(j, "table", table);
		json_print(j);
	} else if (tool_verbosity >= 0) {
		printf("Formatted with tag size %u, internal integrity %s.\n",
		       r.sb.tag_size, canonical_alg(c->o.alg));
		tool_verbose("%s: %" PRIu64 " bytes usable (provided_data_sectors %" PRIu64
			     "), %s", c->device, r.sb.provided_data_sectors * 512,
			     r.sb.provided_data_sectors,
			     c->o.no_wipe ? "tags not written (--no-wipe)" :
					    "every tag written");
	}
	return 0;
}

static void print_sectors(const char *what, const uint64_t *list, size_t n,
			  uint64_t total)
{
	printf("%s:", what);
	for (size_t i = 0; i < n; i++)
		printf(" %" PRIu64, list[i]);
	if (total > n)
		printf(" ...");
	printf("\n");
}

static int cmd_check(struct config *c, bool recalc)
{
	struct dmt_integrity_result r;
	const char *verb = recalc ? "recalculated" : "verified";
	int err;

	c->o.allow_discards = seen[O_ALLOW_DISCARDS];
	c->o.recalc_reset = seen[O_RECALC_RESET];
	tool_progress_init(&c->progress, c->device, verb,
			   c->progress.frequency, seen[O_PROGRESS_JSON]);
	c->o.progress = tool_progress_hook(&c->progress);
	err = recalc ? dmt_integrity_recalculate(&c->o, &r) :
		       dmt_integrity_check(&c->o, &r);
	tool_progress_finish(&c->progress, !err || err == -EBADMSG);

	if (c->json && (!err || err == -EBADMSG || err == -EUCLEAN)) {
		json_object *j = json_object_new_object(), *arr;

		jadd_str(j, "device", c->device);
		if (c->o.data_device)
			jadd_str(j, "data_device", c->o.data_device);
		jadd_str(j, "result", !err ? "ok" :
			 err == -EBADMSG ? "mismatch" : "not clean");
		if (r.why && err)
			jadd_str(j, "reason", r.why);
		jadd_u64(j, "start_sector", r.start_sector);
		jadd_u64(j, "end_sector", r.end_sector);
		jadd_u64(j, "provided_data_sectors",
			 r.sb.provided_data_sectors);
		jadd_u64(j, "blocks", r.blocks);
		if (!recalc) {
			jadd_u64(j, "mismatches", r.mismatches);
			jadd_u64(j, "discarded", r.discarded);
			arr = json_object_new_array();
			for (size_t i = 0; i < r.n_first_bad; i++)
				json_object_array_add(arr,
					json_object_new_uint64(r.first_bad[i]));
			json_object_object_add(j, "first_mismatch_sectors", arr);
			jadd_u64(j, "journal_bad_commit_ids",
				 r.journal.bad_commit_ids);
			jadd_u64(j, "journal_used_entries",
				 r.journal.used_entries);
			jadd_u64(j, "journal_bad_macs", r.journal.bad_macs);
			json_object_object_add(j, "superblock_mac_checked",
				json_object_new_boolean(r.sb_mac_checked));
		}
		jadd_str(j, "engine", r.engine);
		json_object_object_add(j, "superblock", sb_json(&r.sb));
		json_print(j);
	}
	if (err == -EUCLEAN && r.journal.used_entries)
		tool_err("%s: %" PRIu64 " used journal entries, first in section %u entry %u (sector field %" PRIu64 ")",
			 c->device, r.journal.used_entries,
			 r.journal.first_used_section,
			 r.journal.first_used_entry,
			 r.journal.first_used_logical);
	if (err && err != -EBADMSG) {
		print_why(&r, c->device, err);
		if (recalc && err == -EINTR)
			tool_err("%s: interrupted; the superblock records where to continue: run recalculate again",
				 c->device);
		return err;
	}
	if (!c->json && !recalc) {
		uint64_t bytes = r.end_sector * 512;

		if (r.journal.bad_commit_ids)
			printf("%s: %" PRIu64 " journal sectors with a bad commit id, first: section %u sector %u\n",
			       c->device, r.journal.bad_commit_ids,
			       r.journal.first_bad_section,
			       r.journal.first_bad_sector);
		if (r.journal.bad_macs)
			printf("%s: %" PRIu64 " journal sections with a bad MAC, first: section %u\n",
			       c->device, r.journal.bad_macs,
			       r.journal.first_bad_mac_section);
		if (r.mismatches) {
			printf("%s: %" PRIu64 " of %" PRIu64 " blocks have wrong tags\n",
			       c->device, r.mismatches, r.blocks);
			print_sectors("First mismatching sectors", r.first_bad,
				      r.n_first_bad, r.mismatches);
		}
		if (r.discarded) {
			printf("%s: %" PRIu64 " blocks discarded (tags all 0xf6)%s\n",
			       c->device, r.discarded, c->o.allow_discards ?
			       ", accepted (--allow-discards)" :
			       ", counted as mismatches without --allow-discards");
			print_sectors("First discarded sectors",
				      r.first_discarded, r.n_first_discarded,
				      r.discarded);
		}
		if ((r.sb.flags & DMT_INTEGRITY_SB_RECALCULATING) &&
		    r.end_sector < r.sb.provided_data_sectors)
			printf("%s: recalculating: only sectors 0..%" PRIu64
			       " of %" PRIu64 " have valid tags and were checked (the kernel does not verify the rest either)\n",
			       c->device, r.end_sector,
			       r.sb.provided_data_sectors);
		else if (r.sb.flags & DMT_INTEGRITY_SB_RECALCULATING)
			printf("%s: recalculating flag set, recalc_sector %" PRIu64
			       " is past the end: every sector was checked\n",
			       c->device, r.sb.recalc_sector);
		if (!err && tool_verbosity >= 0)
			printf("%s: %" PRIu64 " blocks (%" PRIu64
			       " bytes) verified, all tags match\n",
			       c->device, r.blocks, bytes);
	} else if (!c->json && tool_verbosity >= 0) {
		printf("%s: recalculated %" PRIu64 " blocks (sectors %" PRIu64 "..%" PRIu64 ")\n",
		       c->device, r.blocks, r.start_sector, r.end_sector);
	}
	if (err)
		print_why(&r, c->device, err);
	return err;
}

static int cmd_dump(struct config *c)
{
	struct dmt_integrity_sb sb;
	uint64_t size;
	char flags[128];
	int err;

	err = dmt_integrity_read_sb(c->device, &sb, &size);
	if (!err && sb.log2_sectors_per_block > 3) {
		tool_err("%s: invalid sector size in the superblock (log2_sectors_per_block %u)",
			 c->device, sb.log2_sectors_per_block);
		return -EMEDIUMTYPE;
	}
	if (err) {
		if (err == -EMEDIUMTYPE)
			tool_err("%s: not a valid INTEGRITY device (no dm-integrity superblock)",
				 c->device);
		else
			tool_err_errno(c->device, "cannot read", err);
		return err;
	}
	if (c->json) {
		json_object *j = sb_json(&sb);

		jadd_str(j, "device", c->device);
		jadd_u64(j, "device_size", size);
		json_print(j);
		return 0;
	}
	/* cryptsetup 2.6.1 INTEGRITY_dump(), line for line */
	flag_names(sb.flags & 0x1f, flags, sizeof(flags));
	printf("Info for integrity device %s.\n", c->device);
	printf("superblock_version %d\n", sb.version);
	printf("log2_interleave_sectors %d\n", sb.log2_interleave_sectors);
	printf("integrity_tag_size %u\n", sb.tag_size);
	printf("journal_sections %u\n", sb.journal_sections);
	printf("provided_data_sectors %" PRIu64 "\n", sb.provided_data_sectors);
	printf("sector_size %u\n", 512u << sb.log2_sectors_per_block);
	if (sb.version >= 2 && (sb.flags & DMT_INTEGRITY_SB_RECALCULATING))
		printf("recalc_sector %" PRIu64 "\n", sb.recalc_sector);
	printf("log2_blocks_per_bitmap %u\n", sb.log2_blocks_per_bitmap_bit);
	printf("flags %s\n", flags);
	return 0;
}

static int cmd_size(struct config *c)
{
	struct dmt_integrity_layout l = c->o.layout;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t bytes, need, data_bytes = 0;
	int err;

	if (!l.tag_size) {
		unsigned int ts;

		err = dmt_integrity_default_tag_size(c->o.alg, &ts);
		if (err) {
			tool_err("--integrity: unknown algorithm '%s'",
				 c->o.alg);
			return -EINVAL;
		}
		l.tag_size = ts;
	}
	if (!a.payload_size && c->o.data_device) {
		struct dmt_file f;

		err = dmt_file_open(&f, c->o.data_device, DMT_OPEN_READ);
		if (!err) {
			err = dmt_file_size(&f, &c->payload_size);
			dmt_file_close(&f);
		}
		if (err) {
			tool_err_errno(c->o.data_device, "cannot get the size",
				       err);
			return err;
		}
	} else if (!a.payload_size) {
		tool_err("size needs --payload-size BYTES");
		return -EINVAL;
	} else if (tool_parse_size(a.payload_size, &c->payload_size)) {
		tool_err("--payload-size: invalid size '%s'", a.payload_size);
		return -EINVAL;
	}
	need = (c->payload_size + l.sector_size - 1) / l.sector_size *
	       (l.sector_size / 512);
	l.meta_dev = c->o.data_device != NULL;
	if (l.meta_dev) {
		data_bytes = need * 512;
		l.data_dev_sectors = need ? need : l.sector_size / 512;
	}
	err = dmt_integrity_min_device(&l, need, &bytes);
	if (err) {
		tool_err("no device size can hold %" PRIu64 " bytes with these options",
			 c->payload_size);
		return err;
	}
	l.dev_sectors = bytes >> 9;
	err = dmt_integrity_geom_format(&l, &sb, &g);
	if (err) {
		tool_err("invalid parameters: %s", dmt_strerror(err));
		return err;
	}
	if (c->json) {
		json_object *j = json_object_new_object();

		jadd_u64(j, "payload_size", c->payload_size);
		jadd_u64(j, "device_size", bytes);
		if (l.meta_dev)
			jadd_u64(j, "data_device_size", data_bytes);
		jadd_u64(j, "provided_data_sectors", g.provided);
		jadd_u64(j, "journal_sections", g.journal_sections);
		jadd_u64(j, "tag_size", g.tag_size);
		jadd_u64(j, "sector_size", l.sector_size);
		geom_json(j, &g);
		json_print(j);
	} else {
		printf("%" PRIu64 "\n", bytes);
	}
	return 0;
}

static void usage_text(poptContext ctx)
{
	poptPrintHelp(ctx, stdout, 0);
	printf("\n<command> is one of:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("\t%s %s - %s\n", commands[i].name, commands[i].args,
		       commands[i].desc);
	printf("\nDefault compiled-in dm-integrity parameters:\n"
	       "\tTag size: 4 bytes, Checksum algorithm: crc32c, sector size 512,\n"
	       "\tinterleave 32768 sectors, journal 1/128 of the device (max 64 MiB),\n"
	       "\tfix_padding and fix_hmac (superblock version 5, random salt)\n\n");
	printf("%s", TOOL_EXIT_CODES_HELP);
}

int main(int argc, const char **argv)
{
	struct config c;
	poptContext ctx;
	const char **rest;
	int rc, err = 0, nrest = 0;
	unsigned int v;

	tool_name = "integrity-tool";
	memset(&c, 0, sizeof(c));
	ctx = poptGetContext("integrity-tool", argc, argv, options, 0);
	poptSetOtherOptionHelp(ctx, "[OPTION...] <command> <device>");
	while ((rc = poptGetNextOpt(ctx)) > 0) {
		if (rc >= O_MAX)
			continue;
		seen[rc] = true;
		if (str_slot[rc]) {
			free(*str_slot[rc]);
			*str_slot[rc] = poptGetOptArg(ctx);
		}
	}
	if (rc < -1) {
		tool_err("%s: %s", poptBadOption(ctx, POPT_BADOPTION_NOALIAS),
			 poptStrerror(rc));
		err = -EINVAL;
		goto out;
	}
	if (seen[O_HELP]) {
		usage_text(ctx);
		goto out;
	}
	if (seen[O_USAGE]) {
		poptPrintUsage(ctx, stdout, 0);
		goto out;
	}
	if (seen[O_VERSION]) {
		printf("integrity-tool %s\n", DMT_VERSION);
		goto out;
	}
	if (seen[O_DEBUG])
		tool_verbosity = 2;
	else if (seen[O_VERBOSE])
		tool_verbosity = 1;
	if (seen[O_BATCH])
		tool_verbosity = -1;
	rc = tool_engine_setup(a.engine);
	if (rc) {
		poptFreeContext(ctx);
		return rc;
	}
	if (seen[O_LIST_ENGINES]) {
		tool_list_engines();
		goto out;
	}

	rest = poptGetArgs(ctx);
	while (rest && rest[nrest])
		nrest++;
	if (!nrest) {
		tool_err("no command given (format, check, recalculate, dump, size; see --help)");
		err = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(rest[0], commands[i].name))
			c.cmd = commands[i].cmd;
	if (!c.cmd) {
		tool_err("unknown command '%s' (format, check, recalculate, dump, size)",
			 rest[0]);
		err = -EINVAL;
		goto out;
	}
	if (c.cmd == CMD_SIZE ? nrest != 1 : nrest != 2) {
		tool_err("%s: %s", rest[0], c.cmd == CMD_SIZE ?
			 "takes no device argument" :
			 "needs exactly one <device> argument");
		err = -EINVAL;
		goto out;
	}
	for (int id = 1; id < O_MAX; id++) {
		if (seen[id] && allowed[id] && !(allowed[id] & c.cmd)) {
			tool_err("option --%s is not allowed with the %s command",
				 option_name(id), rest[0]);
			err = -EINVAL;
			goto out;
		}
	}
	c.device = nrest > 1 ? rest[1] : NULL;
	c.json = seen[O_JSON];
	c.o.device = c.device;
	c.o.data_device = a.data_device;
	c.o.alg = a.integrity ? a.integrity : "crc32c";
	c.o.engine = tool_engine_spec();
	c.o.threads = 1;

	if (a.threads) {
		if (parse_u32("threads", a.threads, &v)) {
			err = -EINVAL;
			goto out;
		}
		if (v > 1024) {
			tool_err("--threads: at most 1024");
			err = -EINVAL;
			goto out;
		}
		c.o.threads = tool_threads(v);
	} else {
		c.o.threads = tool_threads(0);
	}
	if (a.progress_freq &&
	    parse_u32("progress-frequency", a.progress_freq, &v)) {
		err = -EINVAL;
		goto out;
	}
	c.progress.frequency = a.progress_freq ? (int)v : 0;
	if (c.cmd != CMD_DUMP) {
		err = fill_layout(&c);
		if (!err)
			err = fill_keys(&c);
		if (!err && c.cmd == CMD_FORMAT)
			err = fill_salt(&c);
		if (err)
			goto out;
	}
	tool_install_signals();

	switch (c.cmd) {
	case CMD_FORMAT:
		err = cmd_format(&c);
		break;
	case CMD_CHECK:
		err = cmd_check(&c, false);
		break;
	case CMD_RECALC:
		err = cmd_check(&c, true);
		break;
	case CMD_DUMP:
		err = cmd_dump(&c);
		break;
	case CMD_SIZE:
		err = cmd_size(&c);
		break;
	}
	/* results that did not reach stdout are a failure (exit 4) */
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		int werr = errno ? -errno : -EIO;

		tool_err_errno("stdout", "write error", werr);
		if (!err)
			err = werr;
	}
	if (tool_verbosity > 0 && err)
		fprintf(stderr, "Command failed with code %d (%s).\n", err,
			dmt_strerror(err));
	else if (tool_verbosity > 0)
		fprintf(stderr, "Command successful.\n");
out:
	free(c.key);
	free(c.jkey);
	free(c.ckey);
	poptFreeContext(ctx);
	return tool_exit_code(err);
}
