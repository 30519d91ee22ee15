#!/bin/sh
# fuzz.sh runs the fuzz targets given as pkg:FuzzName arguments, each for
# $FUZZTIME, $FUZZJOBS at a time, and prints one line per target with the
# executions, new corpus entries and the result. Each target's full output
# goes to $FUZZLOG/<pkg>_<name>.log; a failing target's crasher is named
# there and kept under the package's testdata/fuzz, as go test does.
#
# Running targets side by side is how a long run fits a working day: with
# FUZZJOBS=2 on two cores each target gets one worker (-parallel=1).
set -u
GO=${GO:-go}
TAGS=${TAGS:-unicorn}
FUZZTIME=${FUZZTIME:-20s}
FUZZJOBS=${FUZZJOBS:-1}
FUZZLOG=${FUZZLOG:-fuzz-logs}
export GO TAGS FUZZTIME FUZZJOBS FUZZLOG
mkdir -p "$FUZZLOG"

par=""
if [ "$FUZZJOBS" -gt 1 ]; then
	cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
	per=$((cpus / FUZZJOBS))
	[ "$per" -lt 1 ] && per=1
	par="-parallel=$per"
fi

one() {
	target=$1
	pkg=${target%%:*}
	fn=${target##*:}
	log="$FUZZLOG/$(echo "$target" | tr '/:' '__').log"
	start=$(date -u +%H:%M:%S)
	if $GO test -tags "$TAGS" -run='^$' -fuzz="^$fn\$" -fuzztime="$FUZZTIME" \
		-fuzzminimizetime=100x $par "./$pkg/" >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
	fi
	last=$(grep 'fuzz: elapsed' "$log" | tail -n 1 | sed 's/.*fuzz: //')
	if [ "$result" = ok ] && [ -z "$last" ]; then
		# go test passes when the pattern names no fuzz target.
		result=FAIL
		echo "no fuzz target $fn in ./$pkg" >>"$log"
	fi
	echo "$result $pkg $fn (from $start) $last"
	if [ "$result" = FAIL ]; then
		tail -n 30 "$log" | sed 's/^/    /'
		return 1
	fi
}

if [ "${1:-}" = "--one" ]; then
	shift
	one "$1"
	exit $?
fi

printf '%s\n' "$@" | xargs -P "$FUZZJOBS" -n 1 "$0" --one
status=$?
[ "$status" -eq 0 ] || echo "fuzz: at least one target failed (logs in $FUZZLOG)"
exit "$status"
