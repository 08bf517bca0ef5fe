// SPDX-License-Identifier: MIT
/*
 * Test-only front end of the authenticated LUKS2 library for the kernel
 * cases (until crypt-tool has --integrity):
 *   authimg format -c CIPHER -i INTEGRITY [-k KEYBYTES] [-s SECTOR]
 *                  -p PASSFILE -d PAYLOAD [-H HEADER] [-S SIZE] [-O DATA_OFFSET]
 *                  [-w] IMAGE
 *   authimg check  -p PASSFILE [-H HEADER] IMAGE
 *   authimg decrypt -p PASSFILE [-H HEADER] [-f] IMAGE OUTPUT
 * check prints "bad <512-byte sector>" per failing sector (all of them,
 * up to the library's report limit) and exits 2 if any, 0 if none.
 * PBKDF2 with 1000 iterations: test images only.
 */
#include <dmt/crypt.h>
#include <dmt/crypt_auth.h>
#include <dmt/io.h>
#include <dmt/luks2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char pass[256];
static size_t pass_len;

static int read_pass(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	pass_len = fread(pass, 1, sizeof(pass), f);
	fclose(f);
	return 0;
}

static int die(const char *what, int err, const struct dmt_reason *r)
{
	fprintf(stderr, "authimg: %s: %s (reason %d field %s value %llu "
			"min %llu)\n",
		what, strerror(-err), r ? r->code : 0,
		r && r->field ? r->field : "-",
		r ? (unsigned long long)r->value : 0ull,
		r ? (unsigned long long)r->min : 0ull);
	return err == -EBADMSG ? 2 : 1;
}

int main(int argc, char **argv)
{
	const char *cipher = NULL, *integ = NULL, *pf = NULL, *payload = NULL;
	const char *hdr = NULL, *cmd = argc > 1 ? argv[1] : "";
	unsigned int ss = 4096;
	size_t kb = 0;
	uint64_t size = 0, doff = 0;
	bool wipe = false, force = false;
	struct dmt_file fh, fd, fp, fo;
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_auth_image im = { 0 };
	struct dmt_auth_result res;
	int c, ret;

	optind = 2;
	while ((c = getopt(argc, argv, "c:i:k:s:p:d:H:S:O:wf")) != -1) {
		switch (c) {
		case 'c': cipher = optarg; break;
		case 'i': integ = optarg; break;
		case 'k': kb = strtoul(optarg, NULL, 0); break;
		case 's': ss = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': pf = optarg; break;
		case 'd': payload = optarg; break;
		case 'H': hdr = optarg; break;
		case 'S': size = strtoull(optarg, NULL, 0); break;
		case 'O': doff = strtoull(optarg, NULL, 0); break;
		case 'w': wipe = true; break;
		case 'f': force = true; break;
		default: return 1;
		}
	}
	if (optind >= argc || !pf || read_pass(pf))
		return 1;
	dmt_file_init(&fh);
	dmt_file_init(&fd);
	dmt_file_init(&fp);
	dmt_file_init(&fo);
	im.data = &fd;
	im.header = hdr ? &fh : NULL;
	if (!strcmp(cmd, "format")) {
		struct dmt_auth_spec s;
		struct dmt_luks2_params lp = { .sector_size = ss,
					       .data_offset = doff,
					       .detached = hdr != NULL };
		struct dmt_luks2_keyslot_params kp = {
			.keyslot = -1,
			.pbkdf = { "pbkdf2", "sha256", 1000, 0, 0 },
		};

		if ((ret = dmt_auth_lookup(cipher, integ, kb, &s, &r)))
			return die("lookup", ret, &r);
		if ((ret = dmt_luks2_create_auth(&h, &lp, &s, &r)))
			return die("create", ret, &r);
		if ((ret = dmt_luks2_add_keyslot(h, &kp, pass, pass_len, &r)) < 0)
			return die("keyslot", ret, &r);
		if (dmt_file_open(&fd, argv[optind], DMT_OPEN_RW | DMT_OPEN_CREATE) ||
		    dmt_file_open(&fp, payload, DMT_OPEN_READ) ||
		    (hdr && dmt_file_open(&fh, hdr, DMT_OPEN_RW | DMT_OPEN_CREATE)))
			return die("open", -errno, NULL);
		im.h = h;
		im.payload = &fp;
		im.wipe = wipe;
		im.device_size = size;
		im.device_size_auto = !size;
		ret = dmt_auth_format(&im, &res);
		if (ret)
			return die("format", ret, &res.reason);
		printf("tag_size %u provided %llu device %llu\n",
		       res.spec.tag_size,
		       (unsigned long long)res.geom.provided,
		       (unsigned long long)res.device_bytes);
		dmt_file_sync(&fd);
		goto out;
	}
	if (dmt_file_open(&fd, argv[optind], DMT_OPEN_READ) ||
	    (hdr && dmt_file_open(&fh, hdr, DMT_OPEN_READ)))
		return die("open", -errno, NULL);
	if ((ret = dmt_luks2_load(&h, hdr ? &fh : &fd, &r)))
		return die("load", ret, &r);
	if ((ret = dmt_luks2_unlock(h, -1, pass, pass_len, &r)) < 0)
		return die("unlock", ret, &r);
	im.h = h;
	if (!strcmp(cmd, "check")) {
		ret = dmt_auth_check(&im, &res);
	} else if (!strcmp(cmd, "decrypt") && optind + 1 < argc) {
		if (dmt_file_open(&fo, argv[optind + 1],
				  DMT_OPEN_RW | DMT_OPEN_CREATE))
			return die("open", -errno, NULL);
		im.output = &fo;
		im.allow_bad = force;
		ret = dmt_auth_decrypt_image(&im, &res);
	} else {
		return 1;
	}
	for (size_t i = 0; i < res.n_first_bad; i++)
		printf("bad %llu\n", (unsigned long long)res.first_bad[i]);
	printf("sectors %llu bad %llu mapped %llu\n",
	       (unsigned long long)res.sectors, (unsigned long long)res.bad,
	       (unsigned long long)res.mapped_bytes);
	if (ret)
		return die(cmd, ret, &res.reason);
out:
	dmt_luks2_free(h);
	dmt_file_close(&fd);
	dmt_file_close(&fh);
	dmt_file_close(&fp);
	dmt_file_close(&fo);
	return 0;
}
