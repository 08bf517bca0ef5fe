// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the LUKS2 JSON metadata, structure-aware.  The input
 * is the text of the JSON area; the harness wraps it in valid binary
 * headers with good checksums, so every mutation reaches the parser and
 * libcryptsetup's rules (luks2_validate.c) instead of dying at the
 * checksum.  An input that starts with '{' is the JSON of both copies;
 * otherwise its first byte chooses a variation and the JSON follows:
 *   bits 0-1  0 both copies, 1 primary only, 2 secondary only (the other
 *             copy holds a valid base), 3 both, the secondary newer
 *   bits 2-3  metadata size 16K, 32K, 64K (3: 16K)
 *   bit 4     the primary's checksum broken (the secondary is probed)
 *   bit 5     the file cut right after the headers
 * An accepted header must dump (dmt_luks2_dump), name a usable data
 * segment or a layout reason, keep its keyslot areas inside the keyslots
 * area, write (what we wrote loads again and dumps the same but for the
 * epoch) — anything else aborts.  No passphrase is tried.
 */
#include <errno.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIN 4096
#define FILE_SIZE (16u << 20)

/* The valid JSON of the other copy (json_size filled in). */
static const char base_json[] =
	"{\"keyslots\":{\"0\":{\"type\":\"luks2\",\"key_size\":64,\"af\":{\"type\":"
	"\"luks1\",\"stripes\":4000,\"hash\":\"sha256\"},\"area\":{\"type\":\"raw\","
	"\"offset\":\"%llu\",\"size\":\"258048\",\"encryption\":\"aes-xts-plain64\","
	"\"key_size\":64},\"kdf\":{\"type\":\"pbkdf2\",\"hash\":\"sha256\","
	"\"iterations\":1000,\"salt\":\"mtyV2R3iG/JyUX/3qvd6e+OutYcuzCkFlw0z0vHsp6E=\""
	"}}},\"tokens\":{},\"segments\":{\"0\":{\"type\":\"crypt\",\"offset\":"
	"\"16777216\",\"size\":\"dynamic\",\"iv_tweak\":\"0\",\"encryption\":"
	"\"aes-xts-plain64\",\"sector_size\":4096}},\"digests\":{\"0\":{\"type\":"
	"\"pbkdf2\",\"keyslots\":[\"0\"],\"segments\":[\"0\"],\"hash\":\"sha256\","
	"\"iterations\":1000,\"salt\":\"q0n6t6HGt5yRKtu3UiOVEqaTwexjHAmlmw4kgMrUv9o=\","
	"\"digest\":\"TMt9LmK7szlM8mXsPcDftsdMiU5SmPN5XOaEoNm+2ds=\"}},\"config\":"
	"{\"json_size\":\"%llu\",\"keyslots_size\":\"%llu\"}}";

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* One copy at hdr + off: binary header, JSON area, sha256. */
static void make_copy(uint8_t *hdr, uint64_t size, bool secondary,
		      uint64_t seqid, const char *json, size_t len, bool bad)
{
	memset(hdr, 0, size);
	memcpy(hdr, secondary ? "SKUL\xba\xbe" : "LUKS\xba\xbe", 6);
	hdr[7] = 2;
	put_be64(hdr + 8, size);
	put_be64(hdr + 16, seqid);
	strcpy((char *)hdr + 24, "fuzz");
	strcpy((char *)hdr + 72, "sha256");
	memset(hdr + 104, secondary ? 0x5a : 0xa5, 64);
	strcpy((char *)hdr + 168, "12345678-1234-4234-8234-123456789012");
	put_be64(hdr + 256, secondary ? size : 0);
	if (len > size - BIN - 1)
		len = size - BIN - 1;
	memcpy(hdr + BIN, json, len);
	if (!bad)
		EVP_Digest(hdr, size, hdr + 448, NULL, EVP_sha256(), NULL);
}

/* The dump without its "Epoch:" line (a write increments it). */
static char *dump_no_epoch(struct dmt_luks2 *h)
{
	char *text = NULL, *e, *nl;

	if (dmt_luks2_dump(h, &text))
		abort();
	e = strstr(text, "Epoch:");
	nl = e ? strchr(e, '\n') : NULL;
	if (!nl)
		abort();
	memmove(e, nl + 1, strlen(nl + 1) + 1);
	return text;
}

