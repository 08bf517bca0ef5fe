// SPDX-License-Identifier: MIT
/*
 * verity-tool: build, verify, dump and size dm-verity hash trees.
 * Arguments and output follow veritysetup (cryptsetup 2.6.1) so it can
 * replace `veritysetup format/verify/dump` in image pipelines; the work
 * is done by lib/verity.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "lib/hash.h"
#include "lib/io.h"
#include "lib/threads.h"
#include "lib/verity.h"
#include "tool-common.h"

enum action {
	ACT_BUILD = 1 << 0,
	ACT_VERIFY = 1 << 1,
	ACT_DUMP = 1 << 2,
	ACT_SIZE = 1 << 3,
};
#define ACT_ALL (ACT_BUILD | ACT_VERIFY | ACT_DUMP | ACT_SIZE)
#define ACT_TREE (ACT_BUILD | ACT_VERIFY)

enum opt_id {
	OPT_NONE,
	OPT_HASH,
	OPT_DBS,
	OPT_HBS,
	OPT_DATA_BLOCKS,
	OPT_HASH_OFFSET,
	OPT_SALT,
	OPT_UUID,
	OPT_FORMAT,
	OPT_NO_SB,
	OPT_ROOT_FILE,
	OPT_THREADS,
	OPT_JSON,
	OPT_SEED,
	OPT_PROG_FREQ,
	OPT_PROG_JSON,
	OPT_ENGINE,
	OPT_LIST_ENGINES,
	OPT_DATA_SIZE,
	OPT_QUIET,
	OPT_VERBOSE,
	OPT_DEBUG,
	OPT_VERSION,
	OPT_HELP,
	OPT_USAGE,
	OPT_COUNT
};

/* Long name and the actions that accept each option. */
static const struct {
	const char *name;
	unsigned int actions;
} opt_info[OPT_COUNT] = {
	[OPT_HASH] = { "hash", ACT_TREE | ACT_SIZE },
	[OPT_DBS] = { "data-block-size", ACT_TREE | ACT_SIZE },
	[OPT_HBS] = { "hash-block-size", ACT_TREE | ACT_SIZE },
	[OPT_DATA_BLOCKS] = { "data-blocks", ACT_TREE | ACT_SIZE },
	[OPT_HASH_OFFSET] = { "hash-offset", ACT_ALL },
	[OPT_SALT] = { "salt", ACT_TREE },
	[OPT_UUID] = { "uuid", ACT_TREE },
	[OPT_FORMAT] = { "format", ACT_TREE | ACT_SIZE },
	[OPT_NO_SB] = { "no-superblock", ACT_TREE | ACT_SIZE },
	[OPT_ROOT_FILE] = { "root-hash-file", ACT_TREE },
	[OPT_THREADS] = { "threads", ACT_TREE },
	[OPT_JSON] = { "json", ACT_ALL },
	[OPT_SEED] = { "seed", ACT_BUILD },
	[OPT_PROG_FREQ] = { "progress-frequency", ACT_TREE },
	[OPT_PROG_JSON] = { "progress-json", ACT_TREE },
	[OPT_ENGINE] = { "engine", ACT_TREE },
	[OPT_LIST_ENGINES] = { "list-engines", ACT_ALL },
	[OPT_DATA_SIZE] = { "data-size", ACT_SIZE },
	[OPT_QUIET] = { "quiet", ACT_ALL },
	[OPT_VERBOSE] = { "verbose", ACT_ALL },
	[OPT_DEBUG] = { "debug", ACT_ALL },
	[OPT_VERSION] = { "version", ACT_ALL },
	[OPT_HELP] = { "help", ACT_ALL },
	[OPT_USAGE] = { "usage", ACT_ALL },
};

#define STR POPT_ARG_STRING
#define NONE POPT_ARG_NONE
static const struct poptOption options[] = {
	{ "hash", 'h', STR, NULL, OPT_HASH,
	  "Hash algorithm (default sha256)", "NAME" },
	{ "data-block-size", 0, STR, NULL, OPT_DBS,
	  "Block size on the data device (default 4096)", "BYTES" },
	{ "hash-block-size", 0, STR, NULL, OPT_HBS,
	  "Block size on the hash device (default 4096)", "BYTES" },
	{ "data-blocks", 0, STR, NULL, OPT_DATA_BLOCKS,
	  "Number of data blocks to protect (default: whole file)", "BLOCKS" },
	{ "hash-offset", 0, STR, NULL, OPT_HASH_OFFSET,
	  "Superblock / hash area offset on the hash device", "BYTES" },
	{ "salt", 's', STR, NULL, OPT_SALT,
	  "Salt as hex, - for none (default 32 random bytes)", "HEX" },
	{ "uuid", 0, STR, NULL, OPT_UUID,
	  "UUID recorded in the superblock (default random)", "UUID" },
	{ "format", 0, STR, NULL, OPT_FORMAT,
	  "Hash type: 1 normal (default), 0 original Chrome OS", "0|1" },
	{ "no-superblock", 0, NONE, NULL, OPT_NO_SB,
	  "Do not write / read a superblock", NULL },
	{ "root-hash-file", 0, STR, NULL, OPT_ROOT_FILE,
	  "Write (build) or read (verify) the root hash as hex", "FILE" },
	{ "threads", 0, STR, NULL, OPT_THREADS,
	  "Worker threads (default: CPUs available, 0 = default)", "N" },
	{ "json", 0, NONE, NULL, OPT_JSON,
	  "Print the result as one JSON object", NULL },
	{ "seed", 0, STR, NULL, OPT_SEED,
	  "Derive salt and UUID from STRING (reproducible builds)",
	  "STRING" },
	{ "progress-frequency", 0, STR, NULL, OPT_PROG_FREQ,
	  "Print a progress line every SECONDS", "SECONDS" },
	{ "progress-json", 0, NONE, NULL, OPT_PROG_JSON,
	  "Print progress as JSON lines on stderr", NULL },
	{ "engine", 0, STR, NULL, OPT_ENGINE,
	  "Force a hash backend (see --list-engines; env " DMT_ENGINE_ENV
	  ")", "NAME" },
	{ "list-engines", 0, NONE, NULL, OPT_LIST_ENGINES,
	  "List the hash backends this CPU can run", NULL },
	{ "data-size", 0, STR, NULL, OPT_DATA_SIZE,
	  "size: data size instead of a data file (K, M, G... suffixes)",
	  "BYTES" },
	{ "quiet", 'q', NONE, NULL, OPT_QUIET,
	  "No progress or warnings (errors are still shown)", NULL },
	{ "batch-mode", 0, NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, OPT_QUIET,
	  NULL, NULL },
	{ "verbose", 'v', NONE, NULL, OPT_VERBOSE, "Shows more detail", NULL },
	{ "debug", 0, NONE, NULL, OPT_DEBUG, "Show debug messages", NULL },
	{ "version", 'V', NONE, NULL, OPT_VERSION,
	  "Print program version", NULL },
	{ "help", '?', NONE, NULL, OPT_HELP, "Show this help message", NULL },
	{ "usage", 0, NONE, NULL, OPT_USAGE, "Display brief usage", NULL },
	POPT_TABLEEND
};

