//! Issue 41: an allow rule lets through only a command made of plain words the reader fully
//! understood (High 1, Medium 13), and a deny rule is never bypassed silently by a form the
//! reader does not understand (Medium 7).

use super::*;

/// Issue 41, High 1: with `--approval read-only --allow 'shell_exec(git status*)'`, every
/// command the red team ran unasked (and its neighbours: each expansion that runs code,
/// assignment, evaluating builtin, wrapper and git option of the issue) is refused; plain
/// forms still run.
#[test]
fn an_allow_rule_allows_only_commands_made_of_plain_words() {
    let none = WrittenFiles::default();
    let refused = [
        // The red team's forms.
        "env '--split-string=touch P'",
        "env '--split-string=git status'",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch P' git status",
        "EVIL='touch P' git --config-env=core.fsmonitor=EVIL status",
        "PS4='$(touch P)'; set -x; git status",
        "x='$(touch P)'; : ${x@P}; git status",
        "git status ${x:-$\\\n(touch P)}",
        "git status \"${x:-$\\\n(touch P)}\"",
        "git status <<EOF\n$\\\n(touch P)\nEOF",
        "git status <<EOF\n$(touch P)\nEOF",
        "x='a[$(touch P)]'; : $[x]; git status",
        ": $[1]; git status",
        "\\time -o P git status",
        "time git status",
        // Expansions: whatever their value, the words are not plain.
        "git status $X",
        "git status \"$X\"",
        "git status ${X}",
        "git status ~",
        "git status {a,b}",
        "git status $'\\x2d\\x2doutput'",
        "git status $\"x\"",
        "git status `true`",
        "git status $(true)",
        "x='a[$(touch P)]'; git status ${!x}",
        "git status ${a[$(touch P)]}",
        "git status ${x:$(touch P)}",
        // Assignments and evaluating builtins.
        "A=1 git status",
        "GIT_DIR=/tmp/x git status",
        "X=1; git status",
        "export PS4='$(touch P)'; git status",
        "trap 'touch P' EXIT; git status",
        "eval git status",
        "source ./x; git status",
        ". ./x; git status",
        "mapfile -C 'touch P #' -c 1 < f; git status",
        "readarray -C 'touch P #' -c 1 < f; git status",
        "printf -v 'a[$(touch P)]' 1; git status",
        "test -v 'a[$(touch P)]'; git status",
        "[[ -v 'a[$(touch P)]' ]]; git status",
        "set -x; git status",
        "set -o xtrace; git status",
        "alias git='touch P'; git status",
        "hash -p /tmp/x git; git status",
        "declare -n r='a[$(touch P)]'; git status",
        "read PS4 < f; git status",
        "shopt -s expand_aliases; git status",
        "enable -n echo; git status",
        // Wrappers.
        "nice git status",
        "nice -n 5 git status",
        "timeout 5 git status",
        "taskset 1 git status",
        "flock /tmp/l git status",
        "unshare git status",
        "script -qc 'git status' /dev/null",
        "setpriv git status",
        "/lib64/ld-linux-x86-64.so.2 /usr/bin/git status",
        "ld.so /usr/bin/git status",
        "env git status",
        "env -S'git status'",
        "env -i git status",
        "xargs git status < f",
        "sudo git status",
        "chroot / git status",
        "nohup git status",
        "stdbuf -o0 git status",
        "busybox git status",
        "exec git status",
        "command git status",
        "builtin git status",
        "bash -c 'git status'",
        "sh -c 'git status'",
        "bash -lc 'git status'",
        "find . -maxdepth 0 -exec git status \\;",
        "watch git status",
        // A program of the same name elsewhere.
        "/tmp/git status",
        "./git status",
        "/usr/bin/../../tmp/git status",
        // git's options that run code or write files.
        "git -c core.fsmonitor='touch P' status",
        "git -ccore.pager=x status",
        "git --config-env core.fsmonitor=EVIL status",
        "git --exec-path=/tmp status",
        "git --git-dir=/tmp/x/.git status",
        "git --work-tree=/tmp status",
        "git -p status",
        "git --paginate status",
        "git status --output=P",
        "git status --ext-diff",
        "git status --upload-pack=x",
        "git status --exec=x",
        "git status --config=x",
        "git status --template=x",
        // Globs that may expand to an option of git.
        "git status *",
        "git status ?",
        "git status [-]*",
        // Redirections whose file is only known when it runs, or that bash itself turns
        // into a network connection.
        "git status < $F",
        "git status < ~/x",
        "git status < \"$F\"",
        "git status < /dev/null$F",
        "git status < /dev/tcp/example.org/80",
        "git status < \"/dev/tcp/127.0.0.1/1\"",
        "git status 0</dev/udp/127.0.0.1/53",
    ];
    let runs = [
        "git status",
        "git status --short",
        "git status -s -b",
        "  git   status  -s",
        "git status -- a.txt",
        "git status 'a b.txt' \"c.txt\"",
        "git status src/*.rs",
        "git status -- *.rs",
        "/usr/bin/git status",
        "/bin/git status",
        "cd src && git status",
        "cd src; git status; cd ..",
        "git status 2>&1",
        "git status > /dev/null",
        "set -e; git status",
        "set -euo pipefail; git status",
        "true && git status || false",
        "git status; git status --porcelain",
        "(git status)",
        "{ git status; }",
        "git status # a comment $(touch P)",
        "git status \\\n  --short",
        "git status <<'EOF'\n$(touch P)\nEOF",
        "git status <<EOF\nplain $HOME and ${USER}\nEOF",
        "git status < a.txt",
        "git status < src/*.txt",
    ];
    for mode in [ApprovalMode::ReadOnly, ApprovalMode::Ask] {
        let allow = policy(mode, &["shell_exec(git status*)"], &[]);
        for command in refused {
            check(&allow, &none, "shell_exec", shell(command), Want::NotRun);
        }
        for command in runs {
            check(&allow, &none, "shell_exec", shell(command), Want::Run);
        }
    }
    // An allow rule on the wrapper itself does not let it run either.
    let wrappers = policy(
        ApprovalMode::ReadOnly,
        &[
            "shell_exec(git status*)",
            "shell_exec(nice*)",
            "shell_exec(env*)",
        ],
        &[],
    );
    for command in ["nice git status", "env git status", "env -S'git status'"] {
        check(&wrappers, &none, "shell_exec", shell(command), Want::NotRun);
    }
}

