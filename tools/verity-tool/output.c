// SPDX-License-Identifier: MIT
/*
 * What the commands print: veritysetup's header block and the JSON
 * objects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

/* ---- output ---- */

void vt_salt_text(const struct dmt_verity_params *p,
		      char out[2 * DMT_VERITY_SALT_MAX + 1])
{
	if (p->salt_size)
		tool_hex(p->salt, p->salt_size, out);
	else
		strcpy(out, "-");
}

/* veritysetup's dump block; root may be NULL (dump). */
void vt_print_header(const struct vt *c, const char *hash_path,
			 const struct dmt_verity_geometry *g,
			 const uint8_t *root)
{
	const struct dmt_verity_params *p = &c->p;
	const struct dmt_fec_layout *fl = c->have_fl ? &c->fl : NULL;
	char salt[2 * DMT_VERITY_SALT_MAX + 1], r[2 * DMT_DIGEST_MAX + 1];

	vt_salt_text(p, salt);
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
		tool_hex(root, g->digest_size, r);
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

const char *vt_lower_name(const struct dmt_verity_params *p, char *buf)
{
	size_t i;

	for (i = 0; p->hash_name[i]; i++)
		buf[i] = (char)(p->hash_name[i] >= 'A' && p->hash_name[i] <= 'Z'
					? p->hash_name[i] - 'A' + 'a'
					: p->hash_name[i]);
	buf[i] = '\0';
	return buf;
}

uint64_t vt_hash_area_bytes(const struct dmt_verity_geometry *g)
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

/* FEC keys: sizes, and the kernel's fec_start / fec_blocks. */
void vt_json_fec(const struct vt *c, struct json_object *o)
{
	const struct dmt_fec_layout *l = &c->fl;

	cli_json_add_str(o, "fec_device", cli_str(c->cli, OPT_FEC_DEVICE));
	cli_json_add_u64(o, "fec_roots", l->roots);
	cli_json_add_u64(o, "fec_offset", l->fec_offset);
	cli_json_add_u64(o, "fec_area_bytes", l->parity_bytes);
	cli_json_add_u64(o, "fec_parity_blocks", l->parity_blocks);
	cli_json_add_u64(o, "fec_start_block", l->fec_start);
	cli_json_add_u64(o, "fec_blocks", l->fec_blocks);
	cli_json_add_bool(o, "fec_shares_hash_file", l->shared);
}

/* Geometry and parameters every JSON object carries. */
struct json_object *vt_json_params(const struct vt *c,
				       const struct dmt_verity_geometry *g)
{
	const struct dmt_verity_params *p = &c->p;
	struct json_object *o = json_object_new_object();
	char salt[2 * DMT_VERITY_SALT_MAX + 1], name[DMT_VERITY_HASH_NAME_MAX];

	vt_salt_text(p, salt);
	cli_json_add_str(o, "salt", salt);
	cli_json_add_str(o, "uuid", p->no_superblock ? NULL : c->uuid_text);
	cli_json_add_str(o, "hash_algorithm", vt_lower_name(p, name));
	json_object_object_add(o, "format",
			       json_object_new_int((int)p->hash_type));
	cli_json_add_bool(o, "superblock", !p->no_superblock);
	cli_json_add_u64(o, "data_block_size", p->data_block_size);
	cli_json_add_u64(o, "hash_block_size", p->hash_block_size);
	cli_json_add_u64(o, "data_blocks", p->data_blocks);
	cli_json_add_u64(o, "hash_offset", p->hash_offset);
	cli_json_add_u64(o, "hash_start_block", g->hash_start);
	cli_json_add_u64(o, "hash_blocks", g->hash_blocks);
	cli_json_add_u64(o, "hash_area_bytes", vt_hash_area_bytes(g));
	cli_json_add_u64(o, "hash_device_bytes", g->hash_end);
	if (c->have_fl)
		vt_json_fec(c, o);
	return o;
}

/* Paths in a table line: the kernel splits it at white space and takes
 * a backslash as quoting the next character (dm_split_args). */
static char *table_word(const char *w)
{
	char *out = malloc(2 * strlen(w) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *w; w++) {
		if (*w == '\\' || *w == ' ' || *w == '\t')
			*o++ = '\\';
		*o++ = *w;
	}
	*o = '\0';
	return out;
}

static bool no_chars(const char *s, const char *bad)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || strchr(bad, *s))
			return false;
	return true;
}

/* A table line is one line: no newline or other control character. */
static bool table_paths_ok(const struct vt *c)
{
	return no_chars(c->args[0], "") && no_chars(c->args[1], "") &&
	       no_chars(cli_str(c->cli, OPT_FEC_DEVICE), "");
}

/* dm-mod.create= splits at ',' and ';' without escapes, and the kernel
 * command line ends a quoted value at '"'. */
