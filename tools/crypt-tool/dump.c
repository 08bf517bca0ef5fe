// SPDX-License-Identifier: MIT
/*
 * crypt-tool dump: a LUKS2 header printed field for field as cryptsetup
 * 2.6.1's luksDump prints it (from the JSON metadata, through json-c);
 * --json: the metadata as luksDump --dump-json-metadata prints it.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/crypt-tool/ct.h"

static json_object *member(json_object *o, const char *k)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	return v ? json_object_get_string(v) : "";
}

/* Numbers are JSON numbers or (64-bit ones) strings. */
static uint64_t num(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoull(json_object_get_string(v), NULL, 10);
	return (uint64_t)json_object_get_int64(v);
}

/* Base64 as hex, 16 bytes a line (cryptsetup's hexprint). */
static void hexprint(json_object *o, const char *k)
{
	const char *b64 = str(o, k);
	size_t len = strlen(b64);
	uint8_t *buf = malloc(len / 4 * 3 + 3);
	int n = buf ? EVP_DecodeBlock(buf, (const unsigned char *)b64,
				      (int)len) : -1;

	while (n > 0 && len && b64[len - 1] == '=') {
		n--;
		len--;
	}
	for (int i = 0; i < n; i++) {
		if (i && !(i % 16))
			printf("\n\t            ");
		printf("%02x ", buf[i]);
	}
	printf("\n");
	free(buf);
}

static void print_list(json_object *arr)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		printf("%s ", json_object_get_string(
				      json_object_array_get_idx(arr, i)));
}

/* Object members "0".."31" in numeric order. */
#define FOR_EACH_SLOT(obj, i, name, val)                                     \
	for (int i = 0; i < DMT_LUKS2_KEYSLOTS_MAX; i++)                      \
		if (snprintf(name, sizeof(name), "%d", i),                      \
		    (val = member(obj, name)) != NULL)

static void dump_config(json_object *j)
{
	json_object *cfg = member(j, "config");
	json_object *flags = member(cfg, "flags");
	json_object *req = member(member(cfg, "requirements"), "mandatory");

	printf("Flags:       \t");
	if (flags && json_object_array_length(flags))
		print_list(flags);
	else
		printf("(no flags)");
	printf("\n");
	if (req && json_object_array_length(req)) {
		printf("Requirements:\t");
		print_list(req);
		printf("\n");
	}
	printf("\n");
}

static void dump_segments(json_object *j)
{
	json_object *s, *all = member(j, "segments");
	char name[16];

	printf("Data segments:\n");
	FOR_EACH_SLOT(all, i, name, s) {
		printf("  %s: %s\n", name, str(s, "type"));
		printf("\toffset: %" PRIu64 " [bytes]\n", num(s, "offset"));
		if (!strcmp(str(s, "size"), "dynamic"))
			printf("\tlength: (whole device)\n");
		else
			printf("\tlength: %" PRIu64 " [bytes]\n", num(s, "size"));
		if (member(s, "encryption"))
			printf("\tcipher: %s\n", str(s, "encryption"));
		else
			printf("\tcipher: (no SW encryption)\n");
		if (member(s, "sector_size"))
			printf("\tsector: %" PRIu64 " [bytes]\n",
			       num(s, "sector_size"));
		if (member(member(s, "integrity"), "type"))
			printf("\tintegrity: %s\n",
			       str(member(s, "integrity"), "type"));
		if (member(s, "flags") && json_object_array_length(member(s, "flags"))) {
			printf("\tflags : ");
			print_list(member(s, "flags"));
			printf("\n");
		}
		printf("\n");
	}
}

/* The digest that lists keyslot name, or -1. */
static int digest_of(json_object *j, const char *slot)
{
	json_object *d, *all = member(j, "digests");
	char name[16];

	FOR_EACH_SLOT(all, i, name, d) {
		json_object *ks = member(d, "keyslots");

		for (size_t k = 0; ks && k < json_object_array_length(ks); k++)
			if (!strcmp(json_object_get_string(
					    json_object_array_get_idx(ks, k)), slot))
				return i;
	}
	return -1;
}