struct cli {
	char *val[OPT_COUNT];		/* option strings as given */
	bool given[OPT_COUNT];
	enum action act;
	const char *act_name;
	const char *args[4];
	int nargs;
	struct dmt_verity_params p;
	char uuid_text[40];		/* as printed by build */
	char hash_text[DMT_VERITY_HASH_NAME_MAX];
	int prog_freq;			/* --progress-frequency */
	struct tool_progress prog;
};

static void print_help(poptContext ctx)
{
	poptPrintHelp(ctx, stdout, 0);
	printf("\n<action> is one of:\n"
	       "\tbuild <data_path> <hash_path> - build the hash tree "
	       "(alias: format)\n"
	       "\tverify <data_path> <hash_path> [<root_hash>] - check "
	       "data and tree\n"
	       "\tdump <hash_path> - show the superblock\n"
	       "\tsize [<data_path>] - hash area size a build would write "
	       "(or --data-size)\n"
	       "\nDefault compiled-in dm-verity parameters:\n"
	       "\tHash: sha256, Data block (bytes): 4096, Hash block "
	       "(bytes): 4096, Salt size: 32, Hash format: 1\n\n%s"
	       "  verify also exits 2 when only the root hash differs "
	       "(veritysetup: 1).\n",
	       TOOL_EXIT_CODES_HELP);
}

static int usage_error(const char *msg)
{
	tool_err("%s", msg);
	fprintf(stderr, "Try '%s --help' for more information.\n", tool_name);
	return TOOL_EXIT_USAGE;
}

/* ---- option values ---- */

