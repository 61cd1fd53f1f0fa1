# bash completion for wipectl(1), the client of wiped(8).
# shellcheck shell=bash disable=SC2207
#
# Installed as $(bashcompletiondir)/wipectl (bash-completion loads it on first use); it can also
# be sourced by hand:  . cli/wipectl.bash
#
# Completes the global options and the commands, each command's options (as its --help lists
# them), the values of --method, --cipher and --verify, job ids and the devices that may be wiped
# (both asked from the daemon, on the socket that --socket on the command line or $WIPED_SOCKET
# names).
# It needs nothing but bash: no bash-completion helpers, no jq.

# _wipectl_jobs WIPECTL SOCKET WHICH: the job ids the daemon knows (wipectl --json list), one a
# line; WHICH is all, running (running or flushing), ended (done, failed, cancelled, interrupted),
# stopped (paused or interrupted: resume) or forgettable (ended or paused: forget).
_wipectl_jobs() {
        local wipectl=$1 socket=$2 which=$3 json id='' state='' line
        local -a args=()
        [ -n "$socket" ] && args=(--socket "$socket")
        json=$(timeout 2 "$wipectl" "${args[@]}" --json list 2>/dev/null) || return 0
        # A JOB prints its "job" (and, until the next release, "id") before its "state"; no object
        # nested in a JOB has these keys.
        while IFS= read -r line; do
                case $line in
                *'"id":'* | *'"job":'*)
                        id=${line#*:}
                        id=${id//[!0-9]/}
                        ;;
                *'"state":'*)
                        state=${line#*'"state":'}
                        state=${state//[!a-z]/}
                        [ -n "$id" ] || continue
                        case $which:$state in
                        all:*) echo "$id" ;;
                        running:running | running:flushing) echo "$id" ;;
                        ended:done | ended:failed | ended:cancelled | ended:interrupted) echo "$id" ;;
                        stopped:paused | stopped:interrupted) echo "$id" ;;
                        forgettable:done | forgettable:failed | forgettable:cancelled) echo "$id" ;;
                        forgettable:paused | forgettable:interrupted) echo "$id" ;;
                        esac
                        id=
                        ;;
                esac
        done < <(printf '%s\n' "$json" | grep -oE '"(id|job|state)": *("[a-z]+"|[0-9]+)')
}

