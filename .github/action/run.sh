#!/usr/bin/env bash
# The "Run airlock" step of action.yml (docs/ci.md). It reads its inputs from
# the environment only (AIRLOCK_*; the step's env: block maps the action's
# inputs there), runs one airlock command with its reports in $AIRLOCK_REPORTS,
# appends the Markdown summary to $GITHUB_STEP_SUMMARY and writes the outputs
# junit, json, sarif, summary and exit-code to $GITHUB_OUTPUT.
#
# Exit status: airlock's exit code, except that 1 (findings) becomes 0 when
# AIRLOCK_FAIL_ON_FINDINGS is false; 2 and 3 always fail. An input this script
# refuses (an unknown command, a malformed shard, diff without a base or with
# a base that is not revision-shaped, merge with inputs that match no file)
# is a usage error: exit code 2, with an ::error:: annotation saying which.
#
# An output names a report only when airlock ran in this step: the report
# files are removed before airlock runs, and a refused input never sets one,
# so a report an earlier step left in the same folder is never passed off as
# this step's (nor appended to the job summary).
#
# No input is ever printed raw: the log shows it through shown (printable
# ASCII, everything else as %XX), so a CR, LF or other line end in an input
# cannot start a workflow command of its own.
set -uo pipefail

# shown_max is how many bytes of one input shown prints; the rest is counted,
# not printed (a value in the environment is at most 128 KiB on Linux).
shown_max=256

# shown writes $1 for the log: printable ASCII (0x20-0x7E) as is, except %
# and :, which, like every other byte (CR, LF, controls, non-ASCII), are
# written %XX (upper-case hex, the escaping of workflow command properties).
# Past shown_max bytes it stops and says how many bytes it left out.
shown() {
	local LC_ALL=C
	local s=$1 out='' c i n
	n=${#s}
	for ((i = 0; i < n && i < shown_max; i++)); do
		c=${s:i:1}
		case $c in
		[%:]) printf -v c '%%%02X' "'$c" ;;
		[\ -~]) ;;
		*) printf -v c '%%%02X' "'$c" ;;
		esac
		out+=$c
	done
	if [ "$n" -gt "$shown_max" ]; then
		out+="...($((n - shown_max)) more bytes)"
	fi
	printf '%s' "$out"
}

# escape writes $1 as the data of a workflow command (% CR LF escaped), so an
# input cannot start a command of its own.
escape() {
	local s=$1
	s=${s//%/%25}
	s=${s//$'\r'/%0D}
	s=${s//$'\n'/%0A}
	printf '%s' "$s"
}

# output appends name=value to $GITHUB_OUTPUT (when set). A value holding a
# newline would forge another output: it is written empty instead.
output() {
	local value=$2
	case $value in *$'\n'* | *$'\r'*) value= ;; esac
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		printf '%s=%s\n' "$1" "$value" >>"$GITHUB_OUTPUT"
	fi
}

# finish writes the outputs and the step summary, then exits with the step's
# status for airlock's exit code $1. Unless airlock ran (ran=true), no
# report is this step's: the outputs are empty and no summary file is read.
finish() {
	local rc=$1
	if [ "$ran" != true ]; then
		junit_file='' json_file='' sarif_file='' summary_file=''
	fi
	written junit "$junit_file"
	written json "$json_file"
	written sarif "$sarif_file"
	written summary "$summary_file"
	output exit-code "$rc"
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		if [ -n "$summary_file" ] && [ -f "$summary_file" ]; then
			cat "$summary_file" >>"$GITHUB_STEP_SUMMARY"
		elif [ "$rc" -ge 2 ]; then
			printf '### airlock %s\n\nairlock stopped with exit code %s (%s); the step log says why.\n' \
				"$command_name" "$rc" "$(meaning "$rc")" >>"$GITHUB_STEP_SUMMARY"
		fi
	fi
	if [ "$rc" -eq 1 ] && [ "$fail_on_findings" = false ]; then
		echo "airlock $command_name: findings (exit code 1) do not fail the step: fail-on-findings is false"
		exit 0
	fi
	exit "$rc"
}

# written sets output $1 to the path $2 when airlock wrote that file, else
# to "".
written() {
	if [ -n "$2" ] && [ -f "$2" ]; then
		output "$1" "$2"
	else
		output "$1" ""
	fi
}

meaning() {
	case $1 in
	0) echo ok ;;
	1) echo findings ;;
	2) echo "usage or configuration error" ;;
	3) echo "internal error" ;;
	*) echo "killed or not run" ;;
	esac
}

# base_max is the longest base input taken, in bytes.
base_max=255

