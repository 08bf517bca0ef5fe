// SPDX-License-Identifier: MIT
/* LUKS2 header generators (see luks2_gen.h). */
#include "tests/support/luks2_gen.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

#include "tests/support/helpers.h"

#define BIN 4096
#define CSUM_OFF 448

static const char pass[] = "test passphrase";

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* The keyslots area's size the primary's JSON gives (0 if it has none). */
static uint64_t keyslots_size(const uint8_t *img)
{
	json_object *j = json_tokener_parse((const char *)img + BIN), *v;
	uint64_t ks = 0;

	if (json_object_object_get_ex(j, "config", &v) &&
	    json_object_object_get_ex(v, "keyslots_size", &v))
		ks = strtoull(json_object_get_string(v), NULL, 10);
	json_object_put(j);
	return ks;
}

/* The header area of path into memory (a reencryption under way may sit
 * on hundreds of MiB: they are not needed). */
static void base_read(struct lg_base *b, const char *name, const char *path)
{
	uint8_t head[BIN];
	struct stat st;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(pread(fd, head, BIN, 0), BIN, "%s: too short", path);
	b->name = name;
	b->path = strdup(path);
	b->size = (uint64_t)st.st_size;
	b->hdr_size = get_be64(head + 8);
	cr_assert_geq(b->size, 2 * b->hdr_size, "%s: no secondary", path);
	b->img = malloc(2 * b->hdr_size);
	cr_assert_eq(pread(fd, b->img, 2 * b->hdr_size, 0),
		     (ssize_t)(2 * b->hdr_size));
	b->len = 2 * b->hdr_size + keyslots_size(b->img);
	if (b->len > b->size || b->size <= (16u << 20))
		b->len = b->size;
	b->img = realloc(b->img, b->len);
	cr_assert(b->img);
	cr_assert_eq(pread(fd, b->img, b->len, 0), (ssize_t)b->len);
	close(fd);
}

void lg_base_file(struct lg_base *b, const char *name, const char *path)
{
	base_read(b, name, path);
}

void lg_copy(const struct lg_base *b, const char *from, const char *to)
{
	uint8_t *buf = malloc(b->len);
	int in = open(from, O_RDONLY), out;
	struct stat st;
	ssize_t n;

	cr_assert(buf && in >= 0 && !fstat(in, &st));
	n = pread(in, buf, b->len, 0);
	cr_assert_geq(n, 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(out, 0, "%s", to);
	cr_assert_eq(write(out, buf, (size_t)n), n);
	cr_assert_eq(ftruncate(out, st.st_size), 0);
	close(out);
	close(in);
	free(buf);
}

void lg_base_free(struct lg_base *b)
{
	free(b->path);
	free(b->img);
}

void lg_base_ours(struct lg_base *b, const char *dir)
{
	static const char *const extras[] = {
		"set tokens.0 {\"type\":\"luks2-keyring\",\"keyslots\":[\"1\"],"
		"\"key_description\":\"dmt:test\"}",
		NULL
	};
	struct dmt_luks2_params p = { .data_offset = 1u << 20,
				      .digest_iterations = 1000,
				      .label = "a label",
				      .subsystem = "sub" };
	struct dmt_luks2_keyslot_params k0 = {.keyslot = -1,
					      .pbkdf = {.type = "pbkdf2",
							.hash = "sha256",
							.iterations = 1000,
							.memory_kb = 0,
							.parallel = 0}};
	struct dmt_luks2_keyslot_params k1 = {.keyslot = -1,
					      .pbkdf = {.type = "argon2id",
							.hash = NULL,
							.iterations = 1,
							.memory_kb = 32,
							.parallel = 1}};
	char *path = th_path(dir, "ours.img"), *raw = th_path(dir, "raw.img");
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	struct lg_base tmp;

	cr_assert_eq(dmt_luks2_create(&p, &h, &r), 0);
	cr_assert_eq(dmt_luks2_add_keyslot(h, &k0, pass, strlen(pass), &r), 0);
	cr_assert_eq(dmt_luks2_add_keyslot(h, &k1, pass, strlen(pass), &r), 1);
	cr_assert_eq(dmt_file_open(raw, DMT_OPEN_RW | DMT_OPEN_CREATE, &f), 0);
	cr_assert_eq(dmt_luks2_write(h, f, &r), 0);
	cr_assert_eq(ftruncate(dmt_file_fd(f), (1 << 20) + 8192), 0);
	dmt_file_close(f);
	dmt_luks2_free(h);
	base_read(&tmp, "raw", raw);
	lg_make(&tmp, extras, path);
	lg_base_free(&tmp);
	base_read(b, "ours", path);
	free(path);
	free(raw);
}

void lg_base_luksformat(struct lg_base *b, const char *dir)
{
	char *path = th_path(dir, "theirs.img"), *err = NULL;

	cr_assert_eq(th_sh(NULL, &err,
			   "cd '%s' && truncate -s 1056768 theirs.img && printf '%s' > pw && "
			   "cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
			   "--pbkdf-force-iterations 1000 --offset 2048 "
			   "--label lbl --subsystem sys --key-file pw theirs.img && "
			   "cryptsetup luksAddKey -q --pbkdf argon2i --pbkdf-memory 32 "
			   "--pbkdf-force-iterations 4 --pbkdf-parallel 1 "
			   "--key-file pw --new-keyfile pw theirs.img && "
			   "cryptsetup token add --key-description dmt:test "
			   "--key-slot 1 theirs.img && "
			   "cryptsetup config --priority prefer --key-slot 1 theirs.img",
			   dir, pass),
		     0, "luksFormat: %s", err);
	free(err);
	base_read(b, "luksFormat", path);
	free(path);
}

/* ---- JSON mutations ---- */

/* The parent of path's last component; *last is that component. */
static json_object *walk(json_object *root, char *path, char **last)
{
	char *dot;
	json_object *o = root;

	while ((dot = strchr(path, '.'))) {
		*dot = '\0';
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(path));
		else if (!json_object_object_get_ex(o, path, &o))
			o = NULL;
		cr_assert(o, "no member %s", path);
		path = dot + 1;
	}
	*last = path;
	return o;
}

