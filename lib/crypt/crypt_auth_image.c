// SPDX-License-Identifier: MIT
/*
 * Authenticated LUKS2 images (formats.md, authenticated dm-crypt): the
 * LUKS2 header, at its data offset a dm-integrity device that stores only
 * tags (no internal hash, journal without MAC or encryption), and in it
 * the dm-crypt sectors with "auth tag || random IV" as each block's tag.
 * format writes all of it; check and decrypt walk every block of the
 * dm-integrity device, an interleave area at a time, in chunks of at most
 * CHUNK_BYTES of data (bounded memory), the cipher work spread over the
 * engine's threads.
 */
#include <dmt/crypt_auth.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/crypt.h>
#include <dmt/io.h>
#include <dmt/luks2.h>

#include "lib/crypt/crypt_auth_priv.h"

#define CHUNK_BYTES (4u << 20)

struct walk {
	const struct dmt_auth_image *o;
	struct dmt_auth_result *r;
	struct dmt_auth *a;
	uint8_t *buf, *tags, *bad;
	size_t chunk_blocks;
	enum { W_FORMAT, W_CHECK, W_DECRYPT } kind;
};

static int why(struct dmt_auth_result *r, int err, int code,
	       const char *field, uint64_t value)
{
	if (r->reason.code == DMT_REASON_NONE)
		dmt_reason_set(&r->reason, err, code, field, value);
	return err;
}

/* Spec, segment and the layout cryptsetup gives dm-integrity. */
static int header_layout(const struct dmt_auth_image *o,
			 struct dmt_auth_result *r,
			 struct dmt_integrity_layout *l)
{
	struct dmt_luks2_segment seg;
	int ret = dmt_luks2_auth_spec(o->h, &r->spec, &r->reason);

	if (ret)
		return ret;
	if (dmt_luks2_get_segment(o->h, &seg))
		return why(r, -EINVAL, DMT_REASON_AUTH_NO_INTEGRITY,
			   "segments", 0);
	r->data_offset = seg.offset;
	memset(l, 0, sizeof(*l));
	l->sector_size = seg.sector_size;
	l->tag_size = r->spec.tag_size;
	l->journal_sectors = o->journal_sectors;
	l->fix_padding = true;
	return 0;
}

static int open_engine(const struct dmt_auth_image *o,
		       struct dmt_auth_result *r, struct walk *w)
{
	size_t vk_len;
	const uint8_t *vk = dmt_luks2_volume_key(o->h, &vk_len);
	struct dmt_auth_params ap = {
		.spec = &r->spec, .key = vk, .key_size = vk_len,
		.sector_size = r->geom.spb << 9, .threads = o->threads,
		.engine = o->engine,
	};

	if (!vk)
		return why(r, -EINVAL, DMT_REASON_MISSING, "volume_key", 0);
	w->o = o;
	w->r = r;
	w->chunk_blocks = CHUNK_BYTES / ap.sector_size;
	w->buf = malloc(CHUNK_BYTES);
	w->tags = malloc(w->chunk_blocks * r->spec.tag_size);
	w->bad = malloc(w->chunk_blocks);
	if (!w->buf || !w->tags || !w->bad)
		return -ENOMEM;
	return dmt_auth_open(&w->a, &ap, &r->reason);
}

static void close_walk(struct walk *w)
{
	dmt_auth_close(w->a);
	if (w->buf)
		dmt_secure_wipe(w->buf, CHUNK_BYTES);
	free(w->buf);
	free(w->tags);
	free(w->bad);
}

static void note_bad(struct dmt_auth_result *r, uint64_t s512)
{
	if (r->n_first_bad < DMT_AUTH_REPORT_MAX)
		r->first_bad[r->n_first_bad++] = s512;
	r->bad++;
}

/* Format: payload (zeros after it) -> buf, encrypt, write data + tags. */
static int chunk_format(struct walk *w, uint64_t s, size_t n, uint64_t doff,
			uint64_t toff)
{
	const struct dmt_auth_image *o = w->o;
	struct dmt_auth_result *r = w->r;
	size_t bs = r->geom.spb << 9, len = n * bs, have = 0;
	uint64_t pos = s << 9;
	int ret;

	if (pos < r->payload_bytes)
		have = r->payload_bytes - pos < len ?
			       (size_t)(r->payload_bytes - pos) :
			       len;
	if (have && (ret = dmt_pread_full(o->payload, w->buf, have, pos)))
		return why(r, ret, DMT_REASON_IO, "payload", (uint64_t)-ret);
	memset(w->buf + have, 0, len - have);
	ret = dmt_auth_encrypt(w->a, s >> r->geom.log2_spb, n, w->buf, w->buf,
			       w->tags);
	if (ret < 0)
		return ret;
	ret = dmt_pwrite_full(o->data, w->buf, len, doff);
	if (!ret)
		ret = dmt_pwrite_full(o->data, w->tags, n * r->spec.tag_size,
				      toff);
	return ret ? why(r, ret, DMT_REASON_IO, "data", (uint64_t)-ret) : 0;
}

