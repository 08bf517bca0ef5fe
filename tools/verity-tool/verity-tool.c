// SPDX-License-Identifier: MIT
/*
 * verity-tool: build, verify, repair, dump and size dm-verity hash trees,
 * with veritysetup's forward error correction, and sign root hashes.
 * Arguments and output follow veritysetup (cryptsetup 2.6.1) so it can
 * replace `veritysetup format/verify/dump` in image pipelines; the work
 * is done by lib/verity.c, lib/fec.c and lib/sign.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/err.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include <dmt/fec.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/sign.h>
#include <dmt/threads.h>
#include <dmt/verity.h>
#include "tools/common/tool-common.h"

enum action {
	ACT_BUILD = 1 << 0,
	ACT_VERIFY = 1 << 1,
	ACT_DUMP = 1 << 2,
	ACT_SIZE = 1 << 3,
	ACT_REPAIR = 1 << 4,
	ACT_SIGN = 1 << 5,
};
#define ACT_CHECK (ACT_VERIFY | ACT_REPAIR)
#define ACT_TREE (ACT_BUILD | ACT_CHECK)
#define ACT_ALL (ACT_TREE | ACT_DUMP | ACT_SIZE)
#define ACT_ANY (ACT_ALL | ACT_SIGN)
#define ACT_FEC (ACT_ALL)

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
	OPT_FEC_DEVICE,
	OPT_FEC_ROOTS,
	OPT_FEC_OFFSET,
	OPT_SIGN_KEY,
	OPT_SIGN_CERT,
	OPT_KEY,
	OPT_CERT,
	OPT_SIG,
	OPT_SIDECAR,
	OPT_PASS_FILE,
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
	[OPT_ROOT_FILE] = { "root-hash-file", ACT_TREE | ACT_SIGN },
	[OPT_THREADS] = { "threads", ACT_TREE },
	[OPT_JSON] = { "json", ACT_ALL },
	[OPT_SEED] = { "seed", ACT_BUILD },
	[OPT_PROG_FREQ] = { "progress-frequency", ACT_TREE },
	[OPT_PROG_JSON] = { "progress-json", ACT_TREE },
	[OPT_ENGINE] = { "engine", ACT_TREE },
	[OPT_LIST_ENGINES] = { "list-engines", ACT_ALL },
	[OPT_DATA_SIZE] = { "data-size", ACT_SIZE },
	[OPT_QUIET] = { "quiet", ACT_ANY },
	[OPT_VERBOSE] = { "verbose", ACT_ANY },
	[OPT_DEBUG] = { "debug", ACT_ANY },
	[OPT_VERSION] = { "version", ACT_ANY },
	[OPT_HELP] = { "help", ACT_ANY },
	[OPT_USAGE] = { "usage", ACT_ANY },
	[OPT_FEC_DEVICE] = { "fec-device", ACT_FEC },
	[OPT_FEC_ROOTS] = { "fec-roots", ACT_FEC },
	[OPT_FEC_OFFSET] = { "fec-offset", ACT_FEC },
	[OPT_SIGN_KEY] = { "sign-key", ACT_BUILD },
	[OPT_SIGN_CERT] = { "sign-cert", ACT_BUILD },
	[OPT_KEY] = { "key", ACT_SIGN },
	[OPT_CERT] = { "cert", ACT_CHECK | ACT_SIGN },
	[OPT_SIG] = { "root-hash-signature", ACT_BUILD | ACT_CHECK },
	[OPT_SIDECAR] = { "sidecar", ACT_BUILD },
	[OPT_PASS_FILE] = { "key-passphrase-file", ACT_BUILD | ACT_SIGN },
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
	  "Write (build) or read (verify, repair, sign) the root hash as hex",
	  "FILE" },
	{ "fec-device", 0, STR, NULL, OPT_FEC_DEVICE,
	  "Reed-Solomon parity file (may be the hash file, see --fec-offset)",
	  "PATH" },
	{ "fec-roots", 0, STR, NULL, OPT_FEC_ROOTS,
	  "FEC parity bytes per codeword, 2..24 (default 2)", "N" },
	{ "fec-offset", 0, STR, NULL, OPT_FEC_OFFSET,
	  "Start of the parity area on the FEC file (default 0)", "BYTES" },
	{ "sign-key", 0, STR, NULL, OPT_SIGN_KEY,
	  "build: sign the root hash with this private key (file or URI)",
	  "KEY" },
	{ "sign-cert", 0, STR, NULL, OPT_SIGN_CERT,
	  "build: certificate of --sign-key (file or URI)", "CERT" },
	{ "key", 0, STR, NULL, OPT_KEY,
	  "sign: private key (file or URI, e.g. pkcs11:)", "KEY" },
	{ "key-passphrase-file", 0, STR, NULL, OPT_PASS_FILE,
	  "Passphrase of an encrypted --key/--sign-key (or a token PIN): "
	  "the first line of FILE", "FILE" },
	{ "cert", 0, STR, NULL, OPT_CERT,
	  "sign: certificate of --key; verify: check the signature with it",
	  "CERT" },
	{ "root-hash-signature", 0, STR, NULL, OPT_SIG,
	  "PKCS#7 signature of the root hash: written (build), checked "
	  "(verify)", "FILE" },
	{ "sidecar", 0, NONE, NULL, OPT_SIDECAR,
	  "build: also write systemd's <image>.roothash (and .roothash.p7s)",
	  NULL },
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

	/* FEC: --fec-device given (size: any --fec-* option) */
	bool fec;
	unsigned int fec_roots;
	uint64_t fec_offset;
	bool have_fl;			/* fl is known */
	struct dmt_fec_layout fl;
	/* build: what was written besides the images, for --json */
	const char *sig_out, *sidecar_root, *sidecar_sig;
};

