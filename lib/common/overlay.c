// SPDX-License-Identifier: MIT
/*
 * The corrected-block overlay (lib/common/overlay.h): an open-addressing
 * hash of block numbers to slots; slots below the memory budget live in
 * chunks of memory, the rest in an unlinked temporary file.
 */
#include "lib/common/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMPTY UINT64_MAX
#define NO_DATA UINT64_MAX
/* Memory slots are allocated this many at a time (never one per block). */
#define CHUNK_SLOTS 64u

struct entry {
	uint64_t block;		/* EMPTY: free */
	uint64_t slot;		/* NO_DATA: number only */
};

struct dmt_overlay {
	uint32_t bs;
	struct entry *tab;
	size_t cap, count;
	uint64_t slots;		/* slots used */
	uint64_t mem_slots;	/* slots that fit the memory budget */
	uint8_t **chunks;	/* mem_slots / CHUNK_SLOTS of them */
	int fd;			/* spill file, -1 until needed */
	bool spill_failed;
	uint64_t *sorted;	/* blocks with contents, after seal */
	size_t nsorted;
};

static size_t hash_of(uint64_t block, size_t cap)
{
	return (size_t)(block * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

int dmt_overlay_new(uint32_t block_size, size_t mem_budget,
		    struct dmt_overlay **out)
{
	struct dmt_overlay *o;

	*out = NULL;
	if (!block_size)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->bs = block_size;
	o->fd = -1;
	o->mem_slots = mem_budget / block_size / CHUNK_SLOTS * CHUNK_SLOTS;
	o->chunks = calloc(o->mem_slots / CHUNK_SLOTS + 1, sizeof(*o->chunks));
	if (!o->chunks) {
		free(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

void dmt_overlay_free(struct dmt_overlay *o)
{
	if (!o)
		return;
	for (uint64_t i = 0; i < o->mem_slots / CHUNK_SLOTS; i++)
		free(o->chunks[i]);
	free(o->chunks);
	free(o->tab);
	free(o->sorted);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

static struct entry *find(const struct dmt_overlay *o, uint64_t block)
{
	size_t k;

	if (!o->cap)
		return NULL;
	for (k = hash_of(block, o->cap);; k = (k + 1) & (o->cap - 1)) {
		if (o->tab[k].block == block)
			return &o->tab[k];
		if (o->tab[k].block == EMPTY)
			return NULL;
	}
}

static int grow(struct dmt_overlay *o)
{
	size_t cap = o->cap ? 2 * o->cap : 64, k, h;
	struct entry *n = malloc(cap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (k = 0; k < cap; k++)
		n[k].block = EMPTY;
	for (k = 0; k < o->cap; k++) {
		if (o->tab[k].block == EMPTY)
			continue;
		h = hash_of(o->tab[k].block, cap);
		while (n[h].block != EMPTY)
			h = (h + 1) & (cap - 1);
		n[h] = o->tab[k];
	}
	free(o->tab);
	o->tab = n;
	o->cap = cap;
	return 0;
}

/* An unlinked file in $TMPDIR (else /var/tmp): never all in memory. */
static int spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/var/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(tmpl, sizeof(tmpl), "%s/dmt-overlay.XXXXXX", dir) >=
	    (int)sizeof(tmpl))
		return -ENAMETOOLONG;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	return fd;
}

static int spill_io(int fd, uint8_t *buf, size_t len, uint64_t off,
		    bool write)
{
	ssize_t n;

	while (len) {
		n = write ? pwrite(fd, buf, len, (off_t)off)
			  : pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Stores contents in slot (memory or file). */
static int slot_write(struct dmt_overlay *o, uint64_t slot,
		      const uint8_t *data)
{
	uint8_t **c;
	int err;

	if (slot < o->mem_slots) {
		c = &o->chunks[slot / CHUNK_SLOTS];
		if (!*c) {
			*c = malloc((size_t)CHUNK_SLOTS * o->bs);
			if (!*c)
				return -ENOMEM;
		}
		memcpy(*c + (slot % CHUNK_SLOTS) * o->bs, data, o->bs);
		return 0;
	}
	if (o->fd < 0) {
		o->fd = spill_open();
		if (o->fd < 0) {
			err = o->fd;
			goto fail;
		}
	}
	err = spill_io(o->fd, (uint8_t *)data, o->bs,
		       (slot - o->mem_slots) * o->bs, true);
	if (!err)
		return 0;
fail:
	o->spill_failed = true;
	return err;
}

int dmt_overlay_put(struct dmt_overlay *o, uint64_t block,
		    const uint8_t *data)
{
	struct entry *e = find(o, block);
	size_t k;
	int err;

	if (!e) {
		if ((o->count + 1) * 2 > o->cap) {
			err = grow(o);
			if (err)
				return err;
		}
		k = hash_of(block, o->cap);
		while (o->tab[k].block != EMPTY)
			k = (k + 1) & (o->cap - 1);
		e = &o->tab[k];
		e->block = block;
		e->slot = NO_DATA;
		o->count++;
	}
	if (!data)
		return 0;
	if (e->slot == NO_DATA)
		e->slot = o->slots++;
	return slot_write(o, e->slot, data);
}

bool dmt_overlay_has(const struct dmt_overlay *o, uint64_t block)
{
	return find(o, block) != NULL;
}

int dmt_overlay_get(const struct dmt_overlay *o, uint64_t block,
		    uint8_t *buf)
{
	const struct entry *e = find(o, block);
	int err;

	if (!e || e->slot == NO_DATA)
		return 0;
	if (e->slot < o->mem_slots) {
		memcpy(buf, o->chunks[e->slot / CHUNK_SLOTS] +
		       (e->slot % CHUNK_SLOTS) * o->bs, o->bs);
		return 1;
	}
	err = spill_io(o->fd, buf, o->bs, (e->slot - o->mem_slots) * o->bs,
		       false);
	return err ? err : 1;
}

size_t dmt_overlay_count(const struct dmt_overlay *o)
{
	return o->count;
}

bool dmt_overlay_spill_failed(const struct dmt_overlay *o)
{
	return o->spill_failed;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int dmt_overlay_seal(struct dmt_overlay *o)
{
	size_t k, n = 0;

	free(o->sorted);
	o->sorted = malloc((o->count ? o->count : 1) * sizeof(*o->sorted));
	if (!o->sorted)
		return -ENOMEM;
	for (k = 0; k < o->cap; k++)
		if (o->tab[k].block != EMPTY && o->tab[k].slot != NO_DATA)
			o->sorted[n++] = o->tab[k].block;
	if (n)
		qsort(o->sorted, n, sizeof(*o->sorted), cmp_u64);
	o->nsorted = n;
	return 0;
}

uint64_t dmt_overlay_next(const struct dmt_overlay *o, uint64_t from)
{
	size_t lo = 0, hi = o->nsorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->sorted[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nsorted ? o->sorted[lo] : UINT64_MAX;
}
