// SPDX-License-Identifier: MIT
/*
 * crypt-tool dump: a LUKS2 header as cryptsetup 2.6.1's luksDump prints
 * it (the library renders the text); --json: the metadata as luksDump
 * --dump-json-metadata prints it.  Reads only: a damaged copy is
 * reported, never repaired.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/crypt-tool/ct.h"

static int dump_json(struct cli *c, struct dmt_luks2 *h)
{
	json_object *j = json_tokener_parse(dmt_luks2_json(h));

	if (!j)
		return -ENOMEM;
	/* no newline after it, as cryptsetup */
	printf("%s", json_object_to_json_string_ext(
			     j, JSON_C_TO_STRING_PRETTY |
					JSON_C_TO_STRING_NOSLASHESCAPE));
	c->json_printed = true;
	json_object_put(j);
	return 0;
}

int ct_cmd_dump(struct cli *c)
{
	struct ct *ct = ct_of(c);
	const char *path = cli_given(c, O_HEADER) ? cli_str(c, O_HEADER) :
						    ct->image;
	struct dmt_reason why = { 0 };
	char *text = NULL;
	int err;

	err = dmt_file_open(path, DMT_OPEN_READ, &ct->header_file);
	if (err) {
		tool_err_errno(path, "cannot read", err);
		return err;
	}
	err = dmt_luks2_load(ct->header_file, &ct->luks, &why);
	if (err) {
		ct_print_why(c, &why, err, path, "cannot read the header");
		return err == -ENOMEM ? err : -EMEDIUMTYPE;
	}
	if (dmt_luks2_loaded_copy(ct->luks))
		tool_warn("%s: the primary header is damaged; this is the secondary copy",
			  path);
	if (c->json)
		return dump_json(c, ct->luks);
	err = dmt_luks2_dump(ct->luks, &text);
	if (err)
		return err;
	fputs(text, stdout);
	free(text);
	return 0;
}
