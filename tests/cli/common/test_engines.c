// SPDX-License-Identifier: MIT
/*
 * --list-engines and --engine in the real tools (suite "engine_cli"):
 * the listing's shape, PRIMITIVE=NAME specs, DMT_ENGINE, the messages for
 * bad specs, and that forcing a backend changes what is reported, never
 * the bytes written or stdout.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define SALT "000102030405060708090a0b0c0d0e0f"
#define UUID "12345678-1234-4234-8234-123456789abc"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static char *p(const char *name)
{
	return th_path(dir, name);
}

struct row {
	char name[32], status[16], prim[16];
	unsigned int lanes;
};

/* Parses --list-engines; returns the number of rows (header checked). */
static size_t parse_list(char *out, struct row *rows, size_t max)
{
	char *line, *save = NULL;
	size_t n = 0;
	bool header = false;

	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct row r;

		if (!header) {
			cr_assert(!strncmp(line, "ENGINE", 6), "header: %s",
				  line);
			cr_assert_not_null(strstr(line, "PRIMITIVE"));
			header = true;
			continue;
		}
		cr_assert_eq(sscanf(line, "%31s %u %15s %15s", r.name, &r.lanes,
				    r.status, r.prim), 4, "row: %s", line);
		cr_assert(!strcmp(r.status, "default") ||
			  !strcmp(r.status, "available") ||
			  !strcmp(r.status, "unavailable"), "row: %s", line);
		cr_assert_lt(n, max);
		rows[n++] = r;
	}
	cr_assert(header);
	return n;
}

Test(engine_cli, list_engines)
{
	static const char *const prims[] = { "sha256", "sha512", "crc32c",
					     "crc32", "xxhash64", "other",
					     "gf256" };
	char *vout = NULL, *iout = NULL;
	struct row rows[64];
	size_t n, i, k;

	cr_assert_eq(th_sh(&vout, NULL, "%s --list-engines",
			   th_tool("verity-tool")), 0);
	cr_assert_eq(th_sh(&iout, NULL, "%s --list-engines",
			   th_tool("integrity-tool")), 0);
	cr_expect_str_eq(vout, iout, "the tools list the same engines");
	n = parse_list(vout, rows, 64);
	for (k = 0; k < sizeof(prims) / sizeof(prims[0]); k++) {
		size_t defaults = 0, cands = 0;

		for (i = 0; i < n; i++) {
			if (strcmp(rows[i].prim, prims[k]))
				continue;
			cands++;
			defaults += !strcmp(rows[i].status, "default");
		}
		cr_expect_geq(cands, 1, "%s: no candidates", prims[k]);
		cr_expect_eq(defaults, 1, "%s: %zu defaults", prims[k],
			     defaults);
	}
	/* table paths to force for the non-SHA-2 primitives */
	for (i = 0, k = 0; i < n; i++)
		k += (!strcmp(rows[i].prim, "gf256") &&
		      !strcmp(rows[i].name, "portable")) ||
		     (!strcmp(rows[i].prim, "crc32c") &&
		      !strcmp(rows[i].name, "crc-table"));
	cr_expect_eq(k, 2, "gf256=portable and crc32c=crc-table listed");
	for (i = 0; i < n; i++) {
		char *err = NULL;
		bool runs = strcmp(rows[i].status, "unavailable");
		int rc;

		/* every row is a valid PRIMITIVE=NAME, runnable or not */
		rc = th_sh(NULL, &err, "%s --engine %s=%s --list-engines",
			   th_tool("integrity-tool"), rows[i].prim,
			   rows[i].name);
		if (runs) {
			cr_expect_eq(rc, 0, "%s=%s: %s", rows[i].prim,
				     rows[i].name, err);
		} else {
			cr_expect_eq(rc, 1, "%s=%s", rows[i].prim,
				     rows[i].name);
			cr_expect_not_null(strstr(err, "cannot run on this"),
					   "%s", err);
		}
		free(err);
	}
	free(vout);
	free(iout);
}

