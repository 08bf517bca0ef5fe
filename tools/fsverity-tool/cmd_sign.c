// SPDX-License-Identifier: MIT
/*
 * sign: a detached PKCS#7 signature of each file's fsverity_formatted_
 * digest (what the kernel checks for FS_IOC_ENABLE_VERITY with a
 * signature), as `fsverity sign` makes it.  One file: `sign FILE SIGFILE`.
 * Many: --out-dir DIR (DIR/<file>.sig) and/or --manifest FILE (JSON lines
 * of path, digest and base64 signature).
 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <dmt/sign.h>
#include <dmt/threads.h>

#include "tools/common/sign.h"
#include "tools/fsverity-tool/fvt.h"

/* The passphrase as OpenSSL takes it (NULL: none given). */
static const char *pass_of(const struct fvt *f)
{
	return (const char *)f->pass.p;
}

static const char *key_of(struct cli *c)
{
	return cli_str(c, O_KEY);
}

static const char *cert_of(struct cli *c)
{
	return cli_given(c, O_CERT) ? cli_str(c, O_CERT) : cli_str(c, O_KEY);
}

/* The key options as the library's params. */
static struct dmt_sign_params sign_params(struct cli *c)
{
	struct dmt_sign_params sp;

	dmt_sign_params_init(&sp);
	sp.key = key_of(c);
	sp.cert = cert_of(c);
	sp.passphrase = pass_of(fvt_of(c));
	return sp;
}

/* The key or certificate did not load or sign (tools/common/sign.h). */
static int sign_error(struct cli *c, int err)
{
	struct tool_sign_load l = {
		.key = key_of(c), .cert = cert_of(c),
		.pass = pass_of(fvt_of(c)) != NULL,
		.cert_opt = cli_given(c, O_CERT) ? NULL : "--cert",
	};

	return tool_sign_error(&l, err);
}

static int sign_bytes(struct cli *c, const void *msg, size_t len, uint8_t **sig,
		      size_t *sig_len)
{
	struct fvt *f = fvt_of(c);
	int err = dmt_sign_data(
		f->signer, dmt_fsverity_hash_alg_name(f->p.hash_algorithm), msg,
		len, sig, sig_len, NULL);

	if (err) {
		f->stop = true; /* the same key fails for every file */
		return sign_error(c, err);
	}
	return 0;
}

/* SIGFILE now; the --out-dir ones with their group (later). */
static int write_sig(const char *path, const uint8_t *sig, size_t len,
		     bool later)
{
	struct fvt_out o;
	int err = fvt_out_open(&o, path, false);

	if (!err)
		err = fvt_out_write(&o, sig, len);
	if (!err)
		return later ? fvt_out_commit_later(&o) : fvt_out_commit(&o);
	fvt_out_abort(&o);
	return err;
}

static char *base64(const uint8_t *p, size_t len)
{
	char *s = malloc(4 * ((len + 2) / 3) + 1);

	if (s)
		EVP_EncodeBlock((unsigned char *)s, p, (int)len);
	return s;
}

static int manifest_line(struct cli *c, struct fvt_entry *e, const uint8_t *sig,
			 size_t len)
{
	struct fvt *f = fvt_of(c);
	struct json_object *j = fvt_entry_json(c, e);
	char *b64 = base64(sig, len);
	const char *s;
	int err = -ENOMEM;

	if (b64) {
		cli_json_add_str(j, "signature", b64);
		s = json_object_to_json_string_ext(
			j, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE);
		err = fvt_out_write(&f->manifest, s, strlen(s));
		if (!err)
			err = fvt_out_write(&f->manifest, "\n", 1);
	}
	free(b64);
	json_object_put(j);
	return err;
}

