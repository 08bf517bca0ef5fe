// SPDX-License-Identifier: MIT
/*
 * check: every tag of an authenticated LUKS2 image (--integrity) verified
 * with the key; the failing sectors named as the kernel names them
 * (auth.c has what check and decrypt share).
 */
#include <errno.h>
#include <inttypes.h>

#include <dmt/crypt_auth.h>

#include "tools/crypt-tool/ct.h"

int ct_cmd_check(struct cli *c)
{
	struct ct *ct = ct_of(c);
	struct dmt_auth_image_params im;
	struct dmt_auth_result r;
	struct dmt_reason why = {0};
	int err;

	err = dmt_file_open(ct->image, DMT_OPEN_READ | DMT_OPEN_LOCK,
			    &ct->image_file);
	if (err) {
		tool_err_errno(ct->image, "cannot read the image", err);
		return err;
	}
	err = ct_luks2_unlock(c);
	if (err)
		return err;
	if (!ct_auth_header(c)) {
		tool_err("%s: the LUKS2 header has no integrity segment (nothing to check)",
			 ct->image);
		return -EMEDIUMTYPE;
	}
	ct_auth_image(c, &im, ct->image, "verified");
	err = dmt_auth_check(&im, &r, &why);
	tool_progress_finish(&ct->progress, !err || err == -EBADMSG);
	if (err == -EINTR)
		return err;
	if (err && err != -EBADMSG) {
		ct_print_why(c, &why, err, ct->image, "check failed");
		return err;
	}
	ct_auth_report_bad(c, &r, "");
	if (c->json)
		ct_auth_result_json(c, &r, NULL);
	else if (!err)
		tool_info("%s: all %" PRIu64 " sectors authenticated", ct->image,
			  r.sectors);
	return err;
}
