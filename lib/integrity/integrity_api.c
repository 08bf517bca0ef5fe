// SPDX-License-Identifier: MIT
/*
 * The public dm-integrity operations: each runs its lib/integrity
 * operation on a result with the reason beside it (struct
 * dmt_integrity_run), then hands out the result and, when the caller asked
 * for it, the reason.  The params' reserved words are checked first.
 */
#include "lib/integrity/integrity_internal.h"

#include <string.h>

void dmt_integrity_layout_init(struct dmt_integrity_layout *l)
{
	*l = (struct dmt_integrity_layout){ 0 };
}

void dmt_integrity_params_init(struct dmt_integrity_params *p)
{
	*p = (struct dmt_integrity_params){ 0 };
}

enum api_op { API_PLAN, API_WRITE, API_FORMAT, API_CHECK, API_RECALC };

static int api_run(const struct dmt_integrity_params *p,
		   struct dmt_integrity_result *res, struct dmt_reason *r,
		   enum api_op op)
{
	/* write goes on from what plan put in res */
	struct dmt_integrity_run run = { .res = *res };
	int err = dmt_integrity_check_reserved(p, &run.reason);

	if (!err) {
		switch (op) {
		case API_PLAN:
			err = dmt_integrity_run_plan(p, &run.res);
			break;
		case API_WRITE:
			err = dmt_integrity_run_write(p, &run.res);
			break;
		case API_FORMAT:
			err = dmt_integrity_run_plan(p, &run.res);
			if (!err)
				err = dmt_integrity_run_write(p, &run.res);
			break;
		case API_CHECK:
			err = dmt_integrity_run_check(p, &run.res);
			break;
		case API_RECALC:
			err = dmt_integrity_run_recalculate(p, &run.res);
			break;
		}
	}
	*res = run.res;
	if (r)
		*r = run.reason;
	return err;
}

int dmt_integrity_format_plan(const struct dmt_integrity_params *p,
			      struct dmt_integrity_result *res,
			      struct dmt_reason *r)
{
	return api_run(p, res, r, API_PLAN);
}

int dmt_integrity_format_write(const struct dmt_integrity_params *p,
			       struct dmt_integrity_result *res,
			       struct dmt_reason *r)
{
	return api_run(p, res, r, API_WRITE);
}

int dmt_integrity_format(const struct dmt_integrity_params *p,
			 struct dmt_integrity_result *res,
			 struct dmt_reason *r)
{
	return api_run(p, res, r, API_FORMAT);
}

int dmt_integrity_check(const struct dmt_integrity_params *p,
			struct dmt_integrity_result *res, struct dmt_reason *r)
{
	return api_run(p, res, r, API_CHECK);
}

int dmt_integrity_recalculate(const struct dmt_integrity_params *p,
			      struct dmt_integrity_result *res,
			      struct dmt_reason *r)
{
	return api_run(p, res, r, API_RECALC);
}