/* The sig of e to SIGFILE, --out-dir, --manifest, and its stdout line. */
static int sign_output(struct cli *c, struct fvt_entry *e, const uint8_t *sig,
		       size_t len)
{
	struct fvt *f = fvt_of(c);
	const struct fvt_entry *o = fvt_origin(f, e);
	char hex[2 * DMT_FSVERITY_MAX_DIGEST + 1], *path = NULL;
	int err = 0;

	if (f->sigfile)
		err = write_sig(f->sigfile, sig, len, false);
	if (!err && cli_given(c, O_OUT_DIR)) {
		err = fvt_out_dir_path(cli_str(c, O_OUT_DIR), e->rel, ".sig",
				       &path);
		if (!err)
			err = write_sig(path, sig, len, true);
	}
	if (!err && fvt_out_is_open(&f->manifest))
		err = manifest_line(c, e, sig, len);
	tool_hex(o->digest.digest, o->digest.digest_size, hex);
	if (!err && c->json) {
		struct json_object *j = fvt_entry_json(c, e);
		char *b64 = base64(sig, len);

		cli_json_add_str(j, "signature", b64);
		free(b64);
		fvt_json_line(c, j);
	} else if (!err) {
		tool_progress_clear(STDOUT_FILENO);
		printf("Signed file '%s' (%s:%s)\n", e->path,
		       dmt_fsverity_hash_alg_name(o->digest.digest_algorithm),
		       hex);
	}
	free(path);
	return err;
}

static size_t formatted(const struct fvt *f, const struct fvt_entry *e,
			uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX])
{
	return dmt_fsverity_format_digest(&fvt_origin(f, e)->digest, fmt);
}

/* sign FILE SIGFILE: signed as the digest comes. */
static int sign_entry(struct cli *c, struct fvt_entry *e)
{
	uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX], *sig = NULL;
	size_t n = formatted(fvt_of(c), e, fmt), len = 0;
	int err = sign_bytes(c, fmt, n, &sig, &len);

	if (!err)
		err = sign_output(c, e, sig, len);
	free(sig);
	return err;
}

/* ---- many files: signed on every worker, a window at a time ---- */

#define SIGN_WINDOW 1024

struct sign_job {
	struct cli *c;
	struct fvt_entry *e; /* the window */
	uint8_t **sig;
	size_t *len;
	struct dmt_sign_key **signers; /* one per worker, [0] = f->signer */
};

/* Digested (a hard link: its first path), without error. */
static bool signable(const struct fvt *f, const struct fvt_entry *e)
{
	const struct fvt_entry *o = fvt_origin(f, e);

	return o->done && !o->err && !e->err;
}

static int sign_range(void *ctx, unsigned int worker, uint64_t begin,
		      uint64_t end)
{
	struct sign_job *j = ctx;
	struct fvt *f = fvt_of(j->c);
	const char *alg = dmt_fsverity_hash_alg_name(f->p.hash_algorithm);
	int err = 0;

	if (!j->signers[worker]) {
		struct dmt_sign_params sp = sign_params(j->c);

		err = dmt_sign_key_new(&sp, &j->signers[worker], NULL);
	}
	for (uint64_t i = begin; !err && i < end; i++) {
		uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX];
		size_t n;

		if (!signable(f, &j->e[i]))
			continue;
		n = formatted(f, &j->e[i], fmt);
		err = dmt_sign_data(j->signers[worker], alg, fmt, n,
				    &j->sig[i], &j->len[i], NULL);
	}
	return err;
}

/* A token (a URI key) is used from one thread; key files from all. */
static unsigned int sign_threads(struct cli *c)
{
	const char *k = key_of(c), *p = k;

	while (*p && (isalnum((unsigned char)*p) || strchr("+-.", *p)))
		p++;
	return *p == ':' && p != k ? 1 : c->threads;
}

static int sign_window(struct sign_job *j, size_t n, unsigned int threads)
{
	struct fvt *f = fvt_of(j->c);
	int err = dmt_parallel_for(threads, n, 16, sign_range, j);

	if (err) {
		f->stop = true;
		return sign_error(j->c, err);
	}
	for (size_t i = 0; i < n; i++) {
		int rc = signable(f, &j->e[i])
				 ? sign_output(j->c, &j->e[i], j->sig[i],
					       j->len[i])
				 : 0;

		if (rc && !f->first_err)
			f->first_err = rc < 0 ? tool_exit_code(rc) : rc;
	}
	return 0;
}