# revision_shaped succeeds when $1 is a base diff takes (see the diff case
# below), matched byte by byte (LC_ALL=C: no locale's letters).
revision_shaped() {
	local LC_ALL=C
	[[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._/@^~-]*$ ]] && [[ $1 != *..* ]] && [ "${#1}" -le "$base_max" ]
}

# usage reports a refused input as an annotation and stops with exit code 2.
usage() {
	echo "::error title=airlock action::$(escape "$*")"
	finish 2
}

junit_file='' json_file='' sarif_file='' summary_file=''
ran=false
command_name=${AIRLOCK_COMMAND:-run}
fail_on_findings=${AIRLOCK_FAIL_ON_FINDINGS:-true}

case $fail_on_findings in
true | false) ;;
*) fail_on_findings=true; usage "fail-on-findings is \"$(shown "$AIRLOCK_FAIL_ON_FINDINGS")\"; want true or false" ;;
esac

case $command_name in
run | lint | diff | mutate | drift | merge) ;;
*) command_name=airlock; usage "command is \"$(shown "$AIRLOCK_COMMAND")\"; want run, lint, diff, mutate, drift or merge" ;;
esac

bin=${AIRLOCK_BIN:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	usage "the airlock binary \"$(shown "$bin")\" was not built (the Build airlock step)"
fi

reports=${AIRLOCK_REPORTS:-airlock-reports}
case $reports in
*$'\n'* | *$'\r'*) usage "reports is a folder name with a line break" ;;
esac

shard=${AIRLOCK_SHARD:-}
stem=$command_name
if [ -n "$shard" ]; then
	if ! [[ $shard =~ ^([1-9][0-9]{0,5})/([1-9][0-9]{0,5})$ ]]; then
		usage "shard is \"$(shown "$shard")\"; want K/N with 1 <= K <= N (e.g. 2/4)"
	fi
	case $command_name in
	run | mutate | drift) ;;
	*) usage "shard is for run, mutate and drift, not $command_name" ;;
	esac
	# airlock itself checks K <= N (exit 2); the file names only need digits.
	stem="$command_name-shard-${BASH_REMATCH[1]}-of-${BASH_REMATCH[2]}"
fi

tools=${AIRLOCK_TOOLS:-}
if [ "$command_name" = diff ] && [[ $tools == *,* ]]; then
	usage "diff compares one tool's contract or all of them; tools is \"$(shown "$tools")\""
fi
if [ "$command_name" = merge ] && [ -n "$tools" ]; then
	usage "tools is for run, lint, diff, mutate and drift; merge joins the reports it is given"
fi
if [ "$command_name" != merge ] && [ -n "${AIRLOCK_INPUTS:-}" ]; then
	usage "inputs is for merge, not $command_name"
fi

# The extra arguments: split at white space, never evaluated or globbed.
extra=()
if [ -n "${AIRLOCK_ARGS:-}" ]; then
	set -f
	IFS=$' \t\n' read -r -d '' -a extra <<<"$AIRLOCK_ARGS" || true
	set +f
fi

if ! mkdir -p -- "$reports"; then
	usage "cannot create the reports folder \"$(shown "$reports")\""
fi

# Every value goes as --flag=value, so a value starting with - stays a value.
args=("$command_name")
if [ "$command_name" != merge ]; then
	args+=("--schemas=${AIRLOCK_SCHEMAS:-schemas}")
fi
# merge's report files, from the file globs of the inputs input.
files=()
case $command_name in
run)
	junit_file=$reports/$stem.junit.xml
	json_file=$reports/$stem.json
	sarif_file=$reports/$stem.sarif
	summary_file=$reports/$stem.summary.md
	args+=("--fixtures=${AIRLOCK_FIXTURES:-fixtures}" "--junit=$junit_file" "--json=$json_file")
	;;
lint)
	sarif_file=$reports/$stem.sarif
	summary_file=$reports/$stem.summary.md
	args+=("--fixtures=${AIRLOCK_FIXTURES:-fixtures}")
	;;
diff)
	sarif_file=$reports/$stem.sarif
	summary_file=$reports/$stem.summary.md
	base=${AIRLOCK_BASE:-${AIRLOCK_PR_BASE:-}}
	if [ -z "$base" ]; then
		usage "diff needs a base revision: run it on pull_request, or set the base input"
	fi
	# A revision-shaped base only: a commit id, a branch or tag name, a
	# remote-tracking name (origin/main), each optionally followed by ~N or
	# ^N (HEAD~1). Refused: a leading - (an option), : and + (a refspec that
	# would make the fetch below write a local ref), .. (a range), @{ } and
	# any byte outside [A-Za-z0-9._/@^~-] (line ends, spaces, globs, ^ first:
	# a negative refspec), and more than base_max bytes.
	if ! revision_shaped "$base"; then
		usage "base is \"$(shown "$base")\"; want a git revision: a commit id, a branch or tag name, optionally with ~N or ^N (letters, digits and . _ / @ ^ ~ -, no .., at most $base_max bytes)"
	fi
	# A shallow checkout may lack the base commit: fetch it alone. The
	# checked base holds no : or +, and -- ends the options: git reads it as
	# a source only, written to FETCH_HEAD, never to a local branch or tag.
	if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
		echo "airlock diff: fetching the base revision $(shown "$base")"
		git fetch --no-tags --depth=1 origin -- "$base" || true
	fi
	args+=("--fixtures=${AIRLOCK_FIXTURES:-fixtures}" "--base=$base")
	;;
