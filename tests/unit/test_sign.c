// SPDX-License-Identifier: MIT
/*
 * Root hash signature tests (suite "sign"): throwaway keys made with the
 * openssl CLI; our signatures must verify with `openssl smime -verify`,
 * be byte-identical to `openssl smime -sign -nocerts -noattr -binary` for
 * (deterministic) RSA keys, carry no certificates or signed attributes,
 * and a wrong key, certificate or root hash must be rejected both by us
 * and by openssl.  Plus systemd's sidecar names.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include <dmt/sign.h>

#include "tests/support/helpers.h"

/* dmt_sign_root_hash() with the key named in place; r checked too: set
 * on every failure. */
static int sign_root(const char *key, const char *cert, const char *pass,
		     const char *root, uint8_t **sig, size_t *len)
{
	struct dmt_sign_params p;
	struct dmt_reason r = { 0 };
	int err;

	dmt_sign_params_init(&p);
	p.key = key;
	p.cert = cert;
	p.passphrase = pass;
	err = dmt_sign_root_hash(&p, root, sig, len, &r);
	if (err && err != -ENOMEM)
		cr_expect_neq(r.code, DMT_REASON_NONE, "no reason for %d", err);
	return err;
}

static int verify_root(const uint8_t *sig, size_t len, const char *cert,
		       const char *root)
{
	struct dmt_reason r = { 0 };
	int err = dmt_sign_verify_root_hash(sig, len, cert, root, &r);

	if (err && err != -ENOMEM)
		cr_expect_neq(r.code, DMT_REASON_NONE, "no reason for %d", err);
	return err;
}

#define ROOT "160c3562e929e391bfa278869d46d740594c81f6e6e06a826e1c7ac043f6a59d"
#define ROOT_UPPER \
	"160C3562E929E391BFA278869D46D740594C81F6E6E06A826E1C7AC043F6A59D"
#define OTHER \
	"160c3562e929e391bfa278869d46d740594c81f6e6e06a826e1c7ac043f6a59e"

struct keys {
	char *dir;
	char *key, *cert, *key2, *cert2;
};

static void need_openssl(void)
{
	if (!th_have_cmd("openssl"))
		cr_skip("the openssl command line tool is not installed");
}

static void sh_ok(const char *what, char *cmd)
{
	char *err = NULL;
	int rc = th_sh(NULL, &err, "%s", cmd);

	cr_assert_eq(rc, 0, "%s failed (%d): %s", what, rc, err);
	free(err);
	free(cmd);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	cr_assert_geq(vasprintf(&s, f, ap), 0);
	va_end(ap);
	return s;
}

/* A self-signed certificate and its key; newkey as for openssl req. */
static void make_pair(const char *dir, const char *name, const char *newkey,
		      char **key, char **cert)
{
	*key = fmt("%s/%s.key", dir, name);
	*cert = fmt("%s/%s.crt", dir, name);
	sh_ok("openssl req", fmt("openssl req -x509 -newkey %s -nodes "
				 "-keyout '%s' -out '%s' -subj /CN=dmt-%s "
				 "-days 2 2>&1", newkey, *key, *cert, name));
}

static void keys_init(struct keys *k)
{
	need_openssl();
	memset(k, 0, sizeof(*k));
	k->dir = th_mkdtemp();
	make_pair(k->dir, "one", "rsa:2048", &k->key, &k->cert);
	make_pair(k->dir, "two", "rsa:2048", &k->key2, &k->cert2);
}

static void keys_free(struct keys *k)
{
	th_rmtree(k->dir);
	free(k->dir);
	free(k->key);
	free(k->cert);
	free(k->key2);
	free(k->cert2);
}

