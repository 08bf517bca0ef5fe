/* SPDX-License-Identifier: MIT */
/*
 * The subset of Criterion's API that this project's tests use, for the
 * in-tree runner (tests/runner/runner.c).  Criterion does not exist for
 * s390x and re-executes itself, which fails under qemu-user; the same test
 * sources compile against this header (-Itests/runner) and run with fork per
 * test (or in-process), ending with "N passed, N failed, N skipped".
 */
#ifndef DMT_RUNNER_CRITERION_H
#define DMT_RUNNER_CRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct criterion_test_extra_data {
	void (*init)(void);
	void (*fini)(void);
	int signal;		/* expected terminating signal */
	int exit_code;		/* expected exit status */
	bool disabled;		/* reported as skipped, not run */
	const char *description;
	double timeout;		/* seconds; 0 = none */
	void *data;
};

struct cri_test {
	const char *suite, *name, *file;
	unsigned int line;
	void (*fn)(void);
	const struct criterion_test_extra_data *data;
	struct cri_test *next;
};

struct cri_suite {
	const char *name;
	const struct criterion_test_extra_data *data;
	struct cri_suite *next;
};

void cri_register_test(struct cri_test *t);
void cri_register_suite(struct cri_suite *s);

#define Test(Suite, Name, ...)						\
	static void cri_fn_##Suite##_##Name(void);			\
	static const struct criterion_test_extra_data			\
		cri_xd_##Suite##_##Name = { __VA_ARGS__ };		\
	static struct cri_test cri_t_##Suite##_##Name = {		\
		#Suite, #Name, __FILE__, __LINE__,			\
		cri_fn_##Suite##_##Name, &cri_xd_##Suite##_##Name, NULL	\
	};								\
	__attribute__((constructor)) static void			\
	cri_reg_##Suite##_##Name(void)					\
	{								\
		cri_register_test(&cri_t_##Suite##_##Name);		\
	}								\
	static void cri_fn_##Suite##_##Name(void)

#define TestSuite(Name, ...)						\
	static const struct criterion_test_extra_data			\
		cri_sxd_##Name = { __VA_ARGS__ };			\
	static struct cri_suite cri_s_##Name = {			\
		#Name, &cri_sxd_##Name, NULL				\
	};								\
	__attribute__((constructor)) static void cri_sreg_##Name(void)	\
	{								\
		cri_register_suite(&cri_s_##Name);			\
	}								\
	struct cri_suite_end_##Name

/* ---- results ---- */

/*
 * Messages are "" fmt: a leading space keeps the format string non-empty
 * (no -Wformat-zero-length) and is skipped when printing.
 */
void cri_fail(int abort, const char *file, unsigned int line,
	      const char *what, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void cri_fail_cmp(int abort, const char *file, unsigned int line,
		  const char *what, const char *va, const char *vb,
		  const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void cri_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)))
	__attribute__((noreturn));

enum criterion_severity {
	CR_LOG_INFO,
	CR_LOG_WARNING,
	CR_LOG_ERROR,
};
void cr_log(enum criterion_severity severity, const char *msg, ...)
	__attribute__((format(printf, 2, 3)));
#define cr_log_info(...) cr_log(CR_LOG_INFO, __VA_ARGS__)
#define cr_log_warn(...) cr_log(CR_LOG_WARNING, __VA_ARGS__)
#define cr_log_error(...) cr_log(CR_LOG_ERROR, __VA_ARGS__)

#define cr_skip_test(...) cri_skip(" " __VA_ARGS__)
#define cr_skip(...) cri_skip(" " __VA_ARGS__)

#define CRI_BOOL(Abort, Cond, Text, ...)				\
	do {								\
		if (!(Cond))						\
			cri_fail(Abort, __FILE__, __LINE__, Text,	\
				 " " __VA_ARGS__);			\
	} while (0)

