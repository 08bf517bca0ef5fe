// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the LUKS2 header reader (both binary headers, their
 * checksums, the secondary probed at every legal offset) and the JSON
 * metadata parser and checks (dmt_luks2_load), then every accessor a
 * front end uses on what it accepted.  Input: the start of a header
 * area; the file is made 16 MiB long (sparse) so keyslot areas the JSON
 * names can lie inside it.  No passphrase is tried: a fuzzed KDF cost
 * would only measure Argon2.  Checks, beyond "no crash": an accepted
 * header has a segment inside limits, keyslot areas inside the keyslots
 * area, and JSON that parses again.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(struct dmt_luks2 *h)
{
	struct dmt_luks2_segment seg;
	struct dmt_luks2_keyslot_info ki;
	int slots[DMT_LUKS2_KEYSLOTS_MAX];
	uint64_t hdr = dmt_luks2_header_size(h);
	int n = dmt_luks2_keyslots(h, slots);
	json_object *j;

	if (dmt_luks2_get_segment(h, &seg) == 0 &&
	    (seg.sector_size < 512 || seg.sector_size > 4096 || !seg.cipher))
		abort();
	if (n < 0 || n > DMT_LUKS2_KEYSLOTS_MAX)
		abort();
	for (int i = 0; i < n; i++) {
		if (dmt_luks2_keyslot_info(h, slots[i], &ki))
			continue;
		if (ki.area_offset < 2 * dmt_luks2_metadata_size(h) ||
		    ki.area_offset + ki.area_size > hdr)
			abort();
	}
	if (strlen(dmt_luks2_uuid(h)) > DMT_LUKS2_UUID_SIZE ||
	    strlen(dmt_luks2_label(h)) > DMT_LUKS2_LABEL_MAX ||
	    strlen(dmt_luks2_subsystem(h)) > DMT_LUKS2_LABEL_MAX)
		abort();
	j = json_tokener_parse(dmt_luks2_json(h));
	if (!j)
		abort();
	json_object_put(j);
	(void)dmt_luks2_seqid(h);
	(void)dmt_luks2_loaded_copy(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("luks2", MFD_CLOEXEC);
	struct dmt_reason r = { 0 };
	struct dmt_luks2 *h = NULL;
	struct dmt_file *f = NULL;
	char path[64];

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size ||
	    ftruncate(fd, size > (16u << 20) ? (off_t)size : 16 << 20)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (dmt_file_open(path, DMT_OPEN_READ, &f) == 0) {
		if (dmt_luks2_load(f, &h, &r) == 0)
			check_accepted(h);
		dmt_luks2_free(h);
		dmt_file_close(f);
	}
	close(fd);
	return 0;
}