/* Runs a shell command line, expects exit `want` and `msg` on stderr. */
static void expect_rejected(const char *cmd, const char *msg)
{
	char *out = NULL, *err = NULL;
	int rc = th_sh(&out, &err, "%s", cmd);

	cr_expect_eq(rc, 1, "%s: exit %d", cmd, rc);
	cr_expect_not_null(strstr(err, msg), "%s: stderr %s", cmd, err);
	cr_expect_str_eq(out, "", "%s: stdout %s", cmd, out);
	free(out);
	free(err);
}

Test(engine_cli, bad_specs, .init = setup, .fini = teardown)
{
	static const struct {
		const char *spec, *msg;
	} cases[] = {
		{ "nosuch", "--engine: unknown engine 'nosuch'" },
		{ "sha256=nosuch", "--engine: unknown engine 'sha256=nosuch'" },
		{ "crc32c=portable", "unknown engine 'crc32c=portable'" },
		{ "sha256=portable,gf256=sse42",
		  "unknown engine 'gf256=sse42'" },
		{ "sha999=portable", "'sha999=portable' is not NAME or "
				     "PRIMITIVE=NAME with a known primitive" },
		{ "sha256=", "'sha256=' is not NAME or PRIMITIVE=NAME" },
		{ "portable,,table", "'' is not NAME or PRIMITIVE=NAME" },
	};
	char *img = p("i.img"), *data = p("d.img"), *h = p("h.img");
	char cmd[1024];
	size_t i;

	th_write_random_file(data, 1 << 20, 5);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "%s format -q --device-size 1M --engine '%s' '%s'",
			 th_tool("integrity-tool"), cases[i].spec, img);
		expect_rejected(cmd, cases[i].msg);
		snprintf(cmd, sizeof(cmd), "%s build --engine '%s' '%s' '%s'",
			 th_tool("verity-tool"), cases[i].spec, data, h);
		expect_rejected(cmd, cases[i].msg);
		cr_expect_neq(access(img, F_OK), 0, "%s wrote", cases[i].spec);
		cr_expect_neq(access(h, F_OK), 0, "%s wrote", cases[i].spec);
	}
	/* the environment variable: same checks, named in the message */
	snprintf(cmd, sizeof(cmd),
		 "DMT_ENGINE=crc32c=nosuch %s build '%s' '%s'",
		 th_tool("verity-tool"), data, h);
	expect_rejected(cmd, "DMT_ENGINE: unknown engine 'crc32c=nosuch'");
	snprintf(cmd, sizeof(cmd), "DMT_ENGINE=x=y %s build '%s' '%s'",
		 th_tool("verity-tool"), data, h);
	expect_rejected(cmd, "DMT_ENGINE: 'x=y' is not NAME");
	/* --engine wins over DMT_ENGINE */
	cr_expect_eq(th_sh(NULL, NULL, "DMT_ENGINE=nosuch %s build --engine "
			   "portable '%s' '%s'", th_tool("verity-tool"), data,
			   h), 0);
	free(img);
	free(data);
	free(h);
}

/* integrity-tool format --json: the "engine" member and the image. */
static char *format_json(const char *env, const char *engine, const char *alg,
			 const char *img, const char *pay, char sum[65])
{
	char *out = NULL, *err = NULL, *eng;
	json_object *j, *e;
	int rc;

	unlink(img);
	rc = th_sh(&out, &err, "%s %s format -q --json -I %s --salt " SALT
		   " --device-size 8M --data-from '%s' %s%s%s '%s'",
		   env ? env : "", th_tool("integrity-tool"), alg, pay,
		   engine ? "--engine '" : "", engine ? engine : "",
		   engine ? "'" : "", img);
	cr_assert_eq(rc, 0, "%s: %s", engine, err);
	j = json_tokener_parse(out);
	cr_assert_not_null(j, "%s", out);
	cr_assert(json_object_object_get_ex(j, "engine", &e));
	eng = strdup(json_object_get_string(e));
	json_object_put(j);
	th_sha256_file(img, sum);
	free(out);
	free(err);
	return eng;
}