/// Issue 41, Medium 13: allow rules that look read-only do not allow the options and
/// commands that run code or write files: sed's `e`, `w`, `W`, `s///e`, `s///w`, `-i`,
/// `-f`; find's `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint*`, `-fls`;
/// `git diff`'s and `git log`'s `--output`, `--ext-diff`, `GIT_EXTERNAL_DIFF`, `-c`.
#[test]
fn allow_rules_that_look_read_only_allow_no_writes_and_no_code() {
    let none = WrittenFiles::default();
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (
            "shell_exec(sed -n*)",
            &[
                "sed -n '1e touch P' f",
                "sed -n e f",
                "sed -n '$!{e touch P\n}' f",
                "sed -n 'w P' f",
                "sed -n '1W P' f",
                "sed -n 's/x/y/w P' f",
                "sed -n 's/x/touch P/e' f",
                "sed -n 's/x/y/gpe' f",
                "sed -n -i 1p f",
                "sed -ni 1p f",
                "sed -n -i.bak 1p f",
                "sed -n --in-place 1p f",
                "sed -n --in-pl=.b 1p f",
                "sed -n -f script.sed f",
                "sed -n --file=script.sed f",
                "sed -n -e p -e 'W P' f",
                "sed -n --expression='1e id' f",
                "sed -n -e1e\\ id f",
                "sed -n \"$S\" f",
                "sed -n 1p *",
                "sed -n 1p *.txt",
                "sed -n 'k' f",
                "sed -n --bogus 1p f",
            ],
            &[
                "sed -n 1,5p f",
                "sed -n '/foo/p' f",
                "sed -n -e 1p -e 3p f",
                "sed -nE 's/(a)/\\1/p' f",
                "sed -n '1!G;h;$p' f",
                "sed -n '/e/p;/w/p' f",
                "sed -n 's/e/w/p' f",
                "sed -n --sandbox 'w P' f",
                "sed -n 1p -- *.txt",
                "sed -n 1p src/*.txt",
            ],
        ),
        (
            "shell_exec(find*)",
            &[
                "find . -fprint P",
                "find . -fprint0 P",
                "find . -fprintf P '%p'",
                "find . -fls P",
                "find . -delete",
                "find . -name x -delete",
                "find . -exec touch P \\;",
                "find . -execdir touch P \\;",
                "find . -ok touch P \\;",
                "find . -okdir touch P \\;",
                "find . -exec find . \\;",
                "find * -name x",
                "find . -bogus",
                "find . -name $N",
            ],
            &[
                "find . -name '*.rs'",
                "find . -type f -name '*.md' -print",
                "find src -maxdepth 2 -newer a.txt",
                "find . -path ./target -prune -o -name '*.rs' -print",
                "find . -newermt 2024-01-01 -ls",
                "find . \\( -name a -o -name b \\) -print0",
                "find -L . -empty",
            ],
        ),
        (
            "shell_exec(git diff*)",
            &[
                "git diff --output=P",
                "git diff --output P",
                "git diff --outp=P",
                "git diff --ext-diff",
                "git diff --ext",
                "GIT_EXTERNAL_DIFF='touch P' git diff",
                "git -c diff.external='touch P' diff",
                "git -c core.pager='touch P' diff",
                "git --config-env=core.pager=E diff",
                "git -p diff",
                "git diff --no-index --output=P a b",
                "git diff *",
                "git diff --tool=x",
            ],
            &[
                "git diff",
                "git diff --stat",
                "git diff HEAD~1 -- src/a.rs",
                "git diff --name-only",
                "git diff --exit-code",
                "git diff --output-indicator-new=+",
                "git --no-pager diff",
            ],
        ),
        (
            "shell_exec(git log*)",
            &[
                "git log --output=P",
                "git log -p --ext-diff",
                "GIT_PAGER='touch P' git log",
                "PAGER='touch P' git log",
                "git log --exec=x",
                "git -c core.pager='touch P' log",
                "git log > P",
            ],
            &[
                "git log --oneline -5",
                "git log -p",
                "git log --format=%H -- a.txt",
                "git log -Soutput",
            ],
        ),
    ];
    for (rule, refused, runs) in cases {
        let allow = policy(ApprovalMode::ReadOnly, &[rule], &[]);
        for command in refused {
            check(&allow, &none, "shell_exec", shell(command), Want::Refused);
        }
        for command in runs {
            check(&allow, &none, "shell_exec", shell(command), Want::Run);
        }
    }
    // What sed and find write is judged by deny file rules, as a redirection is.
    let secret = policy(ApprovalMode::Auto, &[], &["file_write(secret/**)"]);
    for command in [
        "sed -n 'w secret/x' f",
        "sed -i s/a/b/ secret/x",
        "find . -fprint secret/x",
        "git diff --output=secret/x",
        "sort -o secret/x f",
    ] {
        check(&secret, &none, "shell_exec", shell(command), Want::Refused);
    }
}

