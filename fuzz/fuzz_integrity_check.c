// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: checking and recalculating small dm-integrity images
 * (superblock, geometry, journal commit ids and MACs, every tag).
 * Input: one byte (bits 0-5: the algorithm, 6: allow discards, 7: journal
 * MAC), then the image, kept in a memfd.  Checks, beyond "no crash": after
 * a successful recalculate, a check finds no wrong tag.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dmt/integrity.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const algs[] = { "crc32c", "crc32", "sha256",
				    "xxhash64", "sha1", "hmac(sha256)" };
static const uint8_t key[32] = "fuzzing key for hmac(sha256)...";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_file *meta = NULL;
	char path[64];
	int fd, err;

	if (size < 2 || size > (1u << 20))
		return 0;
	fd = memfd_create("image", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	memset(&o, 0, sizeof(o));
	if (dmt_file_open(path, DMT_OPEN_RW, &meta))
		abort();
	o.meta = meta;
	o.alg = algs[(data[0] & 0x3f) % (sizeof(algs) / sizeof(algs[0]))];
	if ((data[0] & 0x3f) % (sizeof(algs) / sizeof(algs[0])) == 5) {
		o.key = key;
		o.key_size = sizeof(key);
	}
	if (data[0] & 0x80) {
		o.journal_mac.alg = "hmac(sha256)";
		o.journal_mac.key = key;
		o.journal_mac.key_size = sizeof(key);
	}
	o.allow_discards = data[0] & 0x40;
	o.threads = 1;
	err = dmt_integrity_check(&o, &r, &why);
	if (err == -EBADMSG && !r.mismatches && !r.journal.bad_commit_ids &&
	    !r.journal.bad_macs && !why.code)
		abort();	/* a failure must say what failed */

	err = dmt_integrity_recalculate(&o, &r, &why);
	if (!err) {
		err = dmt_integrity_check(&o, &r, &why);
		if (r.mismatches)
			abort();	/* recalculate left wrong tags */
	}
	dmt_file_close(meta);
	close(fd);
	return 0;
}