Test(engine_cli, integrity_forced_crc32c, .init = setup, .fini = teardown)
{
	static const char *const specs[] = {
		"crc32c=table", "table", "crc-table",
		"sha256=shani-2x,crc32c=table,gf256=portable",
	};
	char *img = p("i.img"), *pay = p("pay"), ref[65], sum[65];
	char *def, *eng;
	size_t i;

	th_write_random_file(pay, 3 << 20, 6);
	def = format_json(NULL, NULL, "crc32c", img, pay, ref);
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		if (strstr(specs[i], "shani-2x") &&
		    th_sh(NULL, NULL, "%s --engine sha256=shani-2x "
			  "--list-engines >/dev/null 2>&1",
			  th_tool("integrity-tool")))
			continue;	/* not on this CPU */
		eng = format_json(NULL, specs[i], "crc32c", img, pay, sum);
		cr_expect_str_eq(eng, "crc-table", "%s", specs[i]);
		cr_expect_str_eq(sum, ref, "%s: image differs", specs[i]);
		free(eng);
	}
	/* DMT_ENGINE carries the same spec */
	eng = format_json("DMT_ENGINE=crc32c=table", NULL, "crc32c", img, pay,
			  sum);
	cr_expect_str_eq(eng, "crc-table");
	cr_expect_str_eq(sum, ref);
	free(eng);
	/* a spec for another primitive leaves crc32c on its default */
	eng = format_json(NULL, "sha256=portable", "crc32c", img, pay, sum);
	cr_expect_str_eq(eng, def);
	cr_expect_str_eq(sum, ref);
	free(eng);
	/* ... and the strict spec applies to its own primitive */
	eng = format_json(NULL, "sha256=portable", "sha256", img, pay, sum);
	cr_expect_str_eq(eng, "portable");
	free(eng);
	free(def);
	free(img);
	free(pay);
}

/* verity-tool build with FEC: same hash file, FEC file and stdout. */
static void build(const char *engine, char *out_sum, char *fec_sum,
		  char **out, char **err)
{
	char *h = p("v.hash"), *f = p("v.fec"), *data = p("data");
	int rc;

	/* the same paths every time: stdout names them */
	unlink(h);
	unlink(f);
	rc = th_sh(out, err, "%s build -v --salt " SALT " --uuid " UUID
		   " --fec-device '%s' --fec-roots 5 %s%s%s '%s' '%s'",
		   th_tool("verity-tool"), f, engine ? "--engine '" : "",
		   engine ? engine : "", engine ? "'" : "", data, h);
	cr_assert_eq(rc, 0, "%s: %s", engine, *err);
	th_sha256_file(h, out_sum);
	th_sha256_file(f, fec_sum);
	free(h);
	free(f);
	free(data);
}

Test(engine_cli, verity_forced_same_output, .init = setup, .fini = teardown)
{
	static const char *const specs[] = {
		"portable", "sha256=portable,gf256=portable", "gf256=portable",
		"sha256=openssl,crc32c=table", "sha256=auto",
	};
	char *data = p("data"), href[65], fref[65], hs[65], fs[65];
	char *oref = NULL, *eref = NULL, *o, *e;
	size_t i;

	th_write_random_file(data, 6 << 20, 7);
	build(NULL, href, fref, &oref, &eref);
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		o = e = NULL;
		build(specs[i], hs, fs, &o, &e);
		cr_expect_str_eq(hs, href, "%s: hash file differs", specs[i]);
		cr_expect_str_eq(fs, fref, "%s: FEC file differs", specs[i]);
		cr_expect_str_eq(o, oref, "%s: stdout differs", specs[i]);
		if (!strncmp(specs[i], "sha256=portable", 15) ||
		    !strcmp(specs[i], "portable"))
			cr_expect_not_null(strstr(e, "by the portable engine"),
					   "%s: %s", specs[i], e);
		if (!strncmp(specs[i], "sha256=openssl", 14))
			cr_expect_not_null(strstr(e, "by the openssl engine"),
					   "%s: %s", specs[i], e);
		free(o);
		free(e);
	}
	free(oref);
	free(eref);
	free(data);
}