/* Runs openssl smime -verify on sig over `content`; returns its status. */
static int smime_verify(const struct keys *k, const char *sigfile,
			const char *content, const char *cert, bool ca)
{
	char *c = fmt("%s/content", k->dir);
	int rc;

	th_write_file(c, content, strlen(content));
	if (ca)
		rc = th_sh(NULL, NULL, "openssl smime -verify -binary "
			   "-inform der -in '%s' -content '%s' -certfile '%s' "
			   "-CAfile '%s' -purpose any -out /dev/null",
			   sigfile, c, cert, cert);
	else
		rc = th_sh(NULL, NULL, "openssl smime -verify -binary "
			   "-inform der -in '%s' -content '%s' -certfile '%s' "
			   "-nointern -noverify -out /dev/null", sigfile, c,
			   cert);
	free(c);
	return rc;
}

static char *write_sig(const struct keys *k, const char *name,
		       const uint8_t *sig, size_t len)
{
	char *path = fmt("%s/%s", k->dir, name);

	th_write_file(path, sig, len);
	return path;
}

Test(sign, verifies_with_openssl_smime)
{
	struct keys k;
	uint8_t *sig;
	size_t len;
	char *path;

	keys_init(&k);
	/* upper-case input: the lower-case string is what gets signed */
	cr_assert_eq(sign_root(k.key, k.cert, NULL, ROOT_UPPER, &sig,
					&len), 0);
	path = write_sig(&k, "s.p7s", sig, len);
	cr_expect_eq(smime_verify(&k, path, ROOT, k.cert, false), 0);
	cr_expect_eq(smime_verify(&k, path, ROOT, k.cert, true), 0);
	/* openssl agrees that anything else is not signed */
	cr_expect_neq(smime_verify(&k, path, OTHER, k.cert, false), 0);
	cr_expect_neq(smime_verify(&k, path, ROOT "\n", k.cert, false), 0);
	cr_expect_neq(smime_verify(&k, path, ROOT_UPPER, k.cert, false), 0);
	cr_expect_neq(smime_verify(&k, path, ROOT, k.cert2, false), 0);
	/* and so do we */
	cr_expect_eq(verify_root(sig, len, k.cert, ROOT), 0);
	cr_expect_eq(verify_root(sig, len, k.cert, ROOT_UPPER),
		     0);
	cr_expect_eq(verify_root(sig, len, k.cert, OTHER),
		     -EBADMSG);
	cr_expect_eq(verify_root(sig, len, k.cert2, ROOT),
		     -EBADMSG);
	free(path);
	free(sig);
	keys_free(&k);
}

/* RSA PKCS#1 v1.5 is deterministic: same bytes as the usual recipe. */
Test(sign, identical_to_openssl_smime_sign)
{
	struct keys k;
	uint8_t *sig, *ref;
	size_t len, rlen;
	char *in, *out;

	keys_init(&k);
	in = fmt("%s/roothash", k.dir);
	out = fmt("%s/ref.p7s", k.dir);
	th_write_file(in, ROOT, strlen(ROOT));
	sh_ok("openssl smime -sign",
	      fmt("openssl smime -sign -nocerts -noattr -binary -md sha256 "
		  "-in '%s' -inkey '%s' -signer '%s' -outform der -out '%s'",
		  in, k.key, k.cert, out));
	ref = th_read_file(out, &rlen);
	cr_assert_eq(sign_root(k.key, k.cert, NULL, ROOT, &sig, &len),
		     0);
	cr_expect_eq(len, rlen);
	cr_expect(len == rlen && !memcmp(sig, ref, len),
		  "signature differs from openssl smime -sign");
	/* and openssl's verifies with us */
	cr_expect_eq(verify_root(ref, rlen, k.cert, ROOT), 0);
	cr_expect_eq(verify_root(ref, rlen, k.cert2, ROOT),
		     -EBADMSG);
	free(sig);
	free(ref);
	free(in);
	free(out);
	keys_free(&k);
}

/*
 * Key and certificate named by URI go through the OSSL_STORE path (the one
 * provider URIs such as pkcs11: take; no PKCS#11 provider is packaged for
 * Debian 12, so file: stands in): same signature as with plain paths.
 */