/* Check / decrypt: read data + tags, verify, maybe write plaintext. */
static int chunk_verify(struct walk *w, uint64_t s, size_t n, uint64_t doff,
			uint64_t toff)
{
	const struct dmt_auth_image *o = w->o;
	struct dmt_auth_result *r = w->r;
	size_t bs = r->geom.spb << 9, len = n * bs;
	bool dec = w->kind == W_DECRYPT;
	int ret = dmt_pread_full(o->data, w->buf, len, doff), nbad;

	if (!ret)
		ret = dmt_pread_full(o->data, w->tags, n * r->spec.tag_size,
				     toff);
	if (ret)
		return why(r, ret, DMT_REASON_IO, "data", (uint64_t)-ret);
	nbad = dmt_auth_decrypt(w->a, s >> r->geom.log2_spb, n, w->buf,
				dec ? w->buf : NULL, w->tags, w->bad);
	if (nbad < 0)
		return nbad;
	for (size_t i = 0; nbad && i < n; i++)
		if (w->bad[i])
			note_bad(r, s + (i << r->geom.log2_spb));
	if (dec && nbad && !o->allow_bad)
		return -EBADMSG;
	if (dec && (ret = dmt_pwrite_full(o->output, w->buf, len, s << 9)))
		return why(r, ret, DMT_REASON_IO, "output", (uint64_t)-ret);
	return 0;
}

/* Every block of [0, end) (512-byte units), a chunk at a time. */
static int walk_run(struct walk *w, uint64_t end)
{
	const struct dmt_integrity_geom *g = &w->r->geom;
	uint64_t area = 1ull << g->log2_interleave, base = w->r->data_offset;
	const struct dmt_progress *pr = &w->o->progress;
	int ret = 0;

	for (uint64_t s = 0; !ret && s < end;) {
		uint64_t stop = (s | (area - 1)) + 1;
		size_t n = w->chunk_blocks;

		if (stop > end)
			stop = end;
		if ((stop - s) >> g->log2_spb < n)
			n = (size_t)((stop - s) >> g->log2_spb);
		ret = (w->kind == W_FORMAT ? chunk_format : chunk_verify)(
			w, s, n, base + (dmt_integrity_data_sector(g, s) << 9),
			base + dmt_integrity_tag_offset(g, s));
		s += (uint64_t)n << g->log2_spb;
		w->r->sectors += n;
		if (!ret && pr->fn && pr->fn(pr->ctx, s << 9, end << 9))
			ret = -EINTR;
	}
	return ret;
}

/* ---- format ---- */

int dmt_auth_min_device(const struct dmt_auth_spec *s,
			unsigned int sector_size, uint64_t data_offset,
			uint64_t journal_sectors, uint64_t payload_bytes,
			uint64_t *bytes)
{
	struct dmt_integrity_layout l = {
		.sector_size = sector_size, .tag_size = s->tag_size,
		.journal_sectors = journal_sectors, .fix_padding = true,
	};
	uint64_t need = (payload_bytes + sector_size - 1) / sector_size *
			(sector_size >> 9), dev;
	int ret;

	if (sector_size < 512 || sector_size > 4096 ||
	    (sector_size & (sector_size - 1)))
		return -EINVAL;
	ret = dmt_integrity_min_device(&l, need ? need : sector_size >> 9,
				       &dev);
	if (!ret)
		*bytes = data_offset + dev;
	return ret;
}

static int format_plan(const struct dmt_auth_image *o,
		       struct dmt_auth_result *r)
{
	struct dmt_integrity_layout l;
	uint64_t need, dev;
	int ret = header_layout(o, r, &l);

	if (!ret && o->payload)
		ret = dmt_file_size(o->payload, &r->payload_bytes);
	if (!ret && !o->device_size && !o->device_size_auto)
		ret = dmt_file_size(o->data, &r->device_bytes);
	if (ret)
		return ret;
	need = (r->payload_bytes + l.sector_size - 1) / l.sector_size *
	       (l.sector_size >> 9);
	if (o->device_size_auto) {
		ret = dmt_integrity_min_device(&l, need ? need : l.sector_size >> 9,
					       &dev);
		if (ret)
			return why(r, ret, DMT_REASON_AUTH_TOO_SMALL,
				   "device_size", r->payload_bytes);
		r->device_bytes = r->data_offset + dev;
	} else if (o->device_size) {
		r->device_bytes = o->device_size;
	}
	l.dev_sectors = r->device_bytes > r->data_offset ?
				(r->device_bytes - r->data_offset) >> 9 : 0;
	ret = l.dev_sectors ? dmt_integrity_geom_format(&l, &r->sb, &r->geom) :
			      -ENODATA;
	if ((!ret && r->geom.provided < need) || ret == -ENODATA) {
		if (!dmt_integrity_min_device(&l, need ? need : 8, &dev))
			r->need_bytes = r->data_offset + dev;
		dmt_reason_set(&r->reason, -ENOSPC, DMT_REASON_AUTH_TOO_SMALL,
			       "device_size", r->payload_bytes);
		r->reason.min = r->need_bytes;
		return -ENOSPC;
	}
	r->mapped_bytes = r->geom.provided << 9;
	return ret;
}

