// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: verifying small dm-verity images end to end (the
 * superblock read, geometry, tree walk, padding and root checks).
 * Input: one byte n (data blocks of 512 bytes: n % 32 + 1), 64 bytes of
 * root hash, the data (zero-padded), then the hash file, superblock
 * first.  Both files live in memfds.  Checks, beyond "no crash": the
 * report agrees with the return value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dmt/verity.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd_with(const char *name, const uint8_t *p, size_t len,
		      size_t pad_to, struct dmt_file **f)
{
	char path[64];
	int fd = memfd_create(name, MFD_CLOEXEC), err;

	if (fd < 0)
		abort();
	if (len && write(fd, p, len) != (ssize_t)len)
		abort();
	if (pad_to > len && ftruncate(fd, (off_t)pad_to))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = dmt_file_open(path, DMT_OPEN_READ, f);
	close(fd);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dmt_file *df = NULL, *hf = NULL;
	struct dmt_verity_params p;
	struct dmt_verity_report rep;
	const uint8_t *root;
	size_t dlen, ds;
	uint64_t dsize;
	int err;

	if (size < 1 + 64 + DMT_VERITY_SB_SIZE)
		return 0;
	dlen = (size_t)(data[0] % 32 + 1) * 512;
	root = data + 1;
	data += 65;
	size -= 65;
	if (size < dlen + DMT_VERITY_SB_SIZE)
		return 0;
	if (memfd_with("data", data, dlen, dlen, &df) ||
	    memfd_with("hash", data + dlen, size - dlen, 0, &hf))
		abort();

	dmt_verity_params_init(&p);
	p.threads = 1;
	err = dmt_verity_sb_read(hf, &p, NULL);
	if (err)
		goto out;
	/* what the CLI does first: the data must hold the blocks */
	if (dmt_file_size(df, &dsize) ||
	    p.data_blocks > dsize / p.data_block_size)
		goto out;
	ds = dmt_verity_digest_size(p.hash_name);
	if (!ds)
		abort();	/* the decoder accepted an unusable hash */
	memset(&rep, 0, sizeof(rep));
	err = dmt_verity_verify(&p, df, hf, root, ds, &rep, NULL);
	if (!err && (!rep.root_ok || rep.bad_data_blocks ||
		     rep.bad_hash_blocks || rep.unverifiable_blocks))
		abort();
	if (err == -EBADMSG && rep.root_ok && !rep.bad_data_blocks &&
	    !rep.bad_hash_blocks && !rep.unverifiable_blocks)
		abort();
	if (err && err != -EBADMSG && err != -ENODATA && err != -ENOMEM &&
	    err != -EINVAL && err != -ERANGE)
		abort();
out:
	dmt_file_close(df);
	dmt_file_close(hf);
	return 0;
}