#define cr_assert(Cond, ...) CRI_BOOL(1, Cond, #Cond, __VA_ARGS__)
#define cr_expect(Cond, ...) CRI_BOOL(0, Cond, #Cond, __VA_ARGS__)
#define cr_assert_not(Cond, ...)					\
	CRI_BOOL(1, !(Cond), "!(" #Cond ")", __VA_ARGS__)
#define cr_expect_not(Cond, ...)					\
	CRI_BOOL(0, !(Cond), "!(" #Cond ")", __VA_ARGS__)
#define cr_assert_fail(...) CRI_BOOL(1, 0, "cr_assert_fail", __VA_ARGS__)
#define cr_expect_fail(...) CRI_BOOL(0, 0, "cr_expect_fail", __VA_ARGS__)
#define cr_assert_null(V, ...)						\
	CRI_BOOL(1, (V) == NULL, #V " == NULL", __VA_ARGS__)
#define cr_expect_null(V, ...)						\
	CRI_BOOL(0, (V) == NULL, #V " == NULL", __VA_ARGS__)
#define cr_assert_not_null(V, ...)					\
	CRI_BOOL(1, (V) != NULL, #V " != NULL", __VA_ARGS__)
#define cr_expect_not_null(V, ...)					\
	CRI_BOOL(0, (V) != NULL, #V " != NULL", __VA_ARGS__)

/* Value formatting for failed comparisons (by kind and size; 'p' is
 * GCC/Clang's pointer type class, 'x' a hex dump of anything else). */
#define CRI_KIND(v) _Generic((v),					\
	_Bool: 'u', char: 'c', signed char: 'i', short: 'i', int: 'i',	\
	long: 'i', long long: 'i', unsigned char: 'u',			\
	unsigned short: 'u', unsigned int: 'u', unsigned long: 'u',	\
	unsigned long long: 'u', float: 'f', double: 'f',		\
	long double: 'f',						\
	default: (__builtin_classify_type(v) == 5 ? 'p' : 'x'))
void cri_format_value(char *buf, size_t size, char kind, const void *v,
		      size_t n);

/* Operands are evaluated once; conversions are those of (A) Op (B). */
#define CRI_CMP(Abort, Op, A, B, ...)					\
	do {								\
		__auto_type cri_a = (A);				\
		__auto_type cri_b = (B);				\
		_Pragma("GCC diagnostic push")				\
		_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")	\
		_Pragma("GCC diagnostic ignored \"-Wtype-limits\"")	\
		int cri_ok = cri_a Op cri_b;				\
		_Pragma("GCC diagnostic pop")				\
		if (!cri_ok) {						\
			char cri_va[96], cri_vb[96];			\
			cri_format_value(cri_va, sizeof(cri_va),	\
					 CRI_KIND(cri_a), &cri_a,	\
					 sizeof(cri_a));		\
			cri_format_value(cri_vb, sizeof(cri_vb),	\
					 CRI_KIND(cri_b), &cri_b,	\
					 sizeof(cri_b));		\
			cri_fail_cmp(Abort, __FILE__, __LINE__,		\
				     #A " " #Op " " #B, cri_va, cri_vb,	\
				     " " __VA_ARGS__);			\
		}							\
	} while (0)

#define cr_assert_eq(A, B, ...) CRI_CMP(1, ==, A, B, __VA_ARGS__)
#define cr_expect_eq(A, B, ...) CRI_CMP(0, ==, A, B, __VA_ARGS__)
#define cr_assert_neq(A, B, ...) CRI_CMP(1, !=, A, B, __VA_ARGS__)
#define cr_expect_neq(A, B, ...) CRI_CMP(0, !=, A, B, __VA_ARGS__)
#define cr_assert_lt(A, B, ...) CRI_CMP(1, <, A, B, __VA_ARGS__)
#define cr_expect_lt(A, B, ...) CRI_CMP(0, <, A, B, __VA_ARGS__)
#define cr_assert_leq(A, B, ...) CRI_CMP(1, <=, A, B, __VA_ARGS__)
#define cr_expect_leq(A, B, ...) CRI_CMP(0, <=, A, B, __VA_ARGS__)
#define cr_assert_gt(A, B, ...) CRI_CMP(1, >, A, B, __VA_ARGS__)
#define cr_expect_gt(A, B, ...) CRI_CMP(0, >, A, B, __VA_ARGS__)
#define cr_assert_geq(A, B, ...) CRI_CMP(1, >=, A, B, __VA_ARGS__)
#define cr_expect_geq(A, B, ...) CRI_CMP(0, >=, A, B, __VA_ARGS__)

#define CRI_FLOAT(Abort, Want, A, B, Eps, ...)				\
	do {								\
		double cri_fa = (A), cri_fb = (B), cri_e = (Eps);	\
		bool cri_in = cri_fa - cri_fb <= cri_e &&		\
			      cri_fb - cri_fa <= cri_e;			\
		if (cri_in != (Want)) {					\
			char cri_va[96], cri_vb[96];			\
			cri_format_value(cri_va, sizeof(cri_va), 'f',	\
					 &cri_fa, sizeof(cri_fa));	\
			cri_format_value(cri_vb, sizeof(cri_vb), 'f',	\
					 &cri_fb, sizeof(cri_fb));	\
			cri_fail_cmp(Abort, __FILE__, __LINE__,		\
				     (Want) ? #A " ~= " #B : #A " !~= " #B, \
				     cri_va, cri_vb, " " __VA_ARGS__);	\
		}							\
	} while (0)
#define cr_assert_float_eq(A, B, E, ...) CRI_FLOAT(1, 1, A, B, E, __VA_ARGS__)
#define cr_expect_float_eq(A, B, E, ...) CRI_FLOAT(0, 1, A, B, E, __VA_ARGS__)
#define cr_assert_float_neq(A, B, E, ...) CRI_FLOAT(1, 0, A, B, E, __VA_ARGS__)
#define cr_expect_float_neq(A, B, E, ...) CRI_FLOAT(0, 0, A, B, E, __VA_ARGS__)

/* Strings: NULL compares below everything, like an empty string less. */
int cri_strcmp(const char *a, const char *b);
#define CRI_STR(Abort, Op, A, B, ...)					\
	do {								\
		const char *cri_sa = (A), *cri_sb = (B);		\
		if (!(cri_strcmp(cri_sa, cri_sb) Op 0))			\
			cri_fail_cmp(Abort, __FILE__, __LINE__,		\
				     #A " " #Op " " #B,			\
				     cri_sa ? cri_sa : "(null)",	\
				     cri_sb ? cri_sb : "(null)",	\
				     " " __VA_ARGS__);			\
	} while (0)
#define cr_assert_str_eq(A, B, ...) CRI_STR(1, ==, A, B, __VA_ARGS__)
#define cr_expect_str_eq(A, B, ...) CRI_STR(0, ==, A, B, __VA_ARGS__)
#define cr_assert_str_neq(A, B, ...) CRI_STR(1, !=, A, B, __VA_ARGS__)
#define cr_expect_str_neq(A, B, ...) CRI_STR(0, !=, A, B, __VA_ARGS__)
#define cr_assert_str_lt(A, B, ...) CRI_STR(1, <, A, B, __VA_ARGS__)
#define cr_expect_str_lt(A, B, ...) CRI_STR(0, <, A, B, __VA_ARGS__)
#define cr_assert_str_leq(A, B, ...) CRI_STR(1, <=, A, B, __VA_ARGS__)
#define cr_expect_str_leq(A, B, ...) CRI_STR(0, <=, A, B, __VA_ARGS__)
#define cr_assert_str_gt(A, B, ...) CRI_STR(1, >, A, B, __VA_ARGS__)
#define cr_expect_str_gt(A, B, ...) CRI_STR(0, >, A, B, __VA_ARGS__)
#define cr_assert_str_geq(A, B, ...) CRI_STR(1, >=, A, B, __VA_ARGS__)
#define cr_expect_str_geq(A, B, ...) CRI_STR(0, >=, A, B, __VA_ARGS__)
#define cr_assert_str_empty(A, ...) CRI_STR(1, ==, A, "", __VA_ARGS__)
#define cr_expect_str_empty(A, ...) CRI_STR(0, ==, A, "", __VA_ARGS__)
#define cr_assert_str_not_empty(A, ...) CRI_STR(1, !=, A, "", __VA_ARGS__)
#define cr_expect_str_not_empty(A, ...) CRI_STR(0, !=, A, "", __VA_ARGS__)

/* Byte arrays: the first difference is shown. */
void cri_arr(int abort, int want_equal, const char *file, unsigned int line,
	     const char *what, const void *a, const void *b, size_t size,
	     const char *fmt, ...) __attribute__((format(printf, 9, 10)));
#define cr_assert_arr_eq(A, B, Size, ...)				\
	cri_arr(1, 1, __FILE__, __LINE__, #A " == " #B, (A), (B), (Size), \
		" " __VA_ARGS__)
#define cr_expect_arr_eq(A, B, Size, ...)				\
	cri_arr(0, 1, __FILE__, __LINE__, #A " == " #B, (A), (B), (Size), \
		" " __VA_ARGS__)
#define cr_assert_arr_neq(A, B, Size, ...)				\
	cri_arr(1, 0, __FILE__, __LINE__, #A " != " #B, (A), (B), (Size), \
		" " __VA_ARGS__)
#define cr_expect_arr_neq(A, B, Size, ...)				\
	cri_arr(0, 0, __FILE__, __LINE__, #A " != " #B, (A), (B), (Size), \
		" " __VA_ARGS__)

#endif /* DMT_RUNNER_CRITERION_H */