static int memfile(struct dmt_file **f, const uint8_t *img, size_t len,
		   size_t size, int *fd)
{
	char path[64];

	*fd = memfd_create("luks2", MFD_CLOEXEC);
	if (*fd < 0)
		return -1;
	if ((len && write(*fd, img, len) != (ssize_t)len) ||
	    ftruncate(*fd, (off_t)size)) {
		close(*fd);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	if (dmt_file_open(path, DMT_OPEN_RW, f)) {
		close(*fd);
		return -1;
	}
	return 0;
}

/* What we accepted and write, we accept again, and it dumps the same. */
static void write_again(struct dmt_luks2 *h)
{
	struct dmt_reason r = { 0 };
	struct dmt_luks2 *h2 = NULL;
	struct dmt_file *f = NULL;
	char *before, *after;
	int fd, ret;

	if (memfile(&f, NULL, 0, FILE_SIZE, &fd))
		return;
	before = dump_no_epoch(h);
	ret = dmt_luks2_write(h, f, &r);
	/* the one legitimate refusal: text exactly as long as the area */
	if (ret && !(ret == -ENOSPC && r.code == DMT_REASON_LUKS2_JSON_SIZE))
		abort();
	if (!ret) {
		if (dmt_luks2_load(f, &h2, &r))
			abort();
		after = dump_no_epoch(h2);
		if (strcmp(before, after))
			abort();
		free(after);
		dmt_luks2_free(h2);
	}
	free(before);
	dmt_file_close(f);
	close(fd);
}

static void check_accepted(struct dmt_luks2 *h)
{
	struct dmt_luks2_segment seg;
	struct dmt_luks2_keyslot_info ki;
	struct dmt_reason r = { 0 };
	int slots[DMT_LUKS2_KEYSLOTS_MAX];
	uint64_t end = dmt_luks2_header_size(h);
	int n = dmt_luks2_keyslots(h, slots);
	char *text = NULL;
	json_object *j;
	int ret;

	ret = dmt_luks2_data_segment(h, &seg, &r);
	if (ret == 0 ? seg.sector_size < 512 || seg.sector_size > 4096 ||
			       !seg.cipher ||
			       (seg.size != DMT_LUKS2_SIZE_DYNAMIC &&
				seg.offset + seg.size < seg.offset) :
		       ret != -ENOTSUP || r.code != DMT_REASON_LUKS2_LAYOUT)
		abort();
	if (n < 0 || n > DMT_LUKS2_KEYSLOTS_MAX)
		abort();
	for (int i = 0; i < n; i++)
		if (!dmt_luks2_keyslot_info(h, slots[i], &ki) &&
		    (ki.area_offset < 2 * dmt_luks2_metadata_size(h) ||
		     ki.area_size > end - ki.area_offset))
			abort();
	if (dmt_luks2_dump(h, &text) || !text || strncmp(text, "LUKS header", 11))
		abort();
	free(text);
	j = json_tokener_parse(dmt_luks2_json(h));
	if (!j)
		abort();
	json_object_put(j);
	write_again(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sizes[4] = { 16384, 32768, 65536, 16384 };
	unsigned int ctl = size && data[0] != '{' ? data[0] : 0;
	const char *json = (const char *)data + (size && data[0] != '{');
	size_t len = size - (size && data[0] != '{');
	uint64_t hs = sizes[(ctl >> 2) & 3];
	struct dmt_reason r = { 0 };
	struct dmt_luks2 *h = NULL;
	char base[2048];
	uint8_t *img = calloc(1, 2 * hs);
	struct dmt_file *f = NULL;
	int fd, n;

	if (!img)
		return 0;
	n = snprintf(base, sizeof(base), base_json, 2 * (unsigned long long)hs,
		     (unsigned long long)(hs - BIN),
		     (unsigned long long)(FILE_SIZE - 2 * hs));
	make_copy(img, hs, false, 1, (ctl & 3) == 2 ? base : json,
		  (ctl & 3) == 2 ? (size_t)n : len, ctl & 16);
	make_copy(img + hs, hs, true, (ctl & 3) == 3 ? 2 : 1,
		  (ctl & 3) == 1 ? base : json, (ctl & 3) == 1 ? (size_t)n : len,
		  false);
	if (!memfile(&f, img, 2 * hs, ctl & 32 ? 2 * hs : FILE_SIZE, &fd)) {
		if (dmt_luks2_load(f, &h, &r) == 0)
			check_accepted(h);
		else if (r.code == DMT_REASON_LUKS2_NO_HEADER && !r.field)
			abort(); /* every refusal names its reason */
		dmt_luks2_free(h);
		dmt_file_close(f);
		close(fd);
	}
	free(img);
	return 0;
}