Test(sign, store_uris)
{
	struct keys k;
	uint8_t *sig, *ref;
	size_t len, rlen;
	char *ukey, *ucert, *bad;

	keys_init(&k);
	ukey = fmt("file://%s", k.key);
	ucert = fmt("file:%s", k.cert);
	bad = fmt("file://%s/none.key", k.dir);
	cr_assert_eq(sign_root(k.key, k.cert, NULL, ROOT, &ref,
					&rlen), 0);
	cr_assert_eq(sign_root(ukey, ucert, NULL, ROOT, &sig, &len),
		     0);
	cr_expect(len == rlen && !memcmp(sig, ref, len),
		  "URI-named key and certificate signed differently");
	cr_expect_eq(verify_root(sig, len, ucert, ROOT), 0);
	free(sig);
	sig = NULL;
	cr_expect_lt(sign_root(bad, k.cert, NULL, ROOT, &sig, &len),
		     0);
	cr_expect_null(sig);
	free(ukey);
	free(ucert);
	free(bad);
	free(ref);
	keys_free(&k);
}

Test(sign, detached_no_certs_no_attributes)
{
	struct keys k;
	uint8_t *sig;
	const unsigned char *p;
	size_t len;
	PKCS7 *p7;
	STACK_OF(PKCS7_SIGNER_INFO) *sis;
	PKCS7_SIGNER_INFO *si;
	X509_ALGOR *dig = NULL;
	const ASN1_OBJECT *obj = NULL;

	keys_init(&k);
	cr_assert_eq(sign_root(k.key, k.cert, NULL, ROOT, &sig, &len),
		     0);
	p = sig;
	p7 = d2i_PKCS7(NULL, &p, (long)len);
	cr_assert_not_null(p7);
	cr_expect(PKCS7_type_is_signed(p7));
	cr_expect(PKCS7_get_detached(p7), "content is embedded");
	cr_expect_null(p7->d.sign->cert, "certificates included");
	sis = PKCS7_get_signer_info(p7);
	cr_assert_eq(sk_PKCS7_SIGNER_INFO_num(sis), 1);
	si = sk_PKCS7_SIGNER_INFO_value(sis, 0);
	/* num() of an absent (NULL) set is -1 */
	cr_expect_leq(sk_X509_ATTRIBUTE_num(PKCS7_get_signed_attributes(si)),
		      0, "signed attributes present");
	PKCS7_SIGNER_INFO_get0_algs(si, NULL, &dig, NULL);
	cr_assert_not_null(dig);
	X509_ALGOR_get0(&obj, NULL, NULL, dig);
	cr_expect_eq(OBJ_obj2nid(obj), NID_sha256);
	PKCS7_free(p7);
	free(sig);
	keys_free(&k);
}

Test(sign, rejects_tampering_and_foreign_signers)
{
	struct keys k;
	uint8_t *sig, *other, *embedded;
	size_t len, olen, elen;
	char *in, *out;

	keys_init(&k);
	cr_assert_eq(sign_root(k.key, k.cert, NULL, ROOT, &sig, &len),
		     0);
	/* signed by the other key */
	cr_assert_eq(sign_root(k.key2, k.cert2, NULL, ROOT, &other,
					&olen), 0);
	cr_expect_eq(verify_root(other, olen, k.cert, ROOT),
		     -EBADMSG);
	/* the other key's signature carrying its own certificate must not
	 * verify against ours (certificates in the message are ignored) */
	in = fmt("%s/roothash", k.dir);
	out = fmt("%s/emb.p7s", k.dir);
	th_write_file(in, ROOT, strlen(ROOT));
	sh_ok("openssl smime -sign",
	      fmt("openssl smime -sign -noattr -binary -md sha256 -in '%s' "
		  "-inkey '%s' -signer '%s' -outform der -out '%s'", in,
		  k.key2, k.cert2, out));
	embedded = th_read_file(out, &elen);
	cr_expect_eq(verify_root(embedded, elen, k.cert, ROOT),
		     -EBADMSG);
	cr_expect_eq(verify_root(embedded, elen, k.cert2, ROOT),
		     0);
	/* a flipped bit anywhere in the signature value, or garbage */
	sig[len - 10] ^= 1;
	cr_expect_eq(verify_root(sig, len, k.cert, ROOT),
		     -EBADMSG);
	cr_expect_eq(verify_root(sig, len / 2, k.cert, ROOT),
		     -EBADMSG);
	cr_expect_eq(verify_root((const uint8_t *)"hello", 5,
					      k.cert, ROOT), -EBADMSG);
	free(sig);
	free(other);
	free(embedded);
	free(in);
	free(out);
	keys_free(&k);
}