/// Issue 41, Medium 7: the 20 forms that removed a file under a deny rule on `rm` (and
/// their neighbours) are refused, or asked when the reader cannot see what runs; a deny
/// rule is never silently bypassed by a form the reader does not understand.
#[test]
fn a_deny_rule_is_never_bypassed_by_a_form_the_reader_does_not_understand() {
    let none = WrittenFiles::default();
    let deny = policy(ApprovalMode::Auto, &[], &["shell_exec(rm*)"]);
    let not_run = [
        // The red team's 20.
        "trap 'rm x' EXIT",
        "hash -p /bin/rm ls; ls x",
        "mapfile -C 'rm x #' -c 1 < f",
        "shopt -s expand_aliases\nalias ls='rm x'\nls",
        "x='$(rm x)'; : ${x@P}",
        "PS4='$(rm x)'; set -x; true",
        "printf -v 'a[$(rm x)]' 1",
        "test -v 'a[$(rm x)]'",
        "x='a[$(rm x)]'; : $[x]",
        "env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls",
        "env '--split-string=rm x'",
        "/lib64/ld-linux-x86-64.so.2 /bin/rm x",
        "taskset 1 rm x",
        "flock /tmp/l rm x",
        "unshare rm x",
        "script -qc 'rm x' /dev/null",
        "setpriv rm x",
        "git -c alias.x='!rm x' x",
        "sed e f",
        "echo 'rm x' | sed e",
        // Their neighbours.
        "trap 'rm x' DEBUG; true",
        "trap -- 'rm x' EXIT",
        "readarray -C 'rm x #' -c 1 < f",
        "alias ls='rm x'",
        "export PS4='$(rm x)'; set -x; true",
        "read PS4 < f; set -x; true",
        "[ -v 'a[$(rm x)]' ]",
        "[[ -v 'a[$(rm x)]' ]]",
        "read 'a[$(rm x)]' < f",
        "unset 'a[$(rm x)]'",
        "declare 'a[$(rm x)]=1'",
        "declare -n r='a[$(rm x)]'; echo $r",
        "declare -i n; n='a[$(rm x)]'",
        "let 'n=a[$(rm x)]'",
        "x='a[$(rm x)]'; echo ${!x}",
        "echo ${a[$(rm x)]}",
        "echo ${x:$(rm x)}",
        "wait -p 'a[$(rm x)]'",
        "compgen -C 'rm x' y",
        "enable -f ./x.so rm",
        "fc -s",
        "env --split-string='rm x'",
        "env -S'rm x'",
        "env -S 'rm x'",
        "env -iS'rm x'",
        "env --sp='rm x'",
        "env -S'\\_rm x'",
        "env 'BASH_FUNC_ls%%=() { rm x; }' ls",
        "env PS4='$(rm x)' bash -xc true",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm x' git status",
        "ld.so /bin/rm x",
        "taskset -c 0 rm x",
        "flock /tmp/l -c 'rm x'",
        "unshare -r rm x",
        "script -c 'rm x'",
        "setpriv --reuid=1000 rm x",
        "chroot / rm x",
        "git config alias.x '!rm x'; git x",
        "git -c core.fsmonitor='rm x' status",
        "git --config-env=core.pager=E log",
        "sed '1e rm x' f",
        "sed 's/.*/rm x/e' f",
        "sed -f s.sed f",
        "cat <<EOF\n$\\\n(rm x)\nEOF",
        "echo ${y:-$\\\n(rm x)}",
        "echo $\\\n(rm x)",
        "echo \"$'\" ; rm x; echo \"'\"",
        "cat <<\\\n-EOF\nx\nEOF\nrm x\n-EOF",
        "bash -lc true",
        "HOME=. git status",
        "sudo -s 'rm x'",
        "awk 'BEGIN { system(\"rm x\") }'",
        "awk -f prog.awk",
        "find . -exec rm {} \\;",
        "nice rm x",
        "\\time rm x",
        "busybox rm x",
        "echo x | xargs rm",
        "env -- rm x",
    ];
    for command in not_run {
        check(&deny, &none, "shell_exec", shell(command), Want::NotRun);
    }
    // Forms the reader follows are refused outright.
    for command in [
        "trap 'rm x' EXIT",
        "env '--split-string=rm x'",
        "env -S'rm x'",
        "busybox rm x",
        "cat <<EOF\n$(rm x)\nEOF",
        "echo \"$'\" ; rm x; echo \"'\"",
    ] {
        check(&deny, &none, "shell_exec", shell(command), Want::Refused);
    }
    // Plain commands the rule does not cover still run.
    for command in [
        "ls -la",
        "export A=1; ls",
        "B=2 ls",
        "set -ex; ls",
        "git status",
        "git config user.email a@b.c",
        "sed -n 1p f",
        "find . -name x -delete",
        "read line < f",
        "printf '%s\\n' a",
        "echo ${HOME:-/tmp} ${#x} ${x%.txt} ${x/a/b} ${x@Q}",
        "cat <<EOF\n${HOME}\nEOF",
        "cargo test 2>&1 | tail -20",
        "for f in *.txt; do wc -l \"$f\"; done",
        "git commit -m 'a message'",
        "sed -i 's/a/b/' f",
        "X=1 make",
        "python3 -m pytest -q",
        "echo \"$(date)\" >> log.txt",
    ] {
        check(&deny, &none, "shell_exec", shell(command), Want::Run);
    }
}

