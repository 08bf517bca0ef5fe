// SPDX-License-Identifier: MIT
/*
 * Memory for secrets (volume keys, passphrase-derived keys, AF material):
 * whole pages of their own, locked so they never reach swap (where the
 * RLIMIT_MEMLOCK allows it: a failing mlock is not an error), left out of
 * core dumps, and wiped before they are unmapped.
 */
#include <dmt/crypt.h>
#include "lib/crypt/crypt_priv.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* The mapping's length sits in front of the caller's bytes. */
struct secure_head {
	size_t map_len;
	uint8_t pad[64 - sizeof(size_t)];
};

void *dmt_secure_alloc(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_len;
	struct secure_head *h;

	if (len > SIZE_MAX - sizeof(*h) - page)
		return NULL;
	map_len = (len + sizeof(*h) + page - 1) / page * page;
	h = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	(void)mlock(h, map_len);
	(void)madvise(h, map_len, MADV_DONTDUMP);
	h->map_len = map_len;
	return h + 1;
}

void dmt_secure_free(void *p)
{
	struct secure_head *h;
	size_t map_len;

	if (!p)
		return;
	h = (struct secure_head *)p - 1;
	map_len = h->map_len;
	OPENSSL_cleanse(h, map_len);
	(void)munlock(h, map_len);
	munmap(h, map_len);
}

void dmt_secure_wipe(void *p, size_t len)
{
	if (p && len)
		OPENSSL_cleanse(p, len);
}

int dmt_random_bytes(void *buf, size_t len)
{
	uint8_t *b = buf;

	while (len) {
		/* getrandom returns at most 32 MiB - 1 per call */
		ssize_t got = getrandom(b, len > (1u << 24) ? (1u << 24) : len,
					0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += got;
		len -= (size_t)got;
	}
	return 0;
}