Test(sign, ec_key_and_der_files)
{
	struct keys k;
	char *key, *cert, *dkey, *dcert, *path;
	uint8_t *sig;
	size_t len;

	keys_init(&k);
	make_pair(k.dir, "ec", "ec -pkeyopt ec_paramgen_curve:prime256v1",
		  &key, &cert);
	dkey = fmt("%s/ec.key.der", k.dir);
	dcert = fmt("%s/ec.crt.der", k.dir);
	sh_ok("openssl pkey", fmt("openssl pkey -in '%s' -outform der "
				  "-out '%s'", key, dkey));
	sh_ok("openssl x509", fmt("openssl x509 -in '%s' -outform der "
				  "-out '%s'", cert, dcert));
	cr_assert_eq(sign_root(dkey, dcert, NULL, ROOT, &sig, &len),
		     0);
	path = write_sig(&k, "ec.p7s", sig, len);
	cr_expect_eq(smime_verify(&k, path, ROOT, cert, false), 0);
	cr_expect_neq(smime_verify(&k, path, OTHER, cert, false), 0);
	cr_expect_eq(verify_root(sig, len, cert, ROOT), 0);
	cr_expect_eq(verify_root(sig, len, dcert, ROOT), 0);
	cr_expect_eq(verify_root(sig, len, dcert, OTHER),
		     -EBADMSG);
	free(sig);
	free(path);
	free(key);
	free(cert);
	free(dkey);
	free(dcert);
	keys_free(&k);
}

Test(sign, encrypted_key_needs_its_passphrase)
{
	struct keys k;
	char *key, *cert;
	uint8_t *sig = NULL;
	size_t len;

	keys_init(&k);
	key = fmt("%s/enc.key", k.dir);
	cert = fmt("%s/enc.crt", k.dir);
	sh_ok("openssl req", fmt("openssl req -x509 -newkey rsa:2048 "
				 "-passout pass:s3cret -keyout '%s' -out '%s' "
				 "-subj /CN=dmt-enc -days 2 2>&1", key, cert));
	cr_expect_eq(sign_root(key, cert, NULL, ROOT, &sig, &len),
		     -ENOKEY, "no passphrase: must fail, not prompt");
	cr_expect_null(sig);
	cr_expect_eq(sign_root(key, cert, "wrong", ROOT, &sig, &len),
		     -ENOKEY);
	cr_assert_eq(sign_root(key, cert, "s3cret", ROOT, &sig,
					&len), 0);
	cr_expect_eq(verify_root(sig, len, cert, ROOT), 0);
	free(sig);
	free(key);
	free(cert);
	keys_free(&k);
}