/* Digests first (errors reported in order), then the signatures. */
static int sign_bulk(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	unsigned int threads = sign_threads(c);
	struct sign_job j = {.c = c};
	int rc = fvt_run(c), err = 0;
	size_t end = f->next_print; /* --stop-on-error: up to there */

	if (rc < 0)
		return rc;
	j.sig = calloc(SIGN_WINDOW, sizeof(*j.sig));
	j.len = calloc(SIGN_WINDOW, sizeof(*j.len));
	j.signers = calloc(threads, sizeof(*j.signers));
	if (!j.sig || !j.len || !j.signers)
		err = -ENOMEM;
	if (!err)
		j.signers[0] = f->signer;
	for (size_t at = 0; !err && at < end; at += SIGN_WINDOW) {
		size_t n = end - at < SIGN_WINDOW ? end - at : SIGN_WINDOW;

		j.e = &f->list.e[at];
		err = sign_window(&j, n, threads);
		for (size_t i = 0; i < n; i++) {
			free(j.sig[i]);
			j.sig[i] = NULL;
		}
	}
	for (unsigned int i = 1; j.signers && i < threads; i++)
		dmt_sign_key_free(j.signers[i]);
	free(j.signers);
	free(j.sig);
	free(j.len);
	rc = fvt_out_flush(); /* the signatures already written stay */
	if (err)
		return err;
	if (!f->first_err && rc)
		f->first_err = tool_exit_code(rc);
	return f->first_err ? f->first_err : fvt_out_commit(&f->manifest);
}

/* The options fsverity 1.5 has for engines OpenSSL 3 does not ship. */
static int refuse_pkcs11(struct cli *c)
{
	static const int opts[] = {O_PKCS11_ENGINE, O_PKCS11_MODULE,
				   O_PKCS11_KEYID};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (cli_given(c, opts[i])) {
			tool_err("--%s: this OpenSSL (3.x) has no PKCS#11 "
				 "engine; give the token key as a URI instead, "
				 "e.g. --key 'pkcs11:token=...;object=...' "
				 "with pkcs11-provider configured",
				 fsverity_tool.options[opts[i]].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* Which form: FILE SIGFILE, or many files into --out-dir/--manifest. */
static int sign_form(struct cli *c, int *nfiles)
{
	struct fvt *f = fvt_of(c);
	bool bulk = cli_given(c, O_OUT_DIR) || cli_given(c, O_MANIFEST);

	if (!bulk && (c->nargs != 2 || cli_given(c, O_RECURSIVE) ||
		      cli_given(c, O_FILES_FROM))) {
		tool_err("sign: FILE SIGFILE, or many files with --out-dir DIR "
			 "and/or --manifest FILE (see --help)");
		c->usage_error = true;
		return -EINVAL;
	}
	if (!key_of(c)) {
		tool_err("sign: --key is required (the certificate defaults to "
			 "the key file)");
		return -EINVAL;
	}
	*nfiles = bulk ? c->nargs : 1;
	f->sigfile = bulk ? NULL : c->args[1];
	return 0;
}

/* The key is loaded once, and a key that cannot sign fails before any
 * file is read. */
static int load_key(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	uint8_t *sig = NULL;
	size_t len = 0;
	struct dmt_sign_params sp = sign_params(c);
	int err = dmt_sign_key_new(&sp, &f->signer, NULL);

	if (err)
		return sign_error(c, err);
	err = sign_bytes(c, "probe", 5, &sig, &len);
	free(sig);
	return err;
}

int fvt_cmd_sign(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int nfiles = 0, err = refuse_pkcs11(c);

	if (!err)
		err = sign_form(c, &nfiles);
	if (!err && cli_given(c, O_PASS_FILE))
		err = tool_read_passphrase_line(cli_str(c, O_PASS_FILE),
						&f->pass);
	if (!err)
		err = load_key(c);
	if (err)
		return err;
	f->stop = false;
	f->dedup = !cli_given(c, O_OUT_TREE) && !cli_given(c, O_OUT_DESC);
	if (cli_given(c, O_OUT_DIR))
		err = fvt_make_out_dir(cli_str(c, O_OUT_DIR));
	if (!err)
		err = fvt_collect(c, c->args, nfiles);
	if (!err)
		err = fvt_joint_outputs(c);
	if (!err && cli_given(c, O_MANIFEST))
		err = fvt_out_open(&f->manifest, cli_str(c, O_MANIFEST), false);
	if (err)
		return err;
	if (f->sigfile) {
		f->emit = sign_entry;
		return fvt_run(c);
	}
	f->emit = fvt_emit_nothing;
	return sign_bulk(c);
}
