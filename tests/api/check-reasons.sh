#!/bin/sh
# SPDX-License-Identifier: MIT
# Every reason code of the public headers has a name: extracts each
# DMT_REASON_* enumerator of include/dmt/*.h (the *_FIRST range markers
# excepted), builds a program that asks dmt_reason_code_name() for each
# and dmt_reason_format() for a sentence, and fails when one has no name,
# two codes share a number or a name, or a name is not lowercase.
#
# Usage: check-reasons.sh build OUTDIR LIBDMT.A [LIBS...]  (CC from the env)
#        check-reasons.sh run OUTDIR
# "build" writes and compiles OUTDIR/reasons (make runs it only when the
# headers or the library changed: a second `make check` rebuilds nothing);
# "run" checks.
set -eu
usage="usage: check-reasons.sh build OUTDIR LIBDMT.A [LIBS...] | run OUTDIR"
mode=${1:?$usage}
out=${2:?$usage}
src=$(cd "$(dirname "$0")/../.." && pwd)
codes=$(sed -n 's/^[[:space:]]*\(DMT_REASON_[A-Z0-9_]*\)[[:space:]]*[=,].*/\1/p' \
	"$src"/include/dmt/*.h | grep -v '_FIRST$' | sort -u)
n=$(printf '%s\n' "$codes" | grep -c .)
if [ "$n" -lt 50 ]; then
	echo "check-reasons: only $n codes found in include/dmt" >&2
	exit 1
fi
if [ "$mode" = build ]; then
lib=${3:?$usage}
shift 3
mkdir -p "$out"
{
	echo '#include <stdio.h>'
	echo '#include <dmt/dmt.h>'
	echo 'static const struct { const char *id; int code; } codes[] = {'
	printf '%s\n' "$codes" | sed 's/.*/	{ "&", & },/'
	echo '};'
	cat <<'EOC'
int main(void)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *name = dmt_reason_code_name(codes[i].code);
		struct dmt_reason r = { .code = codes[i].code };
		char buf[256];

		if (!name) {
			printf("%s (%#x): no name\n", codes[i].id,
			       codes[i].code);
			bad = 1;
			continue;
		}
		if (dmt_reason_format(&r, buf, sizeof(buf)) <= 0) {
			printf("%s: no sentence\n", codes[i].id);
			bad = 1;
		}
		printf("0x%03x %s\n", (unsigned int)codes[i].code, name);
	}
	return bad;
}
EOC
} >"$out/reasons.c"
${CC:-cc} -std=gnu11 -Wall -Werror -I"$src/include" -o "$out/reasons" \
	"$out/reasons.c" "$lib" "$@" -pthread
exit 0
fi
[ "$mode" = run ] || { echo "$usage" >&2; exit 1; }
"$out/reasons" >"$out/reasons.txt" || {
	grep -v '^0x' "$out/reasons.txt" >&2
	exit 1
}
fail=0
dup=$(cut -d' ' -f1 "$out/reasons.txt" | sort | uniq -d)
if [ -n "$dup" ]; then
	echo "check-reasons: codes defined twice: $dup" >&2
	fail=1
fi
dup=$(cut -d' ' -f2 "$out/reasons.txt" | sort | uniq -d)
if [ -n "$dup" ]; then
	echo "check-reasons: names used twice: $dup" >&2
	fail=1
fi
if cut -d' ' -f2 "$out/reasons.txt" | grep -v '^[a-z0-9-]*$' >&2; then
	echo "check-reasons: names not lowercase-hyphenated (above)" >&2
	fail=1
fi
[ "$fail" = 0 ] || exit 1
echo "check-reasons: $n reason codes, each with a unique name"