static bool dm_mod_ok(const struct vt *c)
{
	return no_chars(c->args[0], ",;\"") &&
	       no_chars(c->args[1], ",;\"") &&
	       no_chars(cli_str(c->cli, OPT_FEC_DEVICE), ",;\"");
}

static char *table_line(const struct vt *c,
			const struct dmt_verity_geometry *g, const char *name,
			const char *root, const char *salt)
{
	const struct dmt_verity_params *p = &c->p;
	const struct dmt_fec_layout *l = &c->fl;
	char *dpath = table_word(c->args[0]), *hpath = table_word(c->args[1]);
	char *fpath =
		c->have_fl ? table_word(cli_str(c->cli, OPT_FEC_DEVICE)) : NULL;
	char *fec = NULL, *table = NULL;

	if (!dpath || !hpath || (c->have_fl && !fpath))
		goto out;
	if (!c->have_fl)
		fec = strdup("");
	else if (asprintf(&fec, " 8 use_fec_from_device %s fec_start %" PRIu64
				" fec_blocks %" PRIu64 " fec_roots %u", fpath,
			  l->fec_start, l->fec_blocks, l->roots) < 0)
		fec = NULL;
	if (fec &&
	    asprintf(&table, "0 %" PRIu64 " verity %" PRIu32 " %s %s %" PRIu32
			     " %" PRIu32 " %" PRIu64 " %" PRIu64 " %s %s %s%s",
		     p->data_blocks * (p->data_block_size / 512), p->hash_type,
		     dpath, hpath, p->data_block_size, p->hash_block_size,
		     p->data_blocks, g->hash_start, name, root, salt, fec) < 0)
		table = NULL;
out:
	free(dpath);
	free(hpath);
	free(fpath);
	free(fec);
	return table;
}

/* veritysetup open <data> <name> <hash> <root> [options], shell-quoted */
static char *open_command(const struct vt *c, const char *name,
			  const char *root, const char *salt)
{
	const struct dmt_verity_params *p = &c->p;
	const struct dmt_fec_layout *l = &c->fl;
	const char *dpath = c->args[0], *hpath = c->args[1];
	const char *fpath = cli_str(c->cli, OPT_FEC_DEVICE);
	char num[48], *cmd;

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
	return cmd;
}

int vt_json_build(const struct vt *c, const struct dmt_verity_result *res)
{
	const struct dmt_verity_params *p = &c->p;
	const struct dmt_verity_geometry *g = &res->geo;
	struct json_object *o = vt_json_params(c, g);
	char root[2 * DMT_DIGEST_MAX + 1], salt[2 * DMT_VERITY_SALT_MAX + 1];
	char name[DMT_VERITY_HASH_NAME_MAX];
	char *table = NULL, *dm = NULL, *cmd = NULL;

	tool_hex(res->root_hash, res->root_hash_size, root);
	vt_salt_text(p, salt);
	vt_lower_name(p, name);
	cli_json_add_str(o, "root_hash", root);
	cli_json_add_str(o, "root_hash_signature", c->sig_out);
	cli_json_add_str(o, "sidecar_roothash", c->sidecar_root);
	cli_json_add_str(o, "sidecar_roothash_signature", c->sidecar_sig);

	/* the dm-verity target line (docs/formats.md 1.8), optional
	 * arguments in the order cryptsetup emits them */
	if (table_paths_ok(c))
		table = table_line(c, g, name, root, salt);
	else
		cli_json_add_str(o, "table_note",
				 "a path holds a control character, which a "
				 "table line cannot carry");
	if (table && dm_mod_ok(c) &&
	    asprintf(&dm, "dm-mod.create=\"vroot,,,ro,%s\"", table) < 0)
		dm = NULL;
	if (table && !dm_mod_ok(c))
		cli_json_add_str(o, "dm_mod_create_note",
				 "a path holds ',', ';' or '\"', which "
				 "dm-mod.create cannot carry");
	cli_json_add_str(o, "table", table);
	cli_json_add_str(o, "dm_mod_create", dm);

	cmd = open_command(c, name, root, salt);
	cli_json_add_str(o, "veritysetup_open", cmd);
	free(table);
	free(dm);
	free(cmd);
	cli_json_print(c->cli, o);
	return 0;
}

void vt_debug_geometry(const struct vt *c,
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

void vt_debug_fec(const struct vt *c)
{
	const struct dmt_fec_layout *l = &c->fl;

	tool_debug("FEC: %u roots, %" PRIu64 " covered blocks (%" PRIu64
		   " hash-file blocks from block %" PRIu64 "), %" PRIu64
		   " rounds, %" PRIu64 " parity blocks at byte %" PRIu64 "%s",
		   l->roots, l->fec_blocks, l->hash_blocks, l->hash_start,
		   l->rounds, l->parity_blocks, l->fec_offset,
		   l->shared ? " of the hash file" : "");
}
