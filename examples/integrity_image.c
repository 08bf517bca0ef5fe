/* SPDX-License-Identifier: MIT */
/*
 * integrity_image IMAGE SIZE_MIB
 *
 * Creates IMAGE, a new dm-integrity image of SIZE_MIB MiB as
 * `integritysetup format --integrity crc32c` leaves it (512-byte sectors,
 * 4-byte tags, a journal, padding and HMAC fixed), with every tag
 * precomputed (no kernel wipe needed), and prints the superblock.
 * `integritysetup dump IMAGE` reads it back.  The image is written under
 * a temporary name and appears only when it is complete.
 * docs/libdmt.md, "A dm-integrity image", walks through it.
 *
 * Build: cc -o integrity_image integrity_image.c \
 *		$(pkg-config --cflags --libs libdmt)
 */
#include <dmt/integrity.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct dmt_integrity_params o;
	struct dmt_integrity_result r = {0};
	struct dmt_reason why = {0};
	struct dmt_file *image = NULL;
	char *end;
	unsigned long mib;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IMAGE SIZE_MIB\n", argv[0]);
		return 2;
	}
	mib = strtoul(argv[2], &end, 10);
	if (*end || !mib) {
		fprintf(stderr, "%s: bad size\n", argv[2]);
		return 2;
	}
	/* integritysetup format's defaults, crc32c tags */
	dmt_integrity_params_init(&o);
	o.alg = "crc32c";
	o.layout.sector_size = 512;
	o.layout.fix_padding = true;
	o.layout.fix_hmac = true;
	o.device_size = (uint64_t)mib << 20;
	o.threads = 0; /* inline; dmt_default_threads() for all */

	/* algorithms and keys first, before a file exists */
	err = dmt_integrity_params_check(&o, &why);
	if (err)
		goto out;

	/* a new file under a temporary name, renamed by format on success */
	err = dmt_file_open(argv[1], DMT_OPEN_NEW_TMP | DMT_OPEN_LOCK, &image);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[1], dmt_strerror(err));
		return 1;
	}
	o.meta = image;
	o.created = true;
	err = dmt_integrity_format(&o, &r, &why);
	dmt_file_close(image); /* unlinks the temporary file on failure */
out:
	if (err) {
		fprintf(stderr, "integrity_image: %s", dmt_strerror(err));
		if (why.field)
			fprintf(stderr, " (%s)", why.field);
		fprintf(stderr, "\n");
		return 1;
	}
	printf("tag_size %u\n", r.sb.tag_size);
	printf("sector_size %u\n", 512u << r.sb.log2_sectors_per_block);
	printf("journal_sections %u\n", r.sb.journal_sections);
	printf("provided_data_sectors %llu\n",
	       (unsigned long long)r.sb.provided_data_sectors);
	printf("device_bytes %llu\n", (unsigned long long)r.device_bytes);
	return 0;
}
