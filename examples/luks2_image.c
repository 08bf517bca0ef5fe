/* SPDX-License-Identifier: MIT */
/*
 * luks2_image IMAGE [pbkdf2] < PASSPHRASE_FILE
 *
 * Writes the header area of a new LUKS2 image (aes-xts-plain64, a 512-bit
 * volume key from getrandom, 16 MiB data offset, one keyslot) to IMAGE,
 * as `cryptsetup luksFormat` lays it out, for the passphrase read from
 * standard input (all of it, as cryptsetup's --key-file=- reads it: never
 * put a passphrase on a command line).  The keyslot's key derivation is
 * argon2id with small fixed costs so that the example runs quickly (a
 * real image benchmarks them: dmt_luks2_pbkdf_benchmark()); "pbkdf2"
 * picks PBKDF2-SHA256 instead (a libdmt built without libargon2).
 * `cryptsetup luksDump IMAGE` shows it, `cryptsetup open --test-passphrase
 * --key-file=- IMAGE` accepts the passphrase.
 * docs/libdmt.md, "A LUKS2 image", walks through it.
 *
 * Build: cc -o luks2_image luks2_image.c $(pkg-config --cflags --libs libdmt)
 */
#include <dmt/crypt.h>
#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PASS_MAX 512

/* The whole of standard input (at most PASS_MAX bytes). */
static ssize_t read_passphrase(char *buf)
{
	size_t n = 0;

	while (n < PASS_MAX) {
		ssize_t got = read(STDIN_FILENO, buf + n, PASS_MAX - n);

		if (got < 0)
			return -1;
		if (!got)
			return (ssize_t)n;
		n += (size_t)got;
	}
	return -1; /* too long */
}

int main(int argc, char **argv)
{
	struct dmt_luks2_params p;
	struct dmt_luks2_keyslot_params kp;
	struct dmt_reason why = {0};
	struct dmt_luks2 *h = NULL;
	struct dmt_file *image = NULL;
	char *pass;
	ssize_t len;
	int err, slot = -1;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "pbkdf2"))) {
		fprintf(stderr, "usage: %s IMAGE [pbkdf2] < PASSPHRASE_FILE\n",
			argv[0]);
		return 2;
	}
	/* params structs: _init() first (defaults, reserved words zero) */
	dmt_luks2_params_init(&p);
	p.cipher = "aes-xts-plain64";
	p.volume_key_size = 64;
	dmt_luks2_keyslot_params_init(&kp); /* keyslot -1: the first free */
	kp.pbkdf.type = "argon2id";
	kp.pbkdf.iterations = 4;
	kp.pbkdf.memory_kb = 65536;
	kp.pbkdf.parallel = 1;
	if (argc == 3) {
		dmt_luks2_pbkdf_init(&kp.pbkdf);
		kp.pbkdf.type = "pbkdf2";
		kp.pbkdf.hash = "sha256";
		kp.pbkdf.iterations = 100000;
	}
	/* secrets in locked memory, wiped when freed */
	pass = dmt_secure_alloc(PASS_MAX);
	if (!pass) {
		fprintf(stderr, "luks2_image: out of memory\n");
		return 1;
	}
	len = read_passphrase(pass);
	if (len <= 0) {
		fprintf(stderr,
			"luks2_image: no passphrase on standard input\n");
		dmt_secure_free(pass);
		return 2;
	}

	err = dmt_luks2_create(&p, &h, &why);
	if (!err) {
		slot = dmt_luks2_add_keyslot(h, &kp, pass, (size_t)len, &why);
		err = slot < 0 ? slot : 0;
	}
	if (!err)
		err = dmt_file_open(argv[1], DMT_OPEN_NEW_TMP | DMT_OPEN_LOCK,
				    &image);
	if (!err)
		err = dmt_luks2_write(h, image, &why);
	/* synced, then renamed into place */
	if (!err)
		err = dmt_file_sync(image);
	if (!err)
		err = dmt_file_commit(image);
	if (!err)
		printf("uuid %s\nkeyslot %d\nheader_bytes %llu\n",
		       dmt_luks2_uuid(h), slot,
		       (unsigned long long)dmt_luks2_header_size(h));
	else
		fprintf(stderr, "luks2_image: %s%s%s\n", dmt_strerror(err),
			why.field ? ": " : "", why.field ? why.field : "");
	dmt_file_close(image);
	dmt_luks2_free(h); /* wipes the volume key */
	dmt_secure_free(pass);
	return err ? 1 : 0;
}