/* verity-tool: --key-passphrase-file, the first line of the file. */
Test(sign, cli_key_passphrase_file)
{
	struct keys k;
	char *key, *cert, *good, *bad, *sig, *err = NULL;
	const char *vt = th_tool("verity-tool");
	int rc;

	keys_init(&k);
	key = fmt("%s/enc.key", k.dir);
	cert = fmt("%s/enc.crt", k.dir);
	good = fmt("%s/pass", k.dir);
	bad = fmt("%s/wrong", k.dir);
	sig = fmt("%s/s.p7s", k.dir);
	sh_ok("openssl req", fmt("openssl req -x509 -newkey rsa:2048 "
				 "-passout pass:s3cret -keyout '%s' -out '%s' "
				 "-subj /CN=dmt-enc -days 2 2>&1", key, cert));
	th_write_file(good, "s3cret\nsecond line\n", 19);
	th_write_file(bad, "s3cre\n", 6);

	rc = th_sh(NULL, &err, "'%s' sign --key '%s' --cert '%s' %s '%s'", vt,
		   key, cert, ROOT, sig);
	cr_expect_eq(rc, 4, "no passphrase: exit %d: %s", rc, err);
	cr_expect(strstr(err, "--key-passphrase-file") != NULL, "%s", err);
	free(err);
	rc = th_sh(NULL, &err, "'%s' sign --key '%s' --cert '%s' "
		   "--key-passphrase-file '%s' %s '%s'", vt, key, cert, bad,
		   ROOT, sig);
	cr_expect_eq(rc, 4, "wrong passphrase: exit %d: %s", rc, err);
	cr_expect(strstr(err, "wrong passphrase") != NULL, "%s", err);
	cr_expect(access(sig, F_OK) != 0, "a signature was written");
	free(err);
	rc = th_sh(NULL, &err, "'%s' sign --key '%s' --cert '%s' "
		   "--key-passphrase-file '%s/none' %s '%s'", vt, key, cert,
		   k.dir, ROOT, sig);
	cr_expect_eq(rc, 4, "missing passphrase file: exit %d: %s", rc, err);
	cr_expect(strstr(err, "/none") != NULL, "%s", err);
	free(err);
	rc = th_sh(NULL, &err, "'%s' sign --key '%s' --cert '%s' "
		   "--key-passphrase-file '%s' %s '%s'", vt, key, cert, good,
		   ROOT, sig);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	cr_expect_eq(smime_verify(&k, sig, ROOT, cert, false), 0);
	free(key);
	free(cert);
	free(good);
	free(bad);
	free(sig);
	keys_free(&k);
}

Test(sign, parameter_and_file_errors)
{
	struct keys k;
	uint8_t *sig = NULL;
	size_t len;
	char *missing, *bogus, *out = NULL;
	char big[140];

	keys_init(&k);
	missing = fmt("%s/nope.pem", k.dir);
	bogus = fmt("%s/bogus.pem", k.dir);
	th_write_file(bogus, "not a key\n", 10);

	cr_expect_eq(sign_root(missing, k.cert, NULL, ROOT, &sig,
					&len), -ENOENT);
	cr_expect_eq(sign_root(k.key, missing, NULL, ROOT, &sig,
					&len), -ENOENT);
	cr_expect_eq(sign_root(bogus, k.cert, NULL, ROOT, &sig,
					&len), -ENOKEY);
	/* a key file holds no certificate */
	cr_expect_eq(sign_root(k.key, k.key, NULL, ROOT, &sig, &len),
		     -ENOKEY);
	/* key and certificate of different pairs */
	cr_expect_eq(sign_root(k.key, k.cert2, NULL, ROOT, &sig,
					&len), -EINVAL);
	cr_expect_eq(sign_root(k.key, k.cert, NULL, "", &sig, &len),
		     -EINVAL);
	cr_expect_eq(sign_root(k.key, k.cert, NULL, "abc", &sig,
					&len), -EINVAL);
	cr_expect_eq(sign_root(k.key, k.cert, NULL, "zz", &sig,
					&len), -EINVAL);
	cr_expect_eq(sign_root(k.key, k.cert, NULL, ROOT "\n", &sig,
					&len), -EINVAL);
	memset(big, 'a', 130);
	big[130] = 0;
	cr_expect_eq(sign_root(k.key, k.cert, NULL, big, &sig, &len),
		     -EINVAL);
	cr_expect_null(sig);
	cr_expect_eq(verify_root((const uint8_t *)"x", 1,
					      missing, ROOT), -ENOENT);
	/* a URI scheme with no loader (no pkcs11 provider configured) */
	if (th_sh(&out, NULL, "openssl list -providers") == 0 &&
	    !strstr(out, "pkcs11"))
		cr_expect_eq(sign_root("pkcs11:token=none;object=k",
						k.cert, NULL, ROOT, &sig,
						&len), -ENOTSUP);
	free(out);
	free(missing);
	free(bogus);
	keys_free(&k);
}