static void dump_keyslot(json_object *j, const char *name, json_object *s)
{
	json_object *area = member(s, "area"), *kdf = member(s, "kdf");
	json_object *af = member(s, "af"), *prio = member(s, "priority");
	int prio_v = prio ? json_object_get_int(prio) : 1;
	int digest = digest_of(j, name);

	printf("  %s: %s%s\n", name, str(s, "type"),
	       digest < 0 ? " (unbound)" : "");
	printf("\tKey:        %" PRIu64 " bits\n", num(s, "key_size") * 8);
	printf("\tPriority:   %s\n", prio_v == 0 ? "ignored" :
				       prio_v == 2 ? "prefer" : "normal");
	printf("\tCipher:     %s\n", str(area, "encryption"));
	printf("\tCipher key: %" PRIu64 " bits\n", num(area, "key_size") * 8);
	printf("\tPBKDF:      %s\n", str(kdf, "type"));
	if (!strcmp(str(kdf, "type"), "pbkdf2")) {
		printf("\tHash:       %s\n", str(kdf, "hash"));
		printf("\tIterations: %" PRIu64 "\n", num(kdf, "iterations"));
	} else {
		printf("\tTime cost:  %" PRIu64 "\n", num(kdf, "time"));
		printf("\tMemory:     %" PRIu64 "\n", num(kdf, "memory"));
		printf("\tThreads:    %" PRIu64 "\n", num(kdf, "cpus"));
	}
	printf("\tSalt:       ");
	hexprint(kdf, "salt");
	printf("\tAF stripes: %" PRIu64 "\n", num(af, "stripes"));
	printf("\tAF hash:    %s\n", str(af, "hash"));
	printf("\tArea offset:%" PRIu64 " [bytes]\n", num(area, "offset"));
	printf("\tArea length:%" PRIu64 " [bytes]\n", num(area, "size"));
	if (digest >= 0)
		printf("\tDigest ID:  %d\n", digest);
}

static void dump_rest(json_object *j)
{
	json_object *o, *all = member(j, "keyslots");
	char name[16];

	printf("Keyslots:\n");
	FOR_EACH_SLOT(all, i, name, o)
		dump_keyslot(j, name, o);
	printf("Tokens:\n");
	all = member(j, "tokens");
	FOR_EACH_SLOT(all, i, name, o) {
		json_object *ks = member(o, "keyslots");

		printf("  %s: %s\n", name, str(o, "type"));
		for (size_t k = 0; ks && k < json_object_array_length(ks); k++)
			printf("\tKeyslot:    %s\n", json_object_get_string(
						       json_object_array_get_idx(ks, k)));
	}
	printf("Digests:\n");
	all = member(j, "digests");
	FOR_EACH_SLOT(all, i, name, o) {
		printf("  %s: %s\n", name, str(o, "type"));
		printf("\tHash:       %s\n", str(o, "hash"));
		printf("\tIterations: %" PRIu64 "\n", num(o, "iterations"));
		printf("\tSalt:       ");
		hexprint(o, "salt");
		printf("\tDigest:     ");
		hexprint(o, "digest");
	}
}

int ct_cmd_dump(struct cli *c)
{
	struct ct *ct = ct_of(c);
	const char *path = cli_given(c, O_HEADER) ? cli_str(c, O_HEADER) :
						    ct->image;
	struct dmt_reason why = { 0 };
	const char *label, *subsys;
	json_object *j;
	int err;

	err = dmt_file_open(&ct->header_file, path, DMT_OPEN_READ);
	if (err) {
		tool_err_errno(path, "cannot read", err);
		return err;
	}
	err = dmt_luks2_load(&ct->luks, &ct->header_file, &why);
	if (err) {
		ct_print_why(c, &why, err, path, "cannot read the header");
		return err == -ENOMEM ? err : -EMEDIUMTYPE;
	}
	j = json_tokener_parse(dmt_luks2_json(ct->luks));
	if (!j)
		return -ENOMEM;
	if (c->json) {
		/* no newline after it, as cryptsetup */
		printf("%s", json_object_to_json_string_ext(
				       j, JSON_C_TO_STRING_PRETTY |
						  JSON_C_TO_STRING_NOSLASHESCAPE));
		c->json_printed = true;
		json_object_put(j);
		return 0;
	}
	label = dmt_luks2_label(ct->luks);
	subsys = dmt_luks2_subsystem(ct->luks);
	printf("LUKS header information\n");
	printf("Version:       \t2\n");
	printf("Epoch:         \t%" PRIu64 "\n", dmt_luks2_seqid(ct->luks));
	printf("Metadata area: \t%" PRIu64 " [bytes]\n",
	       dmt_luks2_metadata_size(ct->luks));
	printf("Keyslots area: \t%" PRIu64 " [bytes]\n",
	       dmt_luks2_keyslots_size(ct->luks));
	printf("UUID:          \t%s\n", dmt_luks2_uuid(ct->luks));
	printf("Label:         \t%s\n", label && *label ? label : "(no label)");
	printf("Subsystem:     \t%s\n", subsys && *subsys ? subsys : "(no subsystem)");
	dump_config(j);
	dump_segments(j);
	dump_rest(j);
	json_object_put(j);
	return 0;
}