static int num_opt(struct cli *c, enum opt_id id, uint64_t *out)
{
	if (!c->given[id])
		return 0;
	if (tool_parse_u64(c->val[id], out)) {
		tool_err("Invalid value for --%s: '%s' (plain number "
			 "expected).", opt_info[id].name, c->val[id]);
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

static int block_opt(struct cli *c, enum opt_id id, uint32_t *out)
{
	uint64_t v = *out;
	int rc = num_opt(c, id, &v);

	if (rc)
		return rc;
	if (v > UINT32_MAX)
		v = 0;	/* rejected by dmt_verity_check_params */
	*out = (uint32_t)v;
	return 0;
}

/* Format options shared by build, verify --no-superblock and size. */
static int tree_opts(struct cli *c)
{
	struct dmt_verity_params *p = &c->p;
	uint64_t v;
	int rc;

	if (c->given[OPT_HASH]) {
		if (strlen(c->val[OPT_HASH]) >= sizeof(p->hash_name) ||
		    !dmt_verity_hash_supported(c->val[OPT_HASH])) {
			tool_err("Hash algorithm %s not supported.",
				 c->val[OPT_HASH]);
			return TOOL_EXIT_USAGE;
		}
		strcpy(p->hash_name, c->val[OPT_HASH]);
	}
	rc = block_opt(c, OPT_DBS, &p->data_block_size);
	if (!rc)
		rc = block_opt(c, OPT_HBS, &p->hash_block_size);
	if (!rc)
		rc = num_opt(c, OPT_DATA_BLOCKS, &p->data_blocks);
	if (!rc)
		rc = num_opt(c, OPT_HASH_OFFSET, &p->hash_offset);
	if (rc)
		return rc;
	if (c->given[OPT_FORMAT]) {
		rc = num_opt(c, OPT_FORMAT, &v);
		if (rc)
			return rc;
		if (v > 1) {
			tool_err("Unsupported VERITY hash type %s.",
				 c->val[OPT_FORMAT]);
			return TOOL_EXIT_USAGE;
		}
		p->hash_type = (uint32_t)v;
	}
	p->no_superblock = c->given[OPT_NO_SB];
	if (c->given[OPT_SALT]) {
		uint8_t *salt;
		size_t len;

		if (tool_parse_hex(c->val[OPT_SALT], &salt, &len)) {
			tool_err("Invalid salt string specified.");
			return TOOL_EXIT_USAGE;
		}
		if (len > DMT_VERITY_SALT_MAX) {
			free(salt);
			tool_err("Invalid salt string specified (at most %d "
				 "bytes).", DMT_VERITY_SALT_MAX);
			return TOOL_EXIT_USAGE;
		}
		if (len)
			memcpy(p->salt, salt, len);
		p->salt_size = len;
		free(salt);
	}
	if (c->given[OPT_THREADS]) {
		rc = num_opt(c, OPT_THREADS, &v);
		if (rc)
			return rc;
		if (v > 4096) {
			tool_err("Invalid value for --threads: '%s' (at most "
				 "4096).", c->val[OPT_THREADS]);
			return TOOL_EXIT_USAGE;
		}
		p->threads = tool_threads((long)v);
	} else {
		p->threads = tool_threads(0);
	}
	if (c->given[OPT_PROG_FREQ]) {
		rc = num_opt(c, OPT_PROG_FREQ, &v);
		if (rc)
			return rc;
		c->prog_freq = v > 86400 ? 86400 : (int)v;
	}
	snprintf(c->hash_text, sizeof(c->hash_text), "%s", p->hash_name);
	return 0;
}

static int check_params(struct cli *c)
{
	const char *why;
	long page = sysconf(_SC_PAGESIZE);

	if (dmt_verity_check_params(&c->p, &why)) {
		tool_err("%s", why);
		return TOOL_EXIT_USAGE;
	}
	if (c->act == ACT_BUILD && page > 0 &&
	    c->p.data_block_size > (uint64_t)page)
		tool_info("WARNING: Kernel cannot activate device if data "
			  "block size exceeds page size (%ld).", page);
	return 0;
}

/* ---- files ---- */

struct files {
	struct dmt_file data_f, hash_f;
	struct dmt_file *data, *hash;	/* hash == data on one file */
	bool created;			/* new file: temp + rename */
};

static int open_err(const char *path, int err)
{
	if (err == -EBUSY)
		tool_err("%s: in use by another process (locked).", path);
	else
		tool_err_errno(path, "cannot open", err);
	return tool_exit_code(err);
}

static void close_files(struct files *f)
{
	dmt_file_close(&f->data_f);
	dmt_file_close(&f->hash_f);
}

static int open_files(struct cli *c, struct files *f, bool write)
{
	const char *dpath = c->args[0], *hpath = c->args[1];
	struct stat st;
	int err, hflags;

	memset(f, 0, sizeof(*f));
	f->data_f.fd = f->hash_f.fd = -1;
	if (dmt_same_file(dpath, hpath)) {
		err = dmt_file_open(&f->hash_f, hpath,
				    (write ? DMT_OPEN_RW : DMT_OPEN_READ) |
					    DMT_OPEN_LOCK);
		if (err)
			return open_err(hpath, err);
		f->data = f->hash = &f->hash_f;
		return 0;
	}
	err = dmt_file_open(&f->data_f, dpath, DMT_OPEN_READ | DMT_OPEN_LOCK);
	if (err)
		return open_err(dpath, err);
	f->data = &f->data_f;
	if (!write)
		hflags = DMT_OPEN_READ | DMT_OPEN_LOCK;
	else if (stat(hpath, &st) == 0)
		hflags = DMT_OPEN_RW | DMT_OPEN_LOCK;	/* in place */
	else
		hflags = DMT_OPEN_NEW_TMP;
	err = dmt_file_open(&f->hash_f, hpath, hflags);
	if (err) {
		close_files(f);
		return open_err(hpath, err);
	}
	f->hash = &f->hash_f;
	f->created = hflags == DMT_OPEN_NEW_TMP;
	return 0;
}

/* A partial last block is not protected (veritysetup says nothing). */
static void warn_tail(const char *path, uint64_t size, uint32_t dbs)
{
	if (size >= dbs && size % dbs)
		tool_info("%s: %s: warning: the last %" PRIu64 " bytes are not "
			  "a whole data block and are not protected.",
			  tool_name, path, size % dbs);
}

/* data_blocks from the file when not given; the one-file overlap rule. */
static int resolve_data(struct cli *c, struct files *f)
{
	struct dmt_verity_params *p = &c->p;
	struct dmt_verity_geometry g;
	uint64_t size, need, area;
	int err;

	err = dmt_file_size(f->data, &size);
	if (err) {
		tool_err_errno(c->args[0], "cannot get size", err);
		return tool_exit_code(err);
	}
	if (!p->data_blocks) {
		p->data_blocks = dmt_verity_blocks_for_size(p, size);
		warn_tail(c->args[0], size, p->data_block_size);
	}
	if (!p->data_blocks) {
		tool_err("%s: smaller than one data block (%" PRIu32
			 " bytes).", c->args[0], p->data_block_size);
		return TOOL_EXIT_DEVICE;
	}
	need = p->data_blocks * p->data_block_size;
	if (need > size) {
		tool_err("%s: too small: %" PRIu64 " data blocks of %" PRIu32
			 " bytes need %" PRIu64 " bytes, it has %" PRIu64 ".",
			 c->args[0], p->data_blocks, p->data_block_size, need,
			 size);
		return TOOL_EXIT_DEVICE;
	}
	err = dmt_verity_geometry(p, &g);
	if (err) {
		tool_err("Device offset overflow.");
		return TOOL_EXIT_USAGE;
	}
	area = p->no_superblock ? g.hash_start * g.hash_block_size
				: p->hash_offset;
	if (p->hash_offset < area)
		area = p->hash_offset;
	if (f->data == f->hash && need > area) {
		tool_err("%s: Data area overlaps with hash area.", c->args[0]);
		return TOOL_EXIT_USAGE;
	}
	/* verify: say which file is short before reading anything */
	if (c->act == ACT_VERIFY && g.levels) {
		err = dmt_file_size(f->hash, &size);
		if (!err && size < g.hash_end) {
			tool_err("%s: too small: the hash tree ends at byte %"
				 PRIu64 ", the file has %" PRIu64 ".",
				 c->args[1], g.hash_end, size);
			return TOOL_EXIT_DEVICE;
		}
	}
	return 0;
}

/* ---- output ---- */

static void hex(const uint8_t *p, size_t len, char *out)
{
	tool_hex(p, len, out);
}

static void salt_text(const struct dmt_verity_params *p,
		      char out[2 * DMT_VERITY_SALT_MAX + 1])
{
	if (p->salt_size)
		hex(p->salt, p->salt_size, out);
	else
		strcpy(out, "-");
}

/* veritysetup's dump block; root may be NULL (dump). */
static void print_header(const struct cli *c, const char *hash_path,
			 const struct dmt_verity_geometry *g,
			 const uint8_t *root)
{
	const struct dmt_verity_params *p = &c->p;
	char salt[2 * DMT_VERITY_SALT_MAX + 1], r[2 * DMT_DIGEST_MAX + 1];

	salt_text(p, salt);
	printf("VERITY header information for %s\n", hash_path);
	printf("UUID:            \t%s\n", c->uuid_text);
	printf("Hash type:       \t%" PRIu32 "\n", p->hash_type);
	printf("Data blocks:     \t%" PRIu64 "\n", p->data_blocks);
	printf("Data block size: \t%" PRIu32 "\n", p->data_block_size);
	printf("Hash blocks:     \t%" PRIu64 "\n", g->hash_blocks);
	printf("Hash block size: \t%" PRIu32 "\n", p->hash_block_size);
	printf("Hash algorithm:  \t%s\n", c->hash_text);
	printf("Salt:            \t%s\n", salt);
	if (root) {
		hex(root, g->digest_size, r);
		printf("Root hash:      \t%s\n", r);
	}
	if (!p->hash_offset)
		printf("Hash device size: \t%" PRIu64 " [bytes]\n",
		       g->hash_end);
}

static const char *lower_name(const struct dmt_verity_params *p, char *buf)
{
	size_t i;

	for (i = 0; p->hash_name[i]; i++)
		buf[i] = (char)(p->hash_name[i] >= 'A' && p->hash_name[i] <= 'Z'
					? p->hash_name[i] - 'A' + 'a'
					: p->hash_name[i]);
	buf[i] = '\0';
	return buf;
}

static uint64_t hash_area_bytes(const struct dmt_verity_geometry *g)
{
	return g->hash_end > g->hash_offset ? g->hash_end - g->hash_offset : 0;
}

/* Appends " word" to *s (malloc'ed), shell-quoted when needed. */
static void append_word(char **s, const char *w)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789-_./:=+,@%";
	size_t len = *s ? strlen(*s) : 0, i, k = 0;
	bool plain = *w && strspn(w, safe) == strlen(w);
	char *n;

	if (!*s)
		return;
	n = realloc(*s, len + 4 * strlen(w) + 4);
	if (!n) {
		free(*s);
		*s = NULL;
		return;
	}
	n[len + k++] = ' ';
	if (!plain)
		n[len + k++] = '\'';
	for (i = 0; w[i]; i++) {
		if (!plain && w[i] == '\'') {
			memcpy(n + len + k, "'\\''", 4);
			k += 4;
		} else {
			n[len + k++] = w[i];
		}
	}
	if (!plain)
		n[len + k++] = '\'';
	n[len + k] = '\0';
	*s = n;
}

static void json_add(struct json_object *o, const char *k,
		     struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static void print_json(struct json_object *o)
{
	int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE;

	puts(json_object_to_json_string_ext(o, flags));
	json_object_put(o);
}

/* Geometry and parameters every JSON object carries. */
static struct json_object *json_params(const struct cli *c,
				       const struct dmt_verity_geometry *g)
{
	const struct dmt_verity_params *p = &c->p;
	struct json_object *o = json_object_new_object();
	char salt[2 * DMT_VERITY_SALT_MAX + 1], name[DMT_VERITY_HASH_NAME_MAX];

	salt_text(p, salt);
	json_add(o, "salt", json_object_new_string(salt));
	json_add(o, "uuid", p->no_superblock ? NULL :
			     json_object_new_string(c->uuid_text));
	json_add(o, "hash_algorithm",
		 json_object_new_string(lower_name(p, name)));
	json_add(o, "format", json_object_new_int((int)p->hash_type));
	json_add(o, "superblock", json_object_new_boolean(!p->no_superblock));
	json_add(o, "data_block_size",
		 json_object_new_uint64(p->data_block_size));
	json_add(o, "hash_block_size",
		 json_object_new_uint64(p->hash_block_size));
	json_add(o, "data_blocks", json_object_new_uint64(p->data_blocks));
	json_add(o, "hash_offset", json_object_new_uint64(p->hash_offset));
	json_add(o, "hash_start_block", json_object_new_uint64(g->hash_start));
	json_add(o, "hash_blocks", json_object_new_uint64(g->hash_blocks));
	json_add(o, "hash_area_bytes",
		 json_object_new_uint64(hash_area_bytes(g)));
	json_add(o, "hash_device_bytes", json_object_new_uint64(g->hash_end));
	return o;
}

static void json_build(const struct cli *c,
		       const struct dmt_verity_result *res)
{
	const struct dmt_verity_params *p = &c->p;
	const struct dmt_verity_geometry *g = &res->geo;
	const char *dpath = c->args[0], *hpath = c->args[1];
	struct json_object *o = json_params(c, g);
	char root[2 * DMT_DIGEST_MAX + 1], salt[2 * DMT_VERITY_SALT_MAX + 1];
	char name[DMT_VERITY_HASH_NAME_MAX], num[48];
	char *table = NULL, *dm = NULL, *cmd = NULL;

	hex(res->root_hash, res->root_hash_size, root);
	salt_text(p, salt);
	lower_name(p, name);
	json_add(o, "root_hash", json_object_new_string(root));

	/* the dm-verity target line (docs/formats.md 1.8) */
	if (asprintf(&table, "0 %" PRIu64 " verity %" PRIu32 " %s %s %" PRIu32
			     " %" PRIu32 " %" PRIu64 " %" PRIu64 " %s %s %s",
		     p->data_blocks * (p->data_block_size / 512), p->hash_type,
		     dpath, hpath, p->data_block_size, p->hash_block_size,
		     p->data_blocks, g->hash_start, name, root, salt) < 0)
		table = NULL;
	if (table &&
	    asprintf(&dm, "dm-mod.create=\"vroot,,,ro,%s\"", table) < 0)
		dm = NULL;
	json_add(o, "table", table ? json_object_new_string(table) : NULL);
	json_add(o, "dm_mod_create", dm ? json_object_new_string(dm) : NULL);

	/* veritysetup open <data> <name> <hash> <root> [options] */
	cmd = strdup("veritysetup open");
	append_word(&cmd, dpath);
	append_word(&cmd, "vroot");
	append_word(&cmd, hpath);
	append_word(&cmd, root);
	if (p->hash_offset) {
		snprintf(num, sizeof(num), "--hash-offset=%" PRIu64,
			 p->hash_offset);
		append_word(&cmd, num);
	}
	if (p->no_superblock) {
		char opt[2 * DMT_VERITY_SALT_MAX + 16];

		append_word(&cmd, "--no-superblock");
		snprintf(opt, sizeof(opt), "--format=%" PRIu32, p->hash_type);
		append_word(&cmd, opt);
		snprintf(opt, sizeof(opt), "--hash=%s", name);
		append_word(&cmd, opt);
		snprintf(opt, sizeof(opt), "--data-block-size=%" PRIu32,
			 p->data_block_size);
		append_word(&cmd, opt);
		snprintf(opt, sizeof(opt), "--hash-block-size=%" PRIu32,
			 p->hash_block_size);
		append_word(&cmd, opt);
		snprintf(opt, sizeof(opt), "--data-blocks=%" PRIu64,
			 p->data_blocks);
		append_word(&cmd, opt);
		snprintf(opt, sizeof(opt), "--salt=%s", salt);
		append_word(&cmd, opt);
	}
	json_add(o, "veritysetup_open", cmd ? json_object_new_string(cmd)
					    : NULL);
	free(table);
	free(dm);
	free(cmd);
	print_json(o);
}

/* ---- salt, uuid, root hash ---- */

static int make_salt_uuid(struct cli *c)
{
	struct dmt_verity_params *p = &c->p;
	const char *seed = c->val[OPT_SEED];
	uuid_t u;

	if (seed && (c->given[OPT_SALT] || c->given[OPT_UUID]))
		return usage_error("--seed derives salt and UUID: do not "
				   "combine it with --salt or --uuid.");
	if (!c->given[OPT_SALT]) {
		p->salt_size = 32;
		if (seed ? tool_seed_derive(seed, "verity-salt", p->salt, 32)
			 : getrandom(p->salt, 32, 0) != 32) {
			tool_err("Cannot generate the salt.");
			return TOOL_EXIT_DEVICE;
		}
	}
	if (c->given[OPT_UUID]) {
		if (uuid_parse(c->val[OPT_UUID], u)) {
			tool_err("Wrong VERITY UUID format provided on device "
				 "%s.", c->args[1]);
			return TOOL_EXIT_USAGE;
		}
		memcpy(p->uuid, u, 16);
		snprintf(c->uuid_text, sizeof(c->uuid_text), "%s",
			 c->val[OPT_UUID]);
	} else {
		if (seed) {
			if (tool_seed_uuid(seed, "verity-uuid", p->uuid)) {
				tool_err("Cannot derive the UUID.");
				return TOOL_EXIT_DEVICE;
			}
		} else {
			uuid_generate_random(u);
			memcpy(p->uuid, u, 16);
		}
		uuid_unparse_lower(p->uuid, c->uuid_text);
	}
	/* veritysetup prints no UUID when there is no superblock */
	if (p->no_superblock)
		c->uuid_text[0] = '\0';
	return 0;
}

/*
 * --root-hash-file of build, never one of the images.  Opened before any
 * work so that an unwritable place fails first.  An existing file (or
 * device) is rewritten in place as veritysetup does; a new one is written
 * under a temporary name and renamed after the tree.
 */
static int open_root_file(struct cli *c, struct dmt_file *rf)
{
	const char *path = c->val[OPT_ROOT_FILE];
	struct stat st;
	int err, flags = DMT_OPEN_NEW_TMP;

	if (dmt_same_file(path, c->args[0]) ||
	    dmt_same_file(path, c->args[1])) {
		tool_err("%s: --root-hash-file must not be the data or hash "
			 "file.", path);
		return TOOL_EXIT_USAGE;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			tool_err_errno(path, "cannot write the root hash",
				       -EISDIR);
			return TOOL_EXIT_DEVICE;
		}
		flags = DMT_OPEN_RW;
	}
	err = dmt_file_open(rf, path, flags);
	if (err) {
		tool_err_errno(path, "cannot write the root hash", err);
		return tool_exit_code(err);
	}
	return 0;
}

/* Lower-case hex, no newline (what veritysetup writes); before the tree
 * is committed, so a failure here leaves no new tree either. */
static int write_root_file(struct dmt_file *rf, const uint8_t *root,
			   size_t ds)
{
	char text[2 * DMT_DIGEST_MAX + 1];
	struct stat st;
	int err = 0;

	hex(root, ds, text);
	if (!rf->tmp_path && !fstat(rf->fd, &st) && S_ISREG(st.st_mode) &&
	    ftruncate(rf->fd, 0) < 0)
		err = -errno;
	if (!err)
		err = dmt_pwrite_full(rf, text, 2 * ds, 0);
	if (!err && !rf->tmp_path)
		err = dmt_file_sync(rf);
	if (err) {
		tool_err_errno(rf->path, "cannot write the root hash", err);
		return tool_exit_code(err);
	}
	return 0;
}

/* Root hash from the argument or --root-hash-file (2*ds hex chars). */
static int get_root(struct cli *c, size_t ds, uint8_t *root)
{
	const char *arg = c->nargs > 2 ? c->args[2] : NULL;
	char text[2 * DMT_DIGEST_MAX + 1];
	uint8_t *bin = NULL, *raw = NULL;
	size_t len = 0;
	int err;

	if (c->given[OPT_ROOT_FILE]) {
		err = tool_read_key_file(c->val[OPT_ROOT_FILE], 2 * ds, 2 * ds,
					 &raw, &len);
		if (err == -ENODATA || err == -EINVAL) {
			tool_err("Invalid root hash string specified.");
			return TOOL_EXIT_USAGE;
		}
		if (err) {
			tool_err_errno(c->val[OPT_ROOT_FILE],
				       "cannot read the root hash", err);
			return tool_exit_code(err);
		}
		memcpy(text, raw, len);
		text[len] = '\0';
		free(raw);
		if (arg && strcasecmp(arg, text)) {
			tool_err("The root hash argument and --root-hash-file "
				 "differ.");
			return TOOL_EXIT_USAGE;
		}
		arg = text;
	}
	if (!arg)
		return usage_error("Command requires <root_hash> or "
				   "--root-hash-file option as argument.");
	if (!*arg || tool_parse_hex(arg, &bin, &len) || len != ds) {
		free(bin);
		tool_err("Invalid root hash string specified.");
		return TOOL_EXIT_USAGE;
	}
	memcpy(root, bin, ds);
	free(bin);
	return 0;
}

/* ---- actions ---- */

/* path: the file the library says failed, else the likeliest one. */
static int lib_error(const char *path, const char *fallback, int err)
{
	if (!path)
		path = fallback;
	if (err == -EINTR)
		return TOOL_EXIT_SIGNAL;
	if (err == -ENODATA)
		tool_err("%s: file too small.", path);
	else if (err == -EINVAL)
		tool_err("%s: invalid parameters.", path);
	else
		tool_err("%s: %s", path, dmt_strerror(err));
	return tool_exit_code(err);
}

static void debug_geometry(const struct cli *c,
			   const struct dmt_verity_geometry *g)
{
	tool_debug("threads %u, %u levels, hash_start %" PRIu64
		   ", %u digests per hash block (slot %u bytes)",
		   c->p.threads, g->levels, g->hash_start,
		   1u << g->hash_per_block_bits, g->digest_slot);
	for (unsigned int i = g->levels; i-- > 0;)
		tool_debug("level %u: %" PRIu64 " blocks at hash block %"
			   PRIu64, i, g->level_blocks[i], g->level_start[i]);
}

static int act_build(struct cli *c)
{
	struct dmt_verity_result res;
	struct dmt_verity_geometry g;
	struct dmt_file rf = { .fd = -1 };
	struct files f;
	int rc, err;

	rc = tree_opts(c);
	if (!rc)
		rc = make_salt_uuid(c);
	if (!rc)
		rc = check_params(c);
	if (!rc && c->given[OPT_ROOT_FILE])
		rc = open_root_file(c, &rf);
	if (rc)
		goto out_root;
	rc = open_files(c, &f, true);
	if (rc)
		goto out_root;
	rc = resolve_data(c, &f);
	if (rc)
		goto out;
	dmt_verity_geometry(&c->p, &g);
	debug_geometry(c, &g);

	tool_progress_init(&c->prog, c->args[0], "written", c->prog_freq,
			   c->given[OPT_PROG_JSON]);
	c->p.progress = tool_progress_hook(&c->prog);
	err = dmt_verity_build(&c->p, f.data, f.hash, &res);
	tool_progress_finish(&c->prog, !err);
	if (err) {
		rc = lib_error(res.error_path, c->args[1], err);
		goto out;
	}
	if (c->given[OPT_ROOT_FILE]) {
		rc = write_root_file(&rf, res.root_hash, res.root_hash_size);
		if (rc)
			goto out;
	}
	/* veritysetup syncs the hash file too; a new one is renamed */
	err = f.created ? dmt_file_commit(f.hash) : dmt_file_sync(f.hash);
	if (!err && rf.tmp_path)
		err = dmt_file_commit(&rf);
	if (err) {
		rc = lib_error(NULL, rf.tmp_path ? rf.path : c->args[1], err);
		goto out;
	}
	tool_verbose("%" PRIu64 " data blocks hashed (%" PRIu64
		     " holes or zero) by the %s engine on %u threads.",
		     res.geo.data_blocks, res.zero_blocks, res.engine,
		     c->p.threads);
	if (c->given[OPT_JSON])
		json_build(c, &res);
	else
		print_header(c, c->args[1], &res.geo, res.root_hash);
	tool_verbose("Command successful.");
out:
	close_files(&f);
out_root:
	dmt_file_close(&rf);
	return rc;
}

/* Fills c->p from the superblock (or the options with --no-superblock). */
static int load_params(struct cli *c, struct files *f)
{
	int err;

	if (c->p.no_superblock)
		return 0;
	err = dmt_verity_sb_read(f->hash, &c->p);
	if (err == -EMEDIUMTYPE) {
		tool_err("Device %s is not a valid VERITY device.", c->args[1]);
		return TOOL_EXIT_DEVICE;
	}
	if (err) {
		tool_err_errno(c->args[1], "cannot read the superblock", err);
		return tool_exit_code(err);
	}
	/* like veritysetup, the superblock wins over format options */
	for (int id = OPT_HASH; id <= OPT_FORMAT; id++) {
		if (c->given[id] && id != OPT_HASH_OFFSET && id != OPT_UUID)
			tool_verbose("--%s ignored: %s has a superblock.",
				     opt_info[id].name, c->args[1]);
	}
	snprintf(c->hash_text, sizeof(c->hash_text), "%s", c->p.hash_name);
	uuid_unparse_lower(c->p.uuid, c->uuid_text);
	return 0;
}

static void report_json(const struct cli *c,
			const struct dmt_verity_geometry *g,
			const struct dmt_verity_report *rep, bool ok)
{
	struct json_object *o = json_params(c, g), *b;
	char root[2 * DMT_DIGEST_MAX + 1];

	hex(rep->root_hash, rep->root_hash_size, root);
	json_add(o, "verified", json_object_new_boolean(ok));
	json_add(o, "root_hash", json_object_new_string(root));
	json_add(o, "root_hash_ok", json_object_new_boolean(rep->root_ok));
	json_add(o, "bad_data_blocks",
		 json_object_new_uint64(rep->bad_data_blocks));
	json_add(o, "bad_hash_blocks",
		 json_object_new_uint64(rep->bad_hash_blocks));
	json_add(o, "unverifiable_blocks",
		 json_object_new_uint64(rep->unverifiable_blocks));
	b = NULL;
	if (rep->bad_data_blocks) {
		b = json_object_new_object();
		json_add(b, "index",
			 json_object_new_uint64(rep->first_data.index));
		json_add(b, "offset",
			 json_object_new_uint64(rep->first_data.offset));
	}
	json_add(o, "first_bad_data_block", b);
	b = NULL;
	if (rep->bad_hash_blocks) {
		b = json_object_new_object();
		json_add(b, "level",
			 json_object_new_uint64(rep->first_hash.level));
		json_add(b, "index",
			 json_object_new_uint64(rep->first_hash.index));
		json_add(b, "offset",
			 json_object_new_uint64(rep->first_hash.offset));
		json_add(b, "padding",
			 json_object_new_boolean(rep->first_hash.padding));
	}
	json_add(o, "first_bad_hash_block", b);
	print_json(o);
}

static void report_text(const struct cli *c,
			const struct dmt_verity_report *rep)
{
	const struct dmt_verity_bad *h = &rep->first_hash;

	if (rep->bad_hash_blocks && h->padding)
		tool_err("%s: spare area is not zeroed at position %" PRIu64
			 " (hash block %" PRIu64 " of level %" PRIu32 ").",
			 c->args[1], h->offset, h->index, h->level);
	else if (rep->bad_hash_blocks)
		tool_err("%s: hash block %" PRIu64 " of level %" PRIu32
			 " (position %" PRIu64 ") is corrupted.",
			 c->args[1], h->index, h->level, h->offset);
	if (rep->bad_data_blocks)
		tool_err("%s: data block %" PRIu64 " (position %" PRIu64
			 ") is corrupted.", c->args[0], rep->first_data.index,
			 rep->first_data.offset);
	if (!rep->root_ok)
		tool_err("Verification of root hash failed.");
	tool_err("Verification failed: %" PRIu64 " corrupted data blocks, %"
		 PRIu64 " corrupted hash blocks, %" PRIu64
		 " unverifiable blocks%s.", rep->bad_data_blocks,
		 rep->bad_hash_blocks, rep->unverifiable_blocks,
		 rep->root_ok ? "" : ", root hash mismatch");
}

static int act_verify(struct cli *c)
{
	struct dmt_verity_report rep;
	struct dmt_verity_geometry g;
	uint8_t root[DMT_DIGEST_MAX];
	struct files f;
	int rc, err;

	rc = tree_opts(c);
	if (rc)
		return rc;
	if (c->p.no_superblock && !c->given[OPT_SALT])
		return usage_error("verify --no-superblock needs --salt "
				   "(- for none).");
	rc = check_params(c);
	if (rc)
		return rc;
	rc = open_files(c, &f, false);
	if (rc)
		return rc;
	rc = load_params(c, &f);
	if (!rc)
		rc = resolve_data(c, &f);
	if (!rc)
		rc = get_root(c, dmt_verity_digest_size(c->p.hash_name), root);
	if (rc)
		goto out;
	dmt_verity_geometry(&c->p, &g);
	debug_geometry(c, &g);

	tool_progress_init(&c->prog, c->args[0], "verified", c->prog_freq,
			   c->given[OPT_PROG_JSON]);
	c->p.progress = tool_progress_hook(&c->prog);
	err = dmt_verity_verify(&c->p, f.data, f.hash, root, g.digest_size,
				&rep);
	tool_progress_finish(&c->prog, !err || err == -EBADMSG);
	if (err && err != -EBADMSG) {
		rc = lib_error(rep.error_path, c->args[0], err);
		goto out;
	}
	if (c->given[OPT_JSON])
		report_json(c, &g, &rep, !err);
	if (err) {
		report_text(c, &rep);
		rc = TOOL_EXIT_VERIFY;
		goto out;
	}
	tool_verbose("Command successful.");
out:
	close_files(&f);
	return rc;
}

static int act_dump(struct cli *c)
{
	struct dmt_verity_geometry g;
	struct files f;
	int rc, err;

	rc = num_opt(c, OPT_HASH_OFFSET, &c->p.hash_offset);
	if (rc)
		return rc;
	if (c->p.hash_offset % 512) {
		tool_err("Unsupported VERITY hash offset.");
		return TOOL_EXIT_USAGE;
	}
	memset(&f, 0, sizeof(f));
	err = dmt_file_open(&f.hash_f, c->args[0],
			    DMT_OPEN_READ | DMT_OPEN_LOCK);
	if (err)
		return open_err(c->args[0], err);
	f.data = f.hash = &f.hash_f;
	c->args[1] = c->args[0];
	rc = load_params(c, &f);
	if (rc)
		goto out;
	err = dmt_verity_geometry(&c->p, &g);
	if (err) {
		tool_err("Device %s is not a valid VERITY device.", c->args[0]);
		rc = TOOL_EXIT_DEVICE;
		goto out;
	}
	if (c->given[OPT_JSON])
		print_json(json_params(c, &g));
	else
		print_header(c, c->args[0], &g, NULL);
out:
	dmt_file_close(&f.hash_f);
	return rc;
}

static int act_size(struct cli *c)
{
	struct dmt_verity_geometry g;
	uint64_t bytes = 0;
	int rc, err;

	rc = tree_opts(c);
	if (!rc)
		rc = check_params(c);
	if (rc)
		return rc;
	if (c->given[OPT_DATA_SIZE] == (c->nargs == 1))
		return usage_error("size needs either <data_path> or "
				   "--data-size.");
	if (c->given[OPT_DATA_SIZE] &&
	    tool_parse_size(c->val[OPT_DATA_SIZE], &bytes)) {
		tool_err("Invalid value for --data-size: '%s'.",
			 c->val[OPT_DATA_SIZE]);
		return TOOL_EXIT_USAGE;
	}
	if (c->nargs == 1) {
		struct dmt_file f;

		err = dmt_file_open(&f, c->args[0], DMT_OPEN_READ);
		if (!err)
			err = dmt_file_size(&f, &bytes);
		dmt_file_close(&f);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			return tool_exit_code(err);
		}
	}
	if (!c->p.data_blocks) {
		c->p.data_blocks = dmt_verity_blocks_for_size(&c->p, bytes);
		warn_tail(c->nargs ? c->args[0] : "--data-size", bytes,
			  c->p.data_block_size);
	}
	if (!c->p.data_blocks) {
		tool_err("The data is smaller than one data block (%" PRIu32
			 " bytes).", c->p.data_block_size);
		return TOOL_EXIT_USAGE;
	}
	err = dmt_verity_geometry(&c->p, &g);
	if (err) {
		tool_err("Device offset overflow.");
		return TOOL_EXIT_USAGE;
	}
	if (c->given[OPT_JSON]) {
		struct json_object *o = json_object_new_object();
		char name[DMT_VERITY_HASH_NAME_MAX];

		json_add(o, "hash_algorithm",
			 json_object_new_string(lower_name(&c->p, name)));
		json_add(o, "data_block_size",
			 json_object_new_uint64(c->p.data_block_size));
		json_add(o, "hash_block_size",
			 json_object_new_uint64(c->p.hash_block_size));
		json_add(o, "data_blocks",
			 json_object_new_uint64(g.data_blocks));
		json_add(o, "levels", json_object_new_uint64(g.levels));
		json_add(o, "hash_offset",
			 json_object_new_uint64(c->p.hash_offset));
		json_add(o, "hash_start_block",
			 json_object_new_uint64(g.hash_start));
		json_add(o, "hash_blocks",
			 json_object_new_uint64(g.hash_blocks));
		json_add(o, "hash_area_bytes",
			 json_object_new_uint64(hash_area_bytes(&g)));
		json_add(o, "hash_device_bytes",
			 json_object_new_uint64(g.hash_end));
		print_json(o);
		return 0;
	}
	printf("Data blocks:     \t%" PRIu64 "\n", g.data_blocks);
	printf("Hash levels:     \t%" PRIu32 "\n", g.levels);
	printf("Hash blocks:     \t%" PRIu64 "\n", g.hash_blocks);
	printf("Hash area size:  \t%" PRIu64 " [bytes]\n", hash_area_bytes(&g));
	printf("Hash device size: \t%" PRIu64 " [bytes]\n", g.hash_end);
	return 0;
}