/// Issue 41, Medium 7, for file rules: a deny file rule is unsure of a file a command writes
/// whose name is only known when it runs, an expansion or a glob (bash picks the files, and
/// a link among them may lead anywhere), whether in a redirection, an operand or an
/// option's value; a glob whose own text the rule covers is refused. Reads named by
/// operands stay as they were (`echo $x` names no file).
#[test]
fn a_deny_file_rule_is_unsure_of_files_written_by_names_only_known_when_it_runs() {
    let none = WrittenFiles::default();
    let secret = policy(ApprovalMode::Auto, &[], &["file_write(secret/**)"]);
    for command in [
        "echo x > secre?/a",
        "echo x > s*/a",
        "echo x >> [s]ecret/a",
        "echo x > $D/a",
        "echo x > {secret,y}/a",
        "cp f secre*/",
        "cp f $D",
        "mv f s*/",
        "tee secre?/a < f",
        "touch s*/x",
        "rm $F",
        "rm -f s*/k",
        "sed -i s/a/b/ secre*/a",
        "sed -i s/a/b/ $F",
        "git diff --output=s*/x",
        "git diff --output=$F",
        "sort -o secre?/x f",
        "find . -fprint s*/x",
    ] {
        check(&secret, &none, "shell_exec", shell(command), Want::Asked);
    }
    for command in ["rm secret/*", "sed -i s/a/b/ secret/*.txt", "cp f secret/*"] {
        check(&secret, &none, "shell_exec", shell(command), Want::Refused);
    }
    for command in [
        "echo x > out.txt",
        "cp a.txt b.txt",
        "rm -f build.log",
        "cat $F",
        "echo \"$x\" ${y:-z}",
        "wc -l *.txt",
        "grep -n foo src/*.rs",
        "for f in *.txt; do wc -l \"$f\"; done",
    ] {
        check(&secret, &none, "shell_exec", shell(command), Want::Run);
    }
}