static json_object *value_of(const char *text)
{
	enum json_tokener_error e;
	json_object *v = json_tokener_parse_verbose(text, &e);

	cr_assert(v || !strcmp(text, "null"), "bad JSON value: %s", text);
	return v;
}

static void put(json_object *parent, const char *key, json_object *v)
{
	if (json_object_is_type(parent, json_type_array))
		json_object_array_put_idx(parent, (size_t)atoi(key), v);
	else
		json_object_object_add(parent, key, v);
}

static json_object *member_at(json_object *root, const char *path)
{
	char *p = strdup(path), *last;
	json_object *parent = walk(root, p, &last), *v = NULL;

	if (json_object_is_type(parent, json_type_array))
		v = json_object_array_get_idx(parent, (size_t)atoi(last));
	else
		json_object_object_get_ex(parent, last, &v);
	free(p);
	return v;
}

/* n segments 0..n-1 of 4096 bytes after the data offset (1 MiB), the
 * first one the crypt segment made fixed, the others linear. */
static void fn_segments(json_object *root, int n)
{
	json_object *segs = member_at(root, "segments"), *s0;
	char key[16], off[24];

	s0 = json_object_object_get(segs, "0");
	json_object_object_add(s0, "size", json_object_new_string("4096"));
	for (int i = 1; i < n; i++) {
		json_object *s = json_object_new_object();

		snprintf(key, sizeof(key), "%d", i);
		snprintf(off, sizeof(off), "%d", (1 << 20) + 4096 * i);
		json_object_object_add(s, "type", json_object_new_string("linear"));
		json_object_object_add(s, "offset", json_object_new_string(off));
		json_object_object_add(s, "size", json_object_new_string("4096"));
		json_object_object_add(segs, key, s);
	}
}

/* Digest 0 lists keyslot 0 n times more. */
static void fn_repeat_keyslot(json_object *root, int n)
{
	json_object *a = member_at(root, "digests.0.keyslots");

	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string("0"));
}

static void apply_fn(json_object *root, const char *args)
{
	char name[32] = "";
	int n = 0;

	cr_assert_geq(sscanf(args, "%31s %d", name, &n), 1);
	if (!strcmp(name, "segments"))
		fn_segments(root, n);
	else if (!strcmp(name, "repeat_keyslot"))
		fn_repeat_keyslot(root, n);
	else
		cr_assert_fail("no generator %s", name);
}

