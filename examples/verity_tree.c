/* SPDX-License-Identifier: MIT */
/*
 * verity_tree DATA HASH [SALT_HEX]
 *
 * Builds the dm-verity hash tree of DATA (a file whose size is a multiple
 * of 4096) into HASH, with veritysetup's format (version 1, sha256, 4096-
 * byte blocks, superblock at offset 0), and prints the root hash and the
 * salt.  `veritysetup verify DATA HASH ROOT_HASH` checks the result.
 * docs/libdmt.md, "A dm-verity hash tree", walks through it.
 *
 * Build: cc -o verity_tree verity_tree.c $(pkg-config --cflags --libs libdmt)
 */
#include <dmt/verity.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void print_hex(const char *label, const uint8_t *b, size_t n)
{
	printf("%s ", label);
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
}

/* Two hex digits per byte; -EINVAL for anything else. */
static int parse_hex(const char *s, uint8_t *out, size_t max, size_t *n)
{
	size_t len = strlen(s);

	if (len % 2 || len / 2 > max)
		return -EINVAL;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	*n = len / 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct dmt_verity_params p;
	struct dmt_verity_result res = {0};
	struct dmt_reason r = {0};
	char msg[256];
	struct dmt_file *data = NULL, *hash = NULL;
	int err;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s DATA HASH [SALT_HEX]\n", argv[0]);
		return 2;
	}
	/* veritysetup's defaults; then only what differs */
	dmt_verity_params_init(&p);
	if (argc == 4 &&
	    parse_hex(argv[3], p.salt, sizeof(p.salt), &p.salt_size)) {
		fprintf(stderr, "%s: bad salt\n", argv[3]);
		return 2;
	}
	err = dmt_verity_check_params(&p, &r);
	if (err) {
		dmt_reason_format(&r, msg, sizeof(msg));
		fprintf(stderr, "bad parameter (%s): %s\n",
			dmt_reason_code_name(r.code), msg);
		return 1;
	}

	/* the caller opens the files: the library never picks paths */
	err = dmt_file_open(argv[1], DMT_OPEN_READ, &data);
	if (!err)
		err = dmt_file_open(argv[2], DMT_OPEN_RW | DMT_OPEN_CREATE,
				    &hash);
	if (!err)
		err = dmt_verity_build(&p, data, hash, &res, &r);
	if (!err)
		err = dmt_file_sync(hash);
	if (err && r.code) {
		dmt_reason_format(&r, msg, sizeof(msg));
		fprintf(stderr, "verity_tree: %s\n", msg);
	} else if (err) {
		fprintf(stderr, "%s: %s\n",
			res.error_path ? res.error_path : "verity_tree",
			dmt_strerror(err));
	} else {
		print_hex("root_hash", res.root_hash, res.root_hash_size);
		print_hex("salt", p.salt, p.salt_size);
		printf("data_blocks %llu\n",
		       (unsigned long long)res.geo.data_blocks);
	}
	dmt_file_close(hash);
	dmt_file_close(data);
	return err ? 1 : 0;
}