/* ---- main ---- */

static const struct {
	const char *name;
	enum action act;
	int min_args, max_args;
} actions[] = {
	{ "build", ACT_BUILD, 2, 2 },
	{ "format", ACT_BUILD, 2, 2 },
	{ "verify", ACT_VERIFY, 2, 3 },
	{ "dump", ACT_DUMP, 1, 1 },
	{ "size", ACT_SIZE, 0, 1 },
};

static int parse(struct cli *c, int argc, const char **argv)
{
	poptContext ctx;
	const char *a;
	size_t i;
	int r, rc = 0;

	ctx = poptGetContext("verity-tool", argc, argv, options, 0);
	poptSetOtherOptionHelp(ctx, "[OPTION...] <action> <action-specific>");
	while ((r = poptGetNextOpt(ctx)) > 0) {
		if (r == OPT_HELP || r == OPT_USAGE) {
			if (r == OPT_HELP)
				print_help(ctx);
			else
				poptPrintUsage(ctx, stdout, 0);
			rc = -1;
			goto out;
		}
		c->given[r] = true;
		free(c->val[r]);
		c->val[r] = poptGetOptArg(ctx);
	}
	if (r < -1) {
		tool_err("%s: %s", poptBadOption(ctx, POPT_BADOPTION_NOALIAS),
			 poptStrerror(r));
		fprintf(stderr, "Try '%s --help' for more information.\n",
			tool_name);
		rc = TOOL_EXIT_USAGE;
		goto out;
	}
	if (c->given[OPT_VERSION]) {
		printf("%s %s\n", tool_name, DMT_VERSION);
		rc = -1;
		goto out;
	}
	tool_verbosity = c->given[OPT_DEBUG] ? 2 : c->given[OPT_VERBOSE] ? 1
			 : c->given[OPT_QUIET] ? -1 : 0;
	if (c->given[OPT_LIST_ENGINES]) {
		tool_list_engines();
		rc = -1;
		goto out;
	}
	a = poptGetArg(ctx);
	if (!a) {
		rc = usage_error("Argument <action> missing.");
		goto out;
	}
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(a, actions[i].name))
			break;
	if (i == sizeof(actions) / sizeof(actions[0])) {
		rc = usage_error("Unknown action.");
		goto out;
	}
	c->act = actions[i].act;
	c->act_name = actions[i].name;
	while ((a = poptGetArg(ctx)) && c->nargs < 4)
		c->args[c->nargs++] = strdup(a);
	if (a || c->nargs < actions[i].min_args ||
	    c->nargs > actions[i].max_args) {
		rc = usage_error("Wrong number of arguments for this action.");
		goto out;
	}
	for (r = 1; r < OPT_COUNT; r++) {
		if (c->given[r] && !(opt_info[r].actions & c->act)) {
			tool_err("Option --%s is not allowed with %s action.",
				 opt_info[r].name, c->act_name);
			rc = TOOL_EXIT_USAGE;
			goto out;
		}
	}