static void print_help(poptContext ctx)
{
	poptPrintHelp(ctx, stdout, 0);
	printf("\n<action> is one of:\n"
	       "\tbuild <data_path> <hash_path> - build the hash tree "
	       "(alias: format)\n"
	       "\tverify <data_path> <hash_path> [<root_hash>] - check "
	       "data and tree\n"
	       "\trepair <data_path> <hash_path> [<root_hash>] --fec-device "
	       "<path> - write FEC\n\t\tcorrections back\n"
	       "\tdump <hash_path> - show the superblock\n"
	       "\tsize [<data_path>] - hash area size a build would write "
	       "(or --data-size)\n"
	       "\tsign --key <key> --cert <cert> [<root_hash>] <out.p7s> - "
	       "sign a root hash\n"
	       "\nDefault compiled-in dm-verity parameters:\n"
	       "\tHash: sha256, Data block (bytes): 4096, Hash block "
	       "(bytes): 4096, Salt size: 32, Hash format: 1\n"
	       "\tFEC roots: 2\n\n%s"
	       "  verify also exits 2 when only the root hash differs "
	       "(veritysetup: 1) or the\n  root hash signature does not "
	       "verify; with --fec-device, verify and repair\n  exit 0 when "
	       "everything verifies after correction.\n",
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

/* --fec-* options, with veritysetup's checks and wording. */
static int fec_opts(struct cli *c)
{
	uint64_t v;
	int rc;

	c->fec_roots = DMT_FEC_ROOTS_DEFAULT;
	if (c->given[OPT_FEC_ROOTS]) {
		rc = num_opt(c, OPT_FEC_ROOTS, &v);
		if (rc)
			return rc;
		if (v < DMT_FEC_ROOTS_MIN || v > DMT_FEC_ROOTS_MAX) {
			tool_err("Invalid number of parity bytes.");
			return TOOL_EXIT_USAGE;
		}
		c->fec_roots = (unsigned int)v;
	}
	rc = num_opt(c, OPT_FEC_OFFSET, &c->fec_offset);
	if (rc)
		return rc;
	if (c->fec_offset % 512) {
		tool_err("Unsupported VERITY FEC offset.");
		return TOOL_EXIT_USAGE;
	}
	c->fec = c->given[OPT_FEC_DEVICE];
	if (c->act == ACT_SIZE)
		c->fec |= c->given[OPT_FEC_ROOTS] || c->given[OPT_FEC_OFFSET];
	else if (!c->fec && (c->given[OPT_FEC_ROOTS] ||
			     c->given[OPT_FEC_OFFSET]))
		tool_verbose("--fec-roots and --fec-offset are ignored "
			     "without --fec-device.");
	return 0;
}

/* FEC needs one block size for data and tree (once the format is known). */
static int fec_block_sizes(const struct cli *c)
{
	uint32_t bs = c->p.data_block_size;

	if (!c->fec)
		return 0;
	if (bs != c->p.hash_block_size) {
		tool_err("Block sizes must match for FEC.");
		return TOOL_EXIT_USAGE;
	}
	/* the kernel's fec_start is in blocks */
	if (c->act == ACT_BUILD && c->fec_offset % bs)
		tool_info("WARNING: --fec-offset %" PRIu64 " is not a multiple "
			  "of the block size (%" PRIu32 "): the kernel cannot "
			  "use this FEC area.", c->fec_offset, bs);
	return 0;
}

/* Signature options: pairs that only make sense together. */
static int sign_opts(const struct cli *c)
{
	if (c->act == ACT_BUILD) {
		if (c->given[OPT_SIGN_KEY] != c->given[OPT_SIGN_CERT])
			return usage_error("--sign-key and --sign-cert go "
					   "together.");
		if (c->given[OPT_SIGN_KEY] && !c->given[OPT_SIG] &&
		    !c->given[OPT_SIDECAR])
			return usage_error("--sign-key needs "
					   "--root-hash-signature FILE or "
					   "--sidecar to say where the "
					   "signature goes.");
		if (c->given[OPT_SIG] && !c->given[OPT_SIGN_KEY])
			return usage_error("build --root-hash-signature needs "
					   "--sign-key and --sign-cert.");
		if (c->given[OPT_PASS_FILE] && !c->given[OPT_SIGN_KEY])
			return usage_error("--key-passphrase-file needs "
					   "--sign-key.");
	}
	if ((c->act & ACT_CHECK) &&
	    c->given[OPT_SIG] != c->given[OPT_CERT])
		return usage_error("--root-hash-signature and --cert go "
				   "together.");
	if (c->act == ACT_SIGN && (!c->given[OPT_KEY] || !c->given[OPT_CERT]))
		return usage_error("sign needs --key and --cert.");
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

enum open_mode { OPEN_READ, OPEN_BUILD, OPEN_REPAIR };

struct files {
	struct dmt_file data_f, hash_f, fec_f;
	struct dmt_file *data, *hash;	/* hash == data on one file */
	struct dmt_file *fec;		/* NULL, &fec_f, hash or data */
	bool created;			/* new hash file: temp + rename */
	bool fec_created;		/* same for the FEC file */
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
	dmt_file_close(&f->fec_f);
}

/* Absolute form of a path whose directory exists (the file need not). */
static bool canon_path(const char *path, char out[PATH_MAX])
{
	char *d = strdup(path), *b = strdup(path), dir[PATH_MAX];
	bool ok = d && b && realpath(dirname(d), dir) &&
		  snprintf(out, PATH_MAX, "%s/%s", dir, basename(b)) <
			  PATH_MAX;

	free(d);
	free(b);
	return ok;
}

/* Same file, or two spellings of one path that does not exist yet. */
static bool same_target(const char *a, const char *b)
{
	char ca[PATH_MAX], cb[PATH_MAX];
	struct stat st;

	if (dmt_same_file(a, b))
		return true;
	if (!stat(a, &st) || !stat(b, &st))
		return false;
	return canon_path(a, ca) && canon_path(b, cb) && !strcmp(ca, cb);
}

/* In place when the file exists, else a new file under a temp name. */
static int out_flags(const char *path)
{
	struct stat st;

	return stat(path, &st) ? DMT_OPEN_NEW_TMP
			       : DMT_OPEN_RW | DMT_OPEN_LOCK;
}

static int open_fec(struct cli *c, struct files *f, enum open_mode mode)
{
	const char *path = c->val[OPT_FEC_DEVICE];
	int flags, err;

	if (same_target(path, c->args[1])) {
		f->fec = f->hash;
		return 0;
	}
	if (same_target(path, c->args[0])) {
		f->fec = f->data;
		return 0;
	}
	if (mode == OPEN_BUILD)
		flags = out_flags(path);
	else
		flags = (mode == OPEN_REPAIR ? DMT_OPEN_RW : DMT_OPEN_READ) |
			DMT_OPEN_LOCK;
	err = dmt_file_open(&f->fec_f, path, flags);
	if (mode == OPEN_REPAIR &&
	    (err == -EACCES || err == -EROFS || err == -EPERM)) {
		/* blocks can still be repaired, damaged parity can't */
		tool_info("%s: read-only, damaged parity will not be "
			  "rewritten.", path);
		flags = DMT_OPEN_READ | DMT_OPEN_LOCK;
		err = dmt_file_open(&f->fec_f, path, flags);
	}
	if (err)
		return open_err(path, err);
	f->fec = &f->fec_f;
	f->fec_created = flags == DMT_OPEN_NEW_TMP;
	return 0;
}

static int open_files(struct cli *c, struct files *f, enum open_mode mode)
{
	const char *dpath = c->args[0], *hpath = c->args[1];
	const char *fpath = c->fec ? c->val[OPT_FEC_DEVICE] : NULL;
	int err, hflags, dflags = DMT_OPEN_READ | DMT_OPEN_LOCK;

	memset(f, 0, sizeof(*f));
	f->data_f.fd = f->hash_f.fd = f->fec_f.fd = -1;
	if (dmt_same_file(dpath, hpath)) {
		err = dmt_file_open(&f->hash_f, hpath,
				    (mode != OPEN_READ ? DMT_OPEN_RW
						       : DMT_OPEN_READ) |
					    DMT_OPEN_LOCK);
		if (err)
			return open_err(hpath, err);
		f->data = f->hash = &f->hash_f;
		goto fec;
	}
	/* repair writes data blocks, build may put FEC on the data file */
	if (mode == OPEN_REPAIR ||
	    (mode == OPEN_BUILD && fpath && !same_target(fpath, hpath) &&
	     same_target(fpath, dpath)))
		dflags = DMT_OPEN_RW | DMT_OPEN_LOCK;
	err = dmt_file_open(&f->data_f, dpath, dflags);
	if (err)
		return open_err(dpath, err);
	f->data = &f->data_f;
	if (mode == OPEN_BUILD)
		hflags = out_flags(hpath);
	else
		hflags = (mode == OPEN_REPAIR ? DMT_OPEN_RW : DMT_OPEN_READ) |
			 DMT_OPEN_LOCK;
	err = dmt_file_open(&f->hash_f, hpath, hflags);
	if (err) {
		close_files(f);
		return open_err(hpath, err);
	}
	f->hash = &f->hash_f;
	f->created = hflags == DMT_OPEN_NEW_TMP;
fec:
	if (!fpath)
		return 0;
	err = open_fec(c, f, mode);
	if (err)
		close_files(f);
	return err;
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
	if ((c->act & ACT_CHECK) && g.levels) {
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
	const struct dmt_fec_layout *fl = c->have_fl ? &c->fl : NULL;
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
	if (fl) {
		printf("FEC RS roots:   \t%u\n", fl->roots);
		printf("FEC blocks:     \t%" PRIu64 "\n", fl->parity_blocks);
	}
	printf("Salt:            \t%s\n", salt);
	if (root) {
		hex(root, g->digest_size, r);
		printf("Root hash:      \t%s\n", r);
	}
	/* veritysetup assumes a shared FEC area right after the tree */
	if (!p->hash_offset)
		printf("Hash device size: \t%" PRIu64 " [bytes]\n",
		       g->hash_end + (fl && fl->shared ? fl->parity_bytes : 0));
	if (fl && !fl->shared && !fl->fec_offset)
		printf("FEC device size: \t%" PRIu64 " [bytes]\n",
		       fl->parity_bytes);
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

/* FEC keys: sizes, and the kernel's fec_start / fec_blocks. */
static void json_fec(const struct cli *c, struct json_object *o)
{
	const struct dmt_fec_layout *l = &c->fl;

	json_add(o, "fec_device", c->val[OPT_FEC_DEVICE] ?
		 json_object_new_string(c->val[OPT_FEC_DEVICE]) : NULL);
	json_add(o, "fec_roots", json_object_new_uint64(l->roots));
	json_add(o, "fec_offset", json_object_new_uint64(l->fec_offset));
	json_add(o, "fec_area_bytes", json_object_new_uint64(l->parity_bytes));
	json_add(o, "fec_parity_blocks",
		 json_object_new_uint64(l->parity_blocks));
	json_add(o, "fec_start_block", json_object_new_uint64(l->fec_start));
	json_add(o, "fec_blocks", json_object_new_uint64(l->fec_blocks));
	json_add(o, "fec_shares_hash_file", json_object_new_boolean(l->shared));
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
	if (c->have_fl)
		json_fec(c, o);
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
	char *table = NULL, *dm = NULL, *cmd = NULL, *fec = NULL;
	const struct dmt_fec_layout *l = &c->fl;
	const char *fpath = c->val[OPT_FEC_DEVICE];

	hex(res->root_hash, res->root_hash_size, root);
	salt_text(p, salt);
	lower_name(p, name);
	json_add(o, "root_hash", json_object_new_string(root));
	json_add(o, "root_hash_signature", c->sig_out ?
		 json_object_new_string(c->sig_out) : NULL);
	json_add(o, "sidecar_roothash", c->sidecar_root ?
		 json_object_new_string(c->sidecar_root) : NULL);
	json_add(o, "sidecar_roothash_signature", c->sidecar_sig ?
		 json_object_new_string(c->sidecar_sig) : NULL);

	/* the dm-verity target line (docs/formats.md 1.8), optional
	 * arguments in the order cryptsetup emits them */
	if (!c->have_fl)
		fec = strdup("");
	else if (asprintf(&fec, " 8 use_fec_from_device %s fec_start %" PRIu64
				" fec_blocks %" PRIu64 " fec_roots %u", fpath,
			  l->fec_start, l->fec_blocks, l->roots) < 0)
		fec = NULL;
	if (!fec ||
	    asprintf(&table, "0 %" PRIu64 " verity %" PRIu32 " %s %s %" PRIu32
			     " %" PRIu32 " %" PRIu64 " %" PRIu64 " %s %s %s%s",
		     p->data_blocks * (p->data_block_size / 512), p->hash_type,
		     dpath, hpath, p->data_block_size, p->hash_block_size,
		     p->data_blocks, g->hash_start, name, root, salt, fec) < 0)
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
	if (c->have_fl) {
		char *opt = NULL;

		if (asprintf(&opt, "--fec-device=%s", fpath) < 0)
			opt = NULL;
		append_word(&cmd, opt ? opt : "");
		free(opt);
		if (l->fec_offset) {
			snprintf(num, sizeof(num), "--fec-offset=%" PRIu64,
				 l->fec_offset);
			append_word(&cmd, num);
		}
		snprintf(num, sizeof(num), "--fec-roots=%u", l->roots);
		append_word(&cmd, num);
	}
	if (c->sig_out || c->sidecar_sig) {
		char *opt = NULL;

		if (asprintf(&opt, "--root-hash-signature=%s",
			     c->sig_out ? c->sig_out : c->sidecar_sig) < 0)
			opt = NULL;
		append_word(&cmd, opt ? opt : "");
		free(opt);
	}
	json_add(o, "veritysetup_open", cmd ? json_object_new_string(cmd)
					    : NULL);
	free(fec);
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
 * A small output of build or sign (--root-hash-file, signatures, sidecar
 * files), never one of the images.  Opened before any work so that an
 * unwritable place fails first.  An existing file (or device) is
 * rewritten in place as veritysetup does; a new one is written under a
 * temporary name and renamed after the images.
 */
static int open_out(struct cli *c, const char *path, const char *what,
		    struct dmt_file *rf)
{
	struct stat st;
	int err, flags = DMT_OPEN_NEW_TMP;

	for (int i = 0; i < c->nargs; i++) {
		if (c->act == ACT_BUILD && same_target(path, c->args[i])) {
			tool_err("%s: the %s must not be the data or hash "
				 "file.", path, what);
			return TOOL_EXIT_USAGE;
		}
	}
	if (c->fec && same_target(path, c->val[OPT_FEC_DEVICE])) {
		tool_err("%s: the %s must not be the FEC file.", path, what);
		return TOOL_EXIT_USAGE;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			tool_err_errno(path, "cannot write the file", -EISDIR);
			return TOOL_EXIT_DEVICE;
		}
		flags = DMT_OPEN_RW;
	}
	err = dmt_file_open(rf, path, flags);
	if (err) {
		tool_err_errno(path, "cannot write the file", err);
		return tool_exit_code(err);
	}
	return 0;
}

/* Writes the whole contents of an output opened by open_out (before the
 * images are committed, so a failure here leaves no new images either). */
static int write_out(struct dmt_file *rf, const void *buf, size_t len)
{
	struct stat st;
	int err = 0;

	if (!rf->tmp_path && !fstat(rf->fd, &st) && S_ISREG(st.st_mode) &&
	    ftruncate(rf->fd, 0) < 0)
		err = -errno;
	if (!err)
		err = dmt_pwrite_full(rf, buf, len, 0);
	if (!err && !rf->tmp_path)
		err = dmt_file_sync(rf);
	if (err) {
		tool_err_errno(rf->path, "cannot write the file", err);
		return tool_exit_code(err);
	}
	return 0;
}

/* Lower-case hex, no newline (what veritysetup and systemd write). */
static int write_root_file(struct dmt_file *rf, const uint8_t *root,
			   size_t ds)
{
	char text[2 * DMT_DIGEST_MAX + 1];

	hex(root, ds, text);
	return write_out(rf, text, 2 * ds);
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

/* ---- FEC ---- */

/* lib/fec.c parameters over the open files. */
static void fec_params(const struct cli *c, struct files *f,
		       const struct dmt_verity_geometry *g,
		       struct dmt_fec_params *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->roots = c->fec_roots;
	fp->block_size = c->p.data_block_size;
	fp->data_blocks = c->p.data_blocks;
	fp->hash_start = g->hash_start;
	fp->fec_offset = c->fec_offset;
	fp->data = f->data;
	fp->hash = f->hash;
	fp->fec = f->fec;
	fp->threads = c->p.threads;
	fp->engine = c->p.engine;
}

/* veritysetup's overlap checks, before anything is written (stricter:
 * the parity may not start inside the tree's last block either). */
static int fec_overlap(const struct cli *c, const struct files *f,
		       const struct dmt_verity_geometry *g)
{
	if (f->fec == f->hash && c->fec_offset < g->hash_end) {
		tool_err("Hash area overlaps with FEC area.");
		return TOOL_EXIT_USAGE;
	}
	if (f->fec == f->data &&
	    c->p.data_blocks * c->p.data_block_size > c->fec_offset) {
		tool_err("Data area overlaps with FEC area.");
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

static void debug_fec(const struct cli *c)
{
	const struct dmt_fec_layout *l = &c->fl;

	tool_debug("FEC: %u roots, %" PRIu64 " covered blocks (%" PRIu64
		   " hash-file blocks from block %" PRIu64 "), %" PRIu64
		   " rounds, %" PRIu64 " parity blocks at byte %" PRIu64 "%s",
		   l->roots, l->fec_blocks, l->hash_blocks, l->hash_start,
		   l->rounds, l->parity_blocks, l->fec_offset,
		   l->shared ? " of the hash file" : "");
}

/*
 * The layout from the files, as veritysetup measures it: a separate FEC
 * file covers the hash file to its end, a shared one up to --fec-offset.
 * For build, call it after the tree is written.
 */
static int fec_resolve(struct cli *c, struct files *f,
		       const struct dmt_verity_geometry *g,
		       struct dmt_fec_params *fp)
{
	int err;

	fec_params(c, f, g, fp);
	err = dmt_fec_layout(fp, &c->fl);
	if (err == -ENODATA) {
		tool_err("%s: too small: it ends before the hash tree starts.",
			 c->args[1]);
		return TOOL_EXIT_DEVICE;
	}
	if (err) {
		tool_err("%s: invalid FEC layout: %s", c->val[OPT_FEC_DEVICE],
			 dmt_strerror(err));
		return tool_exit_code(err);
	}
	c->have_fl = true;
	debug_fec(c);
	return 0;
}

/* Layout without the FEC file (dump, size): veritysetup's arithmetic. */
static int fec_plan(struct cli *c, const struct dmt_verity_geometry *g,
		    bool shared, uint64_t hash_file_bytes)
{
	uint64_t bs = c->p.data_block_size;
	uint64_t end = (shared ? c->fec_offset : hash_file_bytes) / bs;
	int err;

	if (shared && c->fec_offset < g->hash_end) {
		tool_err("Hash area overlaps with FEC area.");
		return TOOL_EXIT_USAGE;
	}
	err = dmt_fec_geometry(c->fec_roots, c->p.data_block_size,
			       c->p.data_blocks, g->hash_start,
			       end > g->hash_start ? end - g->hash_start : 0,
			       c->fec_offset, &c->fl);
	if (err) {
		tool_err("Invalid FEC parameters: %s", dmt_strerror(err));
		return tool_exit_code(err);
	}
	c->fl.shared = shared;
	c->have_fl = true;
	debug_fec(c);
	return 0;
}

static int fec_encode(struct cli *c, struct files *f,
		      const struct dmt_verity_geometry *g)
{
	struct dmt_fec_params fp;
	int rc, err;

	rc = fec_resolve(c, f, g, &fp);
	if (rc)
		return rc;
	tool_progress_init(&c->prog, c->val[OPT_FEC_DEVICE], "written",
			   c->prog_freq, c->given[OPT_PROG_JSON]);
	fp.progress = tool_progress_hook(&c->prog);
	err = dmt_fec_encode(&fp, NULL);
	tool_progress_finish(&c->prog, !err);
	if (err)
		return lib_error(NULL, c->val[OPT_FEC_DEVICE], err);
	return 0;
}

/* verify, repair: the parity must be all there. */
static int fec_check_size(const struct cli *c, struct files *f)
{
	const char *path = c->val[OPT_FEC_DEVICE];
	uint64_t size;
	int err;

	err = dmt_file_size(f->fec, &size);
	if (err) {
		tool_err_errno(path, "cannot get size", err);
		return tool_exit_code(err);
	}
	if (size < c->fl.fec_end) {
		tool_err("%s: too small: the FEC area ends at byte %" PRIu64
			 ", the file has %" PRIu64 ".", path, c->fl.fec_end,
			 size);
		return TOOL_EXIT_DEVICE;
	}
	return 0;
}

/* Blocks (covered numbering) named in the report; the count goes on. */
#define FEC_LIST_MAX 65536
/* ... of which are printed without -v */
#define FEC_PRINT_MAX 32

struct blist {
	uint64_t *v;
	size_t n, cap;
	uint64_t total;
};

/* A corrected block and where verify keeps its contents. */
struct fix {
	uint64_t block;
	uint64_t slot;
};

struct fec_run {
	const struct cli *c;
	struct dmt_verity_geometry g;
	const struct dmt_fec_layout *l;
	const uint8_t *root;
	struct dmt_hasher *hd, *hh;
	uint8_t *pbuf;			/* a parent block per tree level */
	uint64_t *trusted;		/* tree blocks proven up to the root */
	struct blist fixed, unverified, bad;
	/* verify: every corrected block, for the overlay re-check */
	bool keep;
	struct fix *fix;
	size_t nfix, capfix;
	int store;			/* their contents; -1 until needed */
	bool store_failed;
	struct dmt_fec_stats st;
};

static int blist_add(struct blist *b, uint64_t v)
{
	b->total++;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		uint64_t *n;

		if (b->n >= FEC_LIST_MAX)
			return 0;
		n = realloc(b->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->v = n;
		b->cap = cap;
	}
	b->v[b->n++] = v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* An unlinked file for corrected blocks: never all of them in memory. */
static int store_open(void)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/var/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(tmpl, sizeof(tmpl), "%s/verity-tool.XXXXXX", dir) >=
	    (int)sizeof(tmpl))
		return -ENAMETOOLONG;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	return fd;
}

static int store_io(int fd, uint8_t *buf, size_t len, uint64_t off,
		    bool write)
{
	ssize_t n;

	while (len) {
		n = write ? pwrite(fd, buf, len, (off_t)off)
			  : pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int fix_add(struct fec_run *r, uint64_t block, const uint8_t *data)
{
	uint32_t bs = r->l->block_size;
	int err;

	err = blist_add(&r->fixed, block);
	if (err || !r->keep)
		return err;
	if (r->store < 0) {
		r->store = store_open();
		if (r->store < 0) {
			err = r->store;
			goto fail;
		}
	}
	if (r->nfix == r->capfix) {
		size_t cap = r->capfix ? 2 * r->capfix : 64;
		struct fix *n = realloc(r->fix, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->fix = n;
		r->capfix = cap;
	}
	err = store_io(r->store, (uint8_t *)data, bs, r->nfix * bs, true);
	if (err)
		goto fail;
	r->fix[r->nfix].block = block;
	r->fix[r->nfix].slot = r->nfix;
	r->nfix++;
	return 0;
fail:
	tool_err("cannot keep corrected blocks in a temporary file (TMPDIR "
		 "or /var/tmp): %s", strerror(-err));
	r->store_failed = true;
	return err;
}

static bool test_bit(const uint64_t *bits, uint64_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

/*
 * Checks a block against the tree all the way up to the root hash (a
 * repair must never be trusted on a forged or damaged parent): its
 * digest against its parent's entry, then the parent likewise, unless
 * it was proven before in this run.  Parents are read through
 * dmt_fec_read_block(), so blocks corrected in this run count.
 */
static int check_chain(struct fec_run *r, struct dmt_fec *fec, bool is_hash,
		       uint64_t fb, const uint8_t *data, unsigned int depth)
{
	const struct dmt_verity_geometry *g = &r->g;
	const struct dmt_fec_layout *l = r->l;
	uint8_t dig[DMT_DIGEST_MAX], *pb;
	uint64_t parent, t;
	uint32_t off;
	int loc, v;

	loc = dmt_verity_digest_location(g, is_hash, fb, &parent, &off);
	if (loc < 0)
		return DMT_FEC_BLOCK_UNKNOWN;	/* not part of the tree */
	v = dmt_hasher_digest(is_hash ? r->hh : r->hd, 1, &data, NULL, dig);
	if (v < 0)
		return v;
	if (loc == 1)
		return memcmp(dig, r->root, g->digest_size) ?
			DMT_FEC_BLOCK_BAD : DMT_FEC_BLOCK_OK;
	if (parent < l->hash_start || depth > g->levels)
		return -EINVAL;
	pb = r->pbuf + (size_t)depth * l->block_size;
	v = dmt_fec_read_block(fec, l->data_blocks + parent - l->hash_start,
			       pb);
	if (v < 0)
		return v;
	if (memcmp(dig, pb + off, g->digest_size))
		return DMT_FEC_BLOCK_BAD;
	t = parent - g->hash_start;
	if (test_bit(r->trusted, t))
		return DMT_FEC_BLOCK_OK;
	v = check_chain(r, fec, true, parent, pb, depth + 1);
	if (v == DMT_FEC_BLOCK_OK)
		r->trusted[t / 64] |= 1ull << (t % 64);
	return v == DMT_FEC_BLOCK_UNKNOWN ? DMT_FEC_BLOCK_BAD : v;
}

static int fec_check(void *ctx, struct dmt_fec *fec, uint64_t block,
		     const uint8_t *data)
{
	struct fec_run *r = ctx;
	uint64_t fb;
	bool is_hash = dmt_fec_block_is_hash(r->l, block, &fb);

	return check_chain(r, fec, is_hash, fb, data, 0);
}

static int fec_report(void *ctx, uint64_t block, enum dmt_fec_outcome what,
		      const uint8_t *data)
{
	struct fec_run *r = ctx;

	switch (what) {
	case DMT_FEC_CORRECTED:
		return fix_add(r, block, data);
	case DMT_FEC_CORRECTED_UNVERIFIED:
		return blist_add(&r->unverified, block);
	case DMT_FEC_UNREPAIRABLE:
		return blist_add(&r->bad, block);
	}
	return 0;
}

static int cmp_fix(const void *a, const void *b)
{
	return cmp_u64(&((const struct fix *)a)->block,
		       &((const struct fix *)b)->block);
}

/* First kept correction with block >= cb (index nfix: none). */
static size_t fix_lower(const struct fec_run *r, uint64_t cb)
{
	size_t lo = 0, hi = r->nfix;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->fix[mid].block < cb)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The overlay the re-verification of `verify --fec-device` reads. */
static uint64_t ov_next(void *ctx, bool is_hash, uint64_t from)
{
	const struct fec_run *r = ctx;
	const struct dmt_fec_layout *l = r->l;
	uint64_t cb;
	size_t i;

	if (!is_hash) {
		if (from >= l->data_blocks)
			return UINT64_MAX;
		i = fix_lower(r, from);
		return i < r->nfix && r->fix[i].block < l->data_blocks ?
			r->fix[i].block : UINT64_MAX;
	}
	if (from < l->hash_start)
		from = l->hash_start;
	if (from - l->hash_start >= l->hash_blocks)
		return UINT64_MAX;
	cb = l->data_blocks + (from - l->hash_start);
	i = fix_lower(r, cb);
	return i < r->nfix ? l->hash_start + (r->fix[i].block -
					      l->data_blocks) : UINT64_MAX;
}

static int ov_read(void *ctx, bool is_hash, uint64_t block, uint8_t *buf)
{
	const struct fec_run *r = ctx;
	const struct dmt_fec_layout *l = r->l;
	uint64_t cb = is_hash ? l->data_blocks + (block - l->hash_start)
			      : block;
	size_t i = fix_lower(r, cb);

	if (i == r->nfix || r->fix[i].block != cb)
		return -EINVAL;
	return store_io(r->store, buf, l->block_size,
			r->fix[i].slot * l->block_size, false);
}

static void fec_run_free(struct fec_run *r)
{
	dmt_hasher_free(r->hd);
	dmt_hasher_free(r->hh);
	free(r->pbuf);
	free(r->trusted);
	free(r->fixed.v);
	free(r->unverified.v);
	free(r->bad.v);
	free(r->fix);
	if (r->store >= 0)
		close(r->store);
}

/* One FEC pass: check only (verify) or write corrections (repair). */
static int run_fec(struct cli *c, struct files *f, const uint8_t *root,
		   bool repair, struct fec_run *r)
{
	struct dmt_fec_ops ops = { fec_check, fec_report, r };
	struct dmt_fec_params fp;
	int err;

	r->c = c;
	r->l = &c->fl;
	r->root = root;
	r->keep = !repair;
	err = dmt_verity_geometry(&c->p, &r->g);
	if (!err)
		err = dmt_verity_hasher_new(&c->p, false, &r->hd);
	if (!err)
		err = dmt_verity_hasher_new(&c->p, true, &r->hh);
	if (err)
		return err;
	r->pbuf = malloc(((size_t)r->g.levels + 1) * c->fl.block_size);
	r->trusted = calloc(r->g.hash_blocks / 64 + 1, sizeof(uint64_t));
	if (!r->pbuf || !r->trusted)
		return -ENOMEM;
	fec_params(c, f, &r->g, &fp);
	tool_progress_init(&c->prog, c->val[OPT_FEC_DEVICE], "verified",
			   c->prog_freq, c->given[OPT_PROG_JSON]);
	fp.progress = tool_progress_hook(&c->prog);
	err = dmt_fec_verify_and_correct(&fp, &ops,
					 repair ? DMT_FEC_REPAIR : 0, &r->st);
	tool_progress_finish(&c->prog, !err || err == -EBADMSG);
	/* qsort() may not be handed a NULL array, even an empty one */
	if (r->fixed.n)
		qsort(r->fixed.v, r->fixed.n, sizeof(uint64_t), cmp_u64);
	if (r->unverified.n)
		qsort(r->unverified.v, r->unverified.n, sizeof(uint64_t),
		      cmp_u64);
	if (r->bad.n)
		qsort(r->bad.v, r->bad.n, sizeof(uint64_t), cmp_u64);
	if (r->nfix)
		qsort(r->fix, r->nfix, sizeof(*r->fix), cmp_fix);
	return err;
}

/* Where a covered block is, for messages and JSON. */
struct where {
	const char *path;
	const char *area;		/* "data", "hash", "metadata" */
	uint64_t index;			/* data block, or in its level */
	int level;			/* tree level, -1 */
	uint64_t offset;		/* byte in its file */
};

static void locate(const struct fec_run *r, uint64_t block, struct where *w)
{
	const struct dmt_verity_geometry *g = &r->g;
	uint64_t fb;
	unsigned int i;

	w->level = -1;
	if (!dmt_fec_block_is_hash(r->l, block, &fb)) {
		w->path = r->c->args[0];
		w->area = "data";
		w->index = fb;
		w->offset = fb * g->data_block_size;
		return;
	}
	w->path = r->c->args[1];
	w->area = "metadata";
	w->index = fb;
	w->offset = fb * g->hash_block_size;
	for (i = 0; i < g->levels; i++) {
		if (fb >= g->level_start[i] &&
		    fb < g->level_start[i] + g->level_blocks[i]) {
			w->area = "hash";
			w->level = (int)i;
			w->index = fb - g->level_start[i];
			return;
		}
	}
}

static void print_blocks(const struct fec_run *r, const struct blist *b,
			 const char *what, bool error)
{
	size_t i, show = b->n;
	struct where w;
	char desc[96];

	if (tool_verbosity < 1 && show > FEC_PRINT_MAX)
		show = FEC_PRINT_MAX;
	for (i = 0; i < show; i++) {
		locate(r, b->v[i], &w);
		if (w.level >= 0)
			snprintf(desc, sizeof(desc), "hash block %" PRIu64
				 " of level %d", w.index, w.level);
		else if (!strcmp(w.area, "data"))
			snprintf(desc, sizeof(desc), "data block %" PRIu64,
				 w.index);
		else
			snprintf(desc, sizeof(desc), "block %" PRIu64
				 " after the hash tree", w.index);
		if (error)
			tool_err("%s: %s (position %" PRIu64 ") %s.", w.path,
				 desc, w.offset, what);
		else
			tool_info("%s: %s: %s (position %" PRIu64 ") %s.",
				  tool_name, w.path, desc, w.offset, what);
	}
	if (b->total > show && error)
		tool_err("... and %" PRIu64 " more blocks %s.",
			 b->total - show, what);
	else if (b->total > show)
		tool_info("%s: ... and %" PRIu64 " more blocks %s.", tool_name,
			  b->total - show, what);
}

static void fec_print(const struct fec_run *r, bool repair)
{
	const struct dmt_fec_stats *st = &r->st;

	print_blocks(r, &r->fixed, repair ? "repaired with FEC"
					  : "corrected with FEC", false);
	print_blocks(r, &r->unverified, repair ?
		     "corrected with FEC but not written: no digest to "
		     "check it against" :
		     "corrected with FEC but not checked: no digest covers "
		     "it", false);
	print_blocks(r, &r->bad, "cannot be repaired with FEC", true);
	if (st->parity_rounds_bad)
		tool_info("%s: %s: the parity of %" PRIu64 " FEC rounds is "
			  "damaged%s.", tool_name, r->c->val[OPT_FEC_DEVICE],
			  st->parity_rounds_bad, !repair ? "" :
			  st->parity_rounds_fixed == st->parity_rounds_bad ?
			  ", rewritten" : ", not rewritten");
}

static struct json_object *json_blocks(const struct fec_run *r,
				       const struct blist *b)
{
	struct json_object *a = json_object_new_array();
	struct where w;

	for (size_t i = 0; i < b->n && i < 1000; i++) {
		struct json_object *o = json_object_new_object();

		locate(r, b->v[i], &w);
		json_add(o, "area", json_object_new_string(w.area));
		if (w.level >= 0)
			json_add(o, "level", json_object_new_int(w.level));
		json_add(o, "index", json_object_new_uint64(w.index));
		json_add(o, "offset", json_object_new_uint64(w.offset));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *json_fec_run(const struct fec_run *r, bool repair)
{
	struct json_object *o = json_object_new_object();
	const struct dmt_fec_stats *st = &r->st;

	json_add(o, "corrected_blocks", json_object_new_uint64(r->fixed.total));
	json_add(o, "corrected_bytes",
		 json_object_new_uint64(st->corrected_bytes));
	json_add(o, "unverified_blocks",
		 json_object_new_uint64(r->unverified.total));
	json_add(o, "unrepairable_blocks",
		 json_object_new_uint64(r->bad.total));
	json_add(o, "damaged_parity_rounds",
		 json_object_new_uint64(st->parity_rounds_bad));
	if (repair) {
		json_add(o, "written_blocks",
			 json_object_new_uint64(st->written_blocks));
		json_add(o, "rewritten_parity_rounds",
			 json_object_new_uint64(st->parity_rounds_fixed));
	}
	json_add(o, "corrected", json_blocks(r, &r->fixed));
	json_add(o, "unrepairable", json_blocks(r, &r->bad));
	return o;
}

/* ---- signatures ---- */

#define SIG_MAX (1u << 20)

static int sign_error(const char *key, const char *cert, bool pass, int err)
{
	if (tool_verbosity >= 2)
		ERR_print_errors_fp(stderr);
	ERR_clear_error();
	switch (err) {
	case -ENOKEY:
		tool_err("%s%s%s: no usable %s found (%s).", key ? key : "",
			 key ? ", " : "", cert,
			 key ? "private key or certificate" : "certificate",
			 pass ? "wrong passphrase?"
			      : "an encrypted key needs --key-passphrase-file");
		return TOOL_EXIT_DEVICE;
	case -ENOTSUP:
		tool_err("%s%s%s: no OpenSSL loader or provider handles this "
			 "URI.", key ? key : "", key ? ", " : "", cert);
		return TOOL_EXIT_USAGE;
	case -EINVAL:
		if (key)
			tool_err("%s, %s: the key and the certificate do not "
				 "match.", key, cert);
		else
			tool_err("%s: not a usable certificate.", cert);
		return TOOL_EXIT_USAGE;
	default:
		tool_err_errno(key ? key : cert, "cannot load", err);
		return tool_exit_code(err);
	}
}

/*
 * --key-passphrase-file: the first line (as openssl's -passin file: reads
 * it), at most 1 KiB.  Returns an exit code.
 */
static int read_passphrase(const char *path, char **out)
{
	enum { MAX = 1024 };
	char *buf = NULL;
	FILE *f = fopen(path, "re");
	size_t n;
	int rc = 0;

	if (!f) {
		tool_err_errno(path, "cannot read the passphrase file", -errno);
		return TOOL_EXIT_DEVICE;
	}
	buf = calloc(1, MAX + 2);
	if (!buf) {
		rc = tool_exit_code(-ENOMEM);
		goto out;
	}
	n = fread(buf, 1, MAX + 1, f);
	if (ferror(f)) {
		tool_err_errno(path, "cannot read the passphrase file", -EIO);
		rc = TOOL_EXIT_DEVICE;
		goto out;
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	if (n > MAX && strlen(buf) == n) {
		tool_err("%s: passphrase longer than %d bytes.", path, MAX);
		rc = TOOL_EXIT_USAGE;
		goto out;
	}
	*out = buf;
	buf = NULL;
out:
	if (buf) {
		OPENSSL_cleanse(buf, MAX + 2);
		free(buf);
	}
	fclose(f);
	return rc;
}

/* Builds the signature of root (ds bytes) with --sign-key/--key. */
static int sign_root(const struct cli *c, const char *root_hex,
		     uint8_t **sig, size_t *len)
{
	const char *key = c->val[c->act == ACT_SIGN ? OPT_KEY : OPT_SIGN_KEY];
	const char *cert = c->val[c->act == ACT_SIGN ? OPT_CERT
						    : OPT_SIGN_CERT];
	char *pass = NULL;
	int err, rc;

	if (c->given[OPT_PASS_FILE]) {
		rc = read_passphrase(c->val[OPT_PASS_FILE], &pass);
		if (rc)
			return rc;
	}
	err = dmt_sign_root_hash(key, cert, pass, root_hex, sig, len);
	if (pass) {
		OPENSSL_cleanse(pass, strlen(pass));
		free(pass);
	}
	return err ? sign_error(key, cert, c->given[OPT_PASS_FILE], err) : 0;
}

/* build: a key that cannot sign fails before the tree is built. */
static int sign_probe(const struct cli *c, size_t ds)
{
	char zero[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t len;
	int rc;

	memset(zero, '0', 2 * ds);
	zero[2 * ds] = '\0';
	rc = sign_root(c, zero, &sig, &len);
	free(sig);
	return rc;
}

/* verify, repair: --root-hash-signature over the root hash, --cert. */
static int check_signature(const struct cli *c, const uint8_t *root,
			   size_t ds)
{
	const char *path = c->val[OPT_SIG], *cert = c->val[OPT_CERT];
	char text[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t len;
	int err, rc = 0;

	err = tool_read_key_file(path, 0, SIG_MAX, &sig, &len);
	if (err == -EINVAL) {
		tool_err("Invalid signature file %s.", path);
		return TOOL_EXIT_VERIFY;
	}
	if (err) {
		tool_err_errno(path, "cannot read the signature", err);
		return tool_exit_code(err);
	}
	hex(root, ds, text);
	err = dmt_verify_root_hash_sig(sig, len, cert, text);
	if (err == -EBADMSG) {
		ERR_clear_error();
		tool_err("%s: the root hash signature does not verify with "
			 "%s.", path, cert);
		rc = TOOL_EXIT_VERIFY;
	} else if (err) {
		rc = sign_error(NULL, cert, false, err);
	} else {
		tool_verbose("Root hash signature %s verified with %s.", path,
			     cert);
	}
	free(sig);
	return rc;
}

/* build's outputs besides the images */
enum { OUT_ROOT, OUT_SIG, OUT_SIDE_ROOT, OUT_SIDE_SIG, OUT_N };

static const char *const out_what[OUT_N] = {
	"root hash file", "root hash signature", "root hash sidecar",
	"root hash signature sidecar",
};

/* Paths of the outputs asked for (malloc'ed; NULL when not). */
static int out_paths(struct cli *c, char *paths[OUT_N])
{
	bool sign = c->given[OPT_SIGN_KEY];
	char *verity = NULL;
	int err = 0;

	if (c->given[OPT_ROOT_FILE])
		paths[OUT_ROOT] = strdup(c->val[OPT_ROOT_FILE]);
	if (c->given[OPT_SIG])
		paths[OUT_SIG] = strdup(c->val[OPT_SIG]);
	if (c->given[OPT_SIDECAR]) {
		err = dmt_sidecar_path(c->args[0], DMT_SIDECAR_ROOTHASH,
				       &paths[OUT_SIDE_ROOT]);
		if (!err && sign)
			err = dmt_sidecar_path(c->args[0],
					       DMT_SIDECAR_ROOTHASH_SIG,
					       &paths[OUT_SIDE_SIG]);
		if (!err)
			err = dmt_sidecar_path(c->args[0], DMT_SIDECAR_VERITY,
					       &verity);
		if (err) {
			tool_err_errno(c->args[0], "no sidecar file names",
				       err);
			return tool_exit_code(err);
		}
		if (!same_target(verity, c->args[1]))
			tool_info("%s: note: systemd looks for the hash tree "
				  "of %s in %s.", tool_name, c->args[0],
				  verity);
		free(verity);
	}
	if ((c->given[OPT_ROOT_FILE] && !paths[OUT_ROOT]) ||
	    (c->given[OPT_SIG] && !paths[OUT_SIG])) {
		tool_err("Out of memory.");
		return TOOL_EXIT_NOMEM;
	}
	return 0;
}

/* Writes and commits after the tree: a new file appears complete or not
 * at all, and only once the images are in place. */
static int commit(struct dmt_file *f, bool created, const char *path)
{
	int err = created ? dmt_file_commit(f) : dmt_file_sync(f);

	return err ? lib_error(NULL, path, err) : 0;
}

static int act_build(struct cli *c)
{
	struct dmt_file outs[OUT_N];
	struct dmt_verity_result res;
	struct dmt_verity_geometry g;
	char *paths[OUT_N] = { NULL };
	char root_hex[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t sig_len = 0;
	bool opened = false;
	struct files f;
	int rc, err, i;

	memset(outs, 0, sizeof(outs));
	for (i = 0; i < OUT_N; i++)
		outs[i].fd = -1;
	rc = tree_opts(c);
	if (!rc)
		rc = fec_opts(c);
	if (!rc)
		rc = sign_opts(c);
	if (!rc)
		rc = make_salt_uuid(c);
	if (!rc)
		rc = check_params(c);
	if (!rc)
		rc = fec_block_sizes(c);
	if (!rc)
		rc = out_paths(c, paths);
	if (!rc && c->given[OPT_SIGN_KEY])
		rc = sign_probe(c, dmt_verity_digest_size(c->p.hash_name));
	for (i = 0; i < OUT_N && !rc; i++)
		if (paths[i])
			rc = open_out(c, paths[i], out_what[i], &outs[i]);
	if (rc)
		goto out;
	rc = open_files(c, &f, OPEN_BUILD);
	if (rc)
		goto out;
	opened = true;
	rc = resolve_data(c, &f);
	if (rc)
		goto out;
	dmt_verity_geometry(&c->p, &g);
	debug_geometry(c, &g);
	if (c->fec) {
		rc = fec_overlap(c, &f, &g);
		if (rc)
			goto out;
	}

	tool_progress_init(&c->prog, c->args[0], "written", c->prog_freq,
			   c->given[OPT_PROG_JSON]);
	c->p.progress = tool_progress_hook(&c->prog);
	/* veritysetup's order: tree, FEC, superblock */
	c->p.defer_superblock = c->fec && !c->p.no_superblock;
	err = dmt_verity_build(&c->p, f.data, f.hash, &res);
	tool_progress_finish(&c->prog, !err);
	if (err) {
		rc = lib_error(res.error_path, c->args[1], err);
		goto out;
	}
	if (c->fec) {
		rc = fec_encode(c, &f, &g);
		if (rc)
			goto out;
	}
	if (c->p.defer_superblock) {
		err = dmt_verity_sb_write(f.hash, &c->p);
		if (err) {
			rc = lib_error(NULL, c->args[1], err);
			goto out;
		}
	}
	hex(res.root_hash, res.root_hash_size, root_hex);
	if (c->given[OPT_SIGN_KEY]) {
		rc = sign_root(c, root_hex, &sig, &sig_len);
		if (rc)
			goto out;
	}
	for (i = 0; i < OUT_N && !rc; i++) {
		if (!paths[i])
			continue;
		if (i == OUT_ROOT || i == OUT_SIDE_ROOT)
			rc = write_root_file(&outs[i], res.root_hash,
					     res.root_hash_size);
		else
			rc = write_out(&outs[i], sig, sig_len);
	}
	if (rc)
		goto out;
	/* veritysetup syncs the images too; new files are renamed */
	rc = commit(f.hash, f.created, c->args[1]);
	if (!rc && f.data != f.hash && f.data->writable)
		rc = commit(f.data, false, c->args[0]);
	if (!rc && f.fec == &f.fec_f)
		rc = commit(f.fec, f.fec_created, c->val[OPT_FEC_DEVICE]);
	for (i = 0; i < OUT_N && !rc; i++)
		if (outs[i].tmp_path)
			rc = commit(&outs[i], true, paths[i]);
	if (rc)
		goto out;
	c->sig_out = paths[OUT_SIG];
	c->sidecar_root = paths[OUT_SIDE_ROOT];
	c->sidecar_sig = paths[OUT_SIDE_SIG];
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
	if (opened)
		close_files(&f);
	for (i = 0; i < OUT_N; i++) {
		dmt_file_close(&outs[i]);
		free(paths[i]);
	}
	free(sig);
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

static void report_json(const struct cli *c,
			const struct dmt_verity_geometry *g,
			const struct dmt_verity_report *rep, bool ok,
			const struct fec_run *fr)
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
	if (c->given[OPT_SIG])
		json_add(o, "root_hash_signature_ok",
			 json_object_new_boolean(true));
	if (fr)
		json_add(o, "fec", json_fec_run(fr, c->act == ACT_REPAIR));
	print_json(o);
}

/* dmt_verity_verify with progress, through an overlay or not. */
static int verify_pass(struct cli *c, struct files *f, const uint8_t *root,
		       size_t ds, const struct dmt_verity_overlay *ov,
		       struct dmt_verity_report *rep)
{
	int err;

	tool_progress_init(&c->prog, c->args[0], "verified", c->prog_freq,
			   c->given[OPT_PROG_JSON]);
	c->p.progress = tool_progress_hook(&c->prog);
	c->p.overlay = ov;
	err = dmt_verity_verify(&c->p, f->data, f->hash, root, ds, rep);
	c->p.overlay = NULL;
	tool_progress_finish(&c->prog, !err || err == -EBADMSG);
	return err;
}

/* repair: what was written reaches the disk before it is checked. */
static int sync_repaired(const struct cli *c, struct files *f)
{
	int err = dmt_file_sync(f->data);

	if (!err && f->hash != f->data)
		err = dmt_file_sync(f->hash);
	if (!err && f->fec == &f->fec_f && f->fec->writable)
		err = dmt_file_sync(f->fec);
	return err ? lib_error(NULL, c->args[0], err) : 0;
}

/*
 * verify and repair.  verify: the tree first (like veritysetup); only when
 * that fails, a FEC pass that corrects in memory, then the tree again
 * with the corrected blocks laid over the files.  repair: a FEC pass that
 * writes every correction proven up to the root hash (and rewrites
 * damaged parity), then the tree again from the files.
 */
static int act_check(struct cli *c)
{
	bool repair = c->act == ACT_REPAIR, checked = false;
	struct dmt_verity_report rep;
	struct dmt_verity_geometry g;
	uint8_t root[DMT_DIGEST_MAX];
	struct dmt_fec_params fp;
	struct fec_run fr;
	struct files f;
	int rc, err;

	memset(&fr, 0, sizeof(fr));
	fr.store = -1;
	rc = tree_opts(c);
	if (!rc)
		rc = fec_opts(c);
	if (!rc)
		rc = sign_opts(c);
	if (rc)
		return rc;
	if (repair && !c->fec)
		return usage_error("repair needs --fec-device.");
	if (c->p.no_superblock && !c->given[OPT_SALT])
		return usage_error(repair ? "repair --no-superblock needs "
					    "--salt (- for none)."
					  : "verify --no-superblock needs "
					    "--salt (- for none).");
	rc = check_params(c);
	if (rc)
		return rc;
	rc = open_files(c, &f, repair ? OPEN_REPAIR : OPEN_READ);
	if (rc)
		return rc;
	rc = load_params(c, &f);
	if (!rc)
		rc = fec_block_sizes(c);
	if (!rc)
		rc = resolve_data(c, &f);
	if (!rc)
		rc = get_root(c, dmt_verity_digest_size(c->p.hash_name), root);
	if (rc)
		goto out;
	dmt_verity_geometry(&c->p, &g);
	debug_geometry(c, &g);
	if (c->fec) {
		rc = fec_overlap(c, &f, &g);
		if (!rc)
			rc = fec_resolve(c, &f, &g, &fp);
		if (!rc)
			rc = fec_check_size(c, &f);
		if (rc)
			goto out;
	}
	if (c->given[OPT_SIG]) {
		rc = check_signature(c, root, g.digest_size);
		if (rc)
			goto out;
	}

	if (!repair) {
		err = verify_pass(c, &f, root, g.digest_size, NULL, &rep);
		if (err && err != -EBADMSG) {
			rc = lib_error(rep.error_path, c->args[0], err);
			goto out;
		}
		if (!err || !c->fec) {
			if (c->given[OPT_JSON])
				report_json(c, &g, &rep, !err, NULL);
			if (err) {
				report_text(c, &rep);
				rc = TOOL_EXIT_VERIFY;
				goto out;
			}
			tool_verbose("Command successful.");
			goto out;
		}
		report_text(c, &rep);
	}

	err = run_fec(c, &f, root, repair, &fr);
	if (err && err != -EBADMSG) {
		rc = fr.store_failed ? tool_exit_code(err)
				     : lib_error(NULL, c->val[OPT_FEC_DEVICE],
						 err);
		goto out;
	}
	fec_print(&fr, repair);
	if (repair) {
		rc = sync_repaired(c, &f);
		if (rc)
			goto out;
		err = verify_pass(c, &f, root, g.digest_size, NULL, &rep);
		checked = true;
	} else if (fr.nfix && !fr.bad.total) {
		struct dmt_verity_overlay ov = { ov_next, ov_read, &fr };

		err = verify_pass(c, &f, root, g.digest_size, &ov, &rep);
		checked = true;
	} else {
		err = -EBADMSG;		/* nothing FEC could fix */
	}
	if (err && err != -EBADMSG) {
		rc = lib_error(rep.error_path, c->args[0], err);
		goto out;
	}
	if (c->given[OPT_JSON])
		report_json(c, &g, &rep, !err, &fr);
	if (err) {
		if (checked)
			report_text(c, &rep);
		tool_err("Errors cannot be repaired with FEC device.");
		rc = TOOL_EXIT_VERIFY;
		goto out;
	}
	if (!repair)
		tool_info("Found %" PRIu64 " repairable errors with FEC "
			  "device.", fr.st.corrected_bytes);
	else if (fr.st.written_blocks)
		tool_info("Repaired %" PRIu64 " blocks (%" PRIu64 " bytes) "
			  "with FEC device.", fr.st.written_blocks,
			  fr.st.corrected_bytes);
	else if (!fr.st.parity_rounds_fixed)
		tool_verbose("Nothing to repair.");
	tool_verbose("Command successful.");
out:
	fec_run_free(&fr);
	close_files(&f);
	return rc;
}

/* sign: the root hash text from the argument or --root-hash-file. */
static int sign_root_text(struct cli *c, char text[2 * DMT_DIGEST_MAX + 1])
{
	const char *arg = c->nargs == 2 ? c->args[0] : NULL;
	uint8_t *raw = NULL, *bin = NULL;
	size_t len = 0;
	int err;

	if (c->given[OPT_ROOT_FILE] == (arg != NULL))
		return usage_error("sign needs either <root_hash> or "
				   "--root-hash-file.");
	if (arg) {
		len = strlen(arg);
		if (len <= 2 * DMT_DIGEST_MAX)
			memcpy(text, arg, len);
	} else {
		err = tool_read_key_file(c->val[OPT_ROOT_FILE], 0, 4096, &raw,
					 &len);
		if (err && err != -EINVAL) {
			tool_err_errno(c->val[OPT_ROOT_FILE],
				       "cannot read the root hash", err);
			return tool_exit_code(err);
		}
		/* veritysetup writes no newline, people do */
		while (len && strchr(" \t\r\n", raw[len - 1]))
			len--;
		if (len <= 2 * DMT_DIGEST_MAX)
			memcpy(text, raw, len);
		free(raw);
	}
	if (len > 2 * DMT_DIGEST_MAX)
		len = 0;
	text[len] = '\0';
	if (!len || tool_parse_hex(text, &bin, &len) || !len) {
		free(bin);
		tool_err("Invalid root hash string specified.");
		return TOOL_EXIT_USAGE;
	}
	free(bin);
	return 0;
}

static int act_sign(struct cli *c)
{
	const char *out = c->args[c->nargs - 1];
	char root[2 * DMT_DIGEST_MAX + 1];
	struct dmt_file of = { .fd = -1 };
	uint8_t *sig = NULL;
	size_t len = 0;
	int rc;

	rc = sign_opts(c);
	if (!rc)
		rc = sign_root_text(c, root);
	if (!rc && c->given[OPT_ROOT_FILE] &&
	    same_target(out, c->val[OPT_ROOT_FILE]))
		rc = usage_error("The signature must not overwrite the root "
				 "hash file.");
	if (!rc)
		rc = open_out(c, out, "signature", &of);
	if (!rc)
		rc = sign_root(c, root, &sig, &len);
	if (!rc)
		rc = write_out(&of, sig, len);
	if (!rc && of.tmp_path)
		rc = commit(&of, true, out);
	if (!rc)
		tool_verbose("Signature of %s written to %s (%zu bytes).", root,
			     out, len);
	dmt_file_close(&of);
	free(sig);
	return rc;
}

static int act_dump(struct cli *c)
{
	struct dmt_verity_geometry g;
	struct files f;
	int rc, err;

	rc = num_opt(c, OPT_HASH_OFFSET, &c->p.hash_offset);
	if (!rc)
		rc = fec_opts(c);
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
	if (c->fec) {
		uint64_t size;

		rc = fec_block_sizes(c);
		if (rc)
			goto out;
		err = dmt_file_size(f.hash, &size);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			rc = tool_exit_code(err);
			goto out;
		}
		rc = fec_plan(c, &g, same_target(c->val[OPT_FEC_DEVICE],
						 c->args[0]), size);
		if (rc)
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
	uint64_t bytes = 0, hash_dev;
	int rc, err;

	rc = tree_opts(c);
	if (!rc)
		rc = fec_opts(c);
	if (!rc)
		rc = check_params(c);
	if (!rc)
		rc = fec_block_sizes(c);
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
	/* FEC after the tree or in its own file (same sizes), or at
	 * --fec-offset of the hash file covering what lies before it */
	if (c->fec) {
		rc = fec_plan(c, &g, c->given[OPT_FEC_OFFSET], g.hash_end);
		if (rc)
			return rc;
	}
	hash_dev = c->have_fl && c->fl.shared ? c->fl.fec_end : g.hash_end;
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
			 json_object_new_uint64(hash_dev));
		if (c->have_fl) {
			json_fec(c, o);
			json_add(o, "fec_device_bytes", c->fl.shared ? NULL :
				 json_object_new_uint64(c->fl.fec_end));
		}
		print_json(o);
		return 0;
	}
	printf("Data blocks:     \t%" PRIu64 "\n", g.data_blocks);
	printf("Hash levels:     \t%" PRIu32 "\n", g.levels);
	printf("Hash blocks:     \t%" PRIu64 "\n", g.hash_blocks);
	printf("Hash area size:  \t%" PRIu64 " [bytes]\n", hash_area_bytes(&g));
	printf("Hash device size: \t%" PRIu64 " [bytes]\n", hash_dev);
	if (!c->have_fl)
		return 0;
	printf("FEC RS roots:    \t%u\n", c->fl.roots);
	printf("FEC blocks:      \t%" PRIu64 "\n", c->fl.parity_blocks);
	printf("FEC area size:   \t%" PRIu64 " [bytes]\n", c->fl.parity_bytes);
	if (!c->fl.shared)
		printf("FEC device size: \t%" PRIu64 " [bytes]\n",
		       c->fl.fec_end);
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
	{ "repair", ACT_REPAIR, 2, 3 },
	{ "sign", ACT_SIGN, 1, 2 },
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
		c.p.engine = tool_engine_spec();
	}
	switch (c.act) {
	case ACT_BUILD:
		rc = act_build(&c);
		break;
	case ACT_VERIFY:
	case ACT_REPAIR:
		rc = act_check(&c);
		break;
	case ACT_SIGN:
		rc = act_sign(&c);
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