static void apply_json(json_object *root, const char *op)
{
	char verb[8], *path, *last, *arg;
	json_object *parent;
	char *line = strdup(op);

	cr_assert_eq(sscanf(line, "%7s", verb), 1, "%s", op);
	path = line + strlen(verb) + 1;
	if (!strcmp(verb, "fn")) {
		apply_fn(root, path);
		free(line);
		return;
	}
	arg = strchr(path, ' ');
	if (arg)
		*arg++ = '\0';
	if (!strcmp(verb, "add")) {
		json_object *a = member_at(root, path);

		cr_assert(json_object_is_type(a, json_type_array), "%s", op);
		json_object_array_add(a, value_of(arg));
		free(line);
		return;
	}
	if (!strcmp(verb, "copy")) {
		json_object *src = member_at(root, arg), *dst = NULL;

		cr_assert_eq(json_object_deep_copy(src, &dst, NULL), 0, "%s", op);
		parent = walk(root, path, &last);
		put(parent, last, dst);
		free(line);
		return;
	}
	parent = walk(root, path, &last);
	if (!strcmp(verb, "set")) {
		cr_assert(arg, "%s", op);
		put(parent, last, value_of(arg));
	} else if (!strcmp(verb, "del")) {
		if (json_object_is_type(parent, json_type_array))
			json_object_array_del_idx(parent, (size_t)atoi(last), 1);
		else
			json_object_object_del(parent, last);
	} else if (!strcmp(verb, "mv")) {
		json_object *v = json_object_get(json_object_object_get(parent, last));

		json_object_object_del(parent, last);
		json_object_object_add(parent, arg, v);
	} else {
		cr_assert_fail("bad mutation: %s", op);
	}
	free(line);
}

/* sub FROM => TO on the text (malloc'ed result). */
static char *apply_text(char *text, const char *op)
{
	const char *sep = strstr(op, " => "), *from = op + 4;
	size_t flen = (size_t)(sep - from);
	char *hit, *out;

	cr_assert(sep, "%s", op);
	hit = memmem(text, strlen(text), from, flen);
	cr_assert(hit, "%.*s not in the JSON", (int)flen, from);
	cr_assert_geq(asprintf(&out, "%.*s%s%s", (int)(hit - text), text,
			       sep + 4, hit + flen), 0);
	free(text);
	return out;
}

/* ---- binary fields ---- */

static uint64_t copy_off(const struct lg_base *b, char which)
{
	cr_assert(which == 'P' || which == 'S');
	return which == 'P' ? 0 : b->hdr_size;
}

static void hex_bytes(uint8_t *dst, const char *hex)
{
	for (unsigned int v; sscanf(hex, "%2x", &v) == 1; hex += 2)
		*dst++ = (uint8_t)v;
}

static const struct {
	const char *name;
	int off, len;
} fields[] = { { "label", 24, 48 },
	       { "csum_alg", 72, 32 },
	       { "uuid", 168, 40 },
	       { "subsystem", 208, 48 } };

/* One binary mutation ("seqid P 5", "bytes S 6 0001", ...). */
static void apply_bin(const struct lg_base *b, uint8_t *img, const char *op,
		      bool nocsum[2])
{
	char verb[8], which = 0, name[16];
	unsigned long long off = 0, v = 0;
	uint8_t *hdr;
	int pos = 0, n = 0;

	cr_assert_eq(sscanf(op, "%7s %c %n", verb, &which, &pos), 2, "%s", op);
	hdr = img + copy_off(b, which);
	if (!strcmp(verb, "nocsum")) {
		nocsum[which == 'S'] = true;
	} else if (!strcmp(verb, "seqid") &&
		   sscanf(op + pos, "%llu", &v) == 1) {
		put_be64(hdr + 16, v);
	} else if (!strcmp(verb, "u64") &&
		   sscanf(op + pos, "%llu %llu", &off, &v) == 2) {
		put_be64(hdr + off, v);
	} else if (!strcmp(verb, "bytes") &&
		   sscanf(op + pos, "%llu %n", &off, &n) == 1) {
		hex_bytes(hdr + off, op + pos + n);
	} else if (!strcmp(verb, "field") &&
		   sscanf(op + pos, "%15s %n", name, &n) == 1) {
		size_t i = 0;

		while (i < 4 && strcmp(fields[i].name, name))
			i++;
		cr_assert_lt(i, 4, "%s", op);
		memset(hdr + fields[i].off, 0, (size_t)fields[i].len);
		memcpy(hdr + fields[i].off, op + pos + n,
		       strnlen(op + pos + n, (size_t)fields[i].len));
	} else if (!strcmp(verb, "tail")) {
		uint8_t *area = hdr + BIN;

		hex_bytes(area + strlen((char *)area) + 1, op + pos);
	} else {
		cr_assert_fail("bad mutation: %s", op);
	}
}

