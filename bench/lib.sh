# SPDX-License-Identifier: MIT
# Helpers the bench scripts share (sourced: . "$(dirname "$0")/lib.sh").
# A script sets bench_res to the directory of its result files (one line
# per timed run, whitespace-separated columns: wall time first) and may
# set verdict_width (the label column; default 44).

# median NAME COLUMN: median of that column of $bench_res/NAME
median() {
	sort -n -k"$2" "${bench_res:?}/$1" | awk -v c="$2" '{ v[NR] = $c }
		END { if (NR % 2) print v[(NR + 1) / 2];
		      else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B [COLUMN]: median of A / median of B (column 1: wall time)
ratio() {
	awk -v a="$(median "$1" "${3:-1}")" -v b="$(median "$2" "${3:-1}")" \
		'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

# verdict VALUE OP TARGET LABEL: a line saying whether VALUE OP TARGET
# holds (OP is >= or <=); a miss sets status=1
verdict() {
	if awk -v v="$1" -v t="$3" -v op="$2" \
		'BEGIN { exit !(op == ">=" ? v >= t : v <= t) }'; then
		printf "  %-${verdict_width:-44}s %5s (target %s %s) ok\n" \
			"$4" "$1" "$2" "$3"
	else
		printf "  %-${verdict_width:-44}s %5s (target %s %s) MISSED\n" \
			"$4" "$1" "$2" "$3"
		status=1
	fi
}