static int write_metadata(const struct dmt_auth_image *o,
			  struct dmt_auth_result *r)
{
	const struct dmt_integrity_geom *g = &r->geom;
	size_t sec = (size_t)g->section_sectors << 9;
	uint8_t *buf = calloc(1, sec > 4096 ? sec : 4096);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = dmt_luks2_write(o->h, o->header ? o->header : o->data,
			      &r->reason);
	if (!ret) {
		dmt_integrity_sb_encode(&r->sb, buf);
		ret = dmt_pwrite_full(o->data, buf, 4096, r->data_offset);
	}
	for (uint32_t i = 0; !ret && i < g->journal_sections; i++) {
		ret = dmt_integrity_journal_section(g, &r->sb, NULL, NULL, i,
						    0, buf);
		if (!ret)
			ret = dmt_pwrite_full(
				o->data, buf, sec,
				r->data_offset +
					((DMT_INTEGRITY_SB_SECTORS +
					  (uint64_t)i * g->section_sectors)
					 << 9));
	}
	free(buf);
	return ret;
}

int dmt_auth_format(const struct dmt_auth_image *o, struct dmt_auth_result *r)
{
	struct walk w = { .kind = W_FORMAT };
	uint64_t end;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = format_plan(o, r);
	if (!ret && !dmt_file_is_blockdev(o->data))
		ret = dmt_file_extend(o->data, r->device_bytes);
	if (!ret)
		ret = write_metadata(o, r);
	if (!ret)
		ret = open_engine(o, r, &w);
	if (!ret) {
		/* whole blocks up to the payload's end, or all with wipe */
		uint64_t bs = (uint64_t)r->geom.spb << 9;

		end = (r->payload_bytes + bs - 1) / bs * r->geom.spb;
		ret = walk_run(&w, o->wipe ? r->geom.provided : end);
	}
	close_walk(&w);
	return ret;
}

/* ---- check / decrypt ---- */

static int load_geometry(const struct dmt_auth_image *o,
			 struct dmt_auth_result *r)
{
	struct dmt_integrity_layout l;
	uint8_t sector0[512];
	uint64_t sectors;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = header_layout(o, r, &l);
	if (!ret)
		ret = dmt_file_size(o->data, &r->device_bytes);
	if (!ret)
		ret = dmt_pread_full(o->data, sector0, 512, r->data_offset);
	if (ret)
		return why(r, ret, DMT_REASON_IO, "data", (uint64_t)-ret);
	ret = dmt_integrity_sb_decode(sector0, &r->sb, &r->reason);
	if (ret)
		return ret;
	if (r->sb.tag_size != r->spec.tag_size ||
	    (512u << r->sb.log2_sectors_per_block) != l.sector_size)
		return why(r, -EINVAL, DMT_REASON_AUTH_SB, "sb.tag_size",
			   r->sb.tag_size);
	sectors = (r->device_bytes - r->data_offset) >> 9;
	ret = dmt_integrity_geom_from_sb(&r->sb, false, sectors, sectors, 0,
					 &r->geom, &r->reason);
	r->mapped_bytes = r->geom.provided << 9;
	return ret;
}

static int verify_image(const struct dmt_auth_image *o,
			struct dmt_auth_result *r, bool dec)
{
	struct walk w = { .kind = dec ? W_DECRYPT : W_CHECK };
	int ret = load_geometry(o, r);

	if (!ret) /* newer sectors in the journal: stale data area */
		ret = dmt_auth_journal_check(o->data, r);
	if (!ret)
		ret = open_engine(o, r, &w);
	if (!ret)
		ret = walk_run(&w, r->geom.provided);
	close_walk(&w);
	return ret ? ret : r->bad ? -EBADMSG : 0;
}

int dmt_auth_check(const struct dmt_auth_image *o, struct dmt_auth_result *r)
{
	return verify_image(o, r, false);
}

int dmt_auth_decrypt_image(const struct dmt_auth_image *o,
			   struct dmt_auth_result *r)
{
	return verify_image(o, r, true);
}