Test(sign, sidecar_names)
{
	static const struct {
		const char *image;
		enum dmt_sign_sidecar which;
		const char *want;
	} cases[] = {
		{ "foo.raw", DMT_SIGN_SIDECAR_ROOTHASH, "foo.roothash" },
		{ "foo.raw", DMT_SIGN_SIDECAR_ROOTHASH_SIG, "foo.roothash.p7s" },
		{ "foo.raw", DMT_SIGN_SIDECAR_VERITY, "foo.verity" },
		{ "/a/b/foo.img", DMT_SIGN_SIDECAR_ROOTHASH,
		  "/a/b/foo.img.roothash" },
		{ "/a/b/foo.img", DMT_SIGN_SIDECAR_VERITY, "/a/b/foo.img.verity" },
		{ "foo.raw.raw", DMT_SIGN_SIDECAR_VERITY, "foo.raw.verity" },
		{ "d.raw/foo", DMT_SIGN_SIDECAR_ROOTHASH_SIG,
		  "d.raw/foo.roothash.p7s" },
		{ "foo.RAW", DMT_SIGN_SIDECAR_VERITY, "foo.RAW.verity" },
		{ "raw", DMT_SIGN_SIDECAR_VERITY, "raw.verity" },
	};
	size_t i;
	char *out;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(dmt_sign_sidecar_path(cases[i].image, cases[i].which,
					      &out), 0);
		cr_expect_str_eq(out, cases[i].want);
		free(out);
	}
	cr_expect_eq(dmt_sign_sidecar_path("", DMT_SIGN_SIDECAR_VERITY, &out), -EINVAL);
	cr_expect_eq(dmt_sign_sidecar_path("x", (enum dmt_sign_sidecar)7, &out), -EINVAL);
}

/* dmt_sign_key_new + dmt_sign_data: a loaded key signs any message with
 * the digest asked for, as openssl smime checks; the reasons of the
 * failures that are the caller's. */
Test(sign, key_signs_data)
{
	struct keys k;
	struct dmt_sign_params p;
	struct dmt_sign_key *key = NULL;
	struct dmt_reason r = { 0 };
	uint8_t *sig = NULL;
	size_t len = 0;
	char *path;

	keys_init(&k);
	dmt_sign_params_init(&p);
	p.key = k.key;
	p.cert = k.cert2;
	cr_expect_eq(dmt_sign_key_new(&p, &key, &r), -EINVAL);
	cr_expect_null(key);
	cr_expect_eq(r.code, DMT_REASON_CONFLICT);
	cr_expect_str_eq(r.field2, "cert");

	p.cert = k.cert;
	cr_assert_eq(dmt_sign_key_new(&p, &key, &r), 0);
	cr_assert_eq(dmt_sign_data(key, "sha512", "hello", 5, &sig, &len, &r),
		     0);
	path = write_sig(&k, "d.p7s", sig, len);
	cr_expect_eq(smime_verify(&k, path, "hello", k.cert, false), 0);
	cr_expect_neq(smime_verify(&k, path, "hellO", k.cert, false), 0);
	free(sig);

	memset(&r, 0, sizeof(r));
	cr_expect_eq(dmt_sign_data(key, "nosuchdigest", "hello", 5, &sig,
				   &len, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_UNKNOWN_ALG);
	cr_expect_null(sig);
	memset(&r, 0, sizeof(r));
	cr_expect_eq(dmt_sign_data(key, "sha256", "", 0, &sig, &len, &r),
		     -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_BAD_VALUE);
	dmt_sign_key_free(key);
	dmt_sign_key_free(NULL);

	p.key = path;	/* a signature, not a key */
	memset(&r, 0, sizeof(r));
	cr_expect_eq(dmt_sign_key_new(&p, &key, &r), -ENOKEY);
	cr_expect_eq(r.code, DMT_REASON_MISSING);
	cr_expect_str_eq(r.path, path);
	free(path);
	keys_free(&k);
}