static bool verb_is(const char *op, const char *const *verbs)
{
	size_t n = strcspn(op, " ");

	for (size_t i = 0; verbs[i]; i++)
		if (strlen(verbs[i]) == n && !strncmp(op, verbs[i], n))
			return true;
	return false;
}

static const char *digest_name(const char *alg)
{
	return !strcasecmp(alg, "blake2b-512") ? "blake2b512" :
	       !strcasecmp(alg, "blake2s-256") ? "blake2s256" :
						 alg;
}

/* The copy's checksum over its own hdr_size, with its own algorithm. */
static void fix_csum(uint8_t *img, size_t len, uint64_t off)
{
	char alg[33] = { 0 };
	uint64_t size = get_be64(img + off + 8);
	EVP_MD *md;

	memcpy(alg, img + off + 72, 32);
	memset(img + off + CSUM_OFF, 0, 64);
	md = EVP_MD_fetch(NULL, digest_name(alg), NULL);
	if (!md || EVP_MD_get_size(md) > 64)
		goto out;
	if (size > len - off)
		size = len - off;
	cr_assert(EVP_Digest(img + off, size, img + off + CSUM_OFF, NULL, md,
			     NULL));
out:
	EVP_MD_free(md);
}

static void place(const struct lg_base *b, uint8_t *img, int copy,
		  const char *text)
{
	uint8_t *area = img + (copy ? b->hdr_size : 0) + BIN;
	size_t n = b->hdr_size - BIN;

	cr_assert_lt(strlen(text), n, "the JSON does not fit");
	memset(area, 0, n);
	memcpy(area, text, strlen(text));
}

static char *to_text(json_object *j)
{
	return strdup(json_object_to_json_string_ext(
		j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

void lg_make(const struct lg_base *b, const char *const *ops, const char *path)
{
	static const char *const json_ops[] = { "set", "del", "add", "copy",
						"mv",  "fn",  NULL };
	uint8_t *img = malloc(b->len);
	json_object *j[2];
	char *text[2] = { NULL, NULL };
	bool nocsum[2] = { false, false }, on[2] = { true, true };
	size_t len = b->len;
	unsigned long long cut = 0;

	memcpy(img, b->img, len);
	for (int c = 0; c < 2; c++) {
		j[c] = json_tokener_parse((char *)img + BIN);
		cr_assert(j[c], "the base's JSON does not parse");
	}
	/* JSON first, then text, then the binary fields */
	for (size_t i = 0; ops && ops[i]; i++) {
		const char *op = ops[i];

		if (!strncmp(op, "only ", 5)) {
			on[0] = !strcmp(op + 5, "primary");
			on[1] = !on[0];
			continue;
		}
		for (int c = 0; c < 2; c++) {
			if (!on[c])
				continue;
			if (!strncmp(op, "sub ", 4)) {
				if (!text[c])
					text[c] = to_text(j[c]);
				text[c] = apply_text(text[c], op);
			} else if (verb_is(op, json_ops)) {
				cr_assert_null(text[c], "JSON op after sub: %s", op);
				apply_json(j[c], op);
			}
		}
	}
	for (int c = 0; c < 2; c++) {
		if (!text[c])
			text[c] = to_text(j[c]);
		place(b, img, c, text[c]);
		free(text[c]);
		json_object_put(j[c]);
	}
	for (size_t i = 0; ops && ops[i]; i++) {
		const char *op = ops[i];

		if (sscanf(op, "trunc %llu", &cut) == 1 ||
		    !strncmp(op, "only ", 5) || !strncmp(op, "sub ", 4) ||
		    verb_is(op, json_ops))
			continue;
		apply_bin(b, img, op, nocsum);
	}
	/* the secondary first: a primary that claims a larger hdr_size
	 * covers the secondary's bytes */
	if (!nocsum[1])
		fix_csum(img, len, b->hdr_size);
	if (!nocsum[0])
		fix_csum(img, len, 0);
	th_write_file(path, img, cut && cut < len ? cut : len);
	if (!cut)
		cr_assert_eq(truncate(path, (off_t)b->size), 0);
	free(img);
}