mutate)
	junit_file=$reports/$stem.junit.xml
	json_file=$reports/$stem.json
	summary_file=$reports/$stem.summary.md
	args+=("--fixtures=${AIRLOCK_FIXTURES:-fixtures}" "--junit=$junit_file" "--json=$json_file")
	;;
drift)
	json_file=$reports/$stem.json
	sarif_file=$reports/$stem.sarif
	summary_file=$reports/$stem.summary.md
	args+=("--fixtures=${AIRLOCK_FIXTURES:-fixtures}" "--json=$json_file")
	;;
merge)
	# The inputs input: file globs split at white space, each expanded
	# (nullglob, sorted) as a path pattern only: no quoting, variable,
	# command or brace expansion. A glob that matches no file stops here.
	if [ -z "${AIRLOCK_INPUTS:-}" ]; then
		usage "merge needs the shards' report files: set the inputs input (file globs, e.g. shards/*.junit.xml shards/*.json shards/*.sarif)"
	fi
	patterns=()
	set -f
	IFS=$' \t\n' read -r -d '' -a patterns <<<"$AIRLOCK_INPUTS" || true
	set +f
	shopt -s nullglob
	for p in "${patterns[@]}"; do
		matched=()
		# Unquoted on purpose: pathname expansion of p alone (p holds no
		# white space, so word splitting leaves it whole).
		# shellcheck disable=SC2206
		matched=($p)
		# A word without a glob character is left as it is: it must exist.
		if [ ${#matched[@]} -eq 1 ] && [ ! -e "${matched[0]}" ]; then
			matched=()
		fi
		if [ ${#matched[@]} -eq 0 ]; then
			usage "inputs: \"$(shown "$p")\" matches no file"
		fi
		for f in "${matched[@]}"; do
			# An earlier merge's own report in the same folder is no shard's.
			case $f in
			"$reports/$stem.junit.xml" | "$reports/$stem.json" | "$reports/$stem.sarif") ;;
			*) files+=("$f") ;;
			esac
		done
	done
	shopt -u nullglob
	# Each output for the kind of report the inputs hold, told by the file
	# name as the Action's steps write them: JUnit .xml, JSON results .json
	# (also the summary), SARIF .sarif. merge itself tells each input's kind
	# by its content and refuses a set that is not one run's shards.
	for f in "${files[@]}"; do
		case $f in
		*.xml) junit_file=$reports/$stem.junit.xml ;;
		*.json) json_file=$reports/$stem.json summary_file=$reports/$stem.summary.md ;;
		*.sarif) sarif_file=$reports/$stem.sarif ;;
		esac
	done
	if [ -n "$junit_file" ]; then
		args+=("--junit=$junit_file")
	fi
	if [ -n "$json_file" ]; then
		args+=("--json=$json_file")
	fi
	;;
esac
if [ -n "$sarif_file" ]; then
	args+=("--sarif=$sarif_file")
fi
if [ -n "$summary_file" ]; then
	args+=("--summary=$summary_file")
fi
if [ "$command_name" != merge ]; then
	args+=("--format=github")
fi
if [ -n "$tools" ]; then
	args+=("--tool=$tools")
fi
if [ -n "$shard" ]; then
	args+=("--shard=$shard")
fi
if [ ${#extra[@]} -gt 0 ]; then
	args+=("${extra[@]}")
fi
if [ ${#files[@]} -gt 0 ]; then
	# After --, a file named like an option stays a file.
	args+=(-- "${files[@]}")
fi

# A report left by an earlier step must not pass for this run's.
for f in "$junit_file" "$json_file" "$sarif_file" "$summary_file"; do
	if [ -n "$f" ]; then
		rm -f -- "$f"
	fi
done

# The command line, each argument shown (see shown) and shell-quoted.
printf 'airlock'
for a in "${args[@]}"; do
	printf ' %q' "$(shown "$a")"
done
printf '\n'
ran=true
"$bin" "${args[@]}"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "airlock $command_name exited $rc ($(meaning "$rc"))"
fi
finish "$rc"
