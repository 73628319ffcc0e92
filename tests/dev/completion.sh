#!/bin/bash
# engines: threads
# The bash completion (completion/pdd), driven as bash drives it: the
# command line is split at readline's word breaks into COMP_WORDS, the
# function runs, and COMPREPLY is checked exactly.  The operand and flag
# names it offers are src/args.c's tables, so that the two cannot drift.
# Needs no root; as root, a loop device of its own is offered first.
. "$(dirname "$0")/../lib.sh"

bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || skip "no $bc (Debian's bash-completion)"
# bash_completion reads the terminal's settings and unset variables
set +u
. "$bc"
. "$top/completion/pdd"

# comp LINE: complete at the end of LINE; COMPREPLY one a line in $T/got
comp() {
	local line=$1 w rest
	COMP_WORDS=()
	# readline breaks words at blanks and at each '=', which is a word
	# of its own; the trailing blank gives an empty word to complete
	for w in $line; do
		while [[ $w == *=* ]]; do
			rest=${w#*=}
			[ -n "${w%%=*}" ] && COMP_WORDS+=("${w%%=*}")
			COMP_WORDS+=("=")
			w=$rest
		done
		[ -n "$w" ] && COMP_WORDS+=("$w")
	done
	[[ $line == *" " || $line == *= ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	_pdd pdd "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' >"$T/got"
}

# expect LINE WORD...: completing LINE offers exactly WORD..., in order
expect() {
	local line=$1
	shift
	comp "$line"
	printf '%s\n' "$@" | sed '/^$/d' | cmp -s - "$T/got" ||
		fail "'$line' offers: $(tr '\n' ' ' <"$T/got")(expected: $*) (line ${BASH_LINENO[0]})"
	n=$((n + 1))
}
n=0

# the names from src/args.c: operands, then the flags (true: oflag= only)
operands=$(sed -n 's/^\t{ "\([a-z_]*\)",[[:space:]]*ARG_.*/\1/p' "$top/src/args.c")
[ "$(echo "$operands" | wc -l)" -gt 40 ] || fail "cannot read the operand table of src/args.c"
iflags=$(sed -n 's/^\t{ "\([a-z]*\)",\tPDD_F_[A-Z]*,\tfalse },$/\1/p' "$top/src/args.c")
oflags=$(sed -n 's/^\t{ "\([a-z]*\)",\tPDD_F_[A-Z]*,\t[a-z]* },$/\1/p' "$top/src/args.c")
[ -n "$iflags" ] && [ "$oflags" != "$iflags" ] || fail "cannot read the flag table of src/args.c"

# every operand, and nothing else, each once with its '='
expect "pdd " $(echo "$operands" | sed 's/$/=/')
expect "pdd b" bpt= bs=
expect "pdd th" thr= threads=
expect "pdd eng" engine=
# one given already is not offered again
expect "pdd if=/dev/null bs=4k i" iflag=
expect "pdd map=m ma" map_interval= max_rate= max_skip=
expect "pdd --v" --verbose --version
expect "pdd --d" --dry-run

# values
engines=$("$PDD" --version | sed -n 's/^engines: //p' | tr -d ,)
expect "pdd engine=" $engines
expect "pdd engine=t" threads
expect "pdd status=" none noxfer progress json
expect "pdd status=n" none noxfer
expect "pdd verify=" 0 1 only hash
expect "pdd conv=" sparse
expect "pdd coe=" 0 1
expect "pdd cdbsz=1" 10 12 16
expect "pdd bs=" ""
expect "pdd bs=4" ""
expect "pdd count=1 nosuch=" ""

# comma lists: the last item, the rest kept, those given left out
comp "pdd iflag="
[ "$(sort "$T/got")" = "$(echo "$iflags" | sort)" ] || fail "iflag= offers $(tr '\n' ' ' <"$T/got")"
comp "pdd oflag="
[ "$(sort "$T/got")" = "$(echo "$oflags" | sort)" ] || fail "oflag= offers $(tr '\n' ' ' <"$T/got")"
expect "pdd iflag=a" ""
expect "pdd oflag=a" append
expect "pdd oflag=direct,f" direct,fua direct,force
expect "pdd oflag=direct,fua,d" direct,fua,dpo direct,fua,dsync
expect "pdd iflag=coe,direct,nod" coe,direct,nodirect
expect "pdd hash=sha256,sha" sha256,sha1 sha256,sha512 sha256,sha3-256
expect "pdd hash=md5,sha1,sha256,sha512,sha3-256," md5,sha1,sha256,sha512,sha3-256,blake2b512

# paths: files for map=, hashlog=, domain=; for if= and of= the disks
# first (none is under $T), then the files
mkdir "$T/d" "$T/d/sub"
: >"$T/d/a.img"
: >"$T/d/b.map"
for op in if of map hashlog domain; do
	comp "pdd $op=$T/d/"
	[ "$(sort "$T/got")" = "$(printf '%s\n' "$T/d/a.img" "$T/d/b.map" "$T/d/sub")" ] ||
		fail "$op= offers $(tr '\n' ' ' <"$T/got")"
	n=$((n + 1))
done
expect "pdd of=$T/d/b" "$T/d/b.map"
expect "pdd of=/dev/null if=$T/d/a" "$T/d/a.img"

# the disks: block devices with a size, then the other nodes
if [ "$(id -u)" = 0 ] && [ -e /dev/loop-control ]; then
	truncate -s 1M "$T/disk"
	loop=$(mkloop "$T/disk")
fi
comp "pdd if=/dev/loop"
disks=0
while read -r f; do
	if [ -b "$f" ] && [ "$(cat "/sys/class/block/${f#/dev/}/size")" != 0 ]; then
		[ "$disks" = done ] && fail "disk $f offered after a file: $(tr '\n' ' ' <"$T/got")"
		disks=$((disks + 1))
	else
		[ "$disks" = done ] || disks=done
	fi
done <"$T/got"
grep -qx /dev/loop-control "$T/got" || fail "if=/dev/loop offers no /dev/loop-control: $(tr '\n' ' ' <"$T/got")"
[ "$(sort "$T/got" | uniq -d)" = "" ] || fail "if=/dev/loop offers one twice: $(tr '\n' ' ' <"$T/got")"
if [ -n "${loop:-}" ]; then
	grep -qx "$loop" "$T/got" || fail "if=/dev/loop does not offer $loop: $(tr '\n' ' ' <"$T/got")"
fi
n=$((n + 1))

# the same through readline: bash in a tmux of this test's own (its
# server's pid goes to lib.sh's list, stopped at exit), pdd<TAB> typed
if command -v tmux >/dev/null; then
	sock=$T/tmux.sock
	tmux -S "$sock" new-session -d -x 160 -y 10 "env -i HOME=$T TERM=screen PATH=$(dirname "$PDD"):/usr/bin:/bin bash --norc --noprofile" ||
		fail "tmux did not start"
	tmux -S "$sock" display -p '#{pid}' >>"$T/.servers"
	typed() {	# typed KEYS... then the screen's last line in $screen
		tmux -S "$sock" send-keys "$@"
		sleep 0.5
		screen=$(tmux -S "$sock" capture-pane -p | sed '/^$/d' | tail -1)
	}
	typed "PS1='$ '; . $bc; . $top/completion/pdd; clear" Enter
	typed "pdd eng" Tab
	[ "$screen" = '$ pdd engine=' ] || fail "tmux: pdd eng<TAB> gave '$screen'"
	# (tmux drops trailing blanks: a '#' shows the space after a word)
	typed "th" Tab "#"
	[ "$screen" = '$ pdd engine=threads #' ] || fail "tmux: engine=th<TAB> gave '$screen'"
	typed BSpace
	typed "oflag=direct,no" Tab
	[ "$screen" = '$ pdd engine=threads oflag=direct,no' ] || fail "tmux: oflag=direct,no<TAB> gave '$screen'"
	typed "c" Tab "#"
	[ "$screen" = '$ pdd engine=threads oflag=direct,nocreat #' ] || fail "tmux: oflag=direct,noc<TAB> gave '$screen'"
	tmux -S "$sock" kill-server
	n=$((n + 4))
else
	echo "tmux: not installed, readline not driven"
fi
echo "$n completions checked"