out:
	poptFreeContext(ctx);
	return rc;
}

int main(int argc, const char **argv)
{
	struct cli c;
	int rc, i;

	tool_name = "verity-tool";
	memset(&c, 0, sizeof(c));
	dmt_verity_params_init(&c.p);
	rc = parse(&c, argc, argv);
	if (rc)
		goto out;

	tool_install_signals();
	if (c.act & ACT_TREE) {
		rc = tool_engine_setup(c.val[OPT_ENGINE]);
		if (rc)
			goto out;
	}
	switch (c.act) {
	case ACT_BUILD:
		rc = act_build(&c);
		break;
	case ACT_VERIFY:
		rc = act_verify(&c);
		break;
	case ACT_DUMP:
		rc = act_dump(&c);
		break;
	case ACT_SIZE:
		rc = act_size(&c);
		break;
	}
out:
	for (i = 0; i < OPT_COUNT; i++)
		free(c.val[i]);
	for (i = 0; i < c.nargs; i++)
		free((char *)c.args[i]);
	if (rc < 0)
		rc = 0;	/* --help, --version, --list-engines */
	/* results that cannot be written are an error, not silence */
	if (fflush(stdout) || ferror(stdout)) {
		tool_err("stdout: cannot write the result: %s",
			 strerror(errno ? errno : EIO));
		if (!rc)
			rc = TOOL_EXIT_DEVICE;
	}
	return rc;
}