# _wipectl_devices WIPECTL SOCKET CUR: the devices whose path starts with CUR (default /dev/)
# that the daemon would wipe (wipectl devices --wipeable: never the running system's disks, nor
# a mounted or held one), one a line; with CUR under /dev/disk/, the links there to those
# devices. Nothing when the daemon cannot be asked: without it nothing can be wiped, and a guess
# from /dev would offer the very disks the daemon refuses.
_wipectl_devices() {
        local wipectl=$1 socket=$2 cur=${3:-/dev/} list node link
        local -a args=()
        local IFS=$'\n'
        [ -n "$socket" ] && args=(--socket "$socket")
        list=$(timeout 2 "$wipectl" "${args[@]}" devices --wipeable 2>/dev/null) || return 0
        for node in $list; do
                [[ $node == "$cur"* ]] && echo "$node"
        done
        if [[ $cur == /dev/disk/* ]]; then
                for link in /dev/disk/*/*; do
                        [[ $link == "$cur"* && -b $link ]] || continue
                        node=$(readlink -f -- "$link")
                        [[ $'\n'$list$'\n' == *$'\n'$node$'\n'* ]] && echo "$link"
                done
        fi
}

# _wipectl_policies WIPECTL SOCKET: the names of the daemon's bay policies ("policy NAME: ..." lines
# of wipectl policies); nothing when the daemon cannot be asked.
_wipectl_policies() {
        local wipectl=$1 socket=$2 args=() line
        [ -n "$socket" ] && args=(--socket "$socket")
        timeout 2 "$wipectl" "${args[@]}" policies 2>/dev/null | while IFS= read -r line; do
                [[ $line =~ ^policy\ ([^:]+): ]] && echo "${BASH_REMATCH[1]}"
        done
}

# _wipectl_help_options WIPECTL CMD: the options that "wipectl CMD --help" lists, one a line:
# "--name", or "--name VALUE" for one that takes a value.
_wipectl_help_options() {
        local line re='^ +(-[[:alnum:]], )?(--[[:alnum:]][[:alnum:]-]*)( [A-Z][A-Z_]*)?( |$)'
        "$1" "$2" --help 2>/dev/null | while IFS= read -r line; do
                [[ $line =~ $re ]] && echo "${BASH_REMATCH[2]}${BASH_REMATCH[3]}"
        done
}

_wipectl() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev='' wipectl=${COMP_WORDS[0]} socket='' cmd='' i w
        local commands="version status list cancel pause resume forget report devices policies probe methods verify watch wait wipe help"
        local globals="--socket --json -J --bytes --quiet -q --help --version -V"
        local opts='' args_opts='' positional=''
        local IFS=$' \t\n'

        COMPREPLY=()
        ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
        # The wipectl that is being completed, if it can be run; else the one in PATH.
        wipectl=${wipectl/#\~/$HOME}
        if [[ $wipectl != */* ]] || [ ! -x "$wipectl" ]; then
                wipectl=wipectl
        fi

        # The global options and the command before the word being completed. bash splits
        # "--socket=PATH" into "--socket" "=" "PATH".
        for ((i = 1; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                if [ -z "$cmd" ]; then
                        case $w in
                        --socket)
                                if [ "${COMP_WORDS[i + 1]:-}" = "=" ]; then
                                        ((i += 2))
                                else
                                        ((i += 1))
                                fi
                                ((i < COMP_CWORD)) && socket=${COMP_WORDS[i]}
                                ;;
                        --socket=*) socket=${w#--socket=} ;;
                        -*) ;;
                        *) cmd=$w ;;
                        esac
                fi
        done
        [ -z "$socket" ] && socket=${WIPED_SOCKET:-}
        socket=${socket/#\~/$HOME}

        # "--socket=" being completed: the word is "=" or the path after it.
        if [ "$cur" = "=" ] && [ "$prev" = "--socket" ]; then
                cur=
        elif [ "$prev" = "=" ] && ((COMP_CWORD > 1)) && [ "${COMP_WORDS[COMP_CWORD - 2]}" = "--socket" ]; then
                prev=--socket
        fi

        if [ -z "$cmd" ]; then
                if [ "$prev" = "--socket" ]; then
                        compopt -o filenames 2>/dev/null
                        COMPREPLY=($(compgen -f -- "$cur"))
                        return 0
                fi
                case $cur in
                -*) COMPREPLY=($(compgen -W "$globals" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
                esac
                return 0
        fi

        # Per command: its options (as its --help lists them), those that take a value, and what
        # its other arguments are.
        case $cmd in
        wipe)
                opts="--method --passes --verify --seed --cipher --max-rate --queue-depth --io-size --max-bad --yes --expect --dry-run --no-wait --help"
                args_opts="--method --passes --verify --seed --cipher --max-rate --queue-depth --io-size --max-bad --expect"
                # The sanitization record's free text (nothing to complete as their values).
                opts+=" --asset-tag --customer --note --destination --operator-name --operator-title --operator-organization --operator-location --operator-contact --verifier-name --verifier-title --verifier-organization --verifier-location --verifier-contact"
                args_opts+=" --asset-tag --customer --note --destination --operator-name --operator-title --operator-organization --operator-location --operator-contact --verifier-name --verifier-title --verifier-organization --verifier-location --verifier-contact"
                positional=devices
                ;;
        probe)
                opts="--json --help"
                positional=devices
                ;;
        verify)
                opts="--verify --seed --no-wait --help"
                args_opts="--verify --seed"
                positional=ended
                ;;
        report)
                opts="--keys --check --key --pdf --summary-only --help"
                args_opts="--check --key --pdf"
                # report --all: the export.
                opts+=" --all --since --until --batch --format --page-size"
                args_opts+=" --since --until --batch --format --page-size"
                positional=all
                # A report file to check takes no job.
                for ((i = 1; i < COMP_CWORD; i++)); do
                        [[ ${COMP_WORDS[i]} == --check || ${COMP_WORDS[i]} == --check=* ]] && positional=
                done
                ;;
        status) opts="--help" positional=all ;;
        cancel) opts="--help" positional=running ;;
        pause) opts="--help" positional=running ;;
        resume)
                opts="--device --help"
                args_opts="--device"
                positional=stopped
                ;;
        forget) opts="--help" positional=forgettable ;;
        watch)
                opts="--interval --help"
                args_opts="--interval"
                positional=running
                ;;
        wait) opts="--help" positional=running ;;
        list) opts="--all --help" ;;
        methods) opts="--json --help" ;;
        devices) opts="--json --wipeable --help" ;;
        policies)
                # "policies pause NAME", "policies resume NAME": the action, then a policy's name.
                opts="--json --help"
                case $prev in
                policies) COMPREPLY=($(compgen -W "pause resume" -- "$cur")) ;;
                pause | resume) COMPREPLY=($(compgen -W "$(_wipectl_policies "$wipectl" "$socket")" -- "$cur")) ;;
                esac
                [[ $cur == -* ]] || return 0
                ;;
        version) opts="--help" ;;
        help)
                # "wipectl help CMD": a command, once.
                [ "$prev" = help ] && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                return 0
                ;;
        *) return 0 ;;
        esac
        # What this wipectl's --help lists wins over the lists above (which are for a wipectl
        # that cannot be run).
        local help_opts line
        help_opts=$(_wipectl_help_options "$wipectl" "$cmd")
        if [ -n "$help_opts" ]; then
                opts='' args_opts=''
                while read -r line; do
                        opts+=" ${line%% *}"
                        [[ $line == *" "* ]] && args_opts+=" ${line%% *}"
                done <<< "$help_opts"
        fi

        # "--check=" being completed, as "--socket=" above.
        if [ "$cur" = "=" ] && [[ " $args_opts " == *" $prev "* ]]; then
                cur=
        elif [ "$prev" = "=" ] && ((COMP_CWORD > 1)) && [[ " $args_opts " == *" ${COMP_WORDS[COMP_CWORD - 2]} "* ]]; then
                prev=${COMP_WORDS[COMP_CWORD - 2]}
        fi

        # The value of an option.
        if [ -n "$prev" ] && [[ " $args_opts " == *" $prev "* ]]; then
                case $prev in
                --check | --key | --expect | --pdf)
                        compopt -o filenames 2>/dev/null
                        COMPREPLY=($(compgen -f -- "$cur"))
                        ;;
                --device)
                        COMPREPLY=($(compgen -W "$(_wipectl_devices "$wipectl" "$socket" "$cur")" -- "$cur"))
                        ;;
                --method)
                        COMPREPLY=($(compgen -W "random zero random-zero zeroout discard secure-discard sanitize sanitize-crypto sanitize-block sanitize-overwrite nvme-format ata-secure-erase purge dod-3pass schneier gutmann" -- "$cur"))
                        ;;
                --cipher)
                        COMPREPLY=($(compgen -W "auto aes-128-ctr chacha20" -- "$cur"))
                        ;;
                --format)
                        COMPREPLY=($(compgen -W "jsonl csv" -- "$cur"))
                        ;;
                --verify)
                        if [ "$cmd" = wipe ]; then
                                COMPREPLY=($(compgen -W "none sample sample= last all" -- "$cur"))
                        else
                                COMPREPLY=($(compgen -W "sample sample= last all" -- "$cur"))
                        fi
                        [ "${COMPREPLY[0]:-}" = "sample=" ] && [ ${#COMPREPLY[@]} = 1 ] && compopt -o nospace 2>/dev/null
                        ;;
                esac
                # --passes, --seed, --max-rate, --queue-depth, --io-size, --interval, --since,
                # --until, --batch, --page-size: a value to type, nothing to offer.
                return 0
        fi

        case $cur in
        -*)
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                return 0
                ;;
        esac

        case $positional in
        devices)
                COMPREPLY=($(compgen -W "$(_wipectl_devices "$wipectl" "$socket" "$cur")" -- "$cur"))
                ;;
        all | running | ended | stopped | forgettable)
                COMPREPLY=($(compgen -W "$(_wipectl_jobs "$wipectl" "$socket" "$positional")" -- "$cur"))
                ;;
        esac
        return 0
}

complete -F _wipectl wipectl
